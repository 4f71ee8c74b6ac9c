// Host-side launchers of the CUDA kernels, one group per op family (ops_*.cu). All pointers are
// device pointers unless named host*; every launcher enqueues on `stream` and returns at once.
// Launch errors surface at the backend's next cudaGetLastError / synchronisation, where they
// become Error values (cuda_backend.cu).
//
// Shapes follow the CPU backend: activations are row-major [rows][cols] f32, rows = tokens;
// weights are GGUF rows of `cols` elements in their on-disk block format.
#pragma once

#include "backend/cuda/block_type.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace verdict::cuda {

// A weight matrix (or a stack of expert matrices) in device memory, in its GGUF type.
struct DeviceMatrix {
    const uint8_t* data = nullptr;
    BlockType type = BlockType::F32;
    int64_t cols = 0;        // K: elements per row
    int64_t rows = 0;        // N: rows of one matrix
    int64_t nMat = 1;        // matrices in the stack (experts)
    uint64_t rowBytes = 0;
    uint64_t matrixBytes() const { return rowBytes * static_cast<uint64_t>(rows); }
    // Matrix e of the stack, alone.
    DeviceMatrix expert(int64_t e) const {
        DeviceMatrix m = *this;
        m.data += static_cast<uint64_t>(e) * matrixBytes();
        m.nMat = 1;
        return m;
    }
};

// --- ops_matvec.cu: quantised matrix x few vectors, reading the blocks in place ------------------
constexpr int kMatvecMaxCols = 8;
// y[c][r] = W[r] . x[c] for c < nCols (<= kMatvecMaxCols), r < W.rows; x rows have W.cols
// elements (stride ldx), y rows stride ldy.
void matvec(const DeviceMatrix& w, const float* x, int64_t ldx, int nCols, float* y, int64_t ldy, cudaStream_t s);
// Expert products: for pair p < nPairs, expert e = experts[p] of the stack, input row
// x[xRowOf(p)] (xRowOf(p) = p / xDiv: xDiv = U for the gate/up projections of token p / U, 1 for
// the down projection of pair p), output y[p][0 .. W.rows).
void expertMatvec(const DeviceMatrix& w, const int32_t* experts, int64_t nPairs, const float* x, int64_t ldx,
                  int64_t xDiv, float* y, int64_t ldy, cudaStream_t s);

// --- ops_mma.cu: quantised matrix x 9..64 vectors on the tensor cores ----------------------------
constexpr int kMmaMaxCols = 64;
// y[c][r] = W[r] . x[c] for c < nTok (any count; passes of kMmaMaxCols), f16 inputs and f32
// accumulation, the weight blocks decoded in place (read once per kMmaMaxCols vectors). scale:
// scratch for nTok floats (activationScales: rows past f16's range are scaled into it).
void matmulMma(const DeviceMatrix& w, const float* x, int64_t ldx, int64_t nTok, float* y, int64_t ldy,
               float* scale, cudaStream_t s);

// --- ops_dequant.cu: whole matrices to f16 for tensor-core GEMMs, embeddings ---------------------
// out[r][k] = W[rowBegin + r][k] for r < nRows, as f16 (row-major, nRows x W.cols).
void dequantizeF16(const DeviceMatrix& w, int64_t rowBegin, int64_t nRows, __half* out, cudaStream_t s);
// out[t] = row tokens[t] of W as f32 (token ids checked by the caller).
void embedRows(const DeviceMatrix& w, const int32_t* tokens, int64_t nTok, float* out, cudaStream_t s);
// The tensor-core paths round activations to f16, whose largest value is 65504: an FFN's SwiGLU
// output past it would become inf, then NaN (what llama.cpp's CUDA backend met in its cuBLAS f16
// path: ggml-org/llama.cpp issue 26044). So each activation row t gets a power-of-two scale[t]: 1
// while max|x[t]| < 2^15 (then the f16 inputs are exactly half(x), as before), else the least 2^e
// with max|x[t]| / 2^e < 2^15. The row goes in as half(x / scale) — the division exact — and its
// products come out multiplied by scale in f32. A row holding inf or NaN keeps scale 1 (the f32
// path would carry them too). x: nTok rows of K elements, stride ldx.
void activationScales(const float* x, int64_t ldx, int64_t K, int64_t nTok, float* scale, cudaStream_t s);
// y[t][k] = half(x[t][k] / scale[t]), y packed (row stride K).
void toHalfScaled(const float* x, int64_t ldx, int64_t K, int64_t nTok, const float* scale, __half* y,
                  cudaStream_t s);
// y[t][0 .. n) *= scale[t] (row stride ldy); rows whose scale is 1 are left alone.
void scaleRows(float* y, int64_t ldy, int64_t n, int64_t nTok, const float* scale, cudaStream_t s);

// --- ops_elementwise.cu --------------------------------------------------------------------------
// y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w   (w may be null), rows of n elements.
void rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps, cudaStream_t s);
void add(const float* a, const float* b, float* y, int64_t n, cudaStream_t s);  // y = a + b
void addBias(float* y, const float* bias, int64_t rows, int64_t n, cudaStream_t s);  // y[r] += bias
void swiglu(float* gate, const float* up, int64_t n, cudaStream_t s);  // gate = silu(gate) * up
// gpt-oss's clamped SwiGLU, as cpu::swigluOaiInPlace.
void swigluOai(float* gate, const float* up, int64_t n, float alpha, float limit, cudaStream_t s);
// y[p] += bias[experts[p]], rows of n, for p < nPairs.
void addExpertBias(float* y, const float* bias, const int32_t* experts, int64_t nPairs, int64_t n, cudaStream_t s);
// gate = gelu_tanh(gate) * up with ggml's f16 GELU table (geluTable: 65536 f16 values indexed by the
// f16 bits of the input, as cpu::gegluInPlace; inputs <= -10 give 0, >= 10 themselves).
void geglu(float* gate, const float* up, int64_t n, const uint16_t* geluTable, cudaStream_t s);
void scale(float* x, float factor, int64_t n, cudaStream_t s);   // x *= factor
void softCap(float* x, int64_t n, float cap, cudaStream_t s);
// x replaced by what the CPU's matmul sees for weights of a type (backend/cpu/act_quant.h
// roundAsMatmulInput): itself (f32 weights), f16 / bf16 rounding, or the 8-bit grid of the Q8_0 /
// Q8_1 (groups of 32) or Q8_K (groups of 256) blocks it quantizes activations to; n a multiple of
// the group.
enum class ActRounding { None, F16, BF16, Q8, Q8K };
void roundAsMatmulInput(ActRounding r, float* x, int64_t n, cudaStream_t s);    // x = tanh(x / cap) * cap, as cpu::softCapInPlace
// Rotates the first nRot elements of each head of x [nTok][nHead*headDim] with table [nTok][nRot]
// ((cos, sin) per pair, from cpu::ropeTable); neox pairs (i, i + nRot/2), else (2i, 2i+1).
void rope(float* x, int64_t nTok, int64_t nHead, int64_t headDim, int nRot, bool neox, const float* table,
          cudaStream_t s);

// --- ops_attention.cu ----------------------------------------------------------------------------
// Where row t of a pass reads and writes its sequence's cache.
struct RowCache {
    uint8_t* base;     // the sequence's cache: per layer K [nHeadKv][capacity][dimK] then V [nHeadKv][capacity][dimV]
    int32_t capacity;  // positions
    int32_t pos;       // position of row t
};

struct AttentionShape {
    int nHead, nHeadKv, dimK, dimV;
    bool f16;              // cache element type
    float scale;           // q.k multiplier
    float softCap;         // 0 = off
    int window;            // 0 = full causal, else keys pos-window+1 .. pos
    int layer;
    const float* sinks = nullptr;  // [nHead] (device): a logit per head in each softmax's max and sum, no value
};

// Bytes of one layer of a cache of `capacity` positions.
uint64_t cacheLayerBytes(const AttentionShape& a, int64_t capacity);
// Writes k [nTok][nHeadKv*dimK] and v [nTok][nHeadKv*dimV] at each row's position.
void storeKv(const AttentionShape& a, const RowCache* rows, int64_t nTok, const float* k, const float* v,
             cudaStream_t s);
// out[t][h*dimV ..] = softmax over the row's visible positions of (q[t,h] . K) . V, rows of
// q [nTok][nHead*dimK]. With nSplit > 1 (decode: few (row, head) pairs) each row's visible
// positions are split over nSplit blocks whose partial softmax states are merged afterwards
// ("flash-decoding"); `partials` then holds attentionPartialFloats(a, nSplit) floats. Empty splits
// (short rows) cost one idle block, so a fixed nSplit serves every position (CUDA graphs).
int64_t attentionPartialFloats(const AttentionShape& a, int maxSplits);
// The split for a pass of nTok rows whose longest visible range is maxLen: 1 when there are
// enough (row, head) pairs to fill the GPU, else about one block per 128 positions, <= maxSplits.
int attentionSplits(const AttentionShape& a, int64_t nTok, int64_t maxLen, int maxSplits);
void attention(const AttentionShape& a, const RowCache* rows, int64_t nTok, int nSplit, const float* q, float* out,
               float* partials, cudaStream_t s);

// --- ops_mla.cu: DeepSeek's latent attention, absorbed (backend::LatentAttention) -----------------
// Over attn_kv_b's rows [nHead * (dNope + dV)][rank] in their GGUF blocks; row t's cache (its
// RowCache base) holds per position the latent (rank) and, after all of them, the roped key (dRope).
constexpr int kMlaMaxRank = 512, kMlaMaxRope = 64;
struct MlaShape {
    int nHead, dNope, dRope, dV, rank;
    bool f16;  // cache element type
    float scale;
};
// qLat [nTok][nHead][rank] = the key rows of each head transposed, times q_nope (q [nTok][nHead][dNope + dRope]).
void mlaAbsorb(const DeviceMatrix& kvB, const float* q, int64_t nTok, const MlaShape& a, float* qLat,
               cudaStream_t s);
// oLat [nTok][nHead][rank] = softmax over positions 0 .. pos of scale (qLat . latent + q_rope . kRope), times the latents.
void mlaAttention(const RowCache* rows, int64_t nTok, const MlaShape& a, const float* q, const float* qLat,
                  float* oLat, cudaStream_t s);
// out [nTok][nHead * dV] = the value rows of each head times oLat.
void mlaUpProject(const DeviceMatrix& kvB, const float* oLat, int64_t nTok, const MlaShape& a, float* out,
                  cudaStream_t s);

// --- ops_moe.cu ----------------------------------------------------------------------------------
// Softmax over each row of logits [nTok][nExpert], the top U (highest first, lowest id on ties),
// their probabilities renormalised to sum 1 -> experts [nTok][U], weights [nTok][U].
void routeSoftmaxTopK(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts, float* weights,
                      cudaStream_t s);
// gpt-oss's routing, as cpu::routeTopKSoftmaxRow: the top U logits of each row (highest first,
// lowest id on ties), then a softmax over those U (max subtracted, the sum of exps in double).
void routeTopKSoftmax(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts, float* weights,
                      cudaStream_t s);
// DeepSeek-V3's grouped routing (backend::GroupedRouting's fields), as cpu::routeGroupedRow: scores
// [nTok][nExpert] logits in, scores out; selection (or null) what the top-k ranked.
void routeGrouped(bool sigmoid, const float* selectionBias, int nGroups, int nGroupsUsed, bool normalize, float scale,
                  float* scores, int64_t nTok, int nExpert, int U, float* selection, int32_t* experts, float* weights,
                  cudaStream_t s);
// Rows of n floats: dst[j] = src[order[j] / div] (gather) and dst[order[j]] = src[j] (scatter),
// j < count. They group a prefill's (token, slot) pairs by expert so each expert's matrices run as
// one GEMM over its rows.
void gatherRows(const float* src, int64_t n, const int32_t* order, int64_t count, int64_t div, float* dst,
                cudaStream_t s);
void scatterRows(const float* src, int64_t n, const int32_t* order, int64_t count, float* dst, cudaStream_t s);
// out[t] = sum over slots in rank order of weights[t][slot] * y[t*U + slot], rows of n.
void combineExperts(const float* y, const float* weights, int64_t nTok, int U, int64_t n, float* out,
                    cudaStream_t s);

}  // namespace verdict::cuda
