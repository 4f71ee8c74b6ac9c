// Block formats to f16 / f32 in bulk: whole weight matrices (tiles of rows) for the tensor-core
// GEMMs of prefill and larger batches, and embedding rows. One thread per 4-element quad.
#include "backend/cuda/block_dispatch.cuh"
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_ops.h"

#include <algorithm>

namespace verdict::cuda {
namespace {

constexpr int kThreads = 256;

// One thread per quad (4 elements): consecutive threads write consecutive 8-byte pieces.
template <BlockType T>
__global__ void dequantF16Kernel(const uint8_t* w, uint64_t rowBytes, int64_t rowBegin, int64_t nRows,
                                 int64_t units, __half* out) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t quads = units * 8;
    if (i >= nRows * quads) return;
    const int64_t r = i / quads, u = (i % quads) / 8;
    const int q = static_cast<int>(i % 8);
    float v[4];
    decodeQuad<T>(w + static_cast<uint64_t>(rowBegin + r) * rowBytes, u, q, v);
    __half2* o = reinterpret_cast<__half2*>(out + r * units * 32 + u * 32 + 4 * q);
    o[0] = __floats2half2_rn(v[0], v[1]);
    o[1] = __floats2half2_rn(v[2], v[3]);
}

template <BlockType T>
__global__ void embedKernel(const uint8_t* w, uint64_t rowBytes, int64_t units, const int32_t* tokens,
                            int64_t nTok, float* out) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t quads = units * 8;
    if (i >= nTok * quads) return;
    const int64_t t = i / quads, u = (i % quads) / 8;
    const int q = static_cast<int>(i % 8);
    float v[4];
    decodeQuad<T>(w + static_cast<uint64_t>(tokens[t]) * rowBytes, u, q, v);
    *reinterpret_cast<float4*>(out + t * units * 32 + u * 32 + 4 * q) = make_float4(v[0], v[1], v[2], v[3]);
}

constexpr float kHalfSafe = 32768.0f;  // 2^15: rows reaching it are scaled (cuda_ops.h)

// One block per activation row.
__global__ void activationScaleKernel(const float* x, int64_t ldx, int64_t K, float* scale) {
    const float* row = x + static_cast<int64_t>(blockIdx.x) * ldx;
    float m = 0.0f;
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) m = fmaxf(m, fabsf(row[k]));  // fmaxf drops NaN
    m = blockMax(m);
    if (threadIdx.x == 0) {
        float sc = 1.0f;
        if (m >= kHalfSafe && isfinite(m)) {
            int e = 0;
            frexpf(m, &e);  // m < 2^e
            sc = ldexpf(1.0f, e - 15);
        }
        scale[blockIdx.x] = sc;
    }
}

__global__ void toHalfScaledKernel(const float* x, int64_t ldx, int64_t K, int64_t nTok, const float* scale,
                                   __half* y) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= nTok * K) return;
    const int64_t t = i / K, k = i % K;
    y[i] = __float2half_rn(x[t * ldx + k] * __frcp_rn(scale[t]));  // a power of two: exact; x * 1 when unscaled
}

// blockIdx.y: the row (of a chunk of at most kMaxGridY); the whole block leaves when its scale is 1.
__global__ void scaleRowsKernel(float* y, int64_t ldy, int64_t n, const float* scale) {
    const float sc = scale[blockIdx.y];
    if (sc == 1.0f) return;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[static_cast<int64_t>(blockIdx.y) * ldy + i] *= sc;
}

}  // namespace

void dequantizeF16(const DeviceMatrix& w, int64_t rowBegin, int64_t nRows, __half* out, cudaStream_t s) {
    const int64_t units = w.cols / 32;
    dispatchType(w.type, [&](auto tag) {
        dequantF16Kernel<decltype(tag)::value>
            <<<gridFor(nRows * units * 8, kThreads), kThreads, 0, s>>>(w.data, w.rowBytes, rowBegin, nRows, units, out);
    });
}

void embedRows(const DeviceMatrix& w, const int32_t* tokens, int64_t nTok, float* out, cudaStream_t s) {
    const int64_t units = w.cols / 32;
    dispatchType(w.type, [&](auto tag) {
        embedKernel<decltype(tag)::value>
            <<<gridFor(nTok * units * 8, kThreads), kThreads, 0, s>>>(w.data, w.rowBytes, units, tokens, nTok, out);
    });
}

void activationScales(const float* x, int64_t ldx, int64_t K, int64_t nTok, float* scale, cudaStream_t s) {
    if (nTok > 0) activationScaleKernel<<<static_cast<unsigned>(nTok), kThreads, 0, s>>>(x, ldx, K, scale);
}

void toHalfScaled(const float* x, int64_t ldx, int64_t K, int64_t nTok, const float* scale, __half* y,
                  cudaStream_t s) {
    if (nTok > 0) toHalfScaledKernel<<<gridFor(nTok * K, kThreads), kThreads, 0, s>>>(x, ldx, K, nTok, scale, y);
}

void scaleRows(float* y, int64_t ldy, int64_t n, int64_t nTok, const float* scale, cudaStream_t s) {
    for (int64_t t0 = 0; t0 < nTok; t0 += kMaxGridY) {
        const dim3 grid(gridFor(n, kThreads), static_cast<unsigned>(std::min(kMaxGridY, nTok - t0)));
        scaleRowsKernel<<<grid, kThreads, 0, s>>>(y + t0 * ldy, ldy, n, scale + t0);
    }
}

}  // namespace verdict::cuda
