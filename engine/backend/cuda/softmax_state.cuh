// The online softmax of the attention kernels (Milakov & Gimelshein 2018, "Online normalizer
// calculation for softmax"): each warp keeps a running max m, sum l and weighted values acc over the
// positions it takes, rescaling them as the max grows; the warps' states are then merged through
// shared memory. ops_attention.cu (per-head K / V) and ops_mla.cu (the latent cache) share it.
#pragma once

#include "backend/cuda/cuda_common.cuh"

#include <cuda_fp16.h>

namespace verdict::cuda {

__device__ __forceinline__ float toFloat(float v) { return v; }
__device__ __forceinline__ float toFloat(__half v) { return __half2float(v); }

// One warp's state over values of up to kPerLane * 32 elements (lane holds elements lane + 32 i).
template <int kPerLane>
struct WarpSoftmax {
    float m = -INFINITY, l = 0.0f, acc[kPerLane];

    __device__ WarpSoftmax() {
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) acc[i] = 0.0f;
    }
    // Adds a position of score s (the same in every lane) and value row v (dim elements).
    template <class VT>
    __device__ void add(float s, const VT* v, int dim, int lane) {
        const float mNew = fmaxf(m, s);
        const float corr = expf(m - mNew), e = expf(s - mNew);
        l = l * corr + e;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int d = lane + kWarp * i;
            if (d < dim) acc[i] = acc[i] * corr + e * toFloat(v[d]);
        }
        m = mNew;
    }
};

// The states of a block's kWarps warps merged: M, L the block's max and sum; value d of the block
// (relative to M) is value(d) = sum over warps of acc[w][d] * f[w]. Every thread may read it.
template <int kWarps, int kMaxDim>
struct BlockSoftmax {
    float sm[kWarps], sl[kWarps], acc[kWarps][kMaxDim];

    // Every thread calls it (it synchronizes the block); returns M and L, fills f.
    template <int kPerLane>
    __device__ void merge(const WarpSoftmax<kPerLane>& w, int dim, float& M, float& L, float (&f)[kWarps]) {
        const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
        if (lane == 0) {
            sm[warp] = w.m;
            sl[warp] = w.l;
        }
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int d = lane + kWarp * i;
            if (d < dim) acc[warp][d] = w.acc[i];
        }
        __syncthreads();
        M = -INFINITY;
        for (int k = 0; k < kWarps; ++k) M = fmaxf(M, sm[k]);
        L = 0.0f;
        for (int k = 0; k < kWarps; ++k) {
            f[k] = sl[k] > 0.0f ? expf(sm[k] - M) : 0.0f;
            L += sl[k] * f[k];
        }
    }
    __device__ float value(int d, const float (&f)[kWarps]) const {
        float v = 0.0f;
        for (int k = 0; k < kWarps; ++k) v += acc[k][d] * f[k];
        return v;
    }
};

}  // namespace verdict::cuda
