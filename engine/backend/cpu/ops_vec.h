// Small f32 vector primitives used by the scalar ops (attention, norms). Matrix products live in
// kernels.h; these are the inner loops of the ops that are not matrix products.
//
// Each function has an AVX2+FMA path chosen at run time and a portable path; both accumulate in
// f32 with 8 independent partial sums, so results differ from a naive loop only in summation order.
#pragma once

#include <cstdint>

namespace verdict::cpu {

// sum_i a[i] * b[i]
float dotF32(const float* a, const float* b, int64_t n);

// sum_i a[i] * f16(b[i]), b in IEEE half (KV cache in f16)
float dotF32F16(const float* a, const uint16_t* b, int64_t n);

// y[i] += a * x[i]
void axpyF32(float a, const float* x, float* y, int64_t n);

// y[i] += a * f16(x[i])
void axpyF16(float a, const uint16_t* x, float* y, int64_t n);

// x[i] *= s
void scaleF32(float* x, float s, int64_t n);

}  // namespace verdict::cpu
