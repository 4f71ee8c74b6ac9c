// Mixture-of-experts routing and the weighted sum of expert outputs, as the CPU backend does it
// (arch/decoder.cpp moeSwiGlu): softmax over the router logits (max subtracted, the sum of exps in
// double), the top U experts by probability with the lowest id winning ties, weights renormalised
// over the chosen ones, outputs added in rank order. One thread per token: nExpert is small
// (8 .. 256) and this keeps the order of operations exactly the CPU's.
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_ops.h"

namespace verdict::cuda {
namespace {

constexpr int kMaxExperts = 512;  // checked when the model is opened

__global__ void routeKernel(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                            float* weights) {
    const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= nTok) return;
    const float* x = logits + t * nExpert;
    float mx = -INFINITY;
    for (int e = 0; e < nExpert; ++e) mx = fmaxf(mx, x[e]);
    double sum = 0.0;
    for (int e = 0; e < nExpert; ++e) sum += static_cast<double>(expf(x[e] - mx));
    const float inv = static_cast<float>(1.0 / sum);
    int32_t* sel = experts + t * U;
    float* w = weights + t * U;
    bool taken[kMaxExperts];
    for (int e = 0; e < nExpert; ++e) taken[e] = false;
    double wsum = 0.0;
    for (int slot = 0; slot < U; ++slot) {
        int best = -1;
        float bestP = 0.0f;
        for (int e = 0; e < nExpert; ++e) {
            if (taken[e]) continue;
            const float p = expf(x[e] - mx) * inv;
            if (best < 0 || p > bestP) {
                best = e;
                bestP = p;
            }
        }
        taken[best] = true;
        sel[slot] = best;
        w[slot] = bestP;
        wsum += bestP;
    }
    const float fsum = static_cast<float>(wsum);
    for (int slot = 0; slot < U; ++slot) w[slot] /= fsum;
}

__global__ void routeTopKSoftmaxKernel(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                                       float* weights) {
    const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= nTok) return;
    const float* x = logits + t * nExpert;
    int32_t* sel = experts + t * U;
    float* w = weights + t * U;
    bool taken[kMaxExperts];
    for (int e = 0; e < nExpert; ++e) taken[e] = false;
    for (int slot = 0; slot < U; ++slot) {
        int best = -1;
        for (int e = 0; e < nExpert; ++e)
            if (!taken[e] && (best < 0 || x[e] > x[best])) best = e;
        taken[best] = true;
        sel[slot] = best;
    }
    const float mx = x[sel[0]];  // the largest: slots are best first
    double sum = 0.0;
    for (int slot = 0; slot < U; ++slot) {
        w[slot] = expf(x[sel[slot]] - mx);
        sum += static_cast<double>(w[slot]);
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int slot = 0; slot < U; ++slot) w[slot] *= inv;
}

// Indices of the k largest of v[0..n) into out, best first, lowest index first among equals.
__device__ void topK(const float* v, int n, int k, int32_t* out) {
    for (int slot = 0; slot < k; ++slot) {
        int best = -1;
        for (int e = 0; e < n; ++e) {
            bool taken = false;
            for (int j = 0; j < slot; ++j) taken |= out[j] == e;
            if (!taken && (best < 0 || v[e] > v[best])) best = e;
        }
        out[slot] = best;
    }
}

__global__ void routeGroupedKernel(bool sigmoid, const float* bias, int nGroups, int nGroupsUsed, bool normalize,
                                   float scale, float* scores, int64_t nTok, int nExpert, int U, float* selection,
                                   int32_t* experts, float* weights) {
    const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= nTok) return;
    float* p = scores + t * nExpert;
    if (sigmoid) {
        for (int e = 0; e < nExpert; ++e) p[e] = 1.0f / (1.0f + expf(-p[e]));
    } else {
        float mx = -INFINITY;
        for (int e = 0; e < nExpert; ++e) mx = fmaxf(mx, p[e]);
        double sum = 0.0;
        for (int e = 0; e < nExpert; ++e) {
            p[e] = expf(p[e] - mx);
            sum += static_cast<double>(p[e]);
        }
        const float inv = static_cast<float>(1.0 / sum);
        for (int e = 0; e < nExpert; ++e) p[e] *= inv;
    }
    float sel[kMaxExperts];
    for (int e = 0; e < nExpert; ++e) sel[e] = p[e] + (bias ? bias[e] : 0.0f);
    if (nGroups > 1) {
        const int per = nExpert / nGroups, G = nGroups < 256 ? nGroups : 256;
        const int used = nGroupsUsed < G ? nGroupsUsed : G;
        float groupScore[256];
        int32_t keep[256];
        for (int g = 0; g < G; ++g) {
            int32_t best2[2] = {0, 0};
            const int k = per < 2 ? per : 2;
            topK(sel + g * per, per, k, best2);
            groupScore[g] = 0.0f;
            for (int j = 0; j < k; ++j) groupScore[g] += sel[g * per + best2[j]];
        }
        topK(groupScore, G, used, keep);
        for (int g = 0; g < G; ++g) {
            bool kept = false;
            for (int j = 0; j < used; ++j) kept |= keep[j] == g;
            if (!kept)
                for (int e = 0; e < per; ++e) sel[g * per + e] = -INFINITY;
        }
    }
    if (selection)
        for (int e = 0; e < nExpert; ++e) selection[t * nExpert + e] = sel[e];
    int32_t* chosen = experts + t * U;
    float* w = weights + t * U;
    topK(sel, nExpert, U, chosen);
    for (int slot = 0; slot < U; ++slot) w[slot] = p[chosen[slot]];
    if (normalize) {
        double sum = 0.0;
        for (int slot = 0; slot < U; ++slot) sum += static_cast<double>(w[slot]);
        const float fsum = static_cast<float>(sum);
        for (int slot = 0; slot < U; ++slot) w[slot] /= fsum;
    }
    for (int slot = 0; slot < U; ++slot) w[slot] *= scale;
}

__global__ void combineKernel(const float* y, const float* weights, int64_t nTok, int U, int64_t n, float* out) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= nTok * n) return;
    const int64_t t = i / n, j = i % n;
    float v = y[(t * U) * n + j] * weights[t * U];
    for (int slot = 1; slot < U; ++slot) v += y[(t * U + slot) * n + j] * weights[t * U + slot];
    out[i] = v;
}

__global__ void gatherKernel(const float* src, int64_t n, const int32_t* order, int64_t count, int64_t div,
                             float* dst) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= count * n) return;
    const int64_t j = i / n, e = i % n;
    dst[i] = src[(order[j] / div) * n + e];
}

__global__ void scatterKernel(const float* src, int64_t n, const int32_t* order, int64_t count, float* dst) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= count * n) return;
    const int64_t j = i / n, e = i % n;
    dst[order[j] * n + e] = src[i];
}

}  // namespace

void gatherRows(const float* src, int64_t n, const int32_t* order, int64_t count, int64_t div, float* dst,
                cudaStream_t s) {
    if (count * n > 0) gatherKernel<<<gridFor(count * n, 256), 256, 0, s>>>(src, n, order, count, div, dst);
}

void scatterRows(const float* src, int64_t n, const int32_t* order, int64_t count, float* dst, cudaStream_t s) {
    if (count * n > 0) scatterKernel<<<gridFor(count * n, 256), 256, 0, s>>>(src, n, order, count, dst);
}

void routeSoftmaxTopK(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts, float* weights,
                      cudaStream_t s) {
    if (nTok > 0) routeKernel<<<gridFor(nTok, 64), 64, 0, s>>>(logits, nTok, nExpert, U, experts, weights);
}

void routeTopKSoftmax(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts, float* weights,
                      cudaStream_t s) {
    if (nTok > 0) routeTopKSoftmaxKernel<<<gridFor(nTok, 64), 64, 0, s>>>(logits, nTok, nExpert, U, experts, weights);
}

void routeGrouped(bool sigmoid, const float* selectionBias, int nGroups, int nGroupsUsed, bool normalize, float scale,
                  float* scores, int64_t nTok, int nExpert, int U, float* selection, int32_t* experts, float* weights,
                  cudaStream_t s) {
    if (nTok > 0)
        routeGroupedKernel<<<gridFor(nTok, 64), 64, 0, s>>>(sigmoid, selectionBias, nGroups, nGroupsUsed, normalize, scale,
                                                            scores, nTok, nExpert, U, selection, experts, weights);
}

void combineExperts(const float* y, const float* weights, int64_t nTok, int U, int64_t n, float* out,
                    cudaStream_t s) {
    if (nTok * n > 0) combineKernel<<<gridFor(nTok * n, 256), 256, 0, s>>>(y, weights, nTok, U, n, out);
}

}  // namespace verdict::cuda
