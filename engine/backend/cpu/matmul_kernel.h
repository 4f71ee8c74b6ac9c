// Internal interface between the matmul driver (matmul.cpp) and the per-type kernels.
//
// A kernel is three functions for one weight type at one SIMD level:
//   actRowBytes(K)    size of one prepared activation row (a multiple of 64 bytes),
//   prepareAct(x,K,o) turns one f32 activation row into what the dot products read: Q8_0 / Q8_1 /
//                     Q8_K blocks for quantized weights, rounded f32 (F16, BF16 weights), ...
//                     Each SIMD kernel may lay the blocks out its own way, but the VALUES (scales,
//                     quants, sums) are the same at every level, so levels differ only by float
//                     summation order;
//   compute(a,...)    Y[t, r] for a rectangle of rows x tokens, tiled however suits the kernel.
#pragma once

#include "backend/cpu/cpu_features.h"
#include "tensor/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace verdict::cpu {

class ThreadPool;

struct MatmulArgs {
    const uint8_t* W = nullptr;  // nRows rows of rowBytes bytes (weights, on-disk blocks)
    size_t rowBytes = 0;
    int64_t K = 0;               // elements per row
    const uint8_t* act = nullptr;  // prepared activations, one row per token
    size_t actStride = 0;          // bytes between token rows of `act`
    float* Y = nullptr;            // Y[t * ldy + r]
    int64_t ldy = 0;
    int64_t packedRows = 0;        // rows [0, packedRows) are in the kernel's panels (pack), a multiple of 16
};

struct MatmulKernel {
    tensor::TensorType type;
    SimdLevel level;
    size_t (*actRowBytes)(int64_t K);
    void (*prepareAct)(const float* x, int64_t K, void* out);
    // Rows [r0, r1) x tokens [t0, t1). Called concurrently on disjoint rectangles.
    void (*compute)(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1);
    // Optional load-time repacking (null: the kernel reads on-disk rows only): rows [0, nRows) of W,
    // a multiple of 16, into `out` (nRows x rowBytes bytes, the same size), every 16 rows as one
    // panel the kernel's compute reads when MatmulArgs::packedRows covers them. Panels are relative
    // to W, so disjoint 16-row ranges may be packed concurrently. Called through packWithKernel,
    // which copies the rows after the last panel.
    void (*pack)(const uint8_t* W, size_t rowBytes, int64_t nRows, int64_t K, uint8_t* out) = nullptr;
    // The panels sum in an order of their own (an exact integer sum per super-block, float chains
    // by k), not the bits of the row-major tiles; every pass still gives the same bits.
    bool panelsOwnNumerics = false;
    // Set where a level has two kernels for the type ("bf16dot": vdpbf16ps), for names in tests
    // and benchmarks.
    const char* variant = nullptr;
};

// Kernels by level; nullptr where a level has no kernel for the type (or the CPU lacks it for
// avx2Kernel / avx512Kernel: they check the CPU themselves).
const MatmulKernel* referenceKernel(tensor::TensorType t);
const MatmulKernel* avx2Kernel(tensor::TensorType t);
const MatmulKernel* avx512Kernel(tensor::TensorType t);

// Every kernel this CPU can run for the type (reference first): tests and benchmarks.
std::vector<const MatmulKernel*> availableKernels(tensor::TensorType t);

// Best kernel at or below `level`, down to the reference; nullptr if the type is not computable.
const MatmulKernel* selectKernel(tensor::TensorType t, SimdLevel level);

// matmul() (kernels.h) with an explicit kernel: tests and benchmarks compare levels with it.
// packed: W was packed by kernel.pack.
void matmulWithKernel(const MatmulKernel& kernel, const void* W, int64_t nRows, int64_t K,
                      const float* X, int64_t nTok, float* Y, int64_t ldy, ThreadPool& pool, bool packed = false);
// packWeights() (kernels.h) with an explicit kernel (kernel.pack set): the whole panels over the
// pool, the rows after the last one copied as they are.
void packWithKernel(const MatmulKernel& kernel, const void* W, int64_t nRows, int64_t K, void* out, ThreadPool& pool);

inline size_t roundUp64(size_t n) { return (n + 63) & ~size_t{63}; }

// The packed rows of a compute() task, [r0, min(r1, a.packedRows)), one 16-row panel at a time
// for each block of tokens (tokBlock: what stays in cache over the task's panels): tile4(panel,
// r, u) computes tokens u .. u + 3, tile1 token u alone. Returns where the task's row-major rows
// start (r1 when all its rows are packed, r0 when none is).
template <class Tile4, class Tile1>
int64_t forEachPanel(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1, int64_t tokBlock,
                     Tile4&& tile4, Tile1&& tile1) {
    if (r0 >= a.packedRows) return r0;
    const int64_t pEnd = r1 < a.packedRows ? r1 : a.packedRows;
    for (int64_t tb = t0; tb < t1; tb += tokBlock) {
        const int64_t te = tb + tokBlock < t1 ? tb + tokBlock : t1;
        for (int64_t r = r0; r < pEnd; r += 16) {
            const uint8_t* panel = a.W + r * a.rowBytes;
            int64_t u = tb;
            for (; u + 4 <= te; u += 4) tile4(panel, r, u);
            for (; u < te; ++u) tile1(panel, r, u);
        }
    }
    return pEnd;
}

}  // namespace verdict::cpu
