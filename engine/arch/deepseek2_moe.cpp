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
void swiGluFfn(const ForwardContext& ctx, const Weight& gate, const Weight& up, const Weight& down,
               Deepseek2Scratch& s, const float* x, int64_t nTok, float* out) {
    project(ctx, up, nullptr, x, nTok, s.ffnUp.data());
    project(ctx, gate, nullptr, x, nTok, s.ffnGate.data());
    ctx.be.swiglu(s.ffnGate.data(), s.ffnUp.data(), nTok * gate.rows());
    project(ctx, down, nullptr, s.ffnGate.data(), nTok, out);
}

backend::GroupedRouting groupedRoutingOf(const ArchConfig& c, const float* selectionBias) {
    backend::GroupedRouting r;
    r.sigmoid = c.expertGating == ExpertGating::Sigmoid;
    r.selectionBias = selectionBias;
    r.nGroups = static_cast<int>(std::max<int64_t>(c.nExpertGroups, 1));
    r.nGroupsUsed = static_cast<int>(c.nExpertGroupsUsed);
    r.normalize = c.expertWeightsNorm;
    r.scale = c.expertWeightsScale;
    return r;
}

void deepseekMoe(const ForwardContext& ctx, const Deepseek2LayerWeights& L, Deepseek2Scratch& s, const float* x,
                 int64_t nTok, float* out, int layer) {
    const ArchConfig& c = ctx.cfg;
    const int64_t E = c.nEmbd, X = c.nExpert, U = c.nExpertUsed;

    // Routing.
    project(ctx, L.gateInp, nullptr, x, nTok, s.probs.data());
    dump(ctx, "ffn_moe_logits", layer, s.probs.data(), nTok, X);
    ctx.be.routeGrouped(groupedRoutingOf(c, vecOf(ctx, L.expProbsB)), s.probs.data(), nTok,
                        static_cast<int>(X), static_cast<int>(U), s.selScore.data(), s.selected.data(),
                        s.expertWeights.data());
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
