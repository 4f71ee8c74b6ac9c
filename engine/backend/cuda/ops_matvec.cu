// Matrix x few vectors for decode (and passes of up to kMatvecMaxCols rows): each warp computes one
// output row. The warp walks the row four 32-element units at a time, each lane decoding one quad
// (4 elements) of a unit straight from the GGUF blocks (block_decode.cuh decodeQuad), so the 32
// lanes' loads of weights and of activations cover consecutive addresses (4 units = 128 floats of
// x per load instruction). The weights are read once per pass for all vectors; accumulation is f32,
// the lanes' partial sums combined with a warp reduction.
#include "backend/cuda/block_dispatch.cuh"
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_ops.h"

#include <cuda_bf16.h>

namespace verdict::cuda {
namespace {

constexpr int kRowsPerBlock = 8;  // warps per block, one row each
constexpr int kQuadsPerUnit = 8;
constexpr int kUnitsPerStep = kWarp / kQuadsPerUnit;

// The activation as the CPU backend (and llama.cpp's) multiplies it with weights of type T: rounded
// to f16 for F16 weights and to bf16 for BF16 weights (their vec_dot types), else as it is.
template <BlockType T>
__device__ __forceinline__ float activation(float x) {
    if constexpr (T == BlockType::F16) {
        return __half2float(__float2half_rn(x));
    } else if constexpr (T == BlockType::BF16) {
        return __bfloat162float(__float2bfloat16_rn(x));
    } else {
        return x;
    }
}

// acc[c] += w[0..3] . x[c][0..3] for the columns in use (x 16-byte aligned: rows of 32k floats).
template <BlockType T>
__device__ __forceinline__ void accumulate(const float (&w)[4], const float* x, int64_t ldx, int nCols,
                                           float (&acc)[kMatvecMaxCols]) {
#pragma unroll
    for (int c = 0; c < kMatvecMaxCols; ++c) {
        if (c < nCols) {
            const float4 v = __ldg(reinterpret_cast<const float4*>(x + c * ldx));
            acc[c] += w[0] * activation<T>(v.x) + w[1] * activation<T>(v.y) + w[2] * activation<T>(v.z)
                    + w[3] * activation<T>(v.w);
        }
    }
}

// Lane l takes quad l % 8 of units l / 8, l / 8 + 4, ... of `row`; returns its partial sums.
template <BlockType T>
__device__ __forceinline__ void rowDot(const uint8_t* row, int64_t units, const float* x, int64_t ldx, int nCols,
                                       float (&acc)[kMatvecMaxCols]) {
    const int lane = threadIdx.x % kWarp, q = lane % kQuadsPerUnit;
    for (int64_t u = lane / kQuadsPerUnit; u < units; u += kUnitsPerStep) {
        float wv[4];
        decodeQuad<T>(row, u, q, wv);
        accumulate<T>(wv, x + u * 32 + 4 * q, ldx, nCols, acc);
    }
}

template <BlockType T>
__global__ void matvecKernel(const uint8_t* w, uint64_t rowBytes, int64_t rows, int64_t units, const float* x,
                             int64_t ldx, int nCols, float* y, int64_t ldy) {
    const int lane = threadIdx.x % kWarp;
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
    if (r >= rows) return;  // the whole warp leaves together
    float acc[kMatvecMaxCols] = {};
    rowDot<T>(w + static_cast<uint64_t>(r) * rowBytes, units, x, ldx, nCols, acc);
#pragma unroll
    for (int c = 0; c < kMatvecMaxCols; ++c) {
        if (c < nCols) {
            const float v = warpSum(acc[c]);
            if (lane == 0) y[c * ldy + r] = v;
        }
    }
}

// grid (pairs, row blocks): pairs on x, which allows 2^31 - 1 of them.
template <BlockType T>
__global__ void expertMatvecKernel(const uint8_t* w, uint64_t rowBytes, uint64_t matrixBytes, int64_t rows,
                                   int64_t units, const int32_t* experts, const float* x, int64_t ldx, int64_t xDiv,
                                   float* y, int64_t ldy) {
    const int lane = threadIdx.x % kWarp;
    const int64_t p = blockIdx.x;
    const int64_t r = static_cast<int64_t>(blockIdx.y) * kRowsPerBlock + threadIdx.x / kWarp;
    if (r >= rows) return;
    const uint8_t* row = w + static_cast<uint64_t>(experts[p]) * matrixBytes + static_cast<uint64_t>(r) * rowBytes;
    float acc[kMatvecMaxCols] = {};
    rowDot<T>(row, units, x + (p / xDiv) * ldx, ldx, 1, acc);
    const float v = warpSum(acc[0]);
    if (lane == 0) y[p * ldy + r] = v;
}

}  // namespace

void matvec(const DeviceMatrix& w, const float* x, int64_t ldx, int nCols, float* y, int64_t ldy, cudaStream_t s) {
    const int64_t units = w.cols / 32;
    const unsigned blocks = gridFor(w.rows, kRowsPerBlock);
    dispatchType(w.type, [&](auto tag) {
        matvecKernel<decltype(tag)::value>
            <<<blocks, kRowsPerBlock * kWarp, 0, s>>>(w.data, w.rowBytes, w.rows, units, x, ldx, nCols, y, ldy);
    });
}

void expertMatvec(const DeviceMatrix& w, const int32_t* experts, int64_t nPairs, const float* x, int64_t ldx,
                  int64_t xDiv, float* y, int64_t ldy, cudaStream_t s) {
    if (nPairs <= 0) return;
    const int64_t units = w.cols / 32;
    const dim3 grid(static_cast<unsigned>(nPairs), gridFor(w.rows, kRowsPerBlock));
    dispatchType(w.type, [&](auto tag) {
        expertMatvecKernel<decltype(tag)::value><<<grid, kRowsPerBlock * kWarp, 0, s>>>(
            w.data, w.rowBytes, w.matrixBytes(), w.rows, units, experts, x, ldx, xDiv, y, ldy);
    });
}

}  // namespace verdict::cuda
