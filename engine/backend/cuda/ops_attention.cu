// Attention over the KV cache: storing the pass's keys and values, then one fused kernel per
// pass that computes scores, an online softmax (running max and sum, Milakov & Gimelshein 2018,
// "Online normalizer calculation for softmax") and the weighted sum of values without writing the
// scores to memory. Warps take positions in turn; their states are merged in shared memory. For
// decode, few (row, head) pairs would leave most of the GPU idle, so the positions are also split
// across blocks whose states a second kernel merges (split-K "flash-decoding").
//
// Masking follows the CPU backend (backend/cpu/ops_attention.h): row t sees positions
// lo .. pos[t] of its own sequence, lo = pos - window + 1 with a sliding window, else 0; scores are
// (q . k) * scale, soft-capped when softCap > 0. A head's sink (gpt-oss; ggml_soft_max_ext's
// sinks) joins the final state's max and sum with no value row: out = acc / (sum + e^(sink - max)).
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_ops.h"
#include "backend/cuda/softmax_state.cuh"

#include <algorithm>

namespace verdict::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kMaxHeadDim = 256;  // checked when the model is opened
constexpr int kPerLane = kMaxHeadDim / kWarp;
constexpr int kSplitPairs = 256;  // below this many (row, head) pairs a pass splits positions


// Folds a sink logit into a softmax state {max M, sum L} whose weighted values are relative to M:
// returns the factor the values take, and updates M, L.
__device__ __forceinline__ float foldSink(float& M, float& L, float sink) {
    const float M2 = fmaxf(M, sink);
    const float c = L > 0.0f ? expf(M - M2) : 0.0f;
    L = L * c + expf(sink - M2);
    M = M2;
    return c;
}

template <class KT>
__global__ void storeKvKernel(AttentionShape a, const RowCache* rows, const float* k, const float* v) {
    const int t = blockIdx.x;
    const RowCache rc = rows[t];
    const int64_t kDim = static_cast<int64_t>(a.nHeadKv) * a.dimK, vDim = static_cast<int64_t>(a.nHeadKv) * a.dimV;
    const uint64_t layerBytes = static_cast<uint64_t>(rc.capacity) * (kDim + vDim) * sizeof(KT);
    KT* K = reinterpret_cast<KT*>(rc.base + static_cast<uint64_t>(a.layer) * layerBytes);
    KT* V = K + static_cast<int64_t>(rc.capacity) * kDim;
    for (int64_t i = threadIdx.x; i < kDim; i += blockDim.x) {
        const int64_t g = i / a.dimK, d = i % a.dimK;
        K[(g * rc.capacity + rc.pos) * a.dimK + d] = KT(k[t * kDim + i]);
    }
    for (int64_t i = threadIdx.x; i < vDim; i += blockDim.x) {
        const int64_t g = i / a.dimV, d = i % a.dimV;
        V[(g * rc.capacity + rc.pos) * a.dimV + d] = KT(v[t * vDim + i]);
    }
}

// grid (nHead, nTok, nSplit), kWarps warps. Writes out directly when nSplit == 1, else the
// block's state {max, sum, acc[dimV]} to partials.
template <class KT>
__global__ void attentionKernel(AttentionShape a, const RowCache* rows, const float* q, float* out, float* partials) {
    const int h = blockIdx.x, t = blockIdx.y, split = blockIdx.z, nSplit = gridDim.z;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const RowCache rc = rows[t];
    const int lo = a.window > 0 ? max(0, rc.pos - a.window + 1) : 0;
    const int len = rc.pos - lo + 1;
    const int chunk = (len + nSplit - 1) / nSplit;
    const int begin = lo + split * chunk, end = min(rc.pos + 1, begin + chunk);

    const int g = h / (a.nHead / a.nHeadKv);
    const int64_t kDim = static_cast<int64_t>(a.nHeadKv) * a.dimK, vDim = static_cast<int64_t>(a.nHeadKv) * a.dimV;
    const uint64_t layerBytes = static_cast<uint64_t>(rc.capacity) * (kDim + vDim) * sizeof(KT);
    const KT* K = reinterpret_cast<const KT*>(rc.base + static_cast<uint64_t>(a.layer) * layerBytes);
    const KT* V = K + static_cast<int64_t>(rc.capacity) * kDim;
    K += static_cast<int64_t>(g) * rc.capacity * a.dimK;
    V += static_cast<int64_t>(g) * rc.capacity * a.dimV;

    const float* qh = q + (static_cast<int64_t>(t) * a.nHead + h) * a.dimK;
    float qv[kPerLane];
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
        const int d = lane + kWarp * i;
        qv[i] = d < a.dimK ? qh[d] : 0.0f;
    }
    WarpSoftmax<kPerLane> state;
    for (int p = begin + warp; p < end; p += kWarps) {
        const KT* kp = K + static_cast<int64_t>(p) * a.dimK;
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int d = lane + kWarp * i;
            if (d < a.dimK) s += qv[i] * toFloat(kp[d]);
        }
        s = warpSum(s) * a.scale;
        if (a.softCap > 0.0f) s = a.softCap * tanhf(s / a.softCap);
        state.add(s, V + static_cast<int64_t>(p) * a.dimV, a.dimV, lane);
    }

    // Merge the warps' states.
    __shared__ BlockSoftmax<kWarps, kMaxHeadDim> merged;
    float M, L, f[kWarps];
    merged.merge(state, a.dimV, M, L, f);
    const int64_t pairIndex = static_cast<int64_t>(t) * a.nHead + h;
    if (nSplit == 1) {
        const float c = a.sinks ? foldSink(M, L, a.sinks[h]) : 1.0f;
        float* o = out + pairIndex * a.dimV;
        for (int d = threadIdx.x; d < a.dimV; d += blockDim.x) o[d] = merged.value(d, f) * c / L;
        return;
    }
    float* rec = partials + (pairIndex * nSplit + split) * (a.dimV + 2);
    if (threadIdx.x == 0) {
        rec[0] = L > 0.0f ? M : -INFINITY;
        rec[1] = L;
    }
    for (int d = threadIdx.x; d < a.dimV; d += blockDim.x) rec[2 + d] = merged.value(d, f);
}

// grid (nHead, nTok): merges the nSplit states of each (row, head).
__global__ void mergeSplitsKernel(AttentionShape a, int nSplit, const float* partials, float* out) {
    const int64_t pairIndex = static_cast<int64_t>(blockIdx.y) * a.nHead + blockIdx.x;
    const float* recs = partials + pairIndex * nSplit * (a.dimV + 2);
    float M = -INFINITY;
    for (int s = 0; s < nSplit; ++s)
        if (recs[s * (a.dimV + 2) + 1] > 0.0f) M = fmaxf(M, recs[s * (a.dimV + 2)]);
    float L = 0.0f;
    for (int s = 0; s < nSplit; ++s) {
        const float* r = recs + s * (a.dimV + 2);
        if (r[1] > 0.0f) L += r[1] * expf(r[0] - M);
    }
    const float M0 = M;  // the values below are relative to it
    const float c = a.sinks ? foldSink(M, L, a.sinks[blockIdx.x]) : 1.0f;
    for (int d = threadIdx.x; d < a.dimV; d += blockDim.x) {
        float v = 0.0f;
        for (int s = 0; s < nSplit; ++s) {
            const float* r = recs + s * (a.dimV + 2);
            if (r[1] > 0.0f) v += r[2 + d] * expf(r[0] - M0);
        }
        out[pairIndex * a.dimV + d] = v * c / L;
    }
}

}  // namespace

uint64_t cacheLayerBytes(const AttentionShape& a, int64_t capacity) {
    return static_cast<uint64_t>(capacity) * static_cast<uint64_t>(a.nHeadKv) * static_cast<uint64_t>(a.dimK + a.dimV)
         * (a.f16 ? 2u : 4u);
}

void storeKv(const AttentionShape& a, const RowCache* rows, int64_t nTok, const float* k, const float* v,
             cudaStream_t s) {
    if (nTok <= 0) return;
    if (a.f16)
        storeKvKernel<__half><<<static_cast<unsigned>(nTok), 256, 0, s>>>(a, rows, k, v);
    else
        storeKvKernel<float><<<static_cast<unsigned>(nTok), 256, 0, s>>>(a, rows, k, v);
}

int64_t attentionPartialFloats(const AttentionShape& a, int maxSplits) {
    return static_cast<int64_t>(kSplitPairs) * maxSplits * (a.dimV + 2);
}

int attentionSplits(const AttentionShape& a, int64_t nTok, int64_t maxLen, int maxSplits) {
    if (nTok * a.nHead >= kSplitPairs || maxSplits <= 1) return 1;
    return static_cast<int>(std::clamp<int64_t>((maxLen + 127) / 128, 1, maxSplits));
}

void attention(const AttentionShape& a, const RowCache* rows, int64_t nTok, int nSplit, const float* q, float* out,
               float* partials, cudaStream_t s) {
    if (nTok <= 0) return;
    if (nTok * a.nHead > kSplitPairs) nSplit = 1;  // the partials buffer covers kSplitPairs pairs
    if (nTok > kMaxGridY) {  // rows on grid y: in chunks (one split each, as above)
        for (int64_t t0 = 0; t0 < nTok; t0 += kMaxGridY)
            attention(a, rows + t0, std::min(kMaxGridY, nTok - t0), 1, q + t0 * a.nHead * a.dimK,
                      out + t0 * a.nHead * a.dimV, partials, s);
        return;
    }
    const dim3 grid(static_cast<unsigned>(a.nHead), static_cast<unsigned>(nTok), static_cast<unsigned>(nSplit));
    if (a.f16)
        attentionKernel<__half><<<grid, kWarps * kWarp, 0, s>>>(a, rows, q, out, partials);
    else
        attentionKernel<float><<<grid, kWarps * kWarp, 0, s>>>(a, rows, q, out, partials);
    if (nSplit > 1)
        mergeSplitsKernel<<<dim3(static_cast<unsigned>(a.nHead), static_cast<unsigned>(nTok)), 128, 0, s>>>(
            a, nSplit, partials, out);
}

}  // namespace verdict::cuda
