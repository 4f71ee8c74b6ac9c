// Element-wise activations of the feed-forward blocks.
#pragma once

#include <cstdint>

namespace verdict::cpu {

// SiLU(x) = x / (1 + exp(-x))
float silu(float x);

// SwiGLU in place: gate[i] = silu(gate[i]) * up[i]  (llama.cpp's LLM_FFN_SILU + LLM_FFN_PAR:
// the activation is applied to the gate projection, then multiplied by the up projection).
void swigluInPlace(float* gate, const float* up, int64_t n);

}  // namespace verdict::cpu
