// AVX-512 (VNNI) kernels for the K-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS x Q8_K
// activations, and the kernel table of the lattice i-quants IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S
// too (their compute is in kernels_avx512_grid.cpp).
//
// Per super-block (256 weights) a row unpacks into 4 zmm of unsigned quants q[z] (64 each) and 4
// zmm of 16-bit sub-block scales sc[z] (one scale per 32-bit lane), in the order the activation
// quants were stored (act_layout.h KOrder). vpmaddubsw multiplies quants by activations into
// pairs of words and vpdpwssd multiplies those by the sub-block scales into 32-bit lanes. The
// weights' offset (Q3_K q - 4, Q6_K q - 32) is removed in the same integer sum via the
// activation's 16-element sums (bsums); the mins of Q2_K / Q4_K / Q5_K (scaled by dmin, not d)
// get their own FMA. IQ4_XS takes the lattice step (see GridUnpacked), its signs coming from the
// level table (see DecIQ4_XS). Prefill unpacks a tile's rows once per block of tokens (see compute).
// Q2_K, Q4_K, Q5_K, Q6_K and IQ4_XS weights repacked at load (packKPanels) run lane-per-row panels instead,
// for decode and prefill alike, with an exact integer sum per super-block (kernels_avx512_kpanel.cpp):
// on Zen 4, bench_kernels 1 thread, Q4_K matvec 540 -> 258 µs, prefill 134 -> 301 GOP/s;
// Q6_K matvec 820-860 -> 527-560 µs, prefill 150 -> 205-219 GOP/s; Q5_K 720-800 -> 400-510 µs,
// 82-134 -> 226-253 GOP/s; IQ4_XS 655-729 -> 300-366 µs, 121-138 -> 234-270 GOP/s.
#include "backend/cpu/act_layout.h"
#include "backend/cpu/kernels_x86.h"
#include "tensor/block_formats.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

// GCC 12 reports -W(maybe-)uninitialized inside its own AVX-512 intrinsics (_mm512_undefined_*).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c,bmi,bmi2")

#include "backend/cpu/simd_x86.h"

namespace verdict::cpu::avx512 {
namespace {

using namespace verdict::cpu::simd;

constexpr uint32_t kM1 = 0x3f3f3f3f, kM2 = 0x0f0f0f0f, kM3 = 0x03030303;

// Word-index tables for vpermw: which sub-block scale each 16-bit lane of q[z] needs.
alignas(64) constexpr uint16_t kIdxK6[4][32] = {  // Q6_K: q[z] = elements 64z.., sub-blocks 4z..4z+3
    {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3},
    {4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7},
    {8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 10, 10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 11, 11},
    {12, 12, 12, 12, 12, 12, 12, 12, 13, 13, 13, 13, 13, 13, 13, 13, 14, 14, 14, 14, 14, 14, 14, 14, 15, 15, 15, 15, 15, 15, 15, 15},
};
alignas(64) constexpr uint16_t kIdxK3[4][32] = {  // Q2_K / Q3_K: q[s] = sub-blocks 2s, 2s+1, 8+2s, 9+2s
    {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9},
    {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 10, 10, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 11, 11},
    {4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 12, 12, 12, 12, 12, 12, 12, 12, 13, 13, 13, 13, 13, 13, 13, 13},
    {6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 14, 14, 14, 14, 14, 14, 14, 14, 15, 15, 15, 15, 15, 15, 15, 15},
};

static inline __m512i loadIdx(const uint16_t* p) { return _mm512_load_si512(p); }

struct Unpacked {
    __m512i q[4];
    __m512i sc[4];
    __m512i extra;  // offset scales (Q3_K / Q6_K, x bsums) or mins (Q2_K / Q4_K / Q5_K, x bsums)
    float d;
    float dmin;
};

static inline void halves(const uint8_t* p, float& a, float& b) {
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(loadU32(p))));
    a = _mm_cvtss_f32(f);
    b = _mm_cvtss_f32(_mm_movehdup_ps(f));
}

// vpshufb controls for Q4_K / Q5_K (the 8 scale bytes broadcast to every 128-bit lane): word w
// of sc[z] = the scale of the sub-block its quants belong to, high byte zero. q[z] holds
// sub-blocks (z/2)*4 + z%2 (words 0-15) and that + 2 (words 16-31).
alignas(64) constexpr uint8_t kShufK4[4][64] = {
#define W(a) a, 0x80
#define L8(a) W(a), W(a), W(a), W(a), W(a), W(a), W(a), W(a)
    {L8(0), L8(0), L8(2), L8(2)},
    {L8(1), L8(1), L8(3), L8(3)},
    {L8(4), L8(4), L8(6), L8(6)},
    {L8(5), L8(5), L8(7), L8(7)},
};
alignas(64) constexpr uint8_t kShufMinK4[64] = {W(0), W(0), W(1), W(1), W(2), W(2), W(3), W(3),
                                                W(4), W(4), W(5), W(5), W(6), W(6), W(7), W(7),
                                                W(0), W(0), W(1), W(1), W(2), W(2), W(3), W(3),
                                                W(4), W(4), W(5), W(5), W(6), W(6), W(7), W(7)};
#undef L8
#undef W

// 8 6-bit scales and mins of Q4_K / Q5_K -> sc[z] and the mins words (m_j twice, for bsums pairs).
static inline void scalesK4(const uint8_t* s, Unpacked& u) {
    const uint32_t w0 = loadU32(s), w1 = loadU32(s + 4), w2 = loadU32(s + 8);
    const uint64_t sc8 = (w0 & kM1) | static_cast<uint64_t>((w2 & kM2) | (((w0 >> 6) & kM3) << 4)) << 32;
    const uint64_t m8 = (w1 & kM1) | static_cast<uint64_t>(((w2 >> 4) & kM2) | (((w1 >> 6) & kM3) << 4)) << 32;
    const __m512i scb = _mm512_set1_epi64(static_cast<long long>(sc8));
    for (int z = 0; z < 4; ++z) u.sc[z] = _mm512_shuffle_epi8(scb, _mm512_load_si512(kShufK4[z]));
    // Only the first 16 words meet bsums (the upper 16 bsums words are zero).
    u.extra = _mm512_shuffle_epi8(_mm512_set1_epi64(static_cast<long long>(m8)), _mm512_load_si512(kShufMinK4));
}

struct DecQ4_K {
    static constexpr size_t kBlock = 144;
    static constexpr bool kMin = true;
    static constexpr KOrder kOrder = KOrder::P64;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        halves(p, u.d, u.dmin);
        scalesK4(p + 4, u);
        const __m512i m4 = _mm512_set1_epi8(0x0F);
        const __m512i q0 = _mm512_loadu_si512(p + 16), q1 = _mm512_loadu_si512(p + 80);
        u.q[0] = _mm512_and_si512(q0, m4);
        u.q[1] = _mm512_and_si512(_mm512_srli_epi16(q0, 4), m4);
        u.q[2] = _mm512_and_si512(q1, m4);
        u.q[3] = _mm512_and_si512(_mm512_srli_epi16(q1, 4), m4);
    }
};

struct DecQ5_K {
    static constexpr size_t kBlock = 176;
    static constexpr bool kMin = true;
    static constexpr KOrder kOrder = KOrder::P64;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        halves(p, u.d, u.dmin);
        scalesK4(p + 4, u);
        const __m512i m4 = _mm512_set1_epi8(0x0F), b4 = _mm512_set1_epi8(0x10);
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16));
        // hb0 bit 0 = 5th bit of q[0], bit 1 of q[1]; hb1 likewise for q[2], q[3].
        const __m512i hb0 = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
        const __m512i hb1 = _mm512_srli_epi16(hb0, 4);
        const __m512i q0 = _mm512_loadu_si512(p + 48), q1 = _mm512_loadu_si512(p + 112);
        u.q[0] = _mm512_or_si512(_mm512_and_si512(q0, m4), _mm512_and_si512(_mm512_slli_epi16(hb0, 4), b4));
        u.q[1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q0, 4), m4),
                                 _mm512_and_si512(_mm512_slli_epi16(hb0, 3), b4));
        u.q[2] = _mm512_or_si512(_mm512_and_si512(q1, m4), _mm512_and_si512(_mm512_slli_epi16(hb1, 4), b4));
        u.q[3] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(q1, 4), m4),
                                 _mm512_and_si512(_mm512_slli_epi16(hb1, 3), b4));
    }
};

struct DecQ6_K {
    static constexpr size_t kBlock = 210;
    static constexpr bool kMin = false;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        u.d = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(loadU16(p + 208))));
        u.dmin = 0;
        const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = _mm512_loadu_si512(p + 64 * h);
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 128 + 32 * h));
            const __m512i hq = _mm512_inserti64x4(_mm512_castsi256_si512(qh), _mm256_srli_epi16(qh, 2), 1);
            u.q[2 * h] = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_and_si512(_mm512_slli_epi16(hq, 4), m30));
            u.q[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4), _mm512_and_si512(hq, m30));
        }
        const __m512i scw = _mm512_zextsi256_si512(
            _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 192))));
        for (int z = 0; z < 4; ++z) u.sc[z] = _mm512_permutexvar_epi16(loadIdx(kIdxK6[z]), scw);
        u.extra = _mm512_slli_epi16(_mm512_sub_epi16(_mm512_setzero_si512(), scw), 5);  // -32 * sc
    }
};

struct DecQ3_K {
    static constexpr size_t kBlock = 110;
    static constexpr bool kMin = false;
    static constexpr KOrder kOrder = KOrder::P32x;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        u.d = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(loadU16(p + 108))));
        u.dmin = 0;
        const uint32_t w0 = loadU32(p + 96), w1 = loadU32(p + 100), w2 = loadU32(p + 104);
        const __m128i sc8 = _mm_setr_epi32(static_cast<int>((w0 & kM2) | ((w2 & kM3) << 4)),
                                           static_cast<int>((w1 & kM2) | (((w2 >> 2) & kM3) << 4)),
                                           static_cast<int>(((w0 >> 4) & kM2) | (((w2 >> 4) & kM3) << 4)),
                                           static_cast<int>(((w1 >> 4) & kM2) | (((w2 >> 6) & kM3) << 4)));
        const __m512i scw = _mm512_zextsi256_si512(_mm256_cvtepi8_epi16(_mm_sub_epi8(sc8, _mm_set1_epi8(32))));
        for (int s = 0; s < 4; ++s) u.sc[s] = _mm512_permutexvar_epi16(loadIdx(kIdxK3[s]), scw);
        u.extra = _mm512_slli_epi16(_mm512_sub_epi16(_mm512_setzero_si512(), scw), 2);  // -4 * sc
        const __m512i m3 = _mm512_set1_epi8(3), b2 = _mm512_set1_epi8(4);
        const __m512i qz = _mm512_loadu_si512(p + 32);
        const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        const __m512i hz = _mm512_inserti64x4(_mm512_castsi256_si512(hm), _mm256_srli_epi16(hm, 4), 1);
        u.q[0] = _mm512_or_si512(_mm512_and_si512(qz, m3), _mm512_and_si512(_mm512_slli_epi16(hz, 2), b2));
        u.q[1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(qz, 2), m3),
                                 _mm512_and_si512(_mm512_slli_epi16(hz, 1), b2));
        u.q[2] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(qz, 4), m3), _mm512_and_si512(hz, b2));
        u.q[3] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(qz, 6), m3),
                                 _mm512_and_si512(_mm512_srli_epi16(hz, 1), b2));
    }
};

struct DecQ2_K {
    static constexpr size_t kBlock = 84;
    static constexpr bool kMin = true;
    static constexpr KOrder kOrder = KOrder::P32x;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        halves(p + 80, u.d, u.dmin);
        const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i m4x = _mm_set1_epi8(0x0F);
        const __m512i scw = _mm512_zextsi256_si512(_mm256_cvtepu8_epi16(_mm_and_si128(s, m4x)));
        u.extra = _mm512_zextsi256_si512(_mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), m4x)));
        for (int z = 0; z < 4; ++z) u.sc[z] = _mm512_permutexvar_epi16(loadIdx(kIdxK3[z]), scw);
        const __m512i m3 = _mm512_set1_epi8(3);
        const __m512i qz = _mm512_loadu_si512(p + 16);
        u.q[0] = _mm512_and_si512(qz, m3);
        u.q[1] = _mm512_and_si512(_mm512_srli_epi16(qz, 2), m3);
        u.q[2] = _mm512_and_si512(_mm512_srli_epi16(qz, 4), m3);
        u.q[3] = _mm512_and_si512(_mm512_srli_epi16(qz, 6), m3);
    }
};

// ---- The lattice step (IQ4_XS's rows after its panels) ----------------------------------------
// One zmm = two sub-blocks of 32: 64 unsigned magnitudes, the 64 sign bits as an opmask that
// negates the activation bytes (vpsubb under mask; Q8_K quants are in [-127, 127]), and the
// sub-blocks' scales as words: vpmaddubsw, then vpdpwssd (gridDot, simd_x86.h), every sum an exact
// int32. (The lattice i-quants IQ2_* / IQ3_* are in kernels_avx512_grid.cpp.)
struct GridUnpacked {
    __m512i q[4];
    __m512i sc[4];
    __mmask64 neg[4];
    float d;
};

static inline void accumulateGrid(const GridUnpacked& u, const ActSuper& A, __m512& acc) {
    __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) isum = gridDot(isum, u.q[k], u.sc[k], u.neg[k], reinterpret_cast<const int8_t*>(A.qs) + 64 * k);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(u.d * A.d), acc);
}


// ---- IQ4_XS ----------------------------------------------------------------------------------
// Levels kIQ4NLValues (|level| <= 127) with a 6-bit scale ls - 32 per sub-block of 32, Q8_K
// activations in KOrder::Q4x: per 128 elements, the low-nibble halves of 4 sub-blocks, then their
// high-nibble halves. So 64 bytes of qs (sub-blocks 4j..4j+3) give two zmm by and / shift, lo for
// activation bytes 128j.. and hi for 128j + 64.., and both take the same scale words (16-byte
// lane l: sub-block 4j + l). vpshufb turns the nibbles into |level|, and since the table's first 8
// levels are exactly the negative ones, "nibble < 8" (vptestnmb with 8) is the sign mask. Then the
// lattice step: activation negated under the mask, vpmaddubsw (|level| x a: pairs <= 2 x 127 x
// 127, no saturation), vpdpwssd by ls - 32 (gridDot); every sum an exact int32, as in the reference.
constexpr bool negativeLevelsFirst(const int8_t (&v)[16]) {
    for (int i = 0; i < 16; ++i)
        if ((v[i] < 0) != (i < 8)) return false;
    return true;
}
static_assert(negativeLevelsFirst(tensor::kIQ4NLValues));

constexpr std::array<uint8_t, 16> absLevels(const int8_t (&v)[16]) {
    std::array<uint8_t, 16> a{};
    for (int i = 0; i < 16; ++i) a[i] = static_cast<uint8_t>(v[i] < 0 ? -v[i] : v[i]);
    return a;
}
alignas(16) constexpr std::array<uint8_t, 16> kIQ4NLAbs = absLevels(tensor::kIQ4NLValues);

// vpermw controls: words 8l..8l+7 = the ls of sub-block 4j + l (low word of its dword).
alignas(64) constexpr uint16_t kIdxQ4x[2][32] = {
#define H8(a) a, a, a, a, a, a, a, a
    {H8(0), H8(2), H8(4), H8(6)},
    {H8(8), H8(10), H8(12), H8(14)},
#undef H8
};

struct DecIQ4_XS {
    static constexpr size_t kBlock = sizeof(tensor::BlockIQ4_XS);
    static constexpr bool kLevels = true;
    static constexpr KOrder kOrder = KOrder::Q4x;
    // d, and dwords 0-7 of ls = the sub-blocks' ls - 32.
    static inline float context(const uint8_t* p, __m512i& ls) {
        const auto& b = *reinterpret_cast<const tensor::BlockIQ4_XS*>(p);
        const __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(loadU32(b.scales_l))),
                                                              _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
                                            _mm256_set1_epi32(0xF));
        const __m256i hi = _mm256_and_si256(
            _mm256_srlv_epi32(_mm256_set1_epi32(b.scales_h), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)), _mm256_set1_epi32(3));
        ls = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 4)), _mm256_set1_epi32(32)));
        return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(b.d)));
    }
    // Sub-blocks 4j..4j+3: |level| bytes and sign masks of the low (q[0]) and high (q[1]) nibbles,
    // and their scale words.
    static inline void quad(const uint8_t* p, const __m512i& ls, int j, __m512i q[2], __mmask64 neg[2], __m512i& sc) {
        const __m512i table = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kIQ4NLAbs.data())));
        const __m512i m4 = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
        const __m512i z = _mm512_loadu_si512(p + 8 + 64 * j);
        const __m512i lo = _mm512_and_si512(z, m4), hi = _mm512_and_si512(_mm512_srli_epi16(z, 4), m4);
        q[0] = _mm512_shuffle_epi8(table, lo);
        q[1] = _mm512_shuffle_epi8(table, hi);
        neg[0] = _mm512_testn_epi8_mask(lo, eight);
        neg[1] = _mm512_testn_epi8_mask(hi, eight);
        sc = _mm512_permutexvar_epi16(loadIdx(kIdxQ4x[j]), ls);
    }
};

template <class Dec>
constexpr bool levelQuants() {
    if constexpr (requires { Dec::kLevels; }) return Dec::kLevels;
    return false;
}

template <class Dec>
static inline void decodeLevelBlock(const uint8_t* p, GridUnpacked& u) {
    __m512i ls;
    u.d = Dec::context(p, ls);
#pragma GCC unroll 2
    for (int j = 0; j < 2; ++j) {
        Dec::quad(p, ls, j, u.q + 2 * j, u.neg + 2 * j, u.sc[2 * j]);
        u.sc[2 * j + 1] = u.sc[2 * j];
    }
}

// One row's super-block against one token, four sub-blocks at a time.
template <class Dec>
static inline void accumulateLevelsDirect(const uint8_t* p, const ActSuper& A, __m512& acc) {
    __m512i ls;
    const float d = Dec::context(p, ls);
    __m512i isum = _mm512_setzero_si512();
    const auto* a = reinterpret_cast<const int8_t*>(A.qs);
#pragma GCC unroll 2
    for (int j = 0; j < 2; ++j) {
        __m512i q[2], sc;
        __mmask64 neg[2];
        Dec::quad(p, ls, j, q, neg, sc);
        isum = gridDot(isum, q[0], sc, neg[0], a + 128 * j);
        isum = gridDot(isum, q[1], sc, neg[1], a + 128 * j + 64);
    }
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(d * A.d), acc);
}

template <class Dec>
static inline void accumulate(const Unpacked& u, const ActSuper& A, __m512& acc) {
    __m512i isum = _mm512_setzero_si512();
    for (int z = 0; z < 4; ++z)
        isum = _mm512_dpwssd_epi32(isum, _mm512_maddubs_epi16(u.q[z], _mm512_load_si512(A.qs + 64 * z)), u.sc[z]);
    const __m512i bs = _mm512_load_si512(A.bsums);
    if constexpr (!Dec::kMin) isum = _mm512_dpwssd_epi32(isum, u.extra, bs);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(u.d * A.d), acc);
    if constexpr (Dec::kMin)
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_madd_epi16(u.extra, bs)), _mm512_set1_ps(-u.dmin * A.d), acc);
}

// R rows x T tokens. Rows are unpacked one at a time (an unpacked super-block is 9 zmm) and
// used for all T tokens; the activations come from L1.
template <class Dec, int R, int T>
void tile(const MatmulArgs& a, int64_t r, int64_t t) {
    const int64_t nSuper = a.K / 256;
    __m512 acc[R][T];
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < T; ++j) acc[i][j] = _mm512_setzero_ps();
    auto step = [&](int i, int64_t sb) {
        const uint8_t* wp = a.W + (r + i) * a.rowBytes + sb * Dec::kBlock;
        if constexpr (T == 1) prefetchSpan(wp + R * a.rowBytes, Dec::kBlock);
        if constexpr (levelQuants<Dec>() && T == 1) {
            accumulateLevelsDirect<Dec>(wp, reinterpret_cast<const ActSuper*>(a.act + t * a.actStride)[sb], acc[i][0]);
        } else if constexpr (levelQuants<Dec>()) {
            GridUnpacked u;
            decodeLevelBlock<Dec>(wp, u);
            for (int j = 0; j < T; ++j)
                accumulateGrid(u, reinterpret_cast<const ActSuper*>(a.act + (t + j) * a.actStride)[sb], acc[i][j]);
        } else {
            Unpacked u;
            Dec::decode(wp, u);
            for (int j = 0; j < T; ++j)
                accumulate<Dec>(u, reinterpret_cast<const ActSuper*>(a.act + (t + j) * a.actStride)[sb], acc[i][j]);
        }
    };
    // Decode reads the rows one after the other (one stream through memory; as the lattice
    // decode, kernels_avx512_grid.cpp), prefill super-block by super-block (the tokens' activations
    // stay in L1). Each row's super-blocks are added in order either way.
    if constexpr (T == 1) {
        for (int i = 0; i < R; ++i)
            for (int64_t sb = 0; sb < nSuper; ++sb) step(i, sb);
    } else {
        for (int64_t sb = 0; sb < nSuper; ++sb)
            for (int i = 0; i < R; ++i) step(i, sb);
    }
    for (int j = 0; j < T; ++j)
        for (int i = 0; i < R; ++i) a.Y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]);
}

// Prefill (many tokens): a 4-row tile unpacks its rows' super-blocks once per block of tokens into
// a per-thread buffer, and every 4 x 4 tile of that block reads them back; the products per (row,
// token) are tile()'s, in the same order, so the results are bit-identical to it.
template <class Dec>
using UnpackedOf = std::conditional_t<levelQuants<Dec>(), GridUnpacked, Unpacked>;

template <class Dec>
static inline void unpackSuper(const uint8_t* wp, UnpackedOf<Dec>& u) {
    if constexpr (levelQuants<Dec>()) decodeLevelBlock<Dec>(wp, u);
    else Dec::decode(wp, u);
}

template <class Dec, int R, int T>
void tileUnpacked(const MatmulArgs& a, const UnpackedOf<Dec>* rows, int64_t r, int64_t t) {
    const int64_t nSuper = a.K / 256;
    __m512 acc[R][T];
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < T; ++j) acc[i][j] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nSuper; ++sb)
        for (int i = 0; i < R; ++i) {
            const UnpackedOf<Dec>& u = rows[sb * R + i];
            for (int j = 0; j < T; ++j) {
                const ActSuper& A = reinterpret_cast<const ActSuper*>(a.act + (t + j) * a.actStride)[sb];
                if constexpr (levelQuants<Dec>()) accumulateGrid(u, A, acc[i][j]);
                else accumulate<Dec>(u, A, acc[i][j]);
            }
        }
    for (int j = 0; j < T; ++j)
        for (int i = 0; i < R; ++i) a.Y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]);
}

// Q2_K unpacks cheaply (2-bit planes, one scale byte per sub-block): reading its 576-byte unpacked
// super-blocks back costs more than unpacking its 84 bytes again (0.97x in tests/bench/README.md).
template <class Dec>
constexpr bool unpackOnce() {
    return !std::is_same_v<Dec, DecQ2_K>;
}

template <class Dec>
void compute(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    // Packed at load (kernels_avx512_kpanel.cpp): panels up to packedRows, then row-major.
    if constexpr (std::is_same_v<Dec, DecQ2_K>) r0 = computeKPanels<tensor::TensorType::Q2_K>(a, r0, r1, t0, t1);
    if constexpr (std::is_same_v<Dec, DecQ4_K>) r0 = computeKPanels<tensor::TensorType::Q4_K>(a, r0, r1, t0, t1);
    if constexpr (std::is_same_v<Dec, DecQ5_K>) r0 = computeKPanels<tensor::TensorType::Q5_K>(a, r0, r1, t0, t1);
    if constexpr (std::is_same_v<Dec, DecQ6_K>) r0 = computeKPanels<tensor::TensorType::Q6_K>(a, r0, r1, t0, t1);
    if constexpr (std::is_same_v<Dec, DecIQ4_XS>) r0 = computeKPanels<tensor::TensorType::IQ4_XS>(a, r0, r1, t0, t1);
    if (r0 == r1) return;
    constexpr int kR = 4, kT = 4, kRDecode = 4;
    constexpr int64_t kTokBlock = 48;  // tokens whose activations (384 bytes per 256 elements) stay in L2
    int64_t t = t0;
    const int64_t tiled = (t1 - t0) / kT * kT;
    // Only while a tile's unpacked rows fit in L1 beside the activations (K <= 2048): wider rows
    // (a down projection) read back from L2 cost more than unpacking them again.
    constexpr size_t kUnpackedBytes = 24 * 1024;
    const size_t unpackedBytes = static_cast<size_t>(a.K / 256 * kR) * sizeof(UnpackedOf<Dec>);
    if (unpackOnce<Dec>() && tiled >= 2 * kT && r1 - r0 >= kR && unpackedBytes <= kUnpackedBytes) {
        const int64_t nSuper = a.K / 256;
        auto* rows = threadBuffer<UnpackedOf<Dec>>(static_cast<size_t>(nSuper * kR));
        for (int64_t tb = t0; tb < t0 + tiled; tb += kTokBlock) {
            const int64_t te = std::min(tb + kTokBlock, t0 + tiled);
            int64_t r = r0;
            for (; r + kR <= r1; r += kR) {
                for (int64_t sb = 0; sb < nSuper; ++sb)
                    for (int i = 0; i < kR; ++i)
                        unpackSuper<Dec>(a.W + (r + i) * a.rowBytes + sb * Dec::kBlock, rows[sb * kR + i]);
                for (int64_t u = tb; u < te; u += kT) tileUnpacked<Dec, kR, kT>(a, rows, r, u);
            }
            for (; r < r1; ++r)
                for (int64_t u = tb; u < te; u += kT) tile<Dec, 1, kT>(a, r, u);
        }
        t = t0 + tiled;
    }
    for (; t + kT <= t1; t += kT) {
        int64_t r = r0;
        for (; r + kR <= r1; r += kR) tile<Dec, kR, kT>(a, r, t);
        for (; r < r1; ++r) tile<Dec, 1, kT>(a, r, t);
    }
    for (; t < t1; ++t) {
        int64_t r = r0;
        for (; r + kRDecode <= r1; r += kRDecode) tile<Dec, kRDecode, 1>(a, r, t);
        for (; r < r1; ++r) tile<Dec, 1, 1>(a, r, t);
    }
}

// Destination (position) of elements 32c + 16h .. 32c + 16h + 15 of a super-block in the given
// order (h = 0, 1: the halves of 32-element chunk c).
constexpr int halfPos(KOrder o, int c, int h) {
    switch (o) {
        case KOrder::Natural: return 32 * c + 16 * h;
        case KOrder::P64: return 128 * (c / 4) + 32 * ((c % 4 == 1) ? 2 : (c % 4 == 2) ? 1 : c % 4) + 16 * h;
        case KOrder::P32x: return (c < 4 ? 64 * c : 64 * (c - 4) + 32) + 16 * h;
        case KOrder::Q4x: return 128 * (c / 4) + 64 * h + 16 * (c % 4);
    }
    return 32 * c + 16 * h;
}

// Q8_K quantization (ggml's quantize_row_q8_K_ref values) stored in the kernel's order.
template <KOrder Order>
void prepare(const float* x, int64_t K, void* out) {
    auto* s = static_cast<ActSuper*>(out);
    const __m512 absMask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    for (int64_t b = 0; b < K / 256; ++b, x += 256) {
        ActSuper& A = s[b];
        __m512 vmax = _mm512_setzero_ps();
        for (int i = 0; i < 16; ++i) vmax = _mm512_max_ps(vmax, _mm512_and_ps(_mm512_loadu_ps(x + 16 * i), absMask));
        const float amax = _mm512_reduce_max_ps(vmax);
        std::memset(A.bsums, 0, sizeof A.bsums);
        if (amax == 0.0f) {
            std::memset(A.qs, 0, sizeof A.qs);
            std::memset(A.sum32Pairs, 0, sizeof A.sum32Pairs);
            A.d = 0;
            continue;
        }
        // The first element with |x| == amax gives the sign (ggml scans for a strictly larger |x|).
        float max = 0;
        const __m512 va = _mm512_set1_ps(amax);
        for (int i = 0; i < 16; ++i) {
            const __mmask16 m = _mm512_cmp_ps_mask(_mm512_and_ps(_mm512_loadu_ps(x + 16 * i), absMask), va, _CMP_EQ_OQ);
            if (m) {
                max = x[16 * i + __builtin_ctz(m)];
                break;
            }
        }
        const float iscale = -127.f / max;
        const __m512 vs = _mm512_set1_ps(iscale);
        const __m512i lim = _mm512_set1_epi32(127);
        for (int c = 0; c < 8; ++c) {
            const __m512i q0 = _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(vs, _mm512_loadu_ps(x + 32 * c))), lim);
            const __m512i q1 = _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(vs, _mm512_loadu_ps(x + 32 * c + 16))), lim);
            A.bsums[2 * c] = static_cast<int16_t>(_mm512_reduce_add_epi32(q0));
            A.bsums[2 * c + 1] = static_cast<int16_t>(_mm512_reduce_add_epi32(q1));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(A.qs + halfPos(Order, c, 0)), _mm512_cvtepi32_epi8(q0));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(A.qs + halfPos(Order, c, 1)), _mm512_cvtepi32_epi8(q1));
        }
        A.d = 1 / iscale;
        int32_t s32[8];
        for (int s = 0; s < 8; ++s) s32[s] = A.bsums[2 * s] + A.bsums[2 * s + 1];
        auto pair = [&](int lo, int hi) {
            return static_cast<int32_t>(static_cast<uint16_t>(s32[lo]) | static_cast<uint32_t>(static_cast<uint16_t>(s32[hi])) << 16);
        };
        constexpr int kMinPair[4] = {0, 1, 4, 5};
        for (int w = 0; w < 4; ++w) {
            A.sum32Pairs[w] = pair(kMinPair[w], kMinPair[w] + 2);
            A.sum32Pairs[4 + w] = pair(2 * w, 2 * w + 1);
        }
    }
}

}  // namespace

const MatmulKernel* kquantKernel(tensor::TensorType t) {
    using tensor::TensorType;
    static constexpr MatmulKernel kKernels[] = {
        {TensorType::Q2_K, SimdLevel::Avx512, superActBytes, prepare<DecQ2_K::kOrder>, compute<DecQ2_K>, packKPanels<TensorType::Q2_K>, true},
        {TensorType::Q3_K, SimdLevel::Avx512, superActBytes, prepare<DecQ3_K::kOrder>, compute<DecQ3_K>},
        {TensorType::Q4_K, SimdLevel::Avx512, superActBytes, prepare<DecQ4_K::kOrder>, compute<DecQ4_K>, packKPanels<TensorType::Q4_K>, true},
        {TensorType::Q5_K, SimdLevel::Avx512, superActBytes, prepare<DecQ5_K::kOrder>, compute<DecQ5_K>, packKPanels<TensorType::Q5_K>, true},
        {TensorType::Q6_K, SimdLevel::Avx512, superActBytes, prepare<DecQ6_K::kOrder>, compute<DecQ6_K>, packKPanels<TensorType::Q6_K>, true},
        {TensorType::IQ4_XS, SimdLevel::Avx512, superActBytes, prepare<DecIQ4_XS::kOrder>, compute<DecIQ4_XS>, packKPanels<TensorType::IQ4_XS>, true},
        {TensorType::IQ2_XXS, SimdLevel::Avx512, superActBytes, prepare<KOrder::Natural>, computeGrid<TensorType::IQ2_XXS>},
        {TensorType::IQ2_XS, SimdLevel::Avx512, superActBytes, prepare<KOrder::Natural>, computeGrid<TensorType::IQ2_XS>},
        {TensorType::IQ2_S, SimdLevel::Avx512, superActBytes, prepare<KOrder::Natural>, computeGrid<TensorType::IQ2_S>},
        {TensorType::IQ3_XXS, SimdLevel::Avx512, superActBytes, prepare<KOrder::Natural>, computeGrid<TensorType::IQ3_XXS>},
        {TensorType::IQ3_S, SimdLevel::Avx512, superActBytes, prepare<KOrder::Natural>, computeGrid<TensorType::IQ3_S>},
        {TensorType::IQ1_S, SimdLevel::Avx512, superActBytes, prepare<KOrder::Natural>, computeGrid<TensorType::IQ1_S>},
        {TensorType::IQ1_M, SimdLevel::Avx512, superActBytes, prepare<KOrder::Natural>, computeGrid<TensorType::IQ1_M>},
        {TensorType::TQ1_0, SimdLevel::Avx512, superActBytes, prepare<KOrder::Natural>, computeGrid<TensorType::TQ1_0>},
        {TensorType::TQ2_0, SimdLevel::Avx512, superActBytes, prepare<KOrder::Natural>, computeGrid<TensorType::TQ2_0>},
    };
    for (const auto& k : kKernels)
        if (k.type == t) return &k;
    return nullptr;
}

}  // namespace verdict::cpu::avx512

#pragma GCC pop_options
