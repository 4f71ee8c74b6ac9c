// Element-wise activations of the feed-forward blocks.
#pragma once

#include <cstdint>

namespace verdict::cpu {

// SiLU(x) = x / (1 + exp(-x))
float silu(float x);

// SwiGLU in place: gate[i] = silu(gate[i]) * up[i]  (llama.cpp's LLM_FFN_SILU + LLM_FFN_PAR:
// the activation is applied to the gate projection, then multiplied by the up projection).
void swigluInPlace(float* gate, const float* up, int64_t n);

// gpt-oss's clamped SwiGLU in place (ggml_swiglu_oai): x = min(gate, limit), y = clamp(up, -limit,
// limit), gate[i] = x * sigmoid(alpha x) * (y + 1). gpt-oss: alpha 1.702, limit 7.
void swigluOaiInPlace(float* gate, const float* up, int64_t n, float alpha, float limit);

// --- gemma2 --------------------------------------------------------------------------------------
// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (Hendrycks & Gimpel
// 2016; the constants of ggml's ggml_gelu_f32). In f32, exact.
float geluTanh(float x);

// GELU as ggml's CPU backend computes it for f32 tensors (ggml_vec_gelu_f32 with GGML_GELU_FP16):
// x <= -10 -> 0, x >= 10 -> x, else geluTanh of x rounded to f16, the result rounded to f16
// (a lookup in a 65536-entry table). Matches llama.cpp bit for bit; differs from geluTanh by up to
// ~1e-3 relative.
float geluTanhF16(float x);

// GeGLU in place: gate[i] = geluTanhF16(gate[i]) * up[i]  (llama.cpp's LLM_FFN_GELU + LLM_FFN_PAR).
void gegluInPlace(float* gate, const float* up, int64_t n);

// Soft-capping in place: x[i] = cap * tanh(x[i] / cap), computed as ggml does it (scale by 1/cap,
// tanh, scale by cap). Gemma 2's final-logit and attention-logit capping. cap must be > 0.
void softCapInPlace(float* x, int64_t n, float cap);

}  // namespace verdict::cpu
