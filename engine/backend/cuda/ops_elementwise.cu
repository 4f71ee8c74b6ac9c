// Row-wise and element-wise ops: RMSNorm, residual adds, biases, SwiGLU / GeGLU, scaling,
// soft-capping, RoPE, the activation rounding of roundAsMatmulInput. Same formulas as
// the CPU backend (backend/cpu/ops_norm, ops_activation, ops_rope); the RoPE angles come from the
// very same host function (cpu::ropeTable), so only the rotation runs here.
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_ops.h"

#include <cuda_bf16.h>

namespace verdict::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void rmsNormKernel(const float* x, const float* w, float* y, int64_t n, float eps) {
    const float* xr = x + blockIdx.x * n;
    float* yr = y + blockIdx.x * n;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += xr[i] * xr[i];
    sum = blockSum(sum);
    const float scale = rsqrtf(sum / static_cast<float>(n) + eps);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = w ? (xr[i] * scale) * w[i] : xr[i] * scale;
}

__global__ void addKernel(const float* a, const float* b, float* y, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a[i] + b[i];
}

__global__ void addBiasKernel(float* y, const float* bias, int64_t total, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < total) y[i] += bias[i % n];
}

__global__ void swigluKernel(float* gate, const float* up, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        const float g = gate[i];
        gate[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

__global__ void swigluOaiKernel(float* gate, const float* up, int64_t n, float alpha, float limit) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        const float x = fminf(gate[i], limit);
        const float y = fminf(fmaxf(up[i], -limit), limit);
        gate[i] = x / (1.0f + expf(-alpha * x)) * (y + 1.0f);
    }
}

__global__ void addExpertBiasKernel(float* y, const float* bias, const int32_t* experts, int64_t total, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < total) y[i] += bias[static_cast<int64_t>(experts[i / n]) * n + i % n];
}

__global__ void gegluKernel(float* gate, const float* up, int64_t n, const uint16_t* table) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float x = gate[i];
    const float g = x <= -10.0f ? 0.0f
                  : x >= 10.0f  ? x
                                : __half2float(__ushort_as_half(table[__half_as_ushort(__float2half_rn(x))]));
    gate[i] = g * up[i];
}

__global__ void scaleKernel(float* x, float factor, int64_t n) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}

__global__ void softCapKernel(float* x, int64_t n, float cap) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] = __fmul_rn(tanhf(__fmul_rn(x[i], 1.0f / cap)), cap);
}

// One thread per rotated pair: (token, head, pair).
__global__ void ropeKernel(float* x, int64_t nTok, int64_t nHead, int64_t headDim, int nRot, bool neox,
                           const float* table) {
    const int64_t half = nRot / 2;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= nTok * nHead * half) return;
    const int64_t pair = i % half, h = (i / half) % nHead, t = i / (half * nHead);
    float* v = x + (t * nHead + h) * headDim;
    const float c = table[t * nRot + 2 * pair], s = table[t * nRot + 2 * pair + 1];
    const int64_t i0 = neox ? pair : 2 * pair, i1 = neox ? pair + half : 2 * pair + 1;
    const float x0 = v[i0], x1 = v[i1];
    // Rounded as the CPU's applyRope (no fused multiply-add): products, then the sum.
    v[i0] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
    v[i1] = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
}

// x as f16 or bf16 would hold it (round to nearest even), back in f32.
__global__ void roundHalfKernel(float* x, int64_t n, bool bf16) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) x[i] = bf16 ? __bfloat162float(__float2bfloat16_rn(x[i])) : __half2float(__float2half_rn(x[i]));
}

// Groups of 32 as Q8_0 / Q8_1 blocks hold them (backend/cpu/act_quant.cpp quantizeActBlock32):
// d = amax / 127, kept as f16; q = nearest-even(x * 127 / amax); x = d * q. One warp per group.
__global__ void roundQ8Kernel(float* x, int64_t nGroups) {
    const int64_t g = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / kWarp;
    if (g >= nGroups) return;  // whole warps leave together: blockDim is a multiple of 32
    float* p = x + g * kWarp;
    const int lane = threadIdx.x % kWarp;
    const float v = p[lane];
    const float amax = warpMax(fabsf(v));
    const float id = amax != 0.0f ? 127.f / amax : 0.0f;
    p[lane] = __half2float(__float2half_rn(amax / 127.f)) * rintf(v * id);
}

// Groups of 256 as Q8_K blocks hold them (tensor/quant_k.cpp quantizeQ8_K): the element of
// largest magnitude (the first of equals) is `max`; q = min(127, nearest-even(-127 / max * x));
// x = (1 / iscale) * q. One block of 256 threads per group.
__global__ void roundQ8KKernel(float* x) {
    __shared__ float sAbs[8], sVal[8];
    __shared__ int sIdx[8];
    float* p = x + blockIdx.x * static_cast<int64_t>(256);
    const int t = threadIdx.x, lane = t % kWarp, warp = t / kWarp;
    const float v = p[t];
    float a = fabsf(v), val = v;
    int idx = t;
#pragma unroll
    for (int off = kWarp / 2; off > 0; off /= 2) {
        const float a2 = __shfl_xor_sync(0xffffffffu, a, off), v2 = __shfl_xor_sync(0xffffffffu, val, off);
        const int i2 = __shfl_xor_sync(0xffffffffu, idx, off);
        if (a2 > a || (a2 == a && i2 < idx)) {
            a = a2;
            val = v2;
            idx = i2;
        }
    }
    if (lane == 0) {
        sAbs[warp] = a;
        sVal[warp] = val;
        sIdx[warp] = idx;
    }
    __syncthreads();
    float best = sAbs[0], max = sVal[0];
    int bi = sIdx[0];
    for (int w = 1; w < 8; ++w)
        if (sAbs[w] > best || (sAbs[w] == best && sIdx[w] < bi)) {
            best = sAbs[w];
            max = sVal[w];
            bi = sIdx[w];
        }
    if (best == 0.0f) {
        p[t] = 0.0f;
        return;
    }
    const float iscale = -127.f / max;
    p[t] = (1.0f / iscale) * fminf(127.f, rintf(iscale * v));
}

}  // namespace

void rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps, cudaStream_t s) {
    if (rows > 0) rmsNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(x, w, y, n, eps);
}

void add(const float* a, const float* b, float* y, int64_t n, cudaStream_t s) {
    if (n > 0) addKernel<<<gridFor(n, kThreads), kThreads, 0, s>>>(a, b, y, n);
}

void addBias(float* y, const float* bias, int64_t rows, int64_t n, cudaStream_t s) {
    if (rows * n > 0) addBiasKernel<<<gridFor(rows * n, kThreads), kThreads, 0, s>>>(y, bias, rows * n, n);
}

void swiglu(float* gate, const float* up, int64_t n, cudaStream_t s) {
    if (n > 0) swigluKernel<<<gridFor(n, kThreads), kThreads, 0, s>>>(gate, up, n);
}

void swigluOai(float* gate, const float* up, int64_t n, float alpha, float limit, cudaStream_t s) {
    if (n > 0) swigluOaiKernel<<<gridFor(n, kThreads), kThreads, 0, s>>>(gate, up, n, alpha, limit);
}

void addExpertBias(float* y, const float* bias, const int32_t* experts, int64_t nPairs, int64_t n, cudaStream_t s) {
    if (nPairs * n > 0)
        addExpertBiasKernel<<<gridFor(nPairs * n, kThreads), kThreads, 0, s>>>(y, bias, experts, nPairs * n, n);
}

void geglu(float* gate, const float* up, int64_t n, const uint16_t* geluTable, cudaStream_t s) {
    if (n > 0) gegluKernel<<<gridFor(n, kThreads), kThreads, 0, s>>>(gate, up, n, geluTable);
}

void scale(float* x, float factor, int64_t n, cudaStream_t s) {
    if (n > 0) scaleKernel<<<gridFor(n, kThreads), kThreads, 0, s>>>(x, factor, n);
}

void roundAsMatmulInput(ActRounding r, float* x, int64_t n, cudaStream_t s) {
    if (n <= 0) return;
    switch (r) {
        case ActRounding::None: return;
        case ActRounding::F16:
        case ActRounding::BF16:
            roundHalfKernel<<<gridFor(n, kThreads), kThreads, 0, s>>>(x, n, r == ActRounding::BF16);
            return;
        case ActRounding::Q8:
            roundQ8Kernel<<<gridFor(n, kThreads), kThreads, 0, s>>>(x, n / kWarp);
            return;
        case ActRounding::Q8K:
            roundQ8KKernel<<<static_cast<unsigned>(n / 256), 256, 0, s>>>(x);
            return;
    }
}

void softCap(float* x, int64_t n, float cap, cudaStream_t s) {
    if (n > 0) softCapKernel<<<gridFor(n, kThreads), kThreads, 0, s>>>(x, n, cap);
}

void rope(float* x, int64_t nTok, int64_t nHead, int64_t headDim, int nRot, bool neox, const float* table,
          cudaStream_t s) {
    const int64_t n = nTok * nHead * (nRot / 2);
    if (n > 0) ropeKernel<<<gridFor(n, kThreads), kThreads, 0, s>>>(x, nTok, nHead, headDim, nRot, neox, table);
}

}  // namespace verdict::cuda
