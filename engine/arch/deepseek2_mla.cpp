// Multi-head latent attention (DeepSeek-V2 paper, arXiv 2405.04434, section 2.1) over a cache
// that holds, per position and layer, only the normalised latent (kv_lora_rank) and the roped
// shared key (n_rot): see deepseek2.h for the formula. The absorbed attention itself is the
// backend's latentAttention op.
//
// Matching llama.cpp: its graph (commit c392e509) expands the latent into per-head keys and
// values with one matmul, kv = attn_kv_b * latent, which rounds `latent` to the weight's
// activation type first (f16 for F16 weights, Q8_0 / Q8_1 / Q8_K blocks for quantized ones). We
// cache the latent already rounded that way (the roundAsMatmulInput op), so that
// q_nope . (W_k latent) and W_v (sum_j p_j latent_j) are the very sums llama.cpp computes, only in
// another order. Without that rounding the quantized files differ by ~1e-2 per logit and flip
// near-tied expert choices.
#include "arch/deepseek2.h"

namespace verdict::arch {

void mlaAttentionBlock(const ForwardContext& ctx, const Deepseek2LayerWeights& L, Deepseek2Scratch& s, int layer,
                       const ForwardBatch& b, int64_t rowBegin) {
    const ArchConfig& c = ctx.cfg;
    const int64_t n = b.nTok, E = c.nEmbd, H = c.nHead, Lr = c.kvLoraRank, dr = c.nRot;
    const int64_t dk = c.headDimK, dn = dk - dr, dv = c.headDimV;
    ctx.be.rmsNorm(s.inpL.data(), vecOf(ctx, L.attnNorm), s.cur.data(), n, E, c.rmsEps);
    dump(ctx, "attn_norm", layer, s.cur.data(), n, E);

    // Every row: latent and rope key into its cache.
    const bool neox = c.ropeMode == cpu::RopeMode::Neox;
    project(ctx, L.wkvA, nullptr, s.cur.data(), n, s.kvA.data());
    ctx.be.copyRows(s.latent.data(), Lr, s.kvA.data(), Lr + dr, n, Lr);
    ctx.be.copyRows(s.kPe.data(), dr, s.kvA.data() + Lr, Lr + dr, n, dr);
    ctx.be.rmsNorm(s.latent.data(), vecOf(ctx, L.kvANorm), s.latent.data(), n, Lr, c.rmsEps);
    ctx.be.roundAsMatmulInput(L.wkvB.type, s.latent.data(), n, Lr);
    ctx.be.rope(s.kPe.data(), n, 1, dr, static_cast<int>(dr), neox, s.ropeTable.data());
    dump(ctx, "kv_compressed", layer, s.latent.data(), n, Lr);
    dump(ctx, "k_pe", layer, s.kPe.data(), n, dr);
    backend::Attention cacheShape;  // one "head": the latent as K, the roped key as V
    cacheShape.nHead = cacheShape.nHeadKv = 1;
    cacheShape.dimK = static_cast<int>(Lr);
    cacheShape.dimV = static_cast<int>(dr);
    const RowCaches& all = rowCaches(ctx, b, layer, 0);
    byCacheType(all, [&](int64_t t0, int64_t t1, bool f16) {
        cacheShape.f16 = f16;
        ctx.be.storeKv(cacheShape, all.rows.data() + t0, t1 - t0, s.latent.data() + t0 * Lr, s.kPe.data() + t0 * dr);
    });
    if (rowBegin >= n) return;

    // Queries of rows rowBegin..: [rows][H][dn | dr], the dr part roped.
    const int64_t rows = n - rowBegin;
    const float* x = s.cur.data() + rowBegin * E;
    float* q = s.q.data() + rowBegin * H * dk;
    if (L.wqA.present()) {
        float* qa = s.qA.data() + rowBegin * c.qLoraRank;
        project(ctx, L.wqA, nullptr, x, rows, qa);
        ctx.be.rmsNorm(qa, vecOf(ctx, L.qANorm), qa, rows, c.qLoraRank, c.rmsEps);
        project(ctx, L.wqB, nullptr, qa, rows, q);
    } else {
        project(ctx, L.wq, nullptr, x, rows, q);
    }
    ctx.be.rope(q + dn, rows, H, dk, static_cast<int>(dr), neox, s.ropeTable.data() + rowBegin * dr);
    dump(ctx, "q", layer, q, rows, H * dk);

    // The absorbed attention (backend::LatentAttention), per span of rows sharing a cache type.
    backend::LatentAttention la;
    la.nHead = static_cast<int>(H);
    la.dNope = static_cast<int>(dn);
    la.dRope = static_cast<int>(dr);
    la.dV = static_cast<int>(dv);
    la.rank = static_cast<int>(Lr);
    la.scale = c.kqScale();
    la.kvB = matrixOf(ctx, L.wkvB);
    const RowCaches& rc = rowCaches(ctx, b, layer, rowBegin);
    byCacheType(rc, [&](int64_t i0, int64_t i1, bool f16) {
        la.f16 = f16;
        ctx.be.latentAttention(la, rc.rows.data() + i0, i1 - i0, q + i0 * H * dk, s.kqv.data() + (rowBegin + i0) * H * dv);
    });
    dump(ctx, "kqv_out", layer, s.kqv.data() + rowBegin * H * dv, rows, H * dv);
    project(ctx, L.wo, nullptr, s.kqv.data() + rowBegin * H * dv, rows, s.attnOut.data() + rowBegin * E);
    dump(ctx, "attn_out", layer, s.attnOut.data() + rowBegin * E, rows, E);
}

}  // namespace verdict::arch
