// Per-type decoding of ggml weight blocks, written once for nvcc (device) and g++ (host tests).
//
// The unit of work is 32 consecutive elements of a row ("unit u" = elements 32u .. 32u+31). A
// legacy block (Q4_0 ... Q8_0) is one unit, a K-quant super-block of 256 elements is 8 units,
// and F32 / F16 / BF16 rows are treated as 32-element "blocks". Layouts and element order follow
// engine/tensor/block_formats.h and the reference dequantizers in quant_legacy.cpp / quant_k.cpp
// (themselves ggml's dequantize_row_*, llama.cpp c392e509); decodeUnit performs the same float
// operations in the same order, so on the host it is bit-identical to tensor::dequantizeRow.
// On the device decodeUnit uses __fmul_rn / __fadd_rn so nvcc cannot contract a*b-c into an FMA
// (which would round differently); dotUnit has no such constraint.
//
// Block bytes are read with byte loads and assembled little-endian by hand: GGUF block data is
// only 2-byte aligned (a Q8_0 block is 34 bytes). F32 rows are read as float (4-aligned), F16 /
// BF16 rows as uint16_t (2-aligned). No std:: calls: the functions must compile as device code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define VD_HD __host__ __device__ __forceinline__
#else
#define VD_HD inline
#endif

namespace verdict::cuda {

enum class BlockType : int { F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K };

// kElems: elements per block; kBytes: bytes per block; kUnits: 32-element units per block.
template <BlockType T> struct BlockTraits;
#define VD_BLOCK_TRAITS(T, elems, bytes)                        \
    template <> struct BlockTraits<BlockType::T> {               \
        static constexpr int kElems = elems;                     \
        static constexpr int kBytes = bytes;                     \
        static constexpr int kUnits = elems / 32;                \
    };
VD_BLOCK_TRAITS(F32, 32, 128)
VD_BLOCK_TRAITS(F16, 32, 64)
VD_BLOCK_TRAITS(BF16, 32, 64)
VD_BLOCK_TRAITS(Q4_0, 32, 18)
VD_BLOCK_TRAITS(Q4_1, 32, 20)
VD_BLOCK_TRAITS(Q5_0, 32, 22)
VD_BLOCK_TRAITS(Q5_1, 32, 24)
VD_BLOCK_TRAITS(Q8_0, 32, 34)
VD_BLOCK_TRAITS(Q2_K, 256, 84)
VD_BLOCK_TRAITS(Q3_K, 256, 110)
VD_BLOCK_TRAITS(Q4_K, 256, 144)
VD_BLOCK_TRAITS(Q5_K, 256, 176)
VD_BLOCK_TRAITS(Q6_K, 256, 210)
#undef VD_BLOCK_TRAITS

// ---- scalar helpers ------------------------------------------------------------------------

VD_HD float vdBitsToFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
#endif
}

// Exact-rounding multiply / add that nvcc may not fuse (plain operators on the host, where the
// engine is built without FMA contraction).
VD_HD float vdMul(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
VD_HD float vdAdd(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

// IEEE binary16 bits -> f32, exact: subnormals, +-0, inf; NaN kept with payload and made quiet
// (the same bits as tensor::fp16ToFp32 / F16C's VCVTPH2PS).
VD_HD float halfBitsToFloat(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        // Zero or subnormal: mant * 2^-24, exact and a normal f32 (so device FTZ cannot bite).
        const float mag = static_cast<float>(mant) * 5.9604644775390625e-8f;
        return sign ? -mag : mag;
    }
    if (exp == 31) return vdBitsToFloat(sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u));
    return vdBitsToFloat(sign | ((exp + 112u) << 23) | (mant << 13));  // rebias 15 -> 127
}

// bfloat16 bits -> f32: the top half of the f32 pattern (exact for every value, NaN unchanged).
VD_HD float bf16BitsToFloat(uint16_t h) { return vdBitsToFloat(static_cast<uint32_t>(h) << 16); }

VD_HD uint16_t loadU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
VD_HD uint32_t loadU32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
           (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
VD_HD float loadHalf(const uint8_t* p) { return halfBitsToFloat(loadU16(p)); }

// Start of the block holding unit u, and u's index inside it.
template <BlockType T> VD_HD const uint8_t* unitBlock(const uint8_t* row, int64_t u, int& sub) {
    using Tr = BlockTraits<T>;
    sub = static_cast<int>(u % Tr::kUnits);
    return row + (u / Tr::kUnits) * Tr::kBytes;
}

// 6-bit scale / min j (0..7) of Q4_K / Q5_K (block_formats.h scaleMinK4).
VD_HD void scaleMinK4Dev(int j, const uint8_t* q, int& sc, int& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Signed 6-bit scale j (0..15) of Q3_K, already minus 32 (block_formats.h unpackQ3KScales).
VD_HD int q3kScale(const uint8_t* s, int j) {
    const int low = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
    const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (low | (high << 4)) - 32;
}

// ---- quant extraction ------------------------------------------------------------------------
// qAt<T>(b, s, l) returns the integer quant of element l (0..31) of sub-unit s of block b, and
// the per-16/32 scale pair is formed by unitScale<T>. Kept separate so decodeUnit and dotUnit
// read the same bits.

// Legacy nibble order: element l < 16 = low nibble of qs[l], l >= 16 = high nibble of qs[l-16].
VD_HD int nibble(const uint8_t* qs, int l) { return l < 16 ? (qs[l] & 0xF) : (qs[l - 16] >> 4); }

template <BlockType T> VD_HD int qAt(const uint8_t* b, int s, int l);
template <> VD_HD int qAt<BlockType::Q4_0>(const uint8_t* b, int, int l) { return nibble(b + 2, l) - 8; }
template <> VD_HD int qAt<BlockType::Q4_1>(const uint8_t* b, int, int l) { return nibble(b + 4, l); }
template <> VD_HD int qAt<BlockType::Q5_0>(const uint8_t* b, int, int l) {
    return (nibble(b + 6, l) | static_cast<int>(((loadU32(b + 2) >> l) & 1u) << 4)) - 16;
}
template <> VD_HD int qAt<BlockType::Q5_1>(const uint8_t* b, int, int l) {
    return nibble(b + 8, l) | static_cast<int>(((loadU32(b + 4) >> l) & 1u) << 4);
}
template <> VD_HD int qAt<BlockType::Q8_0>(const uint8_t* b, int, int l) {
    return static_cast<int8_t>(b[2 + l]);
}
// Q2_K: element 32s + l of the super-block is bits 2(s%4).. of qs[32(s/4) + l]; qs at byte 16.
template <> VD_HD int qAt<BlockType::Q2_K>(const uint8_t* b, int s, int l) {
    return (b[16 + 32 * (s / 4) + l] >> (2 * (s % 4))) & 3;
}
// Q3_K: low 2 bits as Q2_K (qs at byte 32), high bit = bit s of hmask[l]; clear bit means -4.
template <> VD_HD int qAt<BlockType::Q3_K>(const uint8_t* b, int s, int l) {
    return ((b[32 + 32 * (s / 4) + l] >> (2 * (s % 4))) & 3) - ((b[l] >> s) & 1 ? 0 : 4);
}
// Q4_K: sub-unit s = nibble (s%2) of qs[32(s/2) + l]; qs at byte 16.
template <> VD_HD int qAt<BlockType::Q4_K>(const uint8_t* b, int s, int l) {
    return (b[16 + 32 * (s / 2) + l] >> (4 * (s % 2))) & 0xF;
}
// Q5_K: as Q4_K (qs at byte 48) plus bit s of qh[l] (qh at byte 16) worth 16.
template <> VD_HD int qAt<BlockType::Q5_K>(const uint8_t* b, int s, int l) {
    return ((b[48 + 32 * (s / 2) + l] >> (4 * (s % 2))) & 0xF) + ((b[16 + l] >> s) & 1 ? 16 : 0);
}
// Q6_K: s = 4h + r: low 4 bits = nibble (r/2) of ql[64h + 32(r%2) + l], high 2 bits = bits 2r..
// of qh[32h + l] (qh at byte 128), minus 32.
template <> VD_HD int qAt<BlockType::Q6_K>(const uint8_t* b, int s, int l) {
    const int h = s / 4, r = s % 4;
    const int lo = (b[64 * h + 32 * (r % 2) + l] >> (4 * (r / 2))) & 0xF;
    const int hi = (b[128 + 32 * h + l] >> (2 * r)) & 3;
    return (lo | (hi << 4)) - 32;
}

// Scale and offset of the two 16-element halves of a unit: value = mul[l/16] * q + off[l/16].
// The K-quants' "dl * q - ml" is stored as off = -ml: x + (-y) is exactly x - y in IEEE, so the
// reference's rounding is kept. Types without an offset skip the add (adding +0 would turn the
// reference's -0 results into +0). Q6_K's (d * sc) * q has the same shape.
struct UnitScale {
    float mul[2];
    float off[2];
};

template <BlockType T>
constexpr bool kHasOffset = T == BlockType::Q4_1 || T == BlockType::Q5_1 || T == BlockType::Q2_K ||
                            T == BlockType::Q4_K || T == BlockType::Q5_K;

template <BlockType T> VD_HD UnitScale unitScale(const uint8_t* b, int s);
template <> VD_HD UnitScale unitScale<BlockType::Q4_0>(const uint8_t* b, int) {
    const float d = loadHalf(b);
    return {{d, d}, {0.0f, 0.0f}};
}
template <> VD_HD UnitScale unitScale<BlockType::Q5_0>(const uint8_t* b, int) {
    const float d = loadHalf(b);
    return {{d, d}, {0.0f, 0.0f}};
}
template <> VD_HD UnitScale unitScale<BlockType::Q8_0>(const uint8_t* b, int) {
    const float d = loadHalf(b);
    return {{d, d}, {0.0f, 0.0f}};
}
template <> VD_HD UnitScale unitScale<BlockType::Q4_1>(const uint8_t* b, int) {
    const float d = loadHalf(b), m = loadHalf(b + 2);
    return {{d, d}, {m, m}};
}
template <> VD_HD UnitScale unitScale<BlockType::Q5_1>(const uint8_t* b, int) {
    const float d = loadHalf(b), m = loadHalf(b + 2);
    return {{d, d}, {m, m}};
}
template <> VD_HD UnitScale unitScale<BlockType::Q2_K>(const uint8_t* b, int s) {
    const float d = loadHalf(b + 80), dmin = loadHalf(b + 82);
    UnitScale r{};
    for (int k = 0; k < 2; ++k) {
        const int sc = b[2 * s + k];
        r.mul[k] = vdMul(d, static_cast<float>(sc & 0xF));
        r.off[k] = -vdMul(dmin, static_cast<float>(sc >> 4));
    }
    return r;
}
template <> VD_HD UnitScale unitScale<BlockType::Q3_K>(const uint8_t* b, int s) {
    const float d = loadHalf(b + 108);
    UnitScale r{};
    for (int k = 0; k < 2; ++k) r.mul[k] = vdMul(d, static_cast<float>(q3kScale(b + 96, 2 * s + k)));
    return r;
}
template <> VD_HD UnitScale unitScale<BlockType::Q4_K>(const uint8_t* b, int s) {
    int sc, m;
    scaleMinK4Dev(s, b + 4, sc, m);
    const float dl = vdMul(loadHalf(b), static_cast<float>(sc));
    const float ml = vdMul(loadHalf(b + 2), static_cast<float>(m));
    return {{dl, dl}, {-ml, -ml}};
}
template <> VD_HD UnitScale unitScale<BlockType::Q5_K>(const uint8_t* b, int s) {
    return unitScale<BlockType::Q4_K>(b, s);  // same d, dmin, scales[12] placement
}
template <> VD_HD UnitScale unitScale<BlockType::Q6_K>(const uint8_t* b, int s) {
    const float d = loadHalf(b + 208);
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    UnitScale r{};
    for (int k = 0; k < 2; ++k) r.mul[k] = vdMul(d, static_cast<float>(sc[2 * s + k]));
    return r;
}

// ---- public API ------------------------------------------------------------------------------

// Decodes unit u (elements 32u .. 32u+31) of the row starting at `row` into out[0..31].
template <BlockType T> VD_HD void decodeUnit(const uint8_t* row, int64_t u, float out[32]) {
    if constexpr (T == BlockType::F32) {
        const float* p = reinterpret_cast<const float*>(row) + 32 * u;
        for (int l = 0; l < 32; ++l) out[l] = p[l];
    } else if constexpr (T == BlockType::F16 || T == BlockType::BF16) {
        const uint16_t* p = reinterpret_cast<const uint16_t*>(row) + 32 * u;
        for (int l = 0; l < 32; ++l)
            out[l] = T == BlockType::F16 ? halfBitsToFloat(p[l]) : bf16BitsToFloat(p[l]);
    } else {
        int s;
        const uint8_t* b = unitBlock<T>(row, u, s);
        const UnitScale sc = unitScale<T>(b, s);
        for (int l = 0; l < 32; ++l) {
            const float v = vdMul(sc.mul[l / 16], static_cast<float>(qAt<T>(b, s, l)));
            if constexpr (kHasOffset<T>)
                out[l] = vdAdd(v, sc.off[l / 16]);
            else
                out[l] = v;
        }
    }
}

// Decodes elements 4q .. 4q+3 (q = 0..7) of unit u into out[0..3], the same values as decodeUnit.
// The kernels give each of 8 lanes one quad of a unit, so a warp's loads of weights and
// activations cover consecutive addresses.
template <BlockType T> VD_HD void decodeQuad(const uint8_t* row, int64_t u, int q, float out[4]) {
    if constexpr (T == BlockType::F32) {
        const float* p = reinterpret_cast<const float*>(row) + 32 * u + 4 * q;
#if defined(__CUDA_ARCH__)
        const float4 v = *reinterpret_cast<const float4*>(p);  // 16-byte aligned: rows of 32k floats in a 256-aligned arena
        out[0] = v.x;
        out[1] = v.y;
        out[2] = v.z;
        out[3] = v.w;
#else
        for (int l = 0; l < 4; ++l) out[l] = p[l];
#endif
    } else if constexpr (T == BlockType::F16 || T == BlockType::BF16) {
        const uint16_t* p = reinterpret_cast<const uint16_t*>(row) + 32 * u + 4 * q;
#if defined(__CUDA_ARCH__)
        const uint2 v = *reinterpret_cast<const uint2*>(p);  // 8-byte aligned likewise
        const uint16_t h[4] = {static_cast<uint16_t>(v.x & 0xFFFFu), static_cast<uint16_t>(v.x >> 16),
                               static_cast<uint16_t>(v.y & 0xFFFFu), static_cast<uint16_t>(v.y >> 16)};
#else
        const uint16_t h[4] = {p[0], p[1], p[2], p[3]};
#endif
        for (int l = 0; l < 4; ++l) out[l] = T == BlockType::F16 ? halfBitsToFloat(h[l]) : bf16BitsToFloat(h[l]);
    } else {
        int s;
        const uint8_t* b = unitBlock<T>(row, u, s);
        const UnitScale sc = unitScale<T>(b, s);
        for (int i = 0; i < 4; ++i) {
            const int l = 4 * q + i;
            const float v = vdMul(sc.mul[l / 16], static_cast<float>(qAt<T>(b, s, l)));
            if constexpr (kHasOffset<T>)
                out[i] = vdAdd(v, sc.off[l / 16]);
            else
                out[i] = v;
        }
    }
}

// Dot product of unit u with x[0..31] (the activations of elements 32u .. 32u+31). Quantized
// types factor the scale out per half: sum = mul * sum(q * x) + off * sum(x); not bit-identical
// to dotting decodeUnit's output, but within float accumulation error of it.
template <BlockType T> VD_HD float dotUnit(const uint8_t* row, int64_t u, const float* x) {
    if constexpr (T == BlockType::F32 || T == BlockType::F16 || T == BlockType::BF16) {
        float w[32];
        decodeUnit<T>(row, u, w);
        float acc = 0.0f;
        for (int l = 0; l < 32; ++l) acc += w[l] * x[l];
        return acc;
    } else {
        int s;
        const uint8_t* b = unitBlock<T>(row, u, s);
        const UnitScale sc = unitScale<T>(b, s);
        float acc = 0.0f;
        for (int h = 0; h < 2; ++h) {
            float qx = 0.0f, sx = 0.0f;
            for (int l = 16 * h; l < 16 * h + 16; ++l) {
                qx += static_cast<float>(qAt<T>(b, s, l)) * x[l];
                if constexpr (kHasOffset<T>) sx += x[l];
            }
            acc += sc.mul[h] * qx;
            if constexpr (kHasOffset<T>) acc += sc.off[h] * sx;
        }
        return acc;
    }
}

}  // namespace verdict::cuda
