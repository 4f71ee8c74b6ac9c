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
#include "backend/cpu/ops_norm.h"

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
    const int64_t E = c.nEmbd, V = c.nVocab, F = c.nFfExp, X = c.nExpert;
    const int64_t qDim = c.nHead * c.headDimK, kDim = c.nHeadKv * c.headDimK;
    const int64_t vDim = c.nHeadKv * c.headDimV, oDim = c.nHead * c.headDimV;
    b.matrix(w->tokEmbd, "token_embd.weight", {E, V});
    b.vector(w->outputNorm, "output_norm.weight", E);
    if (b.has("output.weight")) {
        b.matrix(w->output, "output.weight", {E, V});
    } else {
        w->output = w->tokEmbd;
        w->tiedOutput = true;
    }
    w->layers.resize(static_cast<size_t>(c.nLayer));
    w->experts.resize(static_cast<size_t>(c.nLayer));
    for (int64_t il = 0; il < c.nLayer; ++il) {
        DecoderLayerWeights& L = w->layers[static_cast<size_t>(il)];
        GptOssExperts& M = w->experts[static_cast<size_t>(il)];
        b.vector(L.attnNorm, blk(il, "attn_norm.weight"), E);
        b.matrix(L.wq, blk(il, "attn_q.weight"), {E, qDim});
        b.matrix(L.wk, blk(il, "attn_k.weight"), {E, kDim});
        b.matrix(L.wv, blk(il, "attn_v.weight"), {E, vDim});
        b.matrix(L.wo, blk(il, "attn_output.weight"), {oDim, E});
        b.vector(L.bq, blk(il, "attn_q.bias"), qDim);
        b.vector(L.bk, blk(il, "attn_k.bias"), kDim);
        b.vector(L.bv, blk(il, "attn_v.bias"), vDim);
        b.vector(L.bo, blk(il, "attn_output.bias"), E);
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
    project(L.ffnGateInp, &M.routerBias, x, nTok, s.routerLogits.data(), ctx.pool);
    dump(ctx, "ffn_moe_logits_biased", layer, s.routerLogits.data(), nTok, X);
    for (int64_t t = 0; t < nTok; ++t) {
        const float* logits = s.routerLogits.data() + t * X;
        int32_t* sel = s.selected.data() + t * U;
        float* wts = s.expertWeights.data() + t * U;
        for (int64_t slot = 0; slot < U; ++slot) {
            int32_t best = -1;
            for (int32_t e = 0; e < X; ++e) {
                bool taken = false;
                for (int64_t j = 0; j < slot; ++j) taken |= sel[j] == e;
                if (!taken && (best < 0 || logits[e] > logits[best])) best = e;
            }
            sel[slot] = best;
            wts[slot] = logits[best];
        }
        cpu::softmaxRow(wts, U, 1.0f);
    }
    static const Weight kNone;
    ExpertExtras extras;
    extras.gateBias = reinterpret_cast<const float*>(M.gateBias.data);
    extras.upBias = reinterpret_cast<const float*>(M.upBias.data);
    extras.downBias = reinterpret_cast<const float*>(M.downBias.data);
    extras.swigluOai = true;
    extras.oaiAlpha = kOaiAlpha;
    extras.oaiLimit = kOaiLimit;
    runExperts(ctx, L.ffnGateExps, L.ffnUpExps, L.ffnDownExps, s.selected.data(), s.expertWeights.data(), U, x, nTok,
               ExpertBuffers{s.moeX.data(), s.gatherSlot.data(), s.ffnUp.data(), s.ffnGate.data(), s.expertOut.data()},
               out, kNone, kNone, kNone, nullptr, extras);
}

// Step 3: the forward pass.
void forward(const ArchWeights& weights, ArchScratch& scratch, const ForwardContext& ctx, const ForwardBatch& b) {
    const auto& w = static_cast<const GptOssWeights&>(weights);
    auto& s = static_cast<DecoderScratch&>(scratch);
    const ArchConfig& c = ctx.cfg;
    const int64_t n = b.nTok, E = c.nEmbd;
    embedTokens(w.tokEmbd, b.tokens, n, s.inpL.data());
    dump(ctx, "inp_embd", -1, s.inpL.data(), n, E);
    ropeTables(c, w.ropeFreqs, b, s.ropeTable.data());

    int64_t r0 = 0;  // first row still needed (the last layer finishes only the output rows)
    for (int il = 0; il < static_cast<int>(c.nLayer); ++il) {
        const DecoderLayerWeights& L = w.layers[static_cast<size_t>(il)];
        if (il == c.nLayer - 1) r0 = lastLayerRowBegin(b);
        attentionBlock(ctx, L, s, il, b, r0);  // biases, sinks, the sliding window of even layers
        if (r0 >= n) break;
        const int64_t rows = n - r0, off = r0 * E;
        float* ffnInp = s.ffnInp.data() + off;
        addRows(s.attnOut.data() + off, s.inpL.data() + off, ffnInp, rows * E);
        dump(ctx, "ffn_inp", il, ffnInp, rows, E);
        cpu::rmsNormRows(ffnInp, L.ffnNorm.data, s.cur.data() + off, rows, E, c.rmsEps);
        dump(ctx, "attn_post_norm", il, s.cur.data() + off, rows, E);
        moe(ctx, L, w.experts[static_cast<size_t>(il)], s, s.cur.data() + off, rows, s.ffnOut.data() + off, il);
        dump(ctx, "ffn_moe_out", il, s.ffnOut.data() + off, rows, E);
        addRows(s.ffnOut.data() + off, ffnInp, s.inpL.data() + off, rows * E);
        dump(ctx, "l_out", il, s.inpL.data() + off, rows, E);
    }
    if (b.logits) outputHead(ctx, w, s, r0, n, b.logits);
}

}  // namespace

// No GPU forward yet (decoderWeights null: the CUDA backend refuses it by name).
const Architecture& gptOssArchitecture() {
    static const Architecture kArch{"gpt-oss", readConfig, bindWeights, createDecoderScratch, forward, true};
    return kArch;
}

}  // namespace verdict::arch
