// Rotary position embedding (RoPE), with linear scaling, YaRN and per-dimension frequency factors.
//
// Two layouts of the rotated pairs (llama.cpp's rope types):
//   Norm: pairs are adjacent elements (x[2i], x[2i+1])        -- llama, mistral, mixtral
//   Neox: pairs are the two halves    (x[i], x[i + nRot/2])   -- qwen2, phi3, gemma2, ...
// Only the first nRot elements of a head rotate; the rest pass through.
//
// The angles are computed the way ggml does (ggml-cpu.c, ggml_rope_cache_init / rope_yarn), so
// that f32 results match llama.cpp bit for bit: theta starts at the position and is multiplied by
// base^(-2/nRot) once per pair in f32; YaRN blends interpolated and extrapolated angles with a
// linear ramp between the correction dimensions and scales the magnitude by 1 + 0.1 ln(1/scale)
// (Peng et al. 2023, "YaRN: Efficient Context Window Extension of Large Language Models").
#pragma once

#include <cstdint>

namespace verdict::cpu {

enum class RopeMode { Norm, Neox };

struct RopeParams {
    int nRot = 0;                  // rotated dimensions per head (even)
    float freqBase = 10000.0f;     // base of the geometric frequency series
    float freqScale = 1.0f;        // position scale: 1 / (linear or YaRN scaling factor)
    float extFactor = 0.0f;        // YaRN extrapolation mix (0 = plain / linear scaling)
    float attnFactor = 1.0f;       // magnitude multiplier of cos/sin
    float betaFast = 32.0f;        // YaRN correction range (rotations)
    float betaSlow = 1.0f;
    int nCtxOrig = 0;              // context length the model was trained at (YaRN)
    const float* freqFactors = nullptr;  // [nRot/2] divisors of theta (Llama 3.1 rope_freqs), or null
};

// Fills table[nRot] = (cos, sin) pairs for one position: table[2i] = cos, table[2i+1] = sin of the
// angle of pair i.
void ropeTable(const RopeParams& p, int32_t pos, float* table);

// Rotates nHead heads of headDim elements (contiguous) in place, using a table from ropeTable.
void applyRope(RopeMode mode, float* x, int64_t nHead, int64_t headDim, int nRot, const float* table);

}  // namespace verdict::cpu
