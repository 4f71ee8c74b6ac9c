// Kernel tables of the x86 SIMD files (internal to backend/cpu).
#pragma once

#include "backend/cpu/matmul_kernel.h"

namespace verdict::cpu {
namespace avx512 {
const MatmulKernel* q32Kernel(tensor::TensorType t);    // kernels_avx512_q32.cpp
const MatmulKernel* kquantKernel(tensor::TensorType t); // kernels_avx512_k.cpp
// Q2_K / Q4_K / Q5_K / Q6_K / IQ4_XS panels (kernels_avx512_kpanel.cpp, instantiated for those five): the
// MatmulKernel::pack of their kernels, and the rows r0 .. packedRows of a packed matrix, returning
// the first row left (row-major) to compute.
template <tensor::TensorType T>
void packKPanels(const uint8_t* W, size_t rowBytes, int64_t nRows, int64_t K, uint8_t* out);
template <tensor::TensorType T>
int64_t computeKPanels(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1);
// The lattice i-quants IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S (kernels_avx512_grid.cpp, instantiated
// for those five): MatmulKernel::compute of their kernels.
template <tensor::TensorType T>
void computeGrid(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1);
// useBf16Dot: BF16 weights with vdpbf16ps (needs AVX512_BF16; the default where the CPU has it)
// instead of widening + FMA.
const MatmulKernel* floatKernel(tensor::TensorType t, bool useBf16Dot);  // kernels_avx512_float.cpp
}  // namespace avx512
namespace avx2 {
const MatmulKernel* q32Kernel(tensor::TensorType t);    // kernels_avx2_q32.cpp
const MatmulKernel* kquantKernel(tensor::TensorType t); // kernels_avx2_k.cpp
const MatmulKernel* floatKernel(tensor::TensorType t);  // kernels_avx2_float.cpp
}  // namespace avx2
}  // namespace verdict::cpu
