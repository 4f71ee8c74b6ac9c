// Architecture "phi3": Microsoft Phi-3 / Phi-3.5 / Phi-4-mini dense models. Reference: llama.cpp's
// build_phi3 and its phi3 loader at commit c392e509 (the fixtures' generator).
//
//   x = token_embd[tokens]
//   per layer:  q|k|v = attn_qkv n1(x)                    (one fused matrix; rows Q, then K, then V)
//               x += attn_output(attention(rope_neox(q), rope_neox(k), v))   sliding window on all layers
//               g|u = ffn_up n2(x)                        (fused: rows 0..n_ff-1 gate, n_ff..2n_ff-1 up)
//               x += ffn_down(silu(g) * u)
//   logits = output(rmsnorm(x) * output_norm)
//
// The fused matrices are bound once and split into row views (Weight slices of the mapping, no
// copy), so the llama-family steps of decoder.h run unchanged.
//
// LongRoPE (Phi-3-*-128k, Phi-3.5): per-pair frequency divisors rope_factors_long.weight and
// rope_factors_short.weight; like llama.cpp (build_rope_factors) the long set is used when the
// session's context exceeds rope.scaling.original_context_length, else the short one. The cos/sin
// magnitude is multiplied by rope.scaling.attn_factor (llama.cpp: yarn_attn_factor *=
// rope_attn_factor). The fixture has neither, so no llama.cpp reference covers this path;
// tests/engine/test_phi3_longrope.cpp checks the factor choice and the attn_factor on variants of it.
#include "arch/architecture.h"
#include "arch/decoder.h"
#include "arch/hparams.h"
#include "backend/cpu/ops_norm.h"
#include "backend/cpu/ops_rope.h"
#include "arch/kv_cache.h"

#include <algorithm>
#include <string>

namespace verdict::arch {
namespace {

struct Phi3Weights : ArchWeights {
    DecoderWeights decoder;  // wq/wk/wv: row views of blk.N.attn_qkv [n_embd, (n_head + 2 n_head_kv) hd];
                             // ffnGate/ffnUp: row views of blk.N.ffn_up [n_embd, 2 n_ff]
    VecWeight ropeLong;      // [n_rot/2] rope_factors_long.weight, optional (LongRoPE)
    VecWeight ropeShort;     // [n_rot/2] rope_factors_short.weight, optional
};

// Rows [first, first+count) of a matrix, as a matrix of their own.
Weight rowSlice(const Weight& w, int64_t first, int64_t count, const char* part) {
    Weight v = w;
    if (!w.present()) return v;
    v.name = w.name + " (" + part + ")";
    v.data = w.row(first);
    v.ne[1] = count;
    return v;
}

// Step 1: hyper-parameters.
Result<ArchConfig> readConfig(const gguf::GgufFile& file) {
    ArchConfig cfg;
    HParams hp(file, "phi3");
    if (auto r = hp.readCommon(cfg); !r) return r.error();
    cfg.ropeMode = cpu::RopeMode::Neox;  // LLAMA_ROPE_TYPE_NEOX
    if (cfg.nExpert != 0)
        return Error{file.path() + ": phi3 with experts is architecture phimoe, which is not supported"};

    // Sliding window over every layer. Files converted before the key existed get llama.cpp's
    // defaults (llama.cpp PR #8931): Phi-3-mini/medium-4k 2047, mini-128k 262144, medium-128k 131072.
    int64_t defaultWindow = 0;
    if ((cfg.nLayer == 32 || cfg.nLayer == 40) && cfg.nCtxTrain == 4096)
        defaultWindow = 2047;
    else if (cfg.nLayer == 32 && cfg.nHeadKv == 32 && cfg.nCtxTrain == 131072)
        defaultWindow = 262144;
    else if (cfg.nLayer == 40 && cfg.nCtxTrain == 131072)
        defaultWindow = 131072;
    auto window = hp.optionalUInt("attention.sliding_window", defaultWindow);
    if (!window) return window.error();
    cfg.slidingWindow = *window;
    cfg.swaPattern = 0;  // every layer

    auto attnFactor = hp.optionalFloat("rope.scaling.attn_factor", 1.0f);
    if (!attnFactor) return attnFactor.error();
    if (!(*attnFactor > 0.0f)) return Error{file.path() + ": " + hp.key("rope.scaling.attn_factor") + " must be > 0"};
    cfg.yarnAttnFactor *= *attnFactor;
    if (auto r = validateConfig(cfg); !r) return r.error();
    return cfg;
}

// Step 2: tensors. Fused attn_qkv (or, for hand-made files, separate attn_q/k/v) and fused ffn_up.
Result<std::unique_ptr<ArchWeights>> bindWeights(const ArchConfig& c, TensorBinder& b) {
    auto p = std::make_unique<Phi3Weights>();
    DecoderWeights& w = p->decoder;
    const int64_t E = c.nEmbd, V = c.nVocab, F = c.nFf;
    const int64_t qDim = c.nHead * c.headDimK, kDim = c.nHeadKv * c.headDimK, vDim = c.nHeadKv * c.headDimV;
    const int64_t oDim = c.nHead * c.headDimV;

    b.matrix(w.tokEmbd, "token_embd.weight", {E, V});
    b.vector(w.outputNorm, "output_norm.weight", E);
    if (b.has("output.weight")) {
        b.matrix(w.output, "output.weight", {E, V});
    } else {
        w.output = w.tokEmbd;
        w.tiedOutput = true;
    }
    b.vector(p->ropeLong, "rope_factors_long.weight", c.nRot / 2, Need::Optional);
    b.vector(p->ropeShort, "rope_factors_short.weight", c.nRot / 2, Need::Optional);
    if (p->ropeLong.present() != p->ropeShort.present())
        b.fail("rope_factors_long.weight and rope_factors_short.weight must come together (LongRoPE)");

    w.layers.resize(static_cast<size_t>(c.nLayer));
    for (int64_t il = 0; il < c.nLayer; ++il) {
        DecoderLayerWeights& L = w.layers[static_cast<size_t>(il)];
        const std::string blk = "blk." + std::to_string(il) + ".";
        b.vector(L.attnNorm, blk + "attn_norm.weight", E);
        if (b.has(blk + "attn_qkv.weight") || !b.has(blk + "attn_q.weight")) {
            Weight qkv;
            if (b.matrix(qkv, blk + "attn_qkv.weight", {E, qDim + kDim + vDim})) {
                L.wq = rowSlice(qkv, 0, qDim, "Q rows");
                L.wk = rowSlice(qkv, qDim, kDim, "K rows");
                L.wv = rowSlice(qkv, qDim + kDim, vDim, "V rows");
            }
        } else {
            b.matrix(L.wq, blk + "attn_q.weight", {E, qDim});
            b.matrix(L.wk, blk + "attn_k.weight", {E, kDim});
            b.matrix(L.wv, blk + "attn_v.weight", {E, vDim});
        }
        b.matrix(L.wo, blk + "attn_output.weight", {oDim, E});
        b.vector(L.ffnNorm, blk + "ffn_norm.weight", E);
        Weight up;
        if (b.matrix(up, blk + "ffn_up.weight", {E, 2 * F})) {
            L.ffnGate = rowSlice(up, 0, F, "gate rows");
            L.ffnUp = rowSlice(up, F, F, "up rows");
        }
        b.matrix(L.ffnDown, blk + "ffn_down.weight", {F, E});
    }
    if (auto r = b.finish(); !r) return r.error();
    return std::unique_ptr<ArchWeights>(std::move(p));
}

// Step 3: the forward pass: decoderForward's pre-norm block with the LongRoPE factor choice.

// llama.cpp build_rope_factors: the long factors when the sequence's context (its cache capacity)
// exceeds the original training context, else the short ones. Batched rows of several sequences
// each use their own cache's capacity.
const VecWeight& ropeFactorsFor(const ArchConfig& c, const Phi3Weights& p, int64_t nCtxSeq) {
    return nCtxSeq > c.nCtxOrig ? p.ropeLong : p.ropeShort;
}

void ropeTablesLongRope(const ArchConfig& c, const Phi3Weights& p, const ForwardContext& ctx, const ForwardBatch& b,
                        float* table) {
    if (c.nRot == 0) return;
    if (!b.caches || !p.ropeLong.present()) {
        const int64_t nCtxSeq = b.caches ? b.caches[0]->capacity() : ctx.kv.capacity();
        ropeTables(c, ropeFactorsFor(c, p, nCtxSeq), b, table);
        return;
    }
    for (int64_t t = 0; t < b.nTok; ++t) {
        const VecWeight& f = ropeFactorsFor(c, p, b.caches[t]->capacity());
        cpu::ropeTable(c.ropeParams(f.data), static_cast<int32_t>(b.positions[t]), table + t * c.nRot);
    }
}

void forward(const ArchWeights& weights, ArchScratch& scratch, const ForwardContext& ctx, const ForwardBatch& b) {
    const auto& p = static_cast<const Phi3Weights&>(weights);
    const DecoderWeights& w = p.decoder;
    auto& s = static_cast<DecoderScratch&>(scratch);
    const ArchConfig& c = ctx.cfg;
    const int64_t n = b.nTok, E = c.nEmbd;

    if (b.hidden) {  // partial offload: the GPU ran the blocks before firstLayer
        loadHidden(ctx, b, s.inpL.data());
    } else {
        embedTokens(ctx, w.tokEmbd, b, s.io, s.inpL.data());
        dump(ctx, "inp_embd", -1, s.inpL.data(), n, E);
    }
    ropeTablesLongRope(c, p, ctx, b, s.io.ropeHost.data());
    uploadRope(ctx, s.io, s.ropeTable.data(), n, c.nRot);

    int64_t r0 = 0;  // first row still needed (the last layer finishes only the output rows)
    const LayerRange range = layerRange(c, b);
    for (int il = range.first; il < range.end; ++il) {
        const DecoderLayerWeights& L = w.layers[static_cast<size_t>(il)];
        if (il == c.nLayer - 1) r0 = lastLayerRowBegin(b);
        attentionBlock(ctx, L, s, il, b, r0);
        if (r0 >= n) break;

        const int64_t rows = n - r0, off = r0 * E;
        float* ffnInp = s.ffnInp.data() + off;
        ctx.be.add(s.attnOut.data() + off, s.inpL.data() + off, ffnInp, rows * E);
        dump(ctx, "ffn_inp", il, ffnInp, rows, E);
        ctx.be.rmsNorm(ffnInp, vecOf(ctx, L.ffnNorm), s.cur.data() + off, rows, E, c.rmsEps);
        dump(ctx, "ffn_norm", il, s.cur.data() + off, rows, E);
        denseSwiGlu(ctx, L, s, s.cur.data() + off, rows, s.ffnOut.data() + off, il);
        dump(ctx, "ffn_out", il, s.ffnOut.data() + off, rows, E);
        ctx.be.add(s.ffnOut.data() + off, ffnInp, s.inpL.data() + off, rows * E);
        dump(ctx, "l_out", il, s.inpL.data() + off, rows, E);
    }
    if (handOver(ctx, b, s.inpL.data()) || !b.logits || r0 >= n) return;
    outputHead(ctx, w, s, r0, n, logitsRows(ctx, s.io, b));
    finishLogits(ctx, s.io, b, n - r0);
}

}  // namespace

const Architecture& phi3Architecture() {
    static const Architecture kArch{"phi3", readConfig, bindWeights, createDecoderScratch, forward, true};
    return kArch;
}

}  // namespace verdict::arch
