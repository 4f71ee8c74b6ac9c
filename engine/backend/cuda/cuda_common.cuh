// Shared pieces of the CUDA kernels: warp reductions and launch-size helpers. Device code only;
// the host side of the backend sees the launchers in cuda_ops.h.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace verdict::cuda {

constexpr int kWarp = 32;
// The largest grid y / z dimension: launches with rows on y go in chunks of this many rows.
constexpr int64_t kMaxGridY = 65535;

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
    for (int off = kWarp / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
    for (int off = kWarp / 2; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

// Sum over a block of blockDim.x threads (a multiple of 32, at most 1024); every thread gets it.
__device__ __forceinline__ float blockSum(float v) {
    __shared__ float partial[32];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warpSum(v);
    __syncthreads();  // partial may still be read by a previous call
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    const int nWarps = blockDim.x / kWarp;
    v = lane < nWarps ? partial[lane] : 0.0f;
    return warpSum(v);
}

// Maximum over a block, as blockSum.
__device__ __forceinline__ float blockMax(float v) {
    __shared__ float partial[32];
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warpMax(v);
    __syncthreads();
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    const int nWarps = blockDim.x / kWarp;
    v = lane < nWarps ? partial[lane] : -INFINITY;
    return warpMax(v);
}

inline unsigned gridFor(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace verdict::cuda
