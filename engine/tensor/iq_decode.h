// Decoders of the lattice i-quants and ternary formats (block_formats.h) to small signed integers,
// shared by the reference dequantizers (quant_iq_grid.cpp) and the scalar dot products
// (backend/cpu/kernels_ref.cpp), so that both read a block the same way.
//
// Each decodes one 32-element sub-block ib (0..7) of a super-block into v[32] (the signed grid
// values) and returns the odd integer scale multipliers ls = 2s + 1; the element is then
//   IQ2_XXS / IQ2_XS / IQ2_S:  x = d * ls / 8 * v        IQ3_XXS: x = d * ls / 4 * v
//   IQ3_S:                     x = d * ls * v            IQ1_S / IQ1_M: x = d * ls * (v + delta)
// with one ls per sub-block (IQ2_XXS, IQ3_XXS, IQ3_S, IQ1_S) or one per half of 16 (IQ2_XS, IQ2_S,
// IQ1_M). The ternary formats decode a whole block to t[256] in {-1, 0, 1}: x = d * t.
#pragma once

#include "tensor/block_formats.h"
#include "tensor/iq_grids.h"

#include <cstdint>
#include <cstring>

namespace verdict::tensor {

// n magnitudes of a grid point (byte j = element j) with signs: bit j of signs set -> negative.
template <int N, class Point>
inline void signedPoint(Point point, unsigned signs, int8_t* v) {
    for (int j = 0; j < N; ++j) {
        const int m = static_cast<int>((point >> (8 * j)) & 0xFF);
        v[j] = static_cast<int8_t>((signs >> j) & 1 ? -m : m);
    }
}

inline uint32_t loadU32(const void* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// Returns ls of the sub-block.
inline int decodeIQ2_XXS(const BlockIQ2_XXS& b, int ib, int8_t v[32]) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(b.qs) + 8 * ib;
    const uint32_t idx = loadU32(bytes), aux = loadU32(bytes + 4);
    for (int l = 0; l < 4; ++l)
        signedPoint<8>(kIQ2XXSGrid[(idx >> (8 * l)) & 0xFF], kIQ2Signs[(aux >> (7 * l)) & 127], v + 8 * l);
    return 2 * static_cast<int>(aux >> 28) + 1;
}

// ls[0] for elements 0-15 of the sub-block, ls[1] for 16-31 (IQ2_XS and IQ2_S).
inline void halfScales(uint8_t s, int ls[2]) {
    ls[0] = 2 * (s & 0xF) + 1;
    ls[1] = 2 * (s >> 4) + 1;
}

inline void decodeIQ2_XS(const BlockIQ2_XS& b, int ib, int8_t v[32], int ls[2]) {
    for (int l = 0; l < 4; ++l) {
        const uint16_t q = b.qs[4 * ib + l];
        signedPoint<8>(kIQ2XSGrid[q & 511], kIQ2Signs[q >> 9], v + 8 * l);
    }
    halfScales(b.scales[ib], ls);
}

inline void decodeIQ2_S(const BlockIQ2_S& b, int ib, int8_t v[32], int ls[2]) {
    for (int l = 0; l < 4; ++l) {
        const int idx = b.qs[4 * ib + l] | (((b.qh[ib] >> (2 * l)) & 3) << 8);
        signedPoint<8>(kIQ2SGrid[idx], b.qs[kQKK / 8 + 4 * ib + l], v + 8 * l);
    }
    halfScales(b.scales[ib], ls);
}

inline int decodeIQ3_XXS(const BlockIQ3_XXS& b, int ib, int8_t v[32]) {
    const uint8_t* idx = b.qs + 8 * ib;
    const uint32_t aux = loadU32(b.qs + kQKK / 4 + 4 * ib);
    for (int l = 0; l < 4; ++l) {
        const unsigned signs = kIQ2Signs[(aux >> (7 * l)) & 127];
        signedPoint<4>(kIQ3XXSGrid[idx[2 * l]], signs, v + 8 * l);
        signedPoint<4>(kIQ3XXSGrid[idx[2 * l + 1]], signs >> 4, v + 8 * l + 4);
    }
    return 2 * static_cast<int>(aux >> 28) + 1;
}

inline int decodeIQ3_S(const BlockIQ3_S& b, int ib, int8_t v[32]) {
    const uint8_t* qs = b.qs + 8 * ib;
    const unsigned qh = b.qh[ib];
    for (int l = 0; l < 4; ++l) {
        const unsigned signs = b.signs[4 * ib + l];
        signedPoint<4>(kIQ3SGrid[qs[2 * l] | (((qh >> (2 * l)) & 1) << 8)], signs, v + 8 * l);
        signedPoint<4>(kIQ3SGrid[qs[2 * l + 1] | (((qh >> (2 * l + 1)) & 1) << 8)], signs >> 4, v + 8 * l + 4);
    }
    return 2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 0xF) + 1;
}

// The 8 signed values of IQ1 grid point idx.
inline void iq1Point(int idx, int8_t* v) {
    const uint64_t p = kIQ1SGrid[idx];
    for (int j = 0; j < 8; ++j) v[j] = static_cast<int8_t>(static_cast<uint8_t>(p >> (8 * j)));
}

// Returns ls; deltaSign = +1 or -1 (delta = deltaSign / 8 for the whole sub-block).
inline int decodeIQ1_S(const BlockIQ1_S& b, int ib, int8_t v[32], int& deltaSign) {
    const unsigned qh = b.qh[ib];
    for (int l = 0; l < 4; ++l) iq1Point(b.qs[4 * ib + l] | (((qh >> (3 * l)) & 7) << 8), v + 8 * l);
    deltaSign = (qh & 0x8000) ? -1 : 1;
    return 2 * static_cast<int>((qh >> 12) & 7) + 1;
}

// ls[0] for elements 0-15, ls[1] for 16-31; deltaSign[l] for group l (elements 8l..8l+7).
inline void decodeIQ1_M(const BlockIQ1_M& b, int ib, int8_t v[32], int ls[2], int deltaSign[4]) {
    for (int l = 0; l < 4; ++l) {
        const unsigned h = (b.qh[2 * ib + l / 2] >> (4 * (l % 2))) & 0xF;
        iq1Point(b.qs[4 * ib + l] | ((h & 7) << 8), v + 8 * l);
        deltaSign[l] = (h & 8) ? -1 : 1;
    }
    const unsigned w = iq1mScaleWord(b, ib / 2) >> (6 * (ib % 2));
    ls[0] = 2 * static_cast<int>(w & 7) + 1;
    ls[1] = 2 * static_cast<int>((w >> 3) & 7) + 1;
}

// The top base-3 digit of a TQ1_0 byte after multiplying by 3^n (block_formats.h), minus 1.
inline int8_t tq1Trit(uint8_t q, int n) {
    static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    const auto shifted = static_cast<uint8_t>(q * kPow3[n]);
    return static_cast<int8_t>(((shifted * 3) >> 8) - 1);
}

inline void decodeTQ1_0(const BlockTQ1_0& b, int8_t t[256]) {
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 32; ++m) t[32 * n + m] = tq1Trit(b.qs[m], n);
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 16; ++m) t[160 + 16 * n + m] = tq1Trit(b.qs[32 + m], n);
    for (int n = 0; n < 4; ++n)
        for (int j = 0; j < 4; ++j) t[240 + 4 * n + j] = tq1Trit(b.qh[j], n);
}

inline void decodeTQ2_0(const BlockTQ2_0& b, int8_t t[256]) {
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 4; ++l)
            for (int m = 0; m < 32; ++m)
                t[128 * h + 32 * l + m] = static_cast<int8_t>(((b.qs[32 * h + m] >> (2 * l)) & 3) - 1);
}

}  // namespace verdict::tensor
