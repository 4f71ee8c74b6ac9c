// The DeepSeek mixture of experts (deepseek2.h: deepseekMoe) and the plain SwiGLU FFN it shares
// with the leading dense layers. Routing follows llama.cpp's build_moe_ffn at commit c392e509;
// group-limited routing (DeepSeek-V3's n_group / topk_group, GGUF keys expert_group_count and
// expert_group_used_count, absent from files of that commit) follows DeepSeek-V3's reference
// gate: a group's score is the sum of its two best selection scores, the best groups are kept and
// the experts of the others are excluded.
#include "arch/deepseek2.h"

#include "backend/cpu/kernels.h"
#include "backend/cpu/ops_activation.h"
#include "backend/cpu/ops_attention.h"
#include "backend/cpu/ops_moe.h"
#include "backend/cpu/thread_pool.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace verdict::arch {
namespace {

// Sets the selection scores of experts outside the best nUsed groups to -inf.
void maskGroups(float* sel, int64_t nExpert, int64_t nGroups, int64_t nUsed) {
    const int64_t per = nExpert / nGroups;
    float groupScore[256] = {};
    int32_t keep[256] = {};
    const int64_t G = std::min<int64_t>(nGroups, 256);
    for (int64_t g = 0; g < G; ++g) {
        int32_t best2[2] = {0, 0};
        const int64_t k = std::min<int64_t>(2, per);
        cpu::topKIndices(sel + g * per, per, k, best2);
        groupScore[g] = 0.0f;
        for (int64_t j = 0; j < k; ++j) groupScore[g] += sel[g * per + best2[j]];
    }
    cpu::topKIndices(groupScore, G, std::min(nUsed, G), keep);
    for (int64_t g = 0; g < G; ++g) {
        bool kept = false;
        for (int64_t j = 0; j < std::min(nUsed, G); ++j) kept |= keep[j] == g;
        if (!kept) std::fill_n(sel + g * per, per, -std::numeric_limits<float>::infinity());
    }
}

}  // namespace

void swiGluFfn(const ForwardContext& ctx, const Weight& gate, const Weight& up, const Weight& down,
               Deepseek2Scratch& s, const float* x, int64_t nTok, float* out) {
    project(ctx, up, nullptr, x, nTok, s.ffnUp.data());
    project(ctx, gate, nullptr, x, nTok, s.ffnGate.data());
    ctx.be.swiglu(s.ffnGate.data(), s.ffnUp.data(), nTok * gate.rows());
    project(ctx, down, nullptr, s.ffnGate.data(), nTok, out);
}

void routeDeepseekToken(const ArchConfig& c, float* probs, const float* selectionBias, float* sel, int32_t* chosen,
                        float* wts) {
    const int64_t X = c.nExpert, U = c.nExpertUsed;
    if (c.expertGating == ExpertGating::Sigmoid) {
        for (int64_t e = 0; e < X; ++e) probs[e] = 1.0f / (1.0f + std::exp(-probs[e]));  // ggml_vec_sigmoid_f32
    } else {
        cpu::softmaxRow(probs, X, 1.0f);
    }
    for (int64_t e = 0; e < X; ++e) sel[e] = probs[e] + (selectionBias ? selectionBias[e] : 0.0f);
    if (c.nExpertGroups > 1) maskGroups(sel, X, c.nExpertGroups, c.nExpertGroupsUsed);
    cpu::topKIndices(sel, X, U, chosen);
    for (int64_t slot = 0; slot < U; ++slot) wts[slot] = probs[chosen[slot]];
    if (c.expertWeightsNorm) {
        double sum = 0.0;  // ggml_sum_rows accumulates in double
        for (int64_t slot = 0; slot < U; ++slot) sum += wts[slot];
        const float fsum = static_cast<float>(sum);
        for (int64_t slot = 0; slot < U; ++slot) wts[slot] /= fsum;
    }
    for (int64_t slot = 0; slot < U; ++slot) wts[slot] *= c.expertWeightsScale;
}

void deepseekMoe(const ForwardContext& ctx, const Deepseek2LayerWeights& L, Deepseek2Scratch& s, const float* x,
                 int64_t nTok, float* out, int layer) {
    const ArchConfig& c = ctx.cfg;
    const int64_t E = c.nEmbd, X = c.nExpert, U = c.nExpertUsed;

    // Routing.
    project(ctx, L.gateInp, nullptr, x, nTok, s.probs.data());
    dump(ctx, "ffn_moe_logits", layer, s.probs.data(), nTok, X);
    for (int64_t t = 0; t < nTok; ++t)
        routeDeepseekToken(c, s.probs.data() + t * X, L.expProbsB.present() ? L.expProbsB.data : nullptr,
                           s.selScore.data() + t * X, s.selected.data() + t * U, s.expertWeights.data() + t * U);
    dump(ctx, "ffn_moe_probs", layer, s.probs.data(), nTok, X);
    dump(ctx, "ffn_moe_sel", layer, s.selScore.data(), nTok, X);  // what top-k ranked (bias, groups)

    // The routed experts and the shared ones (routed sum in rank order, then + shared, as llama.cpp).
    runExperts(ctx, L.gateExps, L.upExps, L.downExps, s.selected.data(), s.expertWeights.data(), U, x, nTok,
               ExpertBuffers{s.moeX.data(), s.ffnUp.data(), s.ffnGate.data()},
               out, L.gateShexp, L.upShexp, L.downShexp, s.shexpOut.data());
    if (L.gateShexp.present()) {
        dump(ctx, "ffn_shexp", layer, s.shexpOut.data(), nTok, E);
        ctx.be.add(out, s.shexpOut.data(), out, nTok * E);
    }
}

}  // namespace verdict::arch
