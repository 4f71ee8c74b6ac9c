// The weight types the CPU computes, and random blocks of those Verdict reads but does not write
// (the lattice i-quants, MXFP4, TQ1_0 / TQ2_0): shared by the kernel tests and the backend op cases.
#pragma once

#include "tensor/half.h"
#include "tensor/tensor_type.h"

#include <cstdint>
#include <cstring>
#include <random>

namespace verdict::test {

inline constexpr tensor::TensorType kComputableTypes[] = {
    tensor::TensorType::F32,    tensor::TensorType::F16,     tensor::TensorType::BF16,   tensor::TensorType::Q4_0,
    tensor::TensorType::Q4_1,   tensor::TensorType::Q5_0,    tensor::TensorType::Q5_1,   tensor::TensorType::Q8_0,
    tensor::TensorType::Q2_K,   tensor::TensorType::Q3_K,    tensor::TensorType::Q4_K,   tensor::TensorType::Q5_K,
    tensor::TensorType::Q6_K,   tensor::TensorType::IQ4_NL,  tensor::TensorType::IQ4_XS, tensor::TensorType::MXFP4,
    tensor::TensorType::IQ2_XXS, tensor::TensorType::IQ2_XS, tensor::TensorType::IQ2_S,  tensor::TensorType::IQ3_XXS,
    tensor::TensorType::IQ3_S,  tensor::TensorType::IQ1_S,   tensor::TensorType::IQ1_M,  tensor::TensorType::TQ1_0,
    tensor::TensorType::TQ2_0};

// Random index, sign and sub-scale bytes with the super-block scale in a normal range (d about
// 0.01-0.05, MXFP4 exponents 2^-7..2^-3), written where the format keeps it: first (most), last
// (TQ1_0, TQ2_0) or in the top nibbles of the four scale words (IQ1_M, bytes 48-55).
inline void randomBlocks(tensor::TensorType t, std::mt19937& rng, uint8_t* out, uint64_t bytes) {
    using tensor::TensorType;
    std::uniform_int_distribution<int> byte(0, 255);
    for (uint64_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(byte(rng));
    std::uniform_real_distribution<float> scale(0.01f, 0.05f);
    const uint64_t blockBytes = tensor::traits(t).blockBytes;
    for (uint64_t b = 0; b + blockBytes <= bytes; b += blockBytes) {
        const uint16_t d = tensor::fp32ToFp16(scale(rng));
        if (t == TensorType::MXFP4) {
            out[b] = static_cast<uint8_t>(120 + byte(rng) % 5);
        } else if (t == TensorType::TQ1_0 || t == TensorType::TQ2_0) {
            std::memcpy(out + b + blockBytes - 2, &d, 2);
        } else if (t == TensorType::IQ1_M) {
            for (int w = 0; w < 4; ++w) {
                uint8_t& hi = out[b + 48 + 2 * w + 1];
                hi = static_cast<uint8_t>((hi & 0x0F) | (((d >> (4 * w)) & 0xF) << 4));
            }
        } else {
            std::memcpy(out + b, &d, 2);
        }
    }
}

}  // namespace verdict::test
