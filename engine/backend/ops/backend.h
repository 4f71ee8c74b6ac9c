// The operations every compute backend implements, over data that lives in the backend's own
// memory (host memory for the CPU, device memory for CUDA): the op set of the llama-family forward
// pass (embedding lookup, matmul over every quant type the backend reads, grouped expert matmul,
// RMSNorm, RoPE, the attention op with its options, activations, routing, residual adds).
//
// Why an interface of ops: an architecture should describe its forward once and every backend run
// it (issue 18). The backends implement these ops and nothing else: no backend knows what a layer,
// an architecture or a model is. Each op has one meaning, fixed here, and tests/engine/
// backend_op_cases.h checks every op x type x shape of each backend against a plain reference (the
// style of llama.cpp's test-backend-ops): the CPU backends (scalar, AVX2, AVX-512) in CI, the CUDA
// backend in tests/gpu.
//
// Conventions (those of backend/cpu and backend/cuda): activations are row-major f32 [rows][cols],
// rows = tokens; weights are GGUF rows of `cols` elements in their on-disk block format; an op may
// run asynchronously (CUDA enqueues on the backend's stream) and its failures surface at the next
// synchronize(). Every pointer an op takes is the backend's memory unless named host*.
#pragma once

#include "tensor/tensor_type.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace verdict::backend {

// A weight matrix, or a stack of nMat equally shaped matrices (the experts of a MoE layer), in the
// backend's memory. Row r of matrix m starts at data + (m * rows + r) * rowBytes.
struct Matrix {
    tensor::TensorType type = tensor::TensorType::F32;
    const void* data = nullptr;
    int64_t cols = 0;      // K: elements per row
    int64_t rows = 0;      // N: rows of one matrix
    int64_t nMat = 1;      // matrices in the stack
    uint64_t rowBytes = 0;
};

// Where one row of a pass reads and writes its sequence's KV cache at the layer being computed:
// K [nHeadKv][capacity][dimK] then, right after it, V [nHeadKv][capacity][dimV] (f32 or f16; the
// layout of arch/kv_cache.h and of the CUDA backend). Sequences of one pass may differ in capacity.
struct RowCache {
    uint8_t* base = nullptr;  // the layer's K of the row's sequence
    int32_t capacity = 0;     // positions per head
    int32_t pos = 0;          // the row's position: it attends to positions 0 .. pos of its cache
};

// One product of an expertMatmuls group: for pair p < nPairs, y[p][0 .. w.rows) = matrix
// experts[p] of the stack w (matrix 0 for every pair when experts is null: a dense product, e.g. a
// shared expert) times x row p / xDiv (xDiv = U for the gate/up products of token p / U, 1 for the
// down product of pair p). x rows are w.cols long, y rows w.rows.
struct ExpertProduct {
    Matrix w;
    const int32_t* experts = nullptr;
    int64_t nPairs = 0;
    const float* x = nullptr;
    int64_t xDiv = 1;
    float* y = nullptr;
};

// DeepSeek-V3's router (also GLM-4.5's), llama.cpp build_moe_ffn: scores = sigmoid of each logit,
// or a softmax over the row; the choice ranks score + selectionBias, only within the nGroupsUsed
// best of nGroups equal groups of experts (a group's worth: the sum of its two best) when
// nGroups > 1; the weights are the chosen experts' unbiased scores, divided by their sum when
// normalize, then times scale.
struct GroupedRouting {
    bool sigmoid = true;
    const float* selectionBias = nullptr;  // [nExpert] (exp_probs_b), or null
    int nGroups = 1, nGroupsUsed = 1;
    bool normalize = true;
    float scale = 1.0f;
};

struct Attention {
    int nHead = 0, nHeadKv = 0;  // query heads, key/value heads (nHead % nHeadKv == 0)
    int dimK = 0, dimV = 0;      // elements per key / value head
    bool f16 = false;            // cache element type
    float scale = 1.0f;          // q.k multiplier
    float softCap = 0.0f;        // > 0: score = softCap * tanh(score / softCap) before the softmax
    int window = 0;              // > 0: a row at position p sees keys p-window+1 .. p only
    const float* sinks = nullptr;  // [nHead] logits that join each softmax without a value row, or null
};

// DeepSeek's multi-head latent attention over a compressed cache (MLA: DeepSeek-V2 paper, arXiv
// 2405.04434, section 2.1), absorbed: the key and value heads are never expanded. A row's cache
// holds per position the latent (`rank` floats: K of the RowCache layout with one head) and the
// roped key shared by the heads (dRope floats: its V). For row t and head h, j = 0 .. pos:
//   score_j  = scale (q_nope[t,h] . W_k[h] latent_j + q_rope[t,h] . kRope_j)
//   out[t,h] = W_v[h] sum_j softmax(score)_j latent_j
// W_k[h] / W_v[h]: the dNope key rows / dV value rows of head h in kvB (attn_kv_b: per head its
// key rows, then its value rows; `rank` columns).
struct LatentAttention {
    int nHead = 0, dNope = 0, dRope = 0, dV = 0, rank = 0;
    bool f16 = false;  // cache element type
    float scale = 1.0f;
    Matrix kvB;
};

// What an allocation holds, for the backend's memory accounting (the VRAM ledger on CUDA).
enum class Purpose { Activations, Weights, KvCache };

// A backend's memory in use by purpose, its high-water mark since it was opened, and (devices) the
// device's own view: total - free of every process, and its size. Zero where not tracked (CPU).
struct MemoryStats {
    uint64_t weights = 0, kvCache = 0, activations = 0, peak = 0;
    uint64_t workspace = 0;  // a library's (cuBLAS's) working memory
    uint64_t deviceUsed = 0, deviceTotal = 0;
};

class Backend {
public:
    virtual ~Backend() = default;

    // "cpu (avx512, 2 threads)", "cuda:0 (NVIDIA H100 80GB HBM3)".
    virtual std::string name() const = 0;
    // False for the weight types this backend cannot compute with (the CPU computes every type of
    // backend/cpu/kernels.h canCompute; CUDA the types of backend/cuda/block_type.h).
    virtual bool supports(tensor::TensorType type) const = 0;
    // False for attention options this backend does not implement yet (CUDA: sinks).
    virtual bool supports(const Attention&) const { return true; }
    virtual bool supports(const LatentAttention&) const { return true; }  // CUDA: not yet
    // Routing over nExpert experts choosing nUsed per token (routeSoftmaxTopK & co.).
    virtual bool supportsExperts(int64_t nExpert, int64_t nUsed) const { (void)nExpert, (void)nUsed; return true; }

    // --- memory ----------------------------------------------------------------------------------
    // At least `bytes` bytes aligned to 64, or an error naming `what` and the size.
    virtual Result<void*> allocate(uint64_t bytes, std::string_view what, Purpose purpose = Purpose::Activations) = 0;
    virtual void release(void* p) = 0;
    virtual void upload(void* dst, const void* host, uint64_t bytes) = 0;
    virtual void download(void* host, const void* src, uint64_t bytes) = 0;
    // Waits for every op issued so far; the first failure since the last call, if any.
    virtual Result<void> synchronize() = 0;
    // A hint at the start of each forward pass (embedTokens / loadHidden): `rows` rows follow. The
    // CUDA backend records decode-sized passes as CUDA graphs from here; others ignore it.
    virtual void beginPass(int64_t rows) { (void)rows; }
    // True when the backend's memory is the host's (the CPU): the forward may then hand ops the
    // caller's host buffers (tokens, logits) directly instead of uploading / downloading them.
    virtual bool hostMemory() const { return false; }
    // dst = src, bytes of this backend's memory (a KV prefix shared between sequences).
    virtual void copy(void* dst, const void* src, uint64_t bytes) = 0;
    virtual MemoryStats memory() const { return {}; }

    // --- ops -------------------------------------------------------------------------------------
    // out[t] = row tokens[t] of w as f32 (ids already checked against w.rows by the caller).
    virtual void embedRows(const Matrix& w, const int32_t* tokens, int64_t nTok, float* out) = 0;
    // y[t][r] = sum_k w[r][k] * x[t][k] for t < nTok, r < w.rows; x rows are w.cols long
    // (contiguous), y rows ldy apart (>= w.rows). Activations are rounded or quantized the way the
    // backend pairs them with the weight type (the CPU: llama.cpp's Q8_0 / Q8_1 / Q8_K, f16, bf16).
    virtual void matmul(const Matrix& w, const float* x, int64_t nTok, float* y, int64_t ldy) = 0;
    // Independent expert products (ExpertProduct) with disjoint outputs, as one dispatch where the
    // backend can: a MoE layer's gate and up products of every routed and shared expert in one call,
    // its down products in a second. Products with the same x, xDiv and experts share their input.
    virtual void expertMatmuls(const ExpertProduct* products, int count) = 0;
    // One such product.
    void expertMatmul(const Matrix& w, const int32_t* experts, int64_t nPairs, const float* x, int64_t xDiv, float* y) {
        const ExpertProduct p{w, experts, nPairs, x, xDiv, y};
        expertMatmuls(&p, 1);
    }
    // y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w (w may be null: no gain), rows of n; y may alias x.
    virtual void rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps) = 0;
    virtual void add(const float* a, const float* b, float* y, int64_t n) = 0;          // y = a + b (may alias)
    virtual void addBias(float* y, const float* bias, int64_t rows, int64_t n) = 0;     // y[r] += bias
    virtual void scale(float* x, float factor, int64_t n) = 0;                           // x *= factor
    virtual void softCap(float* x, int64_t n, float cap) = 0;                            // x = tanh(x / cap) * cap
    virtual void swiglu(float* gate, const float* up, int64_t n) = 0;                    // gate = silu(gate) * up
    // gpt-oss's clamped SwiGLU (cpu::swigluOaiInPlace): x = min(gate, limit), y = clamp(up, -limit,
    // limit), gate = x * sigmoid(alpha x) * (y + 1).
    virtual void swigluOai(float* gate, const float* up, int64_t n, float alpha, float limit) = 0;
    // gate = gelu_tanh(gate) * up, GELU read from ggml's f16 table (cpu::gegluInPlace).
    virtual void geglu(float* gate, const float* up, int64_t n) = 0;
    // Rotates the first nRot elements of each head of x [nTok][nHead*headDim] in place with
    // table [nTok][nRot] ((cos, sin) per pair, from cpu::ropeTable): neox pairs (i, i + nRot/2),
    // else (2i, 2i+1).
    virtual void rope(float* x, int64_t nTok, int64_t nHead, int64_t headDim, int nRot, bool neox,
                      const float* table) = 0;
    // Writes k [nTok][nHeadKv*dimK] and v [nTok][nHeadKv*dimV] at each row's position of its cache.
    // hostRows is host memory (the per-row table of the pass).
    virtual void storeKv(const Attention& a, const RowCache* hostRows, int64_t nTok, const float* k,
                         const float* v) = 0;
    // out[t][h*dimV ..] = softmax over the row's visible positions (0 .. pos, within the window) of
    // (q[t,h] . K) * scale (capped) . V, GQA: head h reads kv head h / (nHead / nHeadKv).
    virtual void attention(const Attention& a, const RowCache* hostRows, int64_t nTok, const float* q,
                           float* out) = 0;
    // MLA for rows with their caches: q [nTok][nHead][dNope + dRope] (the dRope part roped), out
    // [nTok][nHead * dV].
    virtual void latentAttention(const LatentAttention& a, const RowCache* hostRows, int64_t nTok, const float* q,
                                 float* out) = 0;
    // Rows of K: x replaced by the values this backend's matmul with weights of `type` sees (the CPU:
    // the activation rounding of backend/cpu/kernels.h), so that a value cached now and multiplied
    // later in another order (MLA's latent against attn_kv_b) sums like the product it stands for.
    virtual void roundAsMatmulInput(tensor::TensorType type, float* x, int64_t rows, int64_t K) = 0;
    // dst[r][0 .. cols) = src[r][0 .. cols) for r < rows; rows ldd / lds floats apart.
    virtual void copyRows(float* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols) = 0;
    // Softmax over each row of logits [nTok][nExpert], the top U (highest first, lowest id on
    // ties), their probabilities renormalised to sum 1 -> experts [nTok][U], weights [nTok][U].
    virtual void routeSoftmaxTopK(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                                  float* weights) = 0;
    // gpt-oss's routing: the top U of each row of logits (highest first, lowest id on ties), and a
    // softmax over those U alone -> experts [nTok][U], weights [nTok][U].
    virtual void routeTopKSoftmax(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                                  float* weights) = 0;
    // GroupedRouting of each row: scores [nTok][nExpert] holds the router logits and receives the
    // scores; selection [nTok][nExpert] (or null) receives what the top-k ranked (biased, the groups
    // left out at -inf); experts / weights [nTok][U].
    virtual void routeGrouped(const GroupedRouting& r, float* scores, int64_t nTok, int nExpert, int U, float* selection,
                              int32_t* experts, float* weights) = 0;
    // y[p] += bias[experts[p]] for p < nPairs: rows of n, bias a stack of per-expert rows of n.
    virtual void addExpertBias(float* y, const float* bias, const int32_t* experts, int64_t nPairs, int64_t n) = 0;
    // out[t] = sum over slots in rank order of weights[t][slot] * y[t*U + slot], rows of n (each
    // weighted row rounded to f32, then added).
    virtual void combineExperts(const float* y, const float* weights, int64_t nTok, int U, int64_t n,
                                float* out) = 0;
};

}  // namespace verdict::backend
