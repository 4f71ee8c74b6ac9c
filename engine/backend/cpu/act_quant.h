// On-the-fly quantization of activations for the integer dot products.
//
// These follow llama.cpp's CPU path on x86 (ggml-cpu quantize_row_q8_0 / q8_1 with AVX2:
// d = amax / 127 stored as f16, quants = round-to-nearest-even(x * 127 / amax)), not the file
// quantizer quantize_row_q8_0_ref (which rounds half away from zero), so that an engine using
// them sees the same activation rounding as llama.cpp. Q8_K is ggml's quantize_row_q8_K_ref,
// which is also what llama.cpp's x86 CPU path runs.
#pragma once

#include "tensor/block_formats.h"
#include "tensor/tensor_type.h"

#include <cstdint>

namespace verdict::cpu {

// One 32-element activation block in the form every kernel uses: the f16-rounded scale as f32,
// the quants, and their sum.
struct ActBlock32 {
    float d;        // == fp16ToFp32(fp32ToFp16(amax / 127))
    float s;        // Q8_1 only: fp16-rounded (amax / 127) * sum, as ggml stores it
    int32_t sum;    // sum of qs
    int8_t qs[32];
};

void quantizeActBlock32(const float* x, ActBlock32& out);
// K a multiple of 32.
void quantizeActQ8_0(const float* x, int64_t K, tensor::BlockQ8_0* out);
void quantizeActQ8_1(const float* x, int64_t K, tensor::BlockQ8_1* out);
// K a multiple of 256.
void quantizeActQ8_K(const float* x, int64_t K, tensor::BlockQ8_K* out);

// x[0..K) replaced by the values matmul's dot products see for weights of `type` (kernels.h: f16,
// bf16, or the Q8_0 / Q8_1 / Q8_K blocks dequantized; f32 unchanged). K a multiple of the type's
// block size.
void roundAsMatmulInput(tensor::TensorType type, float* x, int64_t K);

}  // namespace verdict::cpu
