// Per-type decoding of ggml weight blocks, written once for nvcc (device) and g++ (host tests).
//
// The unit of work is 32 consecutive elements of a row ("unit u" = elements 32u .. 32u+31). A
// 32-element block (Q4_0 ... Q8_0, IQ4_NL, MXFP4) is one unit, a super-block of 256 elements
// (K-quants, IQ4_XS, the lattice i-quants IQ1_* .. IQ3_*, TQ1_0 / TQ2_0) is 8 units, and F32 /
// F16 / BF16 rows are treated as 32-element "blocks". Layouts and element order follow
// engine/tensor/block_formats.h and the reference dequantizers in quant_legacy.cpp / quant_k.cpp /
// quant_iq.cpp / quant_iq_grid.cpp (themselves ggml's dequantize_row_*); decodeUnit performs the
// same float operations in the same order, so on the host it is bit-identical to
// tensor::dequantizeRow. The lattice grids are read from the CPU's tables on the host and from
// device copies of the same data on the GPU (iq_tables.cuh).
// On the device decodeUnit uses __fmul_rn / __fadd_rn so nvcc cannot contract a*b-c into an FMA
// (which would round differently); dotUnit has no such constraint.
//
// Block bytes are read with byte loads and assembled little-endian by hand: GGUF block data is
// only 2-byte aligned (a Q8_0 block is 34 bytes). F32 rows are read as float (4-aligned), F16 /
// BF16 rows as uint16_t (2-aligned). No std:: calls: the functions must compile as device code.
#pragma once

#include "backend/cuda/iq_tables.cuh"
#include "tensor/iq_grids.h"

#include <cstdint>

#if defined(__CUDACC__)
#define VD_HD __host__ __device__ __forceinline__
#else
#define VD_HD inline
#endif

namespace verdict::cuda {

enum class BlockType : int {
    F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
    IQ4_NL, IQ4_XS, MXFP4, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, TQ1_0, TQ2_0
};

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
VD_BLOCK_TRAITS(IQ4_NL, 32, 18)
VD_BLOCK_TRAITS(IQ4_XS, 256, 136)
VD_BLOCK_TRAITS(MXFP4, 32, 17)
VD_BLOCK_TRAITS(IQ2_XXS, 256, 66)
VD_BLOCK_TRAITS(IQ2_XS, 256, 74)
VD_BLOCK_TRAITS(IQ2_S, 256, 82)
VD_BLOCK_TRAITS(IQ3_XXS, 256, 98)
VD_BLOCK_TRAITS(IQ3_S, 256, 110)
VD_BLOCK_TRAITS(IQ1_S, 256, 50)
VD_BLOCK_TRAITS(IQ1_M, 256, 56)
VD_BLOCK_TRAITS(TQ1_0, 256, 54)
VD_BLOCK_TRAITS(TQ2_0, 256, 66)
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

// ---- i-quant tables: the device copies on the GPU, the CPU's own arrays on the host ---------

#if defined(__CUDA_ARCH__)
#define VD_TABLE(name) dev::name
#else
#define VD_TABLE(name) tensor::name
#endif
VD_HD int iq4nlLevel(int i) { return VD_TABLE(kIQ4NLValues)[i]; }
VD_HD int mxfp4Level(int i) { return VD_TABLE(kMXFP4Values)[i]; }
VD_HD uint64_t iq2xxsPoint(int i) { return VD_TABLE(kIQ2XXSGrid)[i]; }
VD_HD uint64_t iq2xsPoint(int i) { return VD_TABLE(kIQ2XSGrid)[i]; }
VD_HD uint64_t iq2sPoint(int i) { return VD_TABLE(kIQ2SGrid)[i]; }
VD_HD uint32_t iq3xxsPoint(int i) { return VD_TABLE(kIQ3XXSGrid)[i]; }
VD_HD uint32_t iq3sPoint(int i) { return VD_TABLE(kIQ3SGrid)[i]; }
VD_HD uint64_t iq1Point(int i) { return VD_TABLE(kIQ1SGrid)[i]; }
#undef VD_TABLE

// The sign byte of a 7-bit sign index (tensor::kIQ2Signs, computed rather than looked up): the
// index, and bit 7 set when the index has an odd number of ones.
VD_HD unsigned iq2SignByte(unsigned i7) {
#if defined(__CUDA_ARCH__)
    const unsigned ones = static_cast<unsigned>(__popc(i7));
#else
    const unsigned ones = static_cast<unsigned>(__builtin_popcount(i7));
#endif
    return i7 | ((ones & 1u) << 7);
}

// 2^(e - 128), MXFP4's halved E8M0 scale (tensor::mxfp4HalfScale; e = 0, 1 are subnormals).
VD_HD float mxfp4Scale(uint8_t e) {
    return vdBitsToFloat(e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23));
}

// Trit n (0..4) of a TQ1_0 byte, minus 1: the top base-3 digit of (q * 3^n mod 256).
VD_HD int tq1Trit(unsigned q, int n) {
    const unsigned pow3 = n == 0 ? 1u : n == 1 ? 3u : n == 2 ? 9u : n == 3 ? 27u : 81u;
    const unsigned shifted = (q * pow3) & 0xFFu;
    return static_cast<int>((shifted * 3u) >> 8) - 1;
}

// Four values of a grid point or group with signs: bytes j0 .. j0+3 of `point`, negated where bit
// j of `signs` is set (IQ2_*, IQ3_*: magnitudes and sign bits).
VD_HD void signedQuad(uint64_t point, unsigned signs, int j0, int v[4]) {
    for (int i = 0; i < 4; ++i) {
        const int j = j0 + i;
        const int m = static_cast<int>((point >> (8 * j)) & 0xFFu);
        v[i] = (signs >> j) & 1u ? -m : m;
    }
}

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
// qAt<T>(b, s, l) returns the integer quant of element l (0..31) of sub-unit s of block b (quadQ
// below reads four at a time), and the per-16/32 scale pair is formed by unitScale<T>. Kept
// separate so decodeUnit, decodeQuad and dotUnit read the same bits.

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
// IQ4_NL / MXFP4: a level of the format's 16 (Q4_0's nibble order); qs at byte 2 / 1.
template <> VD_HD int qAt<BlockType::IQ4_NL>(const uint8_t* b, int, int l) { return iq4nlLevel(nibble(b + 2, l)); }
template <> VD_HD int qAt<BlockType::MXFP4>(const uint8_t* b, int, int l) { return mxfp4Level(nibble(b + 1, l)); }
// IQ4_XS: sub-block s's 16 bytes at 8 + 16s, Q4_0's nibble order.
template <> VD_HD int qAt<BlockType::IQ4_XS>(const uint8_t* b, int s, int l) {
    return iq4nlLevel(nibble(b + 8 + 16 * s, l));
}
// TQ1_0: element e = 32s + l: trit s of qs[l] below 160, trit (e-160)/16 of qs[32 + e%16] below
// 240, trit (e-240)/4 of qh[e%4] (qh at byte 48) above.
template <> VD_HD int qAt<BlockType::TQ1_0>(const uint8_t* b, int s, int l) {
    const int e = 32 * s + l;
    if (e < 160) return tq1Trit(b[l], s);
    if (e < 240) return tq1Trit(b[32 + (e - 160) % 16], (e - 160) / 16);
    return tq1Trit(b[48 + (e - 240) % 4], (e - 240) / 4);
}
// TQ2_0: element 128h + 32k + l (s = 4h + k) = bits 2k.. of qs[32h + l], minus 1.
template <> VD_HD int qAt<BlockType::TQ2_0>(const uint8_t* b, int s, int l) {
    return static_cast<int>((b[32 * (s / 4) + l] >> (2 * (s % 4))) & 3u) - 1;
}

// quadQ<T>(b, s, q, v): the quants of elements 4q .. 4q+3 of sub-unit s. By default element by
// element through qAt; the lattice formats look one grid point up per quad instead (a quad is half
// a group of 8 of IQ2_* / IQ1_*, one point of 4 of IQ3_*).
template <BlockType T> VD_HD void quadQ(const uint8_t* b, int s, int q, int v[4]) {
    for (int i = 0; i < 4; ++i) v[i] = qAt<T>(b, s, 4 * q + i);
}
// IQ2_XXS: sub-block s = 8 bytes at 2 + 8s: four grid indices, then a word of four 7-bit sign
// indices and the scale.
template <> VD_HD void quadQ<BlockType::IQ2_XXS>(const uint8_t* b, int s, int q, int v[4]) {
    const uint8_t* p = b + 2 + 8 * s;
    const int g = q / 2;
    signedQuad(iq2xxsPoint(p[g]), iq2SignByte((loadU32(p + 4) >> (7 * g)) & 127u), 4 * (q % 2), v);
}
// IQ2_XS: qs[4s + g] (16-bit, at byte 2) = 9-bit grid index | 7-bit sign index << 9.
template <> VD_HD void quadQ<BlockType::IQ2_XS>(const uint8_t* b, int s, int q, int v[4]) {
    const unsigned w = loadU16(b + 2 + 2 * (4 * s + q / 2));
    signedQuad(iq2xsPoint(static_cast<int>(w & 511u)), iq2SignByte(w >> 9), 4 * (q % 2), v);
}
// IQ2_S: low index bits qs[4s + g] (byte 2), bits 8-9 in qh[s] (byte 66) bits 2g.., plain sign
// bytes qs[32 + 4s + g].
template <> VD_HD void quadQ<BlockType::IQ2_S>(const uint8_t* b, int s, int q, int v[4]) {
    const int g = q / 2;
    const int idx = b[2 + 4 * s + g] | (((b[66 + s] >> (2 * g)) & 3) << 8);
    signedQuad(iq2sPoint(idx), b[2 + 32 + 4 * s + g], 4 * (q % 2), v);
}
// IQ3_XXS: point q of sub-block s = qs[8s + q] (byte 2); signs of group q/2 from the word at
// 66 + 4s, the upper four for the second point of the group.
template <> VD_HD void quadQ<BlockType::IQ3_XXS>(const uint8_t* b, int s, int q, int v[4]) {
    const unsigned signs = iq2SignByte((loadU32(b + 66 + 4 * s) >> (7 * (q / 2))) & 127u) >> (4 * (q % 2));
    signedQuad(iq3xxsPoint(b[2 + 8 * s + q]), signs, 0, v);
}
// IQ3_S: 9-bit index qs[8s + q] (byte 2) | bit q of qh[s] (byte 66) << 8; sign byte signs[4s + q/2]
// (byte 74), its upper nibble for the second point of the group.
template <> VD_HD void quadQ<BlockType::IQ3_S>(const uint8_t* b, int s, int q, int v[4]) {
    const int idx = b[2 + 8 * s + q] | (((b[66 + s] >> q) & 1) << 8);
    signedQuad(iq3sPoint(idx), static_cast<unsigned>(b[74 + 4 * s + q / 2]) >> (4 * (q % 2)), 0, v);
}
// The four signed values j0 .. j0+3 of IQ1 grid point idx.
VD_HD void iq1Quad(int idx, int j0, int v[4]) {
    const uint64_t p = iq1Point(idx);
    for (int i = 0; i < 4; ++i) v[i] = static_cast<int8_t>(static_cast<uint8_t>(p >> (8 * (j0 + i))));
}
// IQ1_S: 11-bit index qs[4s + g] (byte 2) | bits 3g.. of the 16-bit qh[s] (byte 34) << 8.
template <> VD_HD void quadQ<BlockType::IQ1_S>(const uint8_t* b, int s, int q, int v[4]) {
    const int g = q / 2;
    const unsigned qh = loadU16(b + 34 + 2 * s);
    iq1Quad(b[2 + 4 * s + g] | static_cast<int>(((qh >> (3 * g)) & 7u) << 8), 4 * (q % 2), v);
}
// IQ1_M: index qs[4s + g] (byte 0) | bits 0-2 of nibble g%2 of qh[2s + g/2] (byte 32) << 8.
template <> VD_HD void quadQ<BlockType::IQ1_M>(const uint8_t* b, int s, int q, int v[4]) {
    const int g = q / 2;
    const int h = (b[32 + 2 * s + g / 2] >> (4 * (g % 2))) & 0xF;
    iq1Quad(b[4 * s + g] | ((h & 7) << 8), 4 * (q % 2), v);
}

// Scale and offset of the two 16-element halves of a unit: value = mul[l/16] * q + off[l/16].
// The K-quants' "dl * q - ml" is stored as off = -ml: x + (-y) is exactly x - y in IEEE, so the
// reference's rounding is kept. Types without an offset skip the add (adding +0 would turn the
// reference's -0 results into +0). Q6_K's (d * sc) * q has the same shape.
// IQ1_S / IQ1_M instead shift the quant before scaling: value = mul[l/16] * (q + shift[l/8]), the
// reference's scale * (grid + delta).
struct UnitScale {
    float mul[2];
    float off[2];
    float shift[4];
};

template <BlockType T>
constexpr bool kHasOffset = T == BlockType::Q4_1 || T == BlockType::Q5_1 || T == BlockType::Q2_K ||
                            T == BlockType::Q4_K || T == BlockType::Q5_K;
template <BlockType T> constexpr bool kHasShift = T == BlockType::IQ1_S || T == BlockType::IQ1_M;

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
// One scale for the whole unit.
VD_HD UnitScale flatScale(float d) { return {{d, d}, {0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}}; }
template <> VD_HD UnitScale unitScale<BlockType::IQ4_NL>(const uint8_t* b, int) { return flatScale(loadHalf(b)); }
template <> VD_HD UnitScale unitScale<BlockType::MXFP4>(const uint8_t* b, int) { return flatScale(mxfp4Scale(b[0])); }
// IQ4_XS: d * (ls - 32), ls = nibble s%2 of scales_l[s/2] (byte 4) | bits 2s.. of scales_h (byte 2) << 4.
template <> VD_HD UnitScale unitScale<BlockType::IQ4_XS>(const uint8_t* b, int s) {
    const int ls = ((b[4 + s / 2] >> (4 * (s % 2))) & 0xF) | (((loadU16(b + 2) >> (2 * s)) & 3) << 4);
    return flatScale(vdMul(loadHalf(b), static_cast<float>(ls - 32)));
}
// IQ2_XXS / IQ3_XXS: (d * (2 scale + 1)) * 1/8 (1/4), the scale in bits 28-31 of the sub-block's
// sign word.
template <> VD_HD UnitScale unitScale<BlockType::IQ2_XXS>(const uint8_t* b, int s) {
    const int ls = 2 * static_cast<int>(loadU32(b + 2 + 8 * s + 4) >> 28) + 1;
    return flatScale(vdMul(vdMul(loadHalf(b), static_cast<float>(ls)), 0.125f));
}
template <> VD_HD UnitScale unitScale<BlockType::IQ3_XXS>(const uint8_t* b, int s) {
    const int ls = 2 * static_cast<int>(loadU32(b + 66 + 4 * s) >> 28) + 1;
    return flatScale(vdMul(vdMul(loadHalf(b), static_cast<float>(ls)), 0.25f));
}
// IQ2_XS / IQ2_S: a 4-bit scale per half in scales[s] (byte 66 / 74): (d * (2 scale + 1)) * 1/8.
VD_HD UnitScale iq2HalfScales(float d, unsigned sc) {
    UnitScale r = flatScale(0.0f);
    for (int k = 0; k < 2; ++k)
        r.mul[k] = vdMul(vdMul(d, static_cast<float>(2 * static_cast<int>((sc >> (4 * k)) & 0xFu) + 1)), 0.125f);
    return r;
}
template <> VD_HD UnitScale unitScale<BlockType::IQ2_XS>(const uint8_t* b, int s) {
    return iq2HalfScales(loadHalf(b), b[66 + s]);
}
template <> VD_HD UnitScale unitScale<BlockType::IQ2_S>(const uint8_t* b, int s) {
    return iq2HalfScales(loadHalf(b), b[74 + s]);
}
// IQ3_S: d * (2 scale + 1), the scale in nibble s%2 of scales[s/2] (byte 106).
template <> VD_HD UnitScale unitScale<BlockType::IQ3_S>(const uint8_t* b, int s) {
    const int ls = 2 * ((b[106 + s / 2] >> (4 * (s % 2))) & 0xF) + 1;
    return flatScale(vdMul(loadHalf(b), static_cast<float>(ls)));
}
// IQ1_S: d * (2 scale + 1), scale = bits 12-14 of qh[s]; bit 15 makes the shift -1/8 (else +1/8).
template <> VD_HD UnitScale unitScale<BlockType::IQ1_S>(const uint8_t* b, int s) {
    const unsigned qh = loadU16(b + 34 + 2 * s);
    UnitScale r = flatScale(vdMul(loadHalf(b), static_cast<float>(2 * static_cast<int>((qh >> 12) & 7u) + 1)));
    for (int g = 0; g < 4; ++g) r.shift[g] = (qh & 0x8000u) ? -tensor::kIQ1Delta : tensor::kIQ1Delta;
    return r;
}
// IQ1_M: d assembled from the top nibbles of the four scale words (byte 48); sub-block s's two
// 3-bit half scales at bits 6(s%2).. of word s/2; group g's shift sign = bit 3 of its qh nibble.
template <> VD_HD UnitScale unitScale<BlockType::IQ1_M>(const uint8_t* b, int s) {
    const unsigned w0 = loadU16(b + 48), w1 = loadU16(b + 50), w2 = loadU16(b + 52), w3 = loadU16(b + 54);
    const float d = halfBitsToFloat(static_cast<uint16_t>((w0 >> 12) | ((w1 >> 8) & 0x00F0u) | ((w2 >> 4) & 0x0F00u) |
                                                          (w3 & 0xF000u)));
    const unsigned w = loadU16(b + 48 + 2 * (s / 2)) >> (6 * (s % 2));
    UnitScale r = flatScale(0.0f);
    r.mul[0] = vdMul(d, static_cast<float>(2 * static_cast<int>(w & 7u) + 1));
    r.mul[1] = vdMul(d, static_cast<float>(2 * static_cast<int>((w >> 3) & 7u) + 1));
    for (int g = 0; g < 4; ++g)
        r.shift[g] = ((b[32 + 2 * s + g / 2] >> (4 * (g % 2))) & 8) ? -tensor::kIQ1Delta : tensor::kIQ1Delta;
    return r;
}
template <> VD_HD UnitScale unitScale<BlockType::TQ1_0>(const uint8_t* b, int) { return flatScale(loadHalf(b + 52)); }
template <> VD_HD UnitScale unitScale<BlockType::TQ2_0>(const uint8_t* b, int) { return flatScale(loadHalf(b + 64)); }

// Element l of a unit from its quant: the reference's float operations in its order.
template <BlockType T> VD_HD float scaled(const UnitScale& sc, int l, int q) {
    if constexpr (kHasShift<T>) {
        return vdMul(sc.mul[l / 16], vdAdd(static_cast<float>(q), sc.shift[l / 8]));
    } else {
        const float v = vdMul(sc.mul[l / 16], static_cast<float>(q));
        if constexpr (kHasOffset<T>) return vdAdd(v, sc.off[l / 16]);
        return v;
    }
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
        for (int q = 0; q < 8; ++q) {
            int v[4];
            quadQ<T>(b, s, q, v);
            for (int i = 0; i < 4; ++i) out[4 * q + i] = scaled<T>(sc, 4 * q + i, v[i]);
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
        int v[4];
        quadQ<T>(b, s, q, v);
        for (int i = 0; i < 4; ++i) out[i] = scaled<T>(sc, 4 * q + i, v[i]);
    }
}

// Dot product of unit u with x[0..31] (the activations of elements 32u .. 32u+31). Quantized
// types factor the scale out per half: sum = mul * sum(q * x) + off * sum(x) (IQ1: mul * (sum(q * x)
// + shift * sum(x)) per group of 8); not bit-identical to dotting decodeUnit's output, but within
// float accumulation error of it.
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
            for (int q = 4 * h; q < 4 * h + 4; ++q) {
                int v[4];
                quadQ<T>(b, s, q, v);
                float gx = 0.0f;  // sum of x over the quad
                for (int i = 0; i < 4; ++i) {
                    qx += static_cast<float>(v[i]) * x[4 * q + i];
                    if constexpr (kHasOffset<T> || kHasShift<T>) gx += x[4 * q + i];
                }
                if constexpr (kHasOffset<T>) sx += gx;
                if constexpr (kHasShift<T>) qx += sc.shift[q / 2] * gx;
            }
            acc += sc.mul[h] * qx;
            if constexpr (kHasOffset<T>) acc += sc.off[h] * sx;
        }
        return acc;
    }
}

}  // namespace verdict::cuda
