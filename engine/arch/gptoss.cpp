// Architecture "gpt-oss" (OpenAI gpt-oss-20b / -120b). Reference: llama.cpp's llm_build_openai_moe
// at v0.5.0 (the third fixture batch's generator) and OpenAI's gpt-oss model card (2025).
//
//   x = token_embd[tokens]
//   per layer:  a = attention(rope_neox_yarn(Q n1(x) + bq), rope_neox_yarn(K n1(x) + bk), V n1(x) + bv)
//                   with a learned sink logit per head in each softmax (attn_sinks) and, on even
//                   layers, a sliding window (attention.sliding_window)
//               x += attn_output(a) + bo
//               h = n2(x)                                             n2 = post_attention_norm
//               experts = top-k of (router h + router bias); w = softmax over those k logits
//               x += sum_k w_k (down_e(swiglu_oai(gate_e h + bg_e, up_e h + bu_e)) + bd_e)
//   logits = output(rmsnorm(x) * output_norm)
//
// swiglu_oai: min(gate, 7) * sigmoid(1.702 min(gate, 7)) * (clamp(up, -7, 7) + 1). The routed
// experts ship in MXFP4 (file type MXFP4_MOE), the rest in Q8_0 or F16.
#include "arch/architecture.h"
#include "arch/decoder.h"
#include "arch/hparams.h"
#include "backend/cpu/ops_attention.h"
#include "backend/cpu/ops_moe.h"

#include <algorithm>
#include <string>

namespace verdict::arch {
namespace {

constexpr int kSwaPattern = 2;  // llama.cpp: even layers slide, odd layers are global
constexpr float kOaiAlpha = 1.702f, kOaiLimit = 7.0f;

struct GptOssExperts {
    VecWeight routerBias;  // [n_expert]          blk.N.ffn_gate_inp.bias
    Weight gateBias;       // [n_ff_exp, n_expert] blk.N.ffn_gate_exps.bias (F32)
    Weight upBias;         // [n_ff_exp, n_expert] blk.N.ffn_up_exps.bias
    Weight downBias;       // [n_embd, n_expert]   blk.N.ffn_down_exps.bias
};

// The llama-family weights (attention with biases and sinks; ffnNorm = post_attention_norm; the
// expert stacks) plus the biases of the MoE.
struct GptOssWeights : DecoderWeights {
    std::vector<GptOssExperts> experts;
};

std::string blk(int64_t layer, const char* what) { return "blk." + std::to_string(layer) + "." + what; }

// Step 1: hyper-parameters.
Result<ArchConfig> readConfig(const gguf::GgufFile& file) {
    ArchConfig cfg;
    HParams hp(file, "gpt-oss");
    if (auto r = hp.readCommon(cfg); !r) return r.error();
    cfg.ropeMode = cpu::RopeMode::Neox;
    if (cfg.nExpert == 0 || cfg.nExpertUsed == 0)
        return Error{file.path() + ": gpt-oss needs expert_count and expert_used_count"};
    auto window = hp.optionalUInt("attention.sliding_window", 0);
    if (!window) return window.error();
    cfg.slidingWindow = *window;
    cfg.swaPattern = kSwaPattern;
    if (auto r = validateConfig(cfg); !r) return r.error();
    return cfg;
}

// Step 2: tensors.
Result<std::unique_ptr<ArchWeights>> bindWeights(const ArchConfig& c, TensorBinder& b) {
    auto w = std::make_unique<GptOssWeights>();
    const int64_t E = c.nEmbd, F = c.nFfExp, X = c.nExpert;
    bindDecoderEnds(c, b, *w);
    DecoderTensorRules rules;
    rules.qkvBias = Need::Required;
    rules.outputBias = Need::Required;
    w->layers.resize(static_cast<size_t>(c.nLayer));
    w->experts.resize(static_cast<size_t>(c.nLayer));
    for (int64_t il = 0; il < c.nLayer; ++il) {
        DecoderLayerWeights& L = w->layers[static_cast<size_t>(il)];
        GptOssExperts& M = w->experts[static_cast<size_t>(il)];
        bindDecoderAttention(c, b, il, L, rules);
        b.vector(L.sinks, blk(il, "attn_sinks.weight"), c.nHead);
        b.vector(L.ffnNorm, blk(il, "post_attention_norm.weight"), E);
        b.matrix(L.ffnGateInp, blk(il, "ffn_gate_inp.weight"), {E, X});
        b.vector(M.routerBias, blk(il, "ffn_gate_inp.bias"), X);
        b.matrix(L.ffnGateExps, blk(il, "ffn_gate_exps.weight"), {E, F, X});
        b.matrix(L.ffnUpExps, blk(il, "ffn_up_exps.weight"), {E, F, X});
        b.matrix(L.ffnDownExps, blk(il, "ffn_down_exps.weight"), {F, E, X});
        for (auto [bias, name, rows] : {std::tuple{&M.gateBias, "ffn_gate_exps.bias", F}, {&M.upBias, "ffn_up_exps.bias", F},
                                        {&M.downBias, "ffn_down_exps.bias", E}}) {
            if (b.matrix(*bias, blk(il, name), {rows, X}) && bias->type != tensor::TensorType::F32)
                b.fail("tensor '" + blk(il, name) + "' has type " + std::string(tensor::typeName(bias->type)) +
                       "; expert biases must be f32");
        }
    }
    if (auto r = b.finish(); !r) return r.error();
    return std::unique_ptr<ArchWeights>(std::move(w));
}

// Routing: router logits + bias; the top k (highest first, lowest id on ties); weights = softmax
// over the chosen k logits (llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT).
void moe(const ForwardContext& ctx, const DecoderLayerWeights& L, const GptOssExperts& M, DecoderScratch& s,
         const float* x, int64_t nTok, float* out, int layer) {
    const ArchConfig& c = ctx.cfg;
    const int64_t X = c.nExpert, U = c.nExpertUsed;
    project(ctx, L.ffnGateInp, &M.routerBias, x, nTok, s.routerLogits.data());
    dump(ctx, "ffn_moe_logits_biased", layer, s.routerLogits.data(), nTok, X);
    ctx.be.routeTopKSoftmax(s.routerLogits.data(), nTok, static_cast<int>(X), static_cast<int>(U), s.selected.data(),
                            s.expertWeights.data());
    static const Weight kNone;
    ExpertExtras extras;
    extras.gateBias = static_cast<const float*>(matrixOf(ctx, M.gateBias).data);
    extras.upBias = static_cast<const float*>(matrixOf(ctx, M.upBias).data);
    extras.downBias = static_cast<const float*>(matrixOf(ctx, M.downBias).data);
    extras.swigluOai = true;
    extras.oaiAlpha = kOaiAlpha;
    extras.oaiLimit = kOaiLimit;
    runExperts(ctx, L.ffnGateExps, L.ffnUpExps, L.ffnDownExps, s.selected.data(), s.expertWeights.data(), U, x, nTok,
               ExpertBuffers{s.moeX.data(), s.ffnUp.data(), s.ffnGate.data()},
               out, kNone, kNone, kNone, nullptr, extras);
}

// Step 3: the forward pass: the llama family's loop with this MoE as the FFN (post_attention_norm
// bound as ffnNorm).
void forward(const ArchWeights& weights, ArchScratch& scratch, const ForwardContext& ctx, const ForwardBatch& b) {
    const auto& w = static_cast<const GptOssWeights&>(weights);
    auto& s = static_cast<DecoderScratch&>(scratch);
    const int64_t E = ctx.cfg.nEmbd;
    preNormForward(w, s, ctx, b, [&](int il, int64_t r0, int64_t rows) {
        moe(ctx, w.layers[static_cast<size_t>(il)], w.experts[static_cast<size_t>(il)], s, s.cur.data() + r0 * E, rows,
            s.ffnOut.data() + r0 * E, il);
    });
}

}  // namespace

const Architecture& gptOssArchitecture() {
    static const Architecture kArch{"gpt-oss", readConfig, bindWeights, createDecoderScratch, forward, true};
    return kArch;
}

}  // namespace verdict::arch
