// IEEE binary16 (f16) and bfloat16 (bf16) <-> binary32 conversion.
//
// Scalar conversions are inline and exact: f16 handles subnormals, infinities and NaN, and rounds
// f32 -> f16 to nearest-even (what F16C's VCVTPS2PH with imm 0 and ggml's GGML_FP32_TO_FP16 do).
// f32 -> bf16 follows ggml's ggml_compute_fp32_to_bf16 (ggml/src/ggml-impl.h): round to nearest
// even on the top 16 bits, subnormals kept (not flushed), NaN made quiet by setting bit 6.
// The row functions are the fast paths (F16C / AVX-512 BF16 when the CPU has them) and give
// bit-identical results to the scalar ones.
#pragma once

#include <cstdint>
#include <cstring>

namespace verdict::tensor {

inline uint32_t floatBits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float bitsToFloat(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline float fp16ToFp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        // Zero or subnormal: mant * 2^-24, exact in f32.
        const float mag = static_cast<float>(mant) * 5.9604644775390625e-8f;
        return bitsToFloat(sign | floatBits(mag));
    }
    if (exp == 31) {
        // inf, or NaN made quiet with its payload kept (what F16C's VCVTPH2PS returns)
        return bitsToFloat(sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u));
    }
    return bitsToFloat(sign | ((exp + 112u) << 23) | (mant << 13));        // rebias 15 -> 127
}

inline uint16_t fp32ToFp16(float f) {
    uint32_t x = floatBits(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) {
        if (x == 0x7f800000u) return sign | 0x7c00u;                                  // inf
        return static_cast<uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));         // quiet NaN
    }
    // 65520 = 0x477ff000 is half-way between 65504 (max f16, odd mantissa) and 2^16: ties go up.
    if (x >= 0x477ff000u) return sign | 0x7c00u;
    if (x < 0x38800000u) {  // below 2^-14: f16 subnormal or zero, units of 2^-24
        if (x <= 0x33000000u) return sign;  // <= 2^-25 rounds to 0 (2^-25 is a tie to even 0)
        const uint32_t e = x >> 23;
        const uint32_t mant = (x & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126u - e;  // 14..24
        uint32_t q = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1u);
        const uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) ++q;
        return static_cast<uint16_t>(sign | q);
    }
    // Normal: round the low 13 mantissa bits to nearest even, carry may bump the exponent.
    x += 0xfffu + ((x >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((x - (112u << 23)) >> 13));
}

inline float bf16ToFp32(uint16_t h) { return bitsToFloat(static_cast<uint32_t>(h) << 16); }

inline uint16_t fp32ToBf16(float f) {
    const uint32_t u = floatBits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 64u);  // quiet NaN
    return static_cast<uint16_t>((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

// Row conversions (any n, any alignment); SIMD where available, same bits as the scalar forms.
void fp16ToFp32Row(const uint16_t* src, float* dst, int64_t n);
void fp32ToFp16Row(const float* src, uint16_t* dst, int64_t n);
void bf16ToFp32Row(const uint16_t* src, float* dst, int64_t n);
void fp32ToBf16Row(const float* src, uint16_t* dst, int64_t n);

}  // namespace verdict::tensor
