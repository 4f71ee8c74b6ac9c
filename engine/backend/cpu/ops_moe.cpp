#include "backend/cpu/ops_moe.h"

#include "backend/cpu/ops_attention.h"

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
