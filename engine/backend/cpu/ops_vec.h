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

// x[i] = f32(f16(x[i])): rounded to the nearest half (ties to even), as tensor::fp32ToFp16
void roundToF16(float* x, int64_t n);

// Attention's inner loops over many rows at once: every result is bit for bit what the one-row
// function above gives (same products, same summation order), but each key / value row is read
// (and converted from f16) once for all query rows, and the independent sums are interleaved so
// the FMA latency is hidden (one dot product alone is a chain of dependent FMAs).
//
// out[i * ldo + j] = dotF32(q + i * ldq, keys + j * d, d)      for i < nq, j < nKeys
void dotRowsF32(const float* q, int64_t ldq, int64_t nq, const float* keys, int64_t nKeys, int64_t d, float* out,
                int64_t ldo);
// out[i * ldo + j] = dotF32F16(q + i * ldq, keys + j * d, d)
void dotRowsF16(const float* q, int64_t ldq, int64_t nq, const uint16_t* keys, int64_t nKeys, int64_t d, float* out,
                int64_t ldo);
// for j < nKeys, for i < np: axpyF32(p[i * ldp + j], values + j * d, out + i * d, d)
void accumulateRowsF32(const float* p, int64_t np, int64_t ldp, const float* values, int64_t nKeys, int64_t d, float* out);
// the same with axpyF16
void accumulateRowsF16(const float* p, int64_t np, int64_t ldp, const uint16_t* values, int64_t nKeys, int64_t d,
                       float* out);

}  // namespace verdict::cpu
