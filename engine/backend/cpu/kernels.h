// CPU compute kernels over GGUF tensor types: the interface the forward pass uses.
//
// Weights stay in their on-disk (quantized) blocks; activations are quantized on the fly to the
// type each weight type pairs with (Q8_0 / Q8_1 for the 32-element formats, Q8_K for K-quants),
// as llama.cpp does, and the dot products run on the blocks directly. Each SIMD path (AVX2,
// AVX-512) is chosen at run time and has a scalar reference it is tested against.
#pragma once

#include "tensor/tensor_type.h"

#include <cstdint>

namespace verdict::cpu {

class ThreadPool;

// True if the engine can compute with weights of this type: F32, F16, BF16, Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
// IQ3_S, IQ1_S, IQ1_M, TQ1_0, TQ2_0 (Q8_1 / Q8_K are activation formats only).
bool canCompute(tensor::TensorType type);

// Dequantizes n elements (a multiple of the block size) starting at a block boundary (the
// reference dequantizer of tensor/quantize.h; also F32 / F16 / BF16 rows). Thread-safe.
void dequantizeRow(tensor::TensorType type, const void* src, float* dst, int64_t n);

// f32 products with quantized rows, for ops that cannot quantize their activations (MLA's
// absorbed attention): each row is taken at its dequantizeRow values, so the results equal
// dequantizeRow followed by dotF32 / axpyF32 (ops_vec.h) row by row, bit for bit; Q8_0 runs fused.
// W: nRows rows of n elements of `type`, rowBytes apart.
//   dotRows:  y[r] = sum_k W[r, k] * x[k]
//   axpyRows: y[k] += sum_r a[r] * W[r, k], adding the rows in order r = 0, 1, ...
void dotRows(tensor::TensorType type, const void* W, size_t rowBytes, int64_t nRows, const float* x, float* y,
             int64_t n);
void axpyRows(tensor::TensorType type, const void* W, size_t rowBytes, int64_t nRows, const float* a, float* y,
              int64_t n);

// Y[t, r] = sum_k W[r, k] * X[t, k]
//   W: nRows rows of K elements of `type`, rows contiguous (row stride = rowBytes(type, K)),
//      straight from the mmap'd file: 2-byte aligned is enough (4 for F32; GGUF gives 32)
//   X: [nTok, K] f32, row-major;  Y: [nTok, nRows] f32, row-major (row stride ldy, >= nRows);
//      only Y[t, 0..nRows) is written
// Preconditions (asserted): canCompute(type), K a multiple of the type's block size.
// Numerics follow llama.cpp's CPU path: X is quantized once per call to Q8_0 (Q4_0, Q5_0, Q8_0,
// IQ4_NL, MXFP4 weights), Q8_1 (Q4_1, Q5_1) or Q8_K (K-quants, IQ4_XS, the lattice i-quants IQ2_* /
// IQ3_* / IQ1_*, TQ1_0, TQ2_0), rounded to f16 for F16 weights and to bf16 for
// BF16 weights, then dot products run in integer (quantized) or f32 (float types).
// The SIMD level is chosen once per process (cpu_features.h; VERDICT_CPU_SIMD can lower it).
// Work is split over the pool's threads (the caller takes part); nTok == 1 is the decode
// (matrix-vector) case. The result does not depend on the pool's size. Safe to call from
// several threads at once (with the same or different pools); uses a per-thread scratch buffer.
// packed: W holds the rows as packWeights left them (numerics: see packWeights).
void matmul(tensor::TensorType type, const void* W, int64_t nRows, int64_t K, const float* X,
            int64_t nTok, float* Y, int64_t ldy, ThreadPool& pool, bool packed = false);

// Load-time repacking of a weight matrix for the kernel matmul() runs on this CPU: where one
// exists (AVX-512: the 32-element formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4; Q2_K, Q4_K,
// Q5_K, Q6_K, IQ4_XS; F16, BF16),
// every 16 rows are interleaved into a "panel" that decode and prefill read without per-row
// horizontal sums or per-call packing. The result has the matrix's size (nRows x rowBytes; a
// stack of matrices packs matrix by matrix) and is only for matmul / matmulGroup with packed =
// true: row-wise readers (embedding rows, dequantizeRow, dotRows) need the original. The
// 32-element formats give the same bits packed or not; the Q2_K / Q4_K / Q5_K / Q6_K / IQ4_XS panels sum
// each super-block exactly in integer and the F16 / BF16 ones in chains by k (their row-major
// tiles keep 16 float lanes per row), so their results move in the last bits, the same for every
// pass.
bool canPack(tensor::TensorType type);
// Packs W (nRows rows of K elements) into out (same size, not overlapping W) over the pool.
void packWeights(tensor::TensorType type, const void* W, int64_t nRows, int64_t K, void* out, ThreadPool& pool);

// One product of a matmulGroup: the arguments of matmul().
struct MatmulJob {
    tensor::TensorType type;
    const void* W;
    int64_t nRows, K;
    const float* X;
    int64_t nTok;
    float* Y;
    int64_t ldy;
    bool packed = false;  // W as packWeights left it
};

// Runs independent matmuls (disjoint outputs) in one dispatch over the pool, each with matmul()'s
// numerics and task shapes: small products (the experts of a MoE decode step) keep every thread
// busy without a fork-join per matrix. Jobs with the same X, K, nTok and activation format
// prepare (quantize) X once. Jobs with nRows or nTok <= 0 are skipped. Same preconditions and
// thread safety as matmul().
void matmulGroup(const MatmulJob* jobs, int nJobs, ThreadPool& pool);

}  // namespace verdict::cpu
