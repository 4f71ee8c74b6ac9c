// Block formats to f16 / f32 in bulk: whole weight matrices (tiles of rows) for the tensor-core
// GEMMs of prefill and larger batches, and embedding rows. One thread per 4-element quad.
#include "backend/cuda/block_dispatch.cuh"
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_ops.h"

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

__global__ void toHalfKernel(const float* x, __half* y, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2half_rn(x[i]);
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

void toHalf(const float* x, __half* y, int64_t n, cudaStream_t s) {
    toHalfKernel<<<gridFor(n, kThreads), kThreads, 0, s>>>(x, y, n);
}

}  // namespace verdict::cuda
