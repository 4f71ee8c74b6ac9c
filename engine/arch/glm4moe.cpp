// Architecture "glm4moe" (GLM-4.5 / 4.5-Air / 4.6). Reference: llama.cpp's llm_build_glm4_moe at
// v0.5.0 (the third fixture batch's generator).
//
//   x = token_embd[tokens]
//   per layer:  x += attn_output(attention(rope_neox(Q n1(x) + bq), rope_neox(K n1(x) + bk), V n1(x) + bv))
//                   (RoPE on the first rope.dimension_count dims of each head; optional per-head
//                   Q/K norms)
//               h = n2(x)                                              n2 = post_attention_norm
//               x += layer < leading_dense_block_count ? SwiGLU(h)
//                                                      : DeepSeek-style experts(h) + shared experts(h)
//   logits = output(rmsnorm(x) * output_norm)
//
// The routing is DeepSeek-V3's (deepseek2.h groupedRoutingOf, the backend's routeGrouped): sigmoid scores, top-k of score +
// exp_probs_b, weights = the unbiased scores renormalised and scaled. The last
// nextn_predict_layers blocks are the multi-token-prediction head, which llama.cpp skips by default
// (load_mtp = false): their tensors are left unread and the model runs block_count - nextn layers.
#include "arch/architecture.h"
#include "arch/decoder.h"
#include "arch/deepseek2.h"
#include "arch/hparams.h"

#include <algorithm>
#include <string>
#include <vector>

namespace verdict::arch {
namespace {

struct Glm4MoeExtras {
    VecWeight selectionBias;     // [n_expert]  blk.N.exp_probs_b.bias (optional)
    Weight gateShexp, upShexp;   // [n_embd, n_ff_exp * n_expert_shared]
    Weight downShexp;            // [n_ff_exp * n_expert_shared, n_embd]
};

struct Glm4MoeWeights : DecoderWeights {
    std::vector<Glm4MoeExtras> extras;
};

std::string blk(int64_t layer, const char* what) { return "blk." + std::to_string(layer) + "." + what; }

// Step 1: hyper-parameters.
Result<ArchConfig> readConfig(const gguf::GgufFile& file) {
    ArchConfig cfg;
    HParams hp(file, "glm4moe");
    if (auto r = hp.readCommon(cfg); !r) return r.error();
    cfg.ropeMode = cpu::RopeMode::Neox;
    auto nextn = hp.optionalUInt("nextn_predict_layers", 0);
    if (!nextn) return nextn.error();
    if (*nextn >= cfg.nLayer)
        return Error{file.path() + ": " + hp.key("nextn_predict_layers") + " = " + std::to_string(*nextn) +
                     " leaves no decoder layer of block_count = " + std::to_string(cfg.nLayer)};
    cfg.nLayer -= *nextn;  // the multi-token-prediction blocks are not part of the forward pass
    if (auto r = validateConfig(cfg); !r) return r.error();
    if (auto r = readDeepseekMoeConfig(hp, cfg); !r) return r.error();
    return cfg;
}

// Step 2: tensors.
Result<std::unique_ptr<ArchWeights>> bindWeights(const ArchConfig& c, TensorBinder& b) {
    auto w = std::make_unique<Glm4MoeWeights>();
    const int64_t E = c.nEmbd, F = c.nFfExp, X = c.nExpert, S = c.nFfExp * c.nExpertShared;
    bindDecoderEnds(c, b, *w);
    DecoderTensorRules rules;
    rules.qkvBias = Need::Required;
    rules.qkNorm = true;  // GLM-4.5's use_qk_norm: when the file has them
    rules.qkNormNeed = Need::Optional;
    w->layers.resize(static_cast<size_t>(c.nLayer));
    w->extras.resize(static_cast<size_t>(c.nLayer));
    for (int64_t il = 0; il < c.nLayer; ++il) {
        DecoderLayerWeights& L = w->layers[static_cast<size_t>(il)];
        Glm4MoeExtras& M = w->extras[static_cast<size_t>(il)];
        bindDecoderAttention(c, b, il, L, rules);
        b.vector(L.ffnNorm, blk(il, "post_attention_norm.weight"), E);
        if (il < c.nLayerDenseLead) {
            b.matrix(L.ffnGate, blk(il, "ffn_gate.weight"), {E, c.nFf});
            b.matrix(L.ffnUp, blk(il, "ffn_up.weight"), {E, c.nFf});
            b.matrix(L.ffnDown, blk(il, "ffn_down.weight"), {c.nFf, E});
            continue;
        }
        b.matrix(L.ffnGateInp, blk(il, "ffn_gate_inp.weight"), {E, X});
        b.vector(M.selectionBias, blk(il, "exp_probs_b.bias"), X, Need::Optional);
        b.matrix(L.ffnGateExps, blk(il, "ffn_gate_exps.weight"), {E, F, X});
        b.matrix(L.ffnUpExps, blk(il, "ffn_up_exps.weight"), {E, F, X});
        b.matrix(L.ffnDownExps, blk(il, "ffn_down_exps.weight"), {F, E, X});
        if (S > 0) {
            b.matrix(M.gateShexp, blk(il, "ffn_gate_shexp.weight"), {E, S});
            b.matrix(M.upShexp, blk(il, "ffn_up_shexp.weight"), {E, S});
            b.matrix(M.downShexp, blk(il, "ffn_down_shexp.weight"), {S, E});
        }
    }
    if (auto r = b.finish(); !r) return r.error();
    return std::unique_ptr<ArchWeights>(std::move(w));
}

// The activation buffers of the llama family, with the hidden buffers wide enough for the routed
// experts and the shared ones together (runExperts' ExpertBuffers).
Result<std::unique_ptr<ArchScratch>> createScratch(const ArchConfig& c, int64_t nBatch, backend::Backend& be) {
    ArchConfig wide = c;
    wide.nFf = std::max(c.nFf, c.nExpertUsed * c.nFfExp + c.nFfExp * c.nExpertShared);
    return createDecoderScratch(wide, nBatch, be);
}

void moe(const ForwardContext& ctx, const DecoderLayerWeights& L, const Glm4MoeExtras& M, DecoderScratch& s,
         const float* x, int64_t nTok, float* out, float* sharedOut, int layer) {
    const ArchConfig& c = ctx.cfg;
    const int64_t X = c.nExpert, U = c.nExpertUsed, E = c.nEmbd;
    project(ctx, L.ffnGateInp, nullptr, x, nTok, s.routerLogits.data());
    dump(ctx, "ffn_moe_logits", layer, s.routerLogits.data(), nTok, X);
    ctx.be.routeGrouped(groupedRoutingOf(c, vecOf(ctx, M.selectionBias)),
                        s.routerLogits.data(), nTok, static_cast<int>(X), static_cast<int>(U), nullptr, s.selected.data(),
                        s.expertWeights.data());
    runExperts(ctx, L.ffnGateExps, L.ffnUpExps, L.ffnDownExps, s.selected.data(), s.expertWeights.data(), U, x, nTok,
               ExpertBuffers{s.moeX.data(), s.ffnUp.data(), s.ffnGate.data()},
               out, M.gateShexp, M.upShexp, M.downShexp, sharedOut);
    if (M.gateShexp.present()) ctx.be.add(out, sharedOut, out, nTok * E);
}

// Step 3: the forward pass: the llama family's loop (post_attention_norm bound as ffnNorm) with a
// dense SwiGLU in the leading layers and the MoE after them; s.attnOut, free by then, takes the
// shared experts' output.
void forward(const ArchWeights& weights, ArchScratch& scratch, const ForwardContext& ctx, const ForwardBatch& b) {
    const auto& w = static_cast<const Glm4MoeWeights&>(weights);
    auto& s = static_cast<DecoderScratch&>(scratch);
    const int64_t E = ctx.cfg.nEmbd;
    preNormForward(w, s, ctx, b, [&](int il, int64_t r0, int64_t rows) {
        const DecoderLayerWeights& L = w.layers[static_cast<size_t>(il)];
        float* h = s.cur.data() + r0 * E;
        float* out = s.ffnOut.data() + r0 * E;
        if (il < ctx.cfg.nLayerDenseLead)
            denseSwiGlu(ctx, L, s, h, rows, out, il);
        else
            moe(ctx, L, w.extras[static_cast<size_t>(il)], s, h, rows, out, s.attnOut.data() + r0 * E, il);
    });
}

}  // namespace

const Architecture& glm4moeArchitecture() {
    static const Architecture kArch{"glm4moe", readConfig, bindWeights, createScratch, forward, true};
    return kArch;
}

}  // namespace verdict::arch
