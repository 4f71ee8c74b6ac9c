// Normalisation ops over rows of f32 activations.
#pragma once

#include <cstdint>

namespace verdict::cpu {

// RMSNorm of one row: y = (x * 1/sqrt(mean(x^2) + eps)) * w   (w may be null: no gain).
// Arithmetic follows ggml's rms_norm + mul (ggml/src/ggml-cpu/ggml-cpu.c, ggml_compute_forward_
// rms_norm_f32): the squares are summed in double, the mean and scale are f32, the scale is applied
// first and the gain second. y may alias x.
void rmsNormRow(const float* x, const float* w, float* y, int64_t n, float eps);

// rmsNormRow over nRows rows of n elements (row stride n).
void rmsNormRows(const float* x, const float* w, float* y, int64_t nRows, int64_t n, float eps);

}  // namespace verdict::cpu
