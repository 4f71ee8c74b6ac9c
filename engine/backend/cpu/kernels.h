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

// True if the engine can compute with weights of this type.
bool canCompute(tensor::TensorType type);

// Dequantizes n elements (a multiple of the block size) starting at a block boundary.
void dequantizeRow(tensor::TensorType type, const void* src, float* dst, int64_t n);

// Y[t, r] = sum_k W[r, k] * X[t, k]
//   W: nRows rows of K elements of `type`, rows contiguous (row stride = rowBytes(type, K))
//   X: [nTok, K] f32, row-major;  Y: [nTok, nRows] f32, row-major (row stride ldy, >= nRows)
// Work is split over the pool's threads; nTok == 1 is the decode (matrix-vector) case.
void matmul(tensor::TensorType type, const void* W, int64_t nRows, int64_t K, const float* X,
            int64_t nTok, float* Y, int64_t ldy, ThreadPool& pool);

}  // namespace verdict::cpu
