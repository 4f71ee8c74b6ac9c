// Scalar reference quantization and dequantization of ggml block formats: the source of truth
// that every SIMD kernel is tested against.
//
// The quantizers reproduce ggml's reference quantizers (ggml-quants.c quantize_row_*_ref, which
// llama-quantize uses when no importance matrix is given), operation for operation, so that a
// file Verdict writes is byte-identical to what llama-quantize writes from the same f32 data.
// Exception: IQ4_NL, IQ4_XS and MXFP4 have quantizers of Verdict's own (quant_iq.cpp: a
// least-squared-error scale search), so those files decode correctly but differ from
// llama-quantize's bytes. F16 and BF16 use the conversions of half.h.
#pragma once

#include "tensor/tensor_type.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <cstring>

namespace verdict::tensor {

// Types with a reference dequantizer: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1,
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_NL, IQ4_XS, MXFP4, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S,
// IQ1_S, IQ1_M, TQ1_0, TQ2_0.
bool canDequantize(TensorType t);
// Types with a reference quantizer: the same set but the lattice i-quants (IQ2_*, IQ3_*, IQ1_*),
// TQ1_0 and TQ2_0 (read only).
bool canQuantize(TensorType t);

// n elements (a multiple of the block size) starting at a block boundary. Block data must have
// its natural alignment: 2 bytes for the f16-scaled blocks, 4 for Q8_K and F32.
// Preconditions (asserted, not checked in release): can*(t) and n % blockElems == 0.
void dequantizeRow(TensorType t, const void* src, float* dst, int64_t n);
void quantizeRow(TensorType t, const float* src, void* dst, int64_t n);

// Quantizes a [nRows, rowLen] f32 matrix into rows of type t (dst holds nRows * rowBytes(t,
// rowLen) bytes). Fails with a message if the type has no quantizer or rowLen does not fit its
// block size.
Result<void> quantizeRows(TensorType t, const float* src, void* dst, int64_t nRows, int64_t rowLen);

// ggml's nearest_int: round to nearest, ties to even, valid for |f| <= 4194303 (2^22 - 1).
// Kept bit-for-bit (a float add of 1.5 * 2^23) so the quantizers round exactly as ggml does.
inline int nearestInt(float f) {
    const float v = f + 12582912.f;
    int32_t i;
    std::memcpy(&i, &v, sizeof i);
    return (i & 0x007fffff) - 0x00400000;
}

}  // namespace verdict::tensor
