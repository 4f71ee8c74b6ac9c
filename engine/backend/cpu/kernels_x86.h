// Kernel tables of the x86 SIMD files (internal to backend/cpu).
#pragma once

#include "backend/cpu/matmul_kernel.h"

namespace verdict::cpu {
namespace avx512 {
const MatmulKernel* q32Kernel(tensor::TensorType t);    // kernels_avx512_q32.cpp
const MatmulKernel* kquantKernel(tensor::TensorType t); // kernels_avx512_k.cpp
// useBf16Dot: BF16 weights with vdpbf16ps (needs AVX512_BF16) instead of widening + FMA.
const MatmulKernel* floatKernel(tensor::TensorType t, bool useBf16Dot);  // kernels_avx512_float.cpp
}  // namespace avx512
namespace avx2 {
const MatmulKernel* q32Kernel(tensor::TensorType t);    // kernels_avx2_q32.cpp
const MatmulKernel* kquantKernel(tensor::TensorType t); // kernels_avx2_k.cpp
const MatmulKernel* floatKernel(tensor::TensorType t);  // kernels_avx2_float.cpp
}  // namespace avx2
}  // namespace verdict::cpu
