#include "backend/cpu/ops_moe.h"

#include "backend/cpu/ops_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace verdict::cpu {

void topKIndices(const float* v, int64_t n, int64_t k, int32_t* out) {
    for (int64_t slot = 0; slot < k; ++slot) {
        int32_t best = -1;
        for (int32_t e = 0; e < n; ++e) {
            bool taken = false;
            for (int64_t j = 0; j < slot; ++j) taken |= out[j] == e;
            if (!taken && (best < 0 || v[e] > v[best])) best = e;
        }
        out[slot] = best;
    }
}

namespace {

// Sets the selection scores of experts outside the best nUsed groups to -inf (a group's worth: the
// sum of its two best scores).
void maskGroups(float* sel, int64_t nExpert, int64_t nGroups, int64_t nUsed) {
    const int64_t per = nExpert / nGroups;
    float groupScore[256] = {};
    int32_t keep[256] = {};
    const int64_t G = std::min<int64_t>(nGroups, 256);
    for (int64_t g = 0; g < G; ++g) {
        int32_t best2[2] = {0, 0};
        const int64_t k = std::min<int64_t>(2, per);
        topKIndices(sel + g * per, per, k, best2);
        groupScore[g] = 0.0f;
        for (int64_t j = 0; j < k; ++j) groupScore[g] += sel[g * per + best2[j]];
    }
    topKIndices(groupScore, G, std::min(nUsed, G), keep);
    for (int64_t g = 0; g < G; ++g) {
        bool kept = false;
        for (int64_t j = 0; j < std::min(nUsed, G); ++j) kept |= keep[j] == g;
        if (!kept) std::fill_n(sel + g * per, per, -std::numeric_limits<float>::infinity());
    }
}

}  // namespace

void routeGroupedRow(const backend::GroupedRouting& r, float* scores, int64_t n, int64_t k, float* selection,
                     int32_t* experts, float* weights) {
    if (r.sigmoid) {
        for (int64_t e = 0; e < n; ++e) scores[e] = 1.0f / (1.0f + std::exp(-scores[e]));  // ggml_vec_sigmoid_f32
    } else {
        softmaxRow(scores, n, 1.0f);
    }
    for (int64_t e = 0; e < n; ++e) selection[e] = scores[e] + (r.selectionBias ? r.selectionBias[e] : 0.0f);
    if (r.nGroups > 1) maskGroups(selection, n, r.nGroups, r.nGroupsUsed);
    topKIndices(selection, n, k, experts);
    for (int64_t slot = 0; slot < k; ++slot) weights[slot] = scores[experts[slot]];
    if (r.normalize) {
        double sum = 0.0;  // ggml_sum_rows accumulates in double
        for (int64_t slot = 0; slot < k; ++slot) sum += weights[slot];
        const float fsum = static_cast<float>(sum);
        for (int64_t slot = 0; slot < k; ++slot) weights[slot] /= fsum;
    }
    for (int64_t slot = 0; slot < k; ++slot) weights[slot] *= r.scale;
}

void routeSoftmaxTopKRow(float* logits, int64_t n, int64_t k, int32_t* experts, float* weights) {
    softmaxRow(logits, n, 1.0f);
    topKIndices(logits, n, k, experts);  // highest probability first, lowest id wins ties
    for (int64_t slot = 0; slot < k; ++slot) weights[slot] = logits[experts[slot]];
    double sum = 0.0;
    for (int64_t slot = 0; slot < k; ++slot) sum += weights[slot];
    const float fsum = static_cast<float>(sum);
    for (int64_t slot = 0; slot < k; ++slot) weights[slot] /= fsum;
}

void routeTopKSoftmaxRow(const float* logits, int64_t n, int64_t k, int32_t* experts, float* weights) {
    topKIndices(logits, n, k, experts);
    for (int64_t slot = 0; slot < k; ++slot) weights[slot] = logits[experts[slot]];
    softmaxRow(weights, k, 1.0f);
}

}  // namespace verdict::cpu
