// Multi-head latent attention (DeepSeek-V2 paper, arXiv 2405.04434, section 2.1) over a cache
// that holds, per position and layer, only the normalised latent (kv_lora_rank) and the roped
// shared key (n_rot): see deepseek2.h for the formula.
//
// Matching llama.cpp: its graph (commit c392e509) expands the latent into per-head keys and
// values with one matmul, kv = attn_kv_b * latent, which rounds `latent` to the weight's
// activation type first (f16 for F16 weights, Q8_0 / Q8_1 / Q8_K blocks for quantized ones). We
// cache the latent already rounded that way (asSeenByMatmul), so that q_nope . (W_k latent) and
// W_v (sum_j p_j latent_j) are the very sums llama.cpp computes, only in another order. Without
// that rounding the quantized files differ by ~1e-2 per logit and flip near-tied expert choices.
#include "arch/deepseek2.h"

#include "backend/cpu/act_quant.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/ops_attention.h"
#include "backend/cpu/ops_norm.h"
#include "backend/cpu/ops_rope.h"
#include "backend/cpu/ops_vec.h"
#include "backend/cpu/thread_pool.h"
#include "arch/kv_cache.h"
#include "tensor/half.h"

#include <algorithm>
#include <vector>

namespace verdict::arch {
namespace {

using tensor::TensorType;

// Below this many query rows the absorb / up-projection read the quantized attn_kv_b rows directly
// (cpu::axpyRows / dotRows); from it on, dequantizing a head's rows once pays for itself.
constexpr int64_t kFusedRows = 4;

// x[0..K) replaced by the values cpu::matmul's dot products see for weights of `type` (the
// activation rounding of kernels.h). K is a multiple of the type's block size.
void asSeenByMatmul(TensorType type, float* x, int64_t K) {
    switch (type) {
        case TensorType::F32: return;
        case TensorType::F16:
            for (int64_t i = 0; i < K; ++i) x[i] = tensor::fp16ToFp32(tensor::fp32ToFp16(x[i]));
            return;
        case TensorType::BF16:
            for (int64_t i = 0; i < K; ++i) x[i] = tensor::bf16ToFp32(tensor::fp32ToBf16(x[i]));
            return;
        case TensorType::Q4_1:
        case TensorType::Q5_1: {
            std::vector<tensor::BlockQ8_1> blocks(static_cast<size_t>(K / 32));
            cpu::quantizeActQ8_1(x, K, blocks.data());
            for (int64_t i = 0; i < K; ++i)
                x[i] = tensor::fp16ToFp32(blocks[i / 32].d) * static_cast<float>(blocks[i / 32].qs[i % 32]);
            return;
        }
        case TensorType::Q2_K:
        case TensorType::Q3_K:
        case TensorType::Q4_K:
        case TensorType::Q5_K:
        case TensorType::Q6_K: {
            std::vector<tensor::BlockQ8_K> blocks(static_cast<size_t>(K / 256));
            cpu::quantizeActQ8_K(x, K, blocks.data());
            for (int64_t i = 0; i < K; ++i) x[i] = blocks[i / 256].d * static_cast<float>(blocks[i / 256].qs[i % 256]);
            return;
        }
        default: {  // Q4_0, Q5_0, Q8_0
            std::vector<tensor::BlockQ8_0> blocks(static_cast<size_t>(K / 32));
            cpu::quantizeActQ8_0(x, K, blocks.data());
            for (int64_t i = 0; i < K; ++i)
                x[i] = tensor::fp16ToFp32(blocks[i / 32].d) * static_cast<float>(blocks[i / 32].qs[i % 32]);
            return;
        }
    }
}

// Cache and position of row t of the batch.
session::KvCache& cacheOf(const ForwardContext& ctx, const ForwardBatch& b, int64_t t) {
    return b.caches ? *b.caches[t] : ctx.kv;
}
int64_t positionOf(const ForwardBatch& b, int64_t t) { return b.positions ? b.positions[t] : b.pos0 + t; }

}  // namespace

void mlaAttentionBlock(const ForwardContext& ctx, const Deepseek2LayerWeights& L, Deepseek2Scratch& s, int layer,
                       const ForwardBatch& b, int64_t rowBegin) {
    const ArchConfig& c = ctx.cfg;
    const int64_t n = b.nTok, E = c.nEmbd, H = c.nHead, Lr = c.kvLoraRank, dr = c.nRot;
    const int64_t dk = c.headDimK, dn = dk - dr, dv = c.headDimV;
    ctx.be.rmsNorm(s.inpL.data(), L.attnNorm.data, s.cur.data(), n, E, c.rmsEps);
    dump(ctx, "attn_norm", layer, s.cur.data(), n, E);

    // Every row: latent and rope key into its cache.
    project(ctx, L.wkvA, nullptr, s.cur.data(), n, s.kvA.data());
    for (int64_t t = 0; t < n; ++t) {
        const float* row = s.kvA.data() + t * (Lr + dr);
        float* lat = s.latent.data() + t * Lr;
        cpu::rmsNormRow(row, L.kvANorm.data, lat, Lr, c.rmsEps);
        asSeenByMatmul(L.wkvB.type, lat, Lr);
        float* kpe = s.kPe.data() + t * dr;
        std::copy_n(row + Lr, dr, kpe);
        cpu::applyRope(c.ropeMode, kpe, 1, dr, static_cast<int>(dr), s.ropeTable.data() + t * dr);
    }
    dump(ctx, "kv_compressed", layer, s.latent.data(), n, Lr);
    dump(ctx, "k_pe", layer, s.kPe.data(), n, dr);
    if (b.caches) {
        for (int64_t t = 0; t < n; ++t)
            b.caches[t]->store(layer, b.positions[t], 1, s.latent.data() + t * Lr, s.kPe.data() + t * dr);
    } else {
        ctx.kv.store(layer, b.pos0, n, s.latent.data(), s.kPe.data());
    }
    if (rowBegin >= n) return;

    // Queries of rows rowBegin..: [rows][H][dn | dr], the dr part roped.
    const int64_t rows = n - rowBegin;
    const float* x = s.cur.data() + rowBegin * E;
    float* q = s.q.data() + rowBegin * H * dk;
    if (L.wqA.present()) {
        float* qa = s.qA.data() + rowBegin * c.qLoraRank;
        project(ctx, L.wqA, nullptr, x, rows, qa);
        ctx.be.rmsNorm(qa, L.qANorm.data, qa, rows, c.qLoraRank, c.rmsEps);
        project(ctx, L.wqB, nullptr, qa, rows, q);
    } else {
        project(ctx, L.wq, nullptr, x, rows, q);
    }
    for (int64_t t = rowBegin; t < n; ++t)
        cpu::applyRope(c.ropeMode, s.q.data() + t * H * dk + dn, H, dk, static_cast<int>(dr), s.ropeTable.data() + t * dr);
    dump(ctx, "q", layer, q, rows, H * dk);

    // Absorb: qLat[t][h] = sum_i q_nope[t][h][i] * W_k[h][i]  (W_k[h][i] = row h*(dn+dv)+i of
    // attn_kv_b, L elements), one head per task. A few rows (decode) run fused over the quantized
    // rows; more rows first dequantize the head's dn key rows into the thread's block (dn x L
    // floats, L2-resident), then every row sweeps it while its own qLat row stays in L1. Either
    // way each element sums over i in order, with the same values (cpu::axpyRows).
    const Weight& wkvB = L.wkvB;
    const bool fused = rows < kFusedRows;
    ctx.pool.parallelFor(H, 1, [&](int64_t h0, int64_t h1, int thread) {
        float* wk = s.headBlock.data() + thread * s.headBlockStride;
        for (int64_t h = h0; h < h1; ++h) {
            if (!fused) cpu::dequantizeRow(wkvB.type, wkvB.row(h * (dn + dv)), wk, dn * Lr);
            for (int64_t t = rowBegin; t < n; ++t) {
                float* ql = s.qLat.data() + (t * H + h) * Lr;
                const float* qn = s.q.data() + t * H * dk + h * dk;
                std::fill_n(ql, Lr, 0.0f);
                if (fused)
                    cpu::axpyRows(wkvB.type, wkvB.row(h * (dn + dv)), wkvB.rowBytes, dn, qn, ql, Lr);
                else
                    for (int64_t i = 0; i < dn; ++i) cpu::axpyF32(qn[i], wk + i * Lr, ql, Lr);
            }
        }
    });

    // Attention in latent space, one (row, group of up to kMlaHeadsPerTask heads) per task: scores
    // over positions 0..pos. Every head reads the same latent cache, so a group meets each position
    // once (ops_vec.h's row functions: the same dot products and sums as head by head).
    const float scale = c.kqScale();
    const int64_t groups = (H + kMlaHeadsPerTask - 1) / kMlaHeadsPerTask;
    ctx.pool.parallelFor(rows * groups, 1, [&](int64_t i0, int64_t i1, int thread) {
        float* work = s.work.data() + thread * s.workStride;
        for (int64_t item = i0; item < i1; ++item) {
            const int64_t t = rowBegin + item / groups, h0 = (item % groups) * kMlaHeadsPerTask;
            const int64_t nh = std::min(kMlaHeadsPerTask, H - h0);
            const session::KvCache& kv = cacheOf(ctx, b, t);
            const int64_t nKv = positionOf(b, t) + 1;
            float* scores = work;                       // [nh][nKv]: the latent part, then the sum
            float* pe = work + kMlaHeadsPerTask * nKv;  // [nh][nKv]: the RoPE part
            const float* ql = s.qLat.data() + (t * H + h0) * Lr;
            const float* qp = s.q.data() + t * H * dk + h0 * dk + dn;
            float* ol = s.oLat.data() + (t * H + h0) * Lr;
            std::fill_n(ol, nh * Lr, 0.0f);
            const bool f16 = kv.f16();
            if (!f16) {
                cpu::dotRowsF32(ql, Lr, nh, static_cast<const float*>(kv.k(layer)), nKv, Lr, scores, nKv);
                cpu::dotRowsF32(qp, dk, nh, static_cast<const float*>(kv.v(layer)), nKv, dr, pe, nKv);
            } else {
                cpu::dotRowsF16(ql, Lr, nh, static_cast<const uint16_t*>(kv.k(layer)), nKv, Lr, scores, nKv);
                cpu::dotRowsF16(qp, dk, nh, static_cast<const uint16_t*>(kv.v(layer)), nKv, dr, pe, nKv);
            }
            for (int64_t i = 0; i < nh * nKv; ++i) scores[i] += pe[i];
            for (int64_t i = 0; i < nh; ++i) cpu::softmaxRowFast(scores + i * nKv, nKv, scale, nullptr);
            if (!f16)
                cpu::accumulateRowsF32(scores, nh, nKv, static_cast<const float*>(kv.k(layer)), nKv, Lr, ol);
            else
                cpu::accumulateRowsF16(scores, nh, nKv, static_cast<const uint16_t*>(kv.k(layer)), nKv, Lr, ol);
        }
    });

    // Up-project: kqv[t][h][k] = W_v[h][k] . oLat[t][h]  (W_v[h][k] = row h*(dn+dv)+dn+k), the dv
    // value rows of a head taken like the key rows above.
    ctx.pool.parallelFor(H, 1, [&](int64_t h0, int64_t h1, int thread) {
        float* wv = s.headBlock.data() + thread * s.headBlockStride;
        for (int64_t h = h0; h < h1; ++h) {
            if (!fused) cpu::dequantizeRow(wkvB.type, wkvB.row(h * (dn + dv) + dn), wv, dv * Lr);
            for (int64_t t = rowBegin; t < n; ++t) {
                const float* ol = s.oLat.data() + (t * H + h) * Lr;
                float* out = s.kqv.data() + t * H * dv + h * dv;
                if (fused)
                    cpu::dotRows(wkvB.type, wkvB.row(h * (dn + dv) + dn), wkvB.rowBytes, dv, ol, out, Lr);
                else
                    for (int64_t k = 0; k < dv; ++k) out[k] = cpu::dotF32(wv + k * Lr, ol, Lr);
            }
        }
    });
    dump(ctx, "kqv_out", layer, s.kqv.data() + rowBegin * H * dv, rows, H * dv);
    project(ctx, L.wo, nullptr, s.kqv.data() + rowBegin * H * dv, rows, s.attnOut.data() + rowBegin * E);
    dump(ctx, "attn_out", layer, s.attnOut.data() + rowBegin * E, rows, E);
}

}  // namespace verdict::arch
