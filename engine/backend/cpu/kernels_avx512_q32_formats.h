// Weight decoders of the AVX-512 kernels for the 32-element formats (kernels_avx512_q32.cpp, the
// only file that includes this one, under its `#pragma GCC target`): per format a Dec struct that
// unpacks 4 blocks of one row (decode4) or of a 16-row panel (panelQuants / panelScales /
// panelMins) for vpdpbusd, and the group helpers they share. See kernels_avx512_q32.cpp's header
// for the layouts and the numerics.
#pragma once

#include "backend/cpu/act_layout.h"
#include "backend/cpu/simd_x86.h"
#include "tensor/block_formats.h"
#include "tensor/half.h"

#include <immintrin.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace verdict::cpu::avx512::q32 {

using namespace verdict::cpu::simd;

static inline __m512i load4x16(const uint8_t* p, size_t stride) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + stride)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * stride)), 2);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 3 * stride)), 3);
    return v;
}

// A group of 4 blocks of kBlock <= 32 bytes (at most 128 bytes) as two zmm: bytes 0-63 and the
// rest (a masked load: nothing past the group is read). One vpermt2w (AVX512BW) then picks the
// 16 quant bytes of each block, and one more the f16 scales, where 4 x 16-byte inserts and 4
// scalar loads of the scales cost several times that (decode is compute-bound on cores that split
// 512-bit operations in two, Zen 4). Word granularity: the blocks' sizes and the quants' and
// scales' offsets in them are even for every format that uses it.
template <size_t kBlock>
struct GroupBytes {
    static_assert(kBlock > 16 && kBlock <= 32 && kBlock % 2 == 0);
    __m512i v0, v1;
    explicit GroupBytes(const uint8_t* g)
        : v0(_mm512_loadu_si512(g)),
          v1(_mm512_maskz_loadu_epi8((~0ull) >> (128 - 4 * kBlock), g + 64)) {}
    // Byte p of the result = byte kBlock * (p / 16) + off + p % 16 of the group.
    template <size_t off>
    __m512i quants() const {
        static_assert(off % 2 == 0);
        alignas(64) static constexpr auto kIdx = [] {
            std::array<uint16_t, 32> idx{};
            for (size_t w = 0; w < 32; ++w) idx[w] = static_cast<uint16_t>((kBlock * (w / 8) + off) / 2 + w % 8);
            return idx;
        }();
        return _mm512_permutex2var_epi16(v0, _mm512_load_si512(kIdx.data()), v1);
    }
    // The f16 at byte off of each block, each repeated over its block's four 32-bit lanes.
    template <size_t off>
    __m512 scales() const {
        static_assert(off % 2 == 0);
        alignas(64) static constexpr auto kIdx = [] {
            std::array<uint16_t, 32> idx{};
            for (size_t w = 0; w < 16; ++w) idx[w] = static_cast<uint16_t>((kBlock * (w / 4) + off) / 2);
            return idx;
        }();
        const __m512i h = _mm512_permutex2var_epi16(v0, _mm512_load_si512(kIdx.data()), v1);
        return _mm512_cvtph_ps(_mm512_castsi512_si256(h));
    }
};

// 5th bits of 4 Q5 blocks: bits 0-15 of each qh -> mask for `lo`, bits 16-31 -> mask for `hi`.
static inline void q5Masks(const uint8_t* qh, size_t stride, __mmask64& mlo, __mmask64& mhi) {
    const uint64_t h0 = loadU32(qh), h1 = loadU32(qh + stride), h2 = loadU32(qh + 2 * stride),
                   h3 = loadU32(qh + 3 * stride);
    mlo = (h0 & 0xFFFF) | (h1 & 0xFFFF) << 16 | (h2 & 0xFFFF) << 32 | (h3 & 0xFFFF) << 48;
    mhi = (h0 >> 16) | (h1 >> 16) << 16 | (h2 >> 16) << 32 | (h3 >> 16) << 48;
}

// ---- Panels: weights repacked at load (packPanels, cpu::packWeights) ----
// 16 rows side by side, block by block: block b of a panel takes the bytes the 16 rows' block b
// took on disk (16 x kBlock, at b * 16 * kBlock), so a matrix keeps its size and every panel its
// place (rows 16p .. 16p + 15 at 16p * rowBytes); rows after the last full panel stay as they are.
// In a panel block, 64-byte vector k holds 4 bytes of each of the 16 rows (lane = row), the
// layout the prefill's Packed16 builds per call, but kept compact:
//   q[k], k < 4: the nibble bytes 4k .. 4k + 3 (low nibbles: elements 4k.., high: 16 + 4k..);
//   Q8_0: q[k], k < 8: quant bytes 4k .. 4k + 3, stored + 128 (unsigned);
// then, per format: Q5_0 / Q5_1 the fifth bits as byte masks (8 bytes per k: its low nibbles',
// then its high nibbles'; bit 4i + j = row i, byte j), the 16 rows' f16 scales (MXFP4: its E8M0
// bytes), Q4_1 / Q5_1 the 16 rows' f16 mins. Decode then needs no horizontal sums either.
static inline void packNibbles(const uint8_t* const* src, size_t off, uint8_t* dst) {
    for (int k = 0; k < 4; ++k)
        for (int i = 0; i < 16; ++i) std::memcpy(dst + 64 * k + 4 * i, src[i] + off + 4 * k, 4);
}
static inline void packBytes(const uint8_t* const* src, size_t off, size_t n, uint8_t* dst) {
    for (int i = 0; i < 16; ++i) std::memcpy(dst + n * i, src[i] + off, n);
}
static inline void packFifthBits(const uint8_t* const* src, size_t off, uint8_t* dst) {
    for (int k = 0; k < 4; ++k) {
        uint64_t lo = 0, hi = 0;
        for (int i = 0; i < 16; ++i) {
            const uint32_t qh = loadU32(src[i] + off);
            lo |= static_cast<uint64_t>((qh >> (4 * k)) & 0xF) << (4 * i);
            hi |= static_cast<uint64_t>((qh >> (16 + 4 * k)) & 0xF) << (4 * i);
        }
        std::memcpy(dst + 16 * k, &lo, 8);
        std::memcpy(dst + 16 * k + 8, &hi, 8);
    }
}
static inline void panelNibbles(const uint8_t* p, int k, __m512i& lo, __m512i& hi) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i w = _mm512_loadu_si512(p + 64 * k);
    lo = _mm512_and_si512(w, m4);
    hi = _mm512_and_si512(_mm512_srli_epi16(w, 4), m4);
}
static inline void panelFifthBits(const uint8_t* masks, int k, __m512i& lo, __m512i& hi) {
    uint64_t ml, mh;
    std::memcpy(&ml, masks + 16 * k, 8);
    std::memcpy(&mh, masks + 16 * k + 8, 8);
    const __m512i b4 = _mm512_set1_epi8(0x10);
    lo = _mm512_mask_add_epi8(lo, _cvtu64_mask64(ml), lo, b4);
    hi = _mm512_mask_add_epi8(hi, _cvtu64_mask64(mh), hi, b4);
}
static inline __m512 panelHalves(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Weight decoders: one group of 4 blocks -> unsigned quants lo/hi, scales d (and mins m).
struct DecQ4_0 {
    static constexpr size_t kBlock = 18;
    static constexpr int kBiasMul = -8;
    static constexpr bool kMin = false;
    using Group = ActGroup;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512&) {
        const GroupBytes<kBlock> b(g);
        const __m512i m4 = _mm512_set1_epi8(0x0F);
        const __m512i q = b.template quants<2>();
        lo = _mm512_and_si512(q, m4);
        hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        d = b.template scales<0>();
    }
    static void packBlock(const uint8_t* const* src, uint8_t* dst) {
        packNibbles(src, 2, dst);
        packBytes(src, 0, 2, dst + 256);
    }
    static inline void panelQuants(const uint8_t* p, int k, __m512i& lo, __m512i& hi) { panelNibbles(p, k, lo, hi); }
    static inline __m512 panelScales(const uint8_t* p) { return panelHalves(p + 256); }
    static inline __m512 panelMins(const uint8_t*) { return _mm512_setzero_ps(); }
};

struct DecQ4_1 {
    static constexpr size_t kBlock = 20;
    static constexpr int kBiasMul = 0;
    static constexpr bool kMin = true;
    using Group = ActGroupS;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512& m) {
        const GroupBytes<kBlock> b(g);
        const __m512i m4 = _mm512_set1_epi8(0x0F);
        const __m512i q = b.template quants<4>();
        lo = _mm512_and_si512(q, m4);
        hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        d = b.template scales<0>();
        m = b.template scales<2>();
    }
    static void packBlock(const uint8_t* const* src, uint8_t* dst) {
        packNibbles(src, 4, dst);
        packBytes(src, 0, 2, dst + 256);
        packBytes(src, 2, 2, dst + 288);
    }
    static inline void panelQuants(const uint8_t* p, int k, __m512i& lo, __m512i& hi) { panelNibbles(p, k, lo, hi); }
    static inline __m512 panelScales(const uint8_t* p) { return panelHalves(p + 256); }
    static inline __m512 panelMins(const uint8_t* p) { return panelHalves(p + 288); }
};

struct DecQ5_0 {
    static constexpr size_t kBlock = 22;
    static constexpr int kBiasMul = -16;
    static constexpr bool kMin = false;
    using Group = ActGroup;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512&) {
        const GroupBytes<kBlock> b(g);
        const __m512i m4 = _mm512_set1_epi8(0x0F), b4 = _mm512_set1_epi8(0x10);
        const __m512i q = b.template quants<6>();
        __mmask64 mlo, mhi;
        q5Masks(g + 2, kBlock, mlo, mhi);
        const __m512i l = _mm512_and_si512(q, m4);
        lo = _mm512_mask_add_epi8(l, mlo, l, b4);
        const __m512i h = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        hi = _mm512_mask_add_epi8(h, mhi, h, b4);
        d = b.template scales<0>();
    }
    static void packBlock(const uint8_t* const* src, uint8_t* dst) {
        packNibbles(src, 6, dst);
        packFifthBits(src, 2, dst + 256);
        packBytes(src, 0, 2, dst + 320);
    }
    static inline void panelQuants(const uint8_t* p, int k, __m512i& lo, __m512i& hi) {
        panelNibbles(p, k, lo, hi);
        panelFifthBits(p + 256, k, lo, hi);
    }
    static inline __m512 panelScales(const uint8_t* p) { return panelHalves(p + 320); }
    static inline __m512 panelMins(const uint8_t*) { return _mm512_setzero_ps(); }
};

struct DecQ5_1 {
    static constexpr size_t kBlock = 24;
    static constexpr int kBiasMul = 0;
    static constexpr bool kMin = true;
    using Group = ActGroupS;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512& m) {
        const GroupBytes<kBlock> b(g);
        const __m512i m4 = _mm512_set1_epi8(0x0F), b4 = _mm512_set1_epi8(0x10);
        const __m512i q = b.template quants<8>();
        __mmask64 mlo, mhi;
        q5Masks(g + 4, kBlock, mlo, mhi);
        const __m512i l = _mm512_and_si512(q, m4);
        lo = _mm512_mask_add_epi8(l, mlo, l, b4);
        const __m512i h = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        hi = _mm512_mask_add_epi8(h, mhi, h, b4);
        d = b.template scales<0>();
        m = b.template scales<2>();
    }
    static void packBlock(const uint8_t* const* src, uint8_t* dst) {
        packNibbles(src, 8, dst);
        packFifthBits(src, 4, dst + 256);
        packBytes(src, 0, 2, dst + 320);
        packBytes(src, 2, 2, dst + 352);
    }
    static inline void panelQuants(const uint8_t* p, int k, __m512i& lo, __m512i& hi) {
        panelNibbles(p, k, lo, hi);
        panelFifthBits(p + 256, k, lo, hi);
    }
    static inline __m512 panelScales(const uint8_t* p) { return panelHalves(p + 320); }
    static inline __m512 panelMins(const uint8_t* p) { return panelHalves(p + 352); }
};

struct DecQ8_0 {
    static constexpr size_t kBlock = 34;
    static constexpr int kBiasMul = -128;
    static constexpr bool kMin = false;
    using Group = ActGroup;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512&) {
        // The quants as 8 x 16-byte loads (word permutes of the 136-byte group were slower on
        // Zen 4), the scales with one word permute of its first 128 bytes.
        alignas(64) static constexpr auto kScaleIdx = [] {
            std::array<uint16_t, 32> idx{};
            for (size_t w = 0; w < 16; ++w) idx[w] = static_cast<uint16_t>(kBlock * (w / 4) / 2);
            return idx;
        }();
        const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // s8 -> u8 = q + 128
        lo = _mm512_xor_si512(load4x16(g + 2, kBlock), flip);
        hi = _mm512_xor_si512(load4x16(g + 18, kBlock), flip);
        const __m512i h = _mm512_permutex2var_epi16(_mm512_loadu_si512(g), _mm512_load_si512(kScaleIdx.data()),
                                                    _mm512_loadu_si512(g + 64));
        d = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
    }
    static void packBlock(const uint8_t* const* src, uint8_t* dst) {
        for (int k = 0; k < 8; ++k)
            for (int i = 0; i < 16; ++i)
                for (int j = 0; j < 4; ++j) dst[64 * k + 4 * i + j] = static_cast<uint8_t>(src[i][2 + 4 * k + j] ^ 0x80);
        packBytes(src, 0, 2, dst + 512);
    }
    static inline void panelQuants(const uint8_t* p, int k, __m512i& lo, __m512i& hi) {
        lo = _mm512_loadu_si512(p + 64 * k);
        hi = _mm512_loadu_si512(p + 256 + 64 * k);
    }
    static inline __m512 panelScales(const uint8_t* p) { return panelHalves(p + 512); }
    static inline __m512 panelMins(const uint8_t*) { return _mm512_setzero_ps(); }
};

// The non-linear 4-bit formats: level - min(levels) per nibble, so vpdpbusd sees unsigned bytes
// and the bias vector (kBiasMul = min(levels)) removes the offset.
constexpr int minLevel(const int8_t (&levels)[16]) {
    int m = levels[0];
    for (int v : levels) m = v < m ? v : m;
    return m;
}
constexpr std::array<uint8_t, 16> offsetLevels(const int8_t (&levels)[16]) {
    std::array<uint8_t, 16> u{};
    for (int i = 0; i < 16; ++i) u[i] = static_cast<uint8_t>(levels[i] - minLevel(levels));
    return u;
}
alignas(16) constexpr std::array<uint8_t, 16> kIQ4NLOffset = offsetLevels(tensor::kIQ4NLValues);
alignas(16) constexpr std::array<uint8_t, 16> kMXFP4Offset = offsetLevels(tensor::kMXFP4Values);
constexpr int kIQ4NLBias = minLevel(tensor::kIQ4NLValues), kMXFP4Bias = minLevel(tensor::kMXFP4Values);
static_assert(kIQ4NLBias == -127 && kMXFP4Bias == -12);

// q: the 16 nibble bytes of each of the group's blocks.
static inline void levels(const std::array<uint8_t, 16>& table, __m512i q, __m512i& lo, __m512i& hi) {
    const __m512i t = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(table.data())));
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    lo = _mm512_shuffle_epi8(t, _mm512_and_si512(q, m4));
    hi = _mm512_shuffle_epi8(t, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4));
}

struct DecIQ4_NL {
    static constexpr size_t kBlock = 18;
    static constexpr int kBiasMul = kIQ4NLBias;
    static constexpr bool kMin = false;
    using Group = ActGroup;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512&) {
        const GroupBytes<kBlock> b(g);
        levels(kIQ4NLOffset, b.template quants<2>(), lo, hi);
        d = b.template scales<0>();
    }
    static void packBlock(const uint8_t* const* src, uint8_t* dst) {
        packNibbles(src, 2, dst);
        packBytes(src, 0, 2, dst + 256);
    }
    static inline void panelQuants(const uint8_t* p, int k, __m512i& lo, __m512i& hi) {
        levels(kIQ4NLOffset, _mm512_loadu_si512(p + 64 * k), lo, hi);
    }
    static inline __m512 panelScales(const uint8_t* p) { return panelHalves(p + 256); }
    static inline __m512 panelMins(const uint8_t*) { return _mm512_setzero_ps(); }
};

// MXFP4's E8M0 exponents of 4 blocks -> mxfp4HalfScale(e) = 2^(e - 128) per block's four lanes:
// e - 1 in the float's exponent field, or for e = 0, 1 the subnormals 0x00200000 << e.
static inline __m512 mxfp4Scales(const uint8_t* p, size_t stride) {
    const uint32_t e4 = p[0] | static_cast<uint32_t>(p[stride]) << 8 | static_cast<uint32_t>(p[2 * stride]) << 16 |
                        static_cast<uint32_t>(p[3 * stride]) << 24;
    const __m128i e = _mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(e4)));
    const __m128i normal = _mm_slli_epi32(_mm_sub_epi32(e, _mm_set1_epi32(1)), 23);
    const __m128i subnormal = _mm_sllv_epi32(_mm_set1_epi32(0x00200000), e);
    const __m128i bits = _mm_mask_blend_epi32(_mm_cmplt_epu32_mask(e, _mm_set1_epi32(2)), normal, subnormal);
    const __m512i idx = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(_mm_castsi128_ps(bits)));
}

struct DecMXFP4 {
    static constexpr size_t kBlock = 17;
    static constexpr int kBiasMul = kMXFP4Bias;
    static constexpr bool kMin = false;
    using Group = ActGroup;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512&) {
        levels(kMXFP4Offset, load4x16(g + 1, kBlock), lo, hi);
        d = mxfp4Scales(g, kBlock);
    }
    static void packBlock(const uint8_t* const* src, uint8_t* dst) {
        packNibbles(src, 1, dst);
        packBytes(src, 0, 1, dst + 256);
    }
    static inline void panelQuants(const uint8_t* p, int k, __m512i& lo, __m512i& hi) {
        levels(kMXFP4Offset, _mm512_loadu_si512(p + 64 * k), lo, hi);
    }
    // mxfp4Scales' values for the 16 rows' exponents.
    static inline __m512 panelScales(const uint8_t* p) {
        const __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 256)));
        const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
        const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
        return _mm512_castsi512_ps(
            _mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2)), normal, subnormal));
    }
    static inline __m512 panelMins(const uint8_t*) { return _mm512_setzero_ps(); }
};

}  // namespace verdict::cpu::avx512::q32
