// AVX-512 (VNNI) kernels for the lattice i-quants IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
// IQ1_M and the ternary TQ1_0, TQ2_0 x Q8_K activations (natural order); their table entries are
// in kernels_avx512_k.cpp. (IQ1_* and TQ*: signed points, no sign bits; see kSigned below.)
//
// A row's super-block decodes into 4 zmm of two sub-blocks of 32 each (Dec::grid / grid4, GridCtx): 64
// unsigned grid magnitudes (<= 62), the 64 sign bits as an opmask, the odd scales ls (<= 31;
// IQ2_XS / IQ2_S one per half of 16); d carries the format's fixed factor (1/8 IQ2_*, 1/4
// IQ3_XXS, exact). Numerics, the same for every pass (decode, prefill, any number of tokens or
// threads): per row and super-block the exact integer isum = sum_s ls_s * (v_s . a_s) (v the signed
// grid values, as the reference's integer sums), then y = fma(float(isum), d * da, y) in
// super-block order.
//  - Decode (one token, rows past the last 16-row panel): rows one at a time, the lattice step
//    (gridDot: activations negated under the sign mask, vpmaddubsw, vpdpwssd by ls), four rows'
//    lane sums reduced together.
//  - Prefill (two tokens or more): every 16 rows are decoded once per block of tokens into a
//    lane-per-row panel (row i in 32-bit lane i) of v + 64 as unsigned bytes, for vpdpbusd
//    against the token's 4 activation bytes broadcast, with the rows' scales and d beside them;
//    the offset comes back out through the activation's sub-block sums (64 * sum_s ls_s * asum_s,
//    vpdpwssd). The grid lookups, the costly part, are then shared by the block's tokens.
#include "backend/cpu/act_layout.h"
#include "backend/cpu/grid_codes.h"
#include "backend/cpu/kernels_x86.h"
#include "tensor/block_formats.h"
#include "tensor/iq_grids.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
using tensor::TensorType;

static inline __m512i loadIdx(const uint16_t* p) { return _mm512_load_si512(p); }

struct GridCtx {
    alignas(32) uint64_t signs[4];  // signs[k]: sub-blocks 2k (bits 0-31) and 2k+1 (bit j: element j negative)
    __m512i ls;                     // dwords 0-7: ls of sub-block ib (IQ2_XS / IQ2_S: two words); upper half 0
    float d;
};

// vpermw controls: words 0-15 = the ls of sub-block 2k, 16-31 = that of 2k+1 (low word of its dword).
alignas(64) constexpr uint16_t kIdxGrid[4][32] = {
#define H16(a) a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a
    {H16(0), H16(2)},
    {H16(4), H16(6)},
    {H16(8), H16(10)},
    {H16(12), H16(14)},
#undef H16
};
// IQ2_XS / IQ2_S, a scale per half of 16: dword ib = ls of its first half | ls of its second << 16.
alignas(64) constexpr uint16_t kIdxGridHalf[4][32] = {
#define H8(a) a, a, a, a, a, a, a, a
    {H8(0), H8(1), H8(2), H8(3)},
    {H8(4), H8(5), H8(6), H8(7)},
    {H8(8), H8(9), H8(10), H8(11)},
    {H8(12), H8(13), H8(14), H8(15)},
#undef H8
};

// 8 scale bytes (low nibble: first half of the sub-block) -> c.ls dwords (2 lo + 1) | (2 hi + 1) << 16.
static inline void halfScales(GridCtx& c, const uint8_t* scales) {
    const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales)));
    const __m256i m4 = _mm256_set1_epi32(0xF);
    const __m256i w = _mm256_or_si256(_mm256_and_si256(v, m4), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(v, 4), m4), 16));
    c.ls = _mm512_zextsi256_si512(_mm256_or_si256(_mm256_slli_epi32(w, 1), _mm256_set1_epi32(0x10001)));
}

// Bytes holding a 7-bit sign index each -> the kIQ2Signs byte: bit 7 = parity of bits 0-6, by a
// nibble-parity vpshufb lookup.
static inline __m256i signBytes(__m256i idx) {
    const __m256i par = _mm256_broadcastsi128_si256(
        _mm_setr_epi8(0, -128, -128, 0, -128, 0, 0, -128, -128, 0, 0, -128, 0, -128, -128, 0));
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i pl = _mm256_shuffle_epi8(par, _mm256_and_si256(idx, m4));
    const __m256i ph = _mm256_shuffle_epi8(par, _mm256_and_si256(_mm256_srli_epi16(idx, 4), m4));
    return _mm256_or_si256(idx, _mm256_xor_si256(pl, ph));
}

// IQ2_XXS / IQ3_XXS: the 8 aux words (sign indices in bits 7l..7l+6, scale in bits 28-31).
static inline void xxsContext(GridCtx& c, __m256i aux) {
    const __m256i m7 = _mm256_set1_epi32(0x7F);
    __m256i idx = _mm256_and_si256(aux, m7);
    idx = _mm256_or_si256(idx, _mm256_and_si256(_mm256_slli_epi32(aux, 1), _mm256_slli_epi32(m7, 8)));
    idx = _mm256_or_si256(idx, _mm256_and_si256(_mm256_slli_epi32(aux, 2), _mm256_slli_epi32(m7, 16)));
    idx = _mm256_or_si256(idx, _mm256_and_si256(_mm256_slli_epi32(aux, 3), _mm256_slli_epi32(m7, 24)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(c.signs), signBytes(idx));
    const __m256i ls = _mm256_or_si256(_mm256_slli_epi32(_mm256_srli_epi32(aux, 28), 1), _mm256_set1_epi32(1));
    c.ls = _mm512_zextsi256_si512(ls);
}

// The IQ2 grid points by scalar loads (8 elements per 64-bit load). On Zen 4 the alternatives were
// slower: IQ2_XXS / IQ2_XS / IQ2_S's matvec took 1.4-1.5x as long with the grids as 2-bit codes
// looked up by vpermi2w like the IQ3 grids below (32 lookups of 8 elements cost as much as
// 64 of 4); a 16-lane vpgatherdd was slower than scalar loads (IQ3_XXS: 1.33x the AVX2 kernel's
// time with it, 0.87x with the loads).
struct DecIQ2_XXS {
    static constexpr size_t kBlock = sizeof(tensor::BlockIQ2_XXS);
    static constexpr bool kGrid = true;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void context(const uint8_t* p, GridCtx& c) {
        c.d = 0.125f * _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(loadU16(p))));
        // 16 dwords: (grid indices, aux) per sub-block
        const __m512i z = _mm512_loadu_si512(p + 2);
        xxsContext(c, _mm512_cvtepi64_epi32(_mm512_srli_epi64(z, 32)));
    }
    static inline __m512i grid(const uint8_t* p, int k) {
        const uint8_t* i = p + 2 + 16 * k;
        const uint64_t* g = tensor::kIQ2XXSGrid;
        return _mm512_set_epi64(static_cast<long long>(g[i[11]]), static_cast<long long>(g[i[10]]),
                                static_cast<long long>(g[i[9]]), static_cast<long long>(g[i[8]]),
                                static_cast<long long>(g[i[3]]), static_cast<long long>(g[i[2]]),
                                static_cast<long long>(g[i[1]]), static_cast<long long>(g[i[0]]));
    }
};

// The IQ3 grids as 16-bit codes, nibble j = element j's level (IQ3_S: its odd magnitude 1 .. 15;
// IQ3_XXS: the index of its magnitude in kIQ3XXSLevels): IQ3_S's 512 entries fit 16 zmm, so 32
// lookups are 8 vpermi2w (index bits 0-5) and a select tree on bits 6-8 instead of 32 scalar loads
// and inserts (IQ3_XXS: 4 and bits 6-7). Matvec 1.8x faster for IQ3_S (tests/bench/README.md).
// The tables: grid_codes.h.
// 32 indices (words, Bits wide) -> their codes in the table of 2^Bits entries: a vpermi2w per 64
// entries on bits 0-5, then a select tree on bits 6 .. Bits - 1.
template <int Bits>
static inline __m512i codeLookup(const uint16_t* table, __m512i idx) {
    constexpr int kPairs = 1 << (Bits - 6);
    const auto* T = reinterpret_cast<const __m512i*>(table);
    __m512i r[kPairs];
    for (int q = 0; q < kPairs; ++q) r[q] = _mm512_permutex2var_epi16(_mm512_load_si512(T + 2 * q), idx, _mm512_load_si512(T + 2 * q + 1));
    int n = kPairs;
    for (int bit = 6; bit < Bits; ++bit, n /= 2) {
        const __mmask32 m = _mm512_test_epi16_mask(idx, _mm512_set1_epi16(static_cast<int16_t>(1 << bit)));
        for (int q = 0; q < n; q += 2) r[q / 2] = _mm512_mask_blend_epi16(m, r[q], r[q + 1]);
    }
    return r[0];
}

// Two vectors of 32 group indices (words, qword order 0, 4, 1, 5, 2, 6, 3, 7 of 4 groups each) ->
// q[0..3], the super-block's 256 levels in natural order: the per-128-bit-lane byte unpacks leave
// groups 0-15 in q[2h], 16-31 in q[2h + 1].
template <int Bits>
static inline void codesToLevels(const uint16_t* table, const __m512i idx[2], __m512i q[4]) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    for (int h = 0; h < 2; ++h) {
        const __m512i codes = codeLookup<Bits>(table, idx[h]);
        const __m512i lo = _mm512_and_si512(codes, m4), hi = _mm512_and_si512(_mm512_srli_epi16(codes, 4), m4);
        q[2 * h] = _mm512_unpacklo_epi8(lo, hi);
        q[2 * h + 1] = _mm512_unpackhi_epi8(lo, hi);
    }
}

static inline __m512i groupOrder(__m512i idx) { return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7), idx); }

struct DecIQ3_XXS {
    static constexpr size_t kBlock = sizeof(tensor::BlockIQ3_XXS);
    static constexpr bool kGrid = true;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void context(const uint8_t* p, GridCtx& c) {
        c.d = 0.25f * _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(loadU16(p))));
        xxsContext(c, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 + 64)));
    }
    static inline void grid4(const uint8_t* p, __m512i q[4]) {
        __m512i idx[2];
        for (int h = 0; h < 2; ++h)  // group g's index: qs[g]
            idx[h] = groupOrder(_mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 + 32 * h))));
        codesToLevels<8>(kIQ3XXSCodes.data(), idx, q);
        const __m512i lv = _mm512_broadcast_i32x4(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(kIQ3XXSLevels.data())));
        for (int k = 0; k < 4; ++k) q[k] = _mm512_shuffle_epi8(lv, q[k]);
    }
};

struct DecIQ3_S {
    static constexpr size_t kBlock = sizeof(tensor::BlockIQ3_S);
    static constexpr bool kGrid = true;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void context(const uint8_t* p, GridCtx& c) {
        const auto& b = *reinterpret_cast<const tensor::BlockIQ3_S*>(p);
        c.d = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(loadU16(p))));
        std::memcpy(c.signs, b.signs, sizeof c.signs);
        const __m256i w = _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(loadU32(b.scales))),
                                            _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
        c.ls = _mm512_zextsi256_si512(
            _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0xF)), 1), _mm256_set1_epi32(1)));
    }
    static inline void grid4(const uint8_t* p, __m512i q[4]) {
        const auto& b = *reinterpret_cast<const tensor::BlockIQ3_S*>(p);
        __m512i idx[2];
        for (int h = 0; h < 2; ++h) {  // group g's index: qs[32h + g] | bit g of qh[4h .. 4h + 3] << 8
            const __m512i lo = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * h)));
            idx[h] = groupOrder(_mm512_mask_add_epi16(lo, _cvtu32_mask32(loadU32(b.qh + 4 * h)), lo, _mm512_set1_epi16(0x100)));
        }
        codesToLevels<9>(kIQ3SCodes.data(), idx, q);
    }
};

// IQ2_XS: u16 per group of 8 = 9-bit grid index | 7-bit sign index << 9; a scale per half.
struct DecIQ2_XS {
    static constexpr size_t kBlock = sizeof(tensor::BlockIQ2_XS);
    static constexpr bool kGrid = true, kHalfScales = true;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void context(const uint8_t* p, GridCtx& c) {
        c.d = 0.125f * _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(loadU16(p))));
        const __m256i idx = _mm512_cvtepi16_epi8(_mm512_srli_epi16(_mm512_loadu_si512(p + 2), 9));
        _mm256_store_si256(reinterpret_cast<__m256i*>(c.signs), signBytes(idx));
        halfScales(c, p + 2 + 64);
    }
    static inline __m512i grid(const uint8_t* p, int k) {
        const uint8_t* i = p + 2 + 16 * k;
        const uint64_t* g = tensor::kIQ2XSGrid;
        auto v = [&](int j) { return static_cast<long long>(g[loadU16(i + 2 * j) & 511]); };
        return _mm512_set_epi64(v(7), v(6), v(5), v(4), v(3), v(2), v(1), v(0));
    }
};

// IQ2_S: 10-bit indices (qs byte + 2 bits of qh), plain sign bytes, a scale per half.
struct DecIQ2_S {
    static constexpr size_t kBlock = sizeof(tensor::BlockIQ2_S);
    static constexpr bool kGrid = true, kHalfScales = true;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void context(const uint8_t* p, GridCtx& c) {
        const auto& b = *reinterpret_cast<const tensor::BlockIQ2_S*>(p);
        c.d = 0.125f * _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(loadU16(p))));
        std::memcpy(c.signs, b.qs + 32, sizeof c.signs);
        halfScales(c, b.scales);
    }
    static inline __m512i grid(const uint8_t* p, int k) {
        const auto& b = *reinterpret_cast<const tensor::BlockIQ2_S*>(p);
        const uint8_t* i = b.qs + 8 * k;
        const uint32_t h = loadU16(b.qh + 2 * k);  // 2 bits per group of 8
        const uint64_t* g = tensor::kIQ2SGrid;
        auto v = [&](int j) { return static_cast<long long>(g[i[j] | ((h >> (2 * j) << 8) & 0x300)]); };
        return _mm512_set_epi64(v(7), v(6), v(5), v(4), v(3), v(2), v(1), v(0));
    }
};

// ---- The 1-bit and ternary formats: no sign bits ----
//  - IQ1_S / IQ1_M (kSigned): x = d * ls * (v + delta), v in {-1, 0, 1}, delta = +-1/8 per
//    sub-block (IQ1_S) or group of 8 (IQ1_M). grid() gives the points 8v + the delta's sign as
//    signed bytes and d carries 1/8, so the exact integer sum is 8 x the reference's isum + delta *
//    dsum (exact in float too); decode takes their magnitudes and signs (vpabsb, vpmovb2m) into the
//    lattice step, the prefill panel adds the offset as for the others.
//  - TQ1_0 / TQ2_0 (kBias 1): x = d * t, t in {-1, 0, 1}, every ls 1. grid() gives t + 1 as
//    unsigned bytes: decode multiplies them with vpdpbusd straight against the activations and
//    takes sum(a) out once per super-block; the panel holds t + 64 like the others.

// 8 IQ1 points (indices idx[j] into kIQ1Grid8) plus the delta signs (bit j of neg set: -1, else +1).
static inline __m512i iq1Points(const uint32_t idx[8], uint32_t neg) {
    const uint64_t* g = kIQ1Grid8.data();
    auto v = [&](int j) { return static_cast<long long>(g[idx[j]]); };
    const __m512i pts = _mm512_set_epi64(v(7), v(6), v(5), v(4), v(3), v(2), v(1), v(0));
    return _mm512_add_epi8(pts, _mm512_mask_blend_epi64(static_cast<__mmask8>(neg), _mm512_set1_epi8(1), _mm512_set1_epi8(-1)));
}

// IQ1_S: qs at 2, qh words at 34 (bits 3l..3l+2: index bits 8-10 of group l; 12-14 scale; 15 delta sign).
struct DecIQ1_S {
    static constexpr size_t kBlock = sizeof(tensor::BlockIQ1_S);
    static constexpr bool kGrid = true, kSigned = true;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void context(const uint8_t* p, GridCtx& c) {
        c.d = 0.125f * _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(loadU16(p))));
        const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 34)));
        const __m256i s = _mm256_and_si256(_mm256_srli_epi32(h, 12), _mm256_set1_epi32(7));
        c.ls = _mm512_zextsi256_si512(_mm256_or_si256(_mm256_slli_epi32(s, 1), _mm256_set1_epi32(1)));
    }
    static inline __m512i grid(const uint8_t* p, int k) {
        const uint8_t* qs = p + 2 + 8 * k;
        const uint32_t h[2] = {loadU16(p + 34 + 4 * k), loadU16(p + 36 + 4 * k)};
        uint32_t idx[8];
        for (int j = 0; j < 8; ++j) idx[j] = qs[j] | ((h[j / 4] >> (3 * (j % 4))) & 7) << 8;
        return iq1Points(idx, (h[0] >> 15) * 0x0Fu | (h[1] >> 15) * 0xF0u);
    }
};

// IQ1_M: qs at 0, qh at 32 (byte 4k + j / 2, nibble j % 2: index bits 8-10 of group j of sub-blocks
// 2k, 2k + 1, bit 3 its delta sign), scales at 48 (block_formats.h; ls per half of 16).
struct DecIQ1_M {
    static constexpr size_t kBlock = sizeof(tensor::BlockIQ1_M);
    static constexpr bool kGrid = true, kSigned = true, kHalfScales = true;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void context(const uint8_t* p, GridCtx& c) {
        const auto& b = *reinterpret_cast<const tensor::BlockIQ1_M*>(p);
        c.d = 0.125f * _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(tensor::iq1mScale(b))));
        // dword ib: the 6 bits of word ib / 2 from bit 6 (ib % 2), as ls of its halves (low, high word)
        const __m256i w = _mm256_permutevar8x32_epi32(_mm256_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 48))),
                                                      _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3));
        const __m256i s = _mm256_srlv_epi32(w, _mm256_setr_epi32(0, 6, 0, 6, 0, 6, 0, 6));
        const __m256i m7 = _mm256_set1_epi32(7);
        const __m256i ls = _mm256_or_si256(_mm256_and_si256(s, m7), _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(s, 3), m7), 16));
        c.ls = _mm512_zextsi256_si512(_mm256_or_si256(_mm256_slli_epi32(ls, 1), _mm256_set1_epi32(0x10001)));
    }
    static inline __m512i grid(const uint8_t* p, int k) {
        const uint8_t* qs = p + 8 * k;
        const uint32_t h = loadU32(p + 32 + 4 * k);
        uint32_t idx[8];
        for (int j = 0; j < 8; ++j) idx[j] = qs[j] | ((h >> (4 * j)) & 7) << 8;
        return iq1Points(idx, _pext_u32(h, 0x88888888u));
    }
};

// The ternary formats' context: d (f16) at byte dOffset, every ls 1 (dwords 0-7).
static inline void ternaryContext(const uint8_t* p, int dOffset, GridCtx& c) {
    c.d = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(loadU16(p + dOffset))));
    c.ls = _mm512_zextsi256_si512(_mm256_set1_epi32(1));
}

// 16 words of lo, then 16 of hi.
static inline __m512i wordHalves(int lo, int hi) {
    return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(lo)), _mm256_set1_epi16(static_cast<int16_t>(hi)), 1);
}

// TQ2_0: element 128h + 32l + m = bits 2l, 2l + 1 of qs[32h + m] (values t + 1), d at 64.
struct DecTQ2_0 {
    static constexpr size_t kBlock = sizeof(tensor::BlockTQ2_0);
    static constexpr bool kGrid = true;
    static constexpr int kBias = 1;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void context(const uint8_t* p, GridCtx& c) { ternaryContext(p, 64, c); }
    static inline __m512i grid(const uint8_t* p, int k) {
        // elements 64k .. 64k + 63: planes l = 2 (k % 2) and l + 1 of the 32 bytes of h = k / 2
        const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * (k / 2))));
        const int l = 2 * (k % 2);
        const __m512i sh = wordHalves(2 * l, 2 * l + 2);
        return _mm512_and_si512(_mm512_srlv_epi16(q, sh), _mm512_set1_epi8(3));
    }
};

// TQ1_0: trit n of byte b = (3 * (b * 3^n mod 256)) >> 8 (block_formats.h); qs at 0, qh at 48, d at 52.
// 64 bytes of the block's trits (0 .. 2), the source byte pairs (words) in src and their words' 3^n in mul.
static inline __m512i tq1Trits(__m512i src, __m512i mul) {
    const __m512i lo = _mm512_mullo_epi16(src, mul);                                              // even bytes
    const __m512i hi = _mm512_mullo_epi16(_mm512_and_si512(src, _mm512_set1_epi16(static_cast<int16_t>(0xFF00))), mul);  // odd
    const __m512i m = _mm512_mask_blend_epi8(0xAAAAAAAAAAAAAAAAull, lo, hi);
    // (3m) >> 8 = (m >= 86) + (m >= 171)
    const __mmask64 ge1 = _mm512_cmpge_epu8_mask(m, _mm512_set1_epi8(86)), ge2 = _mm512_cmpge_epu8_mask(m, _mm512_set1_epi8(static_cast<char>(171)));
    const __m512i one = _mm512_set1_epi8(1);
    const __m512i t = _mm512_maskz_mov_epi8(ge1, one);
    return _mm512_mask_add_epi8(t, ge2, t, one);
}

struct DecTQ1_0 {
    static constexpr size_t kBlock = sizeof(tensor::BlockTQ1_0);
    static constexpr bool kGrid = true;
    static constexpr int kBias = 1;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void context(const uint8_t* p, GridCtx& c) { ternaryContext(p, 52, c); }
    static inline void grid4(const uint8_t* p, __m512i q[4]) {
        // words 0-15: qs[0..31], 16-23: qs[32..47], 24-25: qh
        const __m512i src = _mm512_maskz_loadu_epi8((1ull << 52) - 1, p);
        const __m512i qs32 = _mm512_shuffle_i64x2(src, src, 0x44);
        // elements 0-63: qs[0..31] trits 0, 1; 64-127: trits 2, 3
        q[0] = tq1Trits(qs32, wordHalves(1, 3));
        q[1] = tq1Trits(qs32, wordHalves(9, 27));
        // 128-159: qs[0..31] trit 4; 160-191: qs[32..47] trits 0, 1
        alignas(64) static constexpr uint16_t kIdx2[32] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                                           16, 17, 18, 19, 20, 21, 22, 23, 16, 17, 18, 19, 20, 21, 22, 23};
        alignas(64) static constexpr uint16_t kMul2[32] = {81, 81, 81, 81, 81, 81, 81, 81, 81, 81, 81, 81, 81, 81, 81, 81,
                                                           1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3};
        q[2] = tq1Trits(_mm512_permutexvar_epi16(_mm512_load_si512(kIdx2), src), _mm512_load_si512(kMul2));
        // 192-239: qs[32..47] trits 2, 3, 4; 240-255: qh trits 0-3 (element 240 + 4n + j)
        alignas(64) static constexpr uint16_t kIdx3[32] = {16, 17, 18, 19, 20, 21, 22, 23, 16, 17, 18, 19, 20, 21, 22, 23,
                                                           16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 24, 25, 24, 25, 24, 25};
        alignas(64) static constexpr uint16_t kMul3[32] = {9, 9, 9, 9, 9, 9, 9, 9, 27, 27, 27, 27, 27, 27, 27, 27,
                                                           81, 81, 81, 81, 81, 81, 81, 81, 1, 1, 3, 3, 9, 9, 27, 27};
        q[3] = tq1Trits(_mm512_permutexvar_epi16(_mm512_load_si512(kIdx3), src), _mm512_load_si512(kMul3));
    }
};

template <class Dec>
constexpr bool signedGrid() {
    if constexpr (requires { Dec::kSigned; }) return Dec::kSigned;
    return false;
}
template <class Dec>
constexpr int gridBias() {
    if constexpr (requires { Dec::kBias; }) return Dec::kBias;
    return 0;
}

// The sum of a super-block's 256 activation quants.
static inline int32_t actSum(const ActSuper& x) {
    return _mm512_reduce_add_epi32(_mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums))));
}

template <class Dec>
constexpr bool halfScaleQuants() {
    if constexpr (requires { Dec::kHalfScales; }) return Dec::kHalfScales;
    return false;
}

// The super-block's 4 x 64 grid magnitudes (kSigned: signed points; kBias: t + kBias; q[k]: sub-blocks 2k, 2k + 1).
template <class Dec>
static inline void gridAll(const uint8_t* p, __m512i q[4]) {
    if constexpr (requires { Dec::grid4(p, q); }) {
        Dec::grid4(p, q);
    } else {
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) q[k] = Dec::grid(p, k);
    }
}

// ---- Decode: rows one at a time ----

// One row's super-block against one token: the exact integer sum as 16 lane sums (kBias: less
// kBias * sum(a), which the caller takes out); d by reference.
template <class Dec>
static inline __m512i rowLanes(const uint8_t* p, const int8_t* a, float& d) {
    GridCtx c;
    Dec::context(p, c);
    d = c.d;
    __m512i q[4];
    constexpr bool kAll = requires { Dec::grid4(p, q); };
    if constexpr (kAll) Dec::grid4(p, q);
    __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
        // scalar-built grids: each right before its dot (all four first ran ~15 % slower)
        if constexpr (!kAll) q[k] = Dec::grid(p, k);
        if constexpr (gridBias<Dec>() != 0) {  // ls 1
            isum = _mm512_dpbusd_epi32(isum, q[k], _mm512_load_si512(a + 64 * k));
            continue;
        }
        const __m512i sc = _mm512_permutexvar_epi16(loadIdx(halfScaleQuants<Dec>() ? kIdxGridHalf[k] : kIdxGrid[k]), c.ls);
        if constexpr (signedGrid<Dec>())
            isum = gridDot(isum, _mm512_abs_epi8(q[k]), sc, _mm512_movepi8_mask(q[k]), a + 64 * k);
        else
            isum = gridDot(isum, q[k], sc, _cvtu64_mask64(c.signs[k]), a + 64 * k);
    }
    return isum;
}

// The lane sums of four rows: lane i of the result = the sum of v[i]'s 16 lanes.
static inline __m128i reduce4(__m512i v0, __m512i v1, __m512i v2, __m512i v3) {
    const __m512i a = _mm512_add_epi32(_mm512_unpacklo_epi32(v0, v1), _mm512_unpackhi_epi32(v0, v1));
    const __m512i b = _mm512_add_epi32(_mm512_unpacklo_epi32(v2, v3), _mm512_unpackhi_epi32(v2, v3));
    // per 128-bit lane: (v0, v1, v2, v3) partial sums
    const __m512i c = _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
    const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(c), _mm512_extracti64x4_epi64(c, 1));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// Four rows' super-block sb: their lane sums and d; kBias * sum(a) of the token's super-block.
struct alignas(64) FourRows {
    __m512i lanes[4];
    float d[4];
    int32_t bias;
};

// Rows [r0, r1) x token t. Four rows at a time, all their super-blocks first (the lane sums kept),
// then the exact sums and the float steps: reducing each row's lanes right after its lookups
// (a long dependency chain at the end of a large body) ran ~10 % slower. The four rows are read
// one after the other, front to back (one stream through memory): reading them super-block by
// super-block (four streams) left TQ2_0's decode 1.4x slower on a model too large for L3.
template <class Dec>
void rowsDecode(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t) {
    const int64_t nSuper = a.K / 256;
    const auto* x = reinterpret_cast<const ActSuper*>(a.act + t * a.actStride);
    int64_t r = r0;
    if (r + 4 <= r1) {
        FourRows* buf = threadBuffer<FourRows>(static_cast<size_t>(nSuper));
        if constexpr (gridBias<Dec>() != 0)
            for (int64_t sb = 0; sb < nSuper; ++sb) buf[sb].bias = gridBias<Dec>() * actSum(x[sb]);
        for (; r + 4 <= r1; r += 4) {
            for (int i = 0; i < 4; ++i) {
                for (int64_t sb = 0; sb < nSuper; ++sb) {
                    const uint8_t* wp = a.W + (r + i) * a.rowBytes + sb * Dec::kBlock;
                    prefetchSpan(wp + 4 * a.rowBytes, Dec::kBlock);
                    buf[sb].lanes[i] = rowLanes<Dec>(wp, reinterpret_cast<const int8_t*>(x[sb].qs), buf[sb].d[i]);
                }
            }
            __m128 acc = _mm_setzero_ps();
            for (int64_t sb = 0; sb < nSuper; ++sb) {
                const FourRows& f = buf[sb];
                __m128i isum = reduce4(f.lanes[0], f.lanes[1], f.lanes[2], f.lanes[3]);
                if constexpr (gridBias<Dec>() != 0) isum = _mm_sub_epi32(isum, _mm_set1_epi32(f.bias));
                acc = _mm_fmadd_ps(_mm_cvtepi32_ps(isum), _mm_mul_ps(_mm_load_ps(f.d), _mm_set1_ps(x[sb].d)), acc);
            }
            _mm_storeu_ps(a.Y + t * a.ldy + r, acc);
        }
    }
    for (; r < r1; ++r) {
        float acc = 0;
        for (int64_t sb = 0; sb < nSuper; ++sb) {
            float d;
            const __m512i lanes = rowLanes<Dec>(a.W + r * a.rowBytes + sb * Dec::kBlock, reinterpret_cast<const int8_t*>(x[sb].qs), d);
            const int32_t isum = _mm512_reduce_add_epi32(lanes) - gridBias<Dec>() * actSum(x[sb]);
            acc = std::fma(static_cast<float>(isum), d * x[sb].d, acc);
        }
        a.Y[t * a.ldy + r] = acc;
    }
}

// ---- Prefill: 16-row panels decoded once per block of tokens ----
// Per super-block, 64-byte aligned: 64 vectors of quants (vector v: elements 4v .. 4v + 3 of the
// 16 rows, v + 64 as unsigned bytes), kSubs vectors of scales (dword i: ls of row i's sub-block,
// of 32 elements, or of 16 for IQ2_XS / IQ2_S), kSubs / 2 vectors of scale pairs (words ls_2w,
// ls_2w+1) for vpdpwssd against the activation's sums, the 16 rows' d.
constexpr int kOffset = 64;
static_assert(kOffset == 1 << 6);  // panelTile takes the offset back out by a shift of 6

template <class Dec>
struct PanelLayout {
    static constexpr int kSubs = halfScaleQuants<Dec>() ? 16 : 8;
    static constexpr int kSubVectors = 64 / kSubs;  // quant vectors per sub-block
    static constexpr size_t kScales = 64 * 64, kPairs = kScales + 64 * kSubs, kD = kPairs + 32 * kSubs;
    static constexpr size_t kBytes = kD + 64;
};

// Transposes 16 rows of 16 dwords: out[m] lane i = in[i] lane m.
static inline void transpose16(const __m512i in[16], __m512i out[16]) {
    __m512i t[16], u[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_epi32(in[2 * i], in[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(in[2 * i], in[2 * i + 1]);
    }
    // u[4g + e], 128-bit lane L: dword 4L + e of rows 4g .. 4g + 3
    for (int g = 0; g < 4; ++g) {
        u[4 * g] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    for (int e = 0; e < 4; ++e) {
        const __m512i x0 = _mm512_shuffle_i32x4(u[e], u[4 + e], 0x44), x1 = _mm512_shuffle_i32x4(u[e], u[4 + e], 0xEE);
        const __m512i y0 = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0x44), y1 = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0xEE);
        out[e] = _mm512_shuffle_i32x4(x0, y0, 0x88);
        out[4 + e] = _mm512_shuffle_i32x4(x0, y0, 0xDD);
        out[8 + e] = _mm512_shuffle_i32x4(x1, y1, 0x88);
        out[12 + e] = _mm512_shuffle_i32x4(x1, y1, 0xDD);
    }
}

// Rows r .. r + 15, every super-block, into the panel at out.
template <class Dec>
void decodePanel(const MatmulArgs& a, int64_t r, uint8_t* out) {
    using L = PanelLayout<Dec>;
    const int64_t nSuper = a.K / 256;
    const __m512i off = _mm512_set1_epi8(kOffset);
    for (int64_t sb = 0; sb < nSuper; ++sb) {
        uint8_t* P = out + sb * L::kBytes;
        __m512i rows[4][16];
        alignas(64) int32_t ls[16][8];
        auto* d = reinterpret_cast<float*>(P + L::kD);
        for (int i = 0; i < 16; ++i) {
            const uint8_t* p = a.W + (r + i) * a.rowBytes + sb * Dec::kBlock;
            GridCtx c;
            Dec::context(p, c);
            d[i] = c.d;
            _mm256_store_si256(reinterpret_cast<__m256i*>(ls[i]), _mm512_castsi512_si256(c.ls));
            __m512i q[4];
            gridAll<Dec>(p, q);
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k)
                rows[k][i] = signedGrid<Dec>() || gridBias<Dec>() ? _mm512_add_epi8(q[k], _mm512_set1_epi8(kOffset - gridBias<Dec>()))
                                               : _mm512_mask_sub_epi8(_mm512_add_epi8(q[k], off), _cvtu64_mask64(c.signs[k]), off, q[k]);
        }
        for (int k = 0; k < 4; ++k) {
            __m512i cols[16];
            transpose16(rows[k], cols);
            for (int m = 0; m < 16; ++m) _mm512_store_si512(P + 64 * (16 * k + m), cols[m]);
        }
        auto* sc = reinterpret_cast<int32_t*>(P + L::kScales);
        for (int i = 0; i < 16; ++i)
            for (int s = 0; s < L::kSubs; ++s)  // half scales: two words per dword of ls
                sc[16 * s + i] = L::kSubs == 16 ? (ls[i][s / 2] >> (16 * (s % 2))) & 0xFFFF : ls[i][s];
        for (int w = 0; w < L::kSubs / 2; ++w) {
            const __m512i lo = _mm512_load_si512(sc + 16 * (2 * w)), hi = _mm512_load_si512(sc + 16 * (2 * w + 1));
            _mm512_store_si512(P + L::kPairs + 64 * w, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
        }
    }
}

// The panel's 16 rows x T tokens from token t.
template <class Dec, int T>
void panelTile(const MatmulArgs& a, const uint8_t* panel, int64_t r, int64_t t) {
    using L = PanelLayout<Dec>;
    const int64_t nSuper = a.K / 256;
    const ActSuper* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const ActSuper*>(a.act + (t + j) * a.actStride);
    __m512 acc[T];
    for (int j = 0; j < T; ++j) acc[j] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nSuper; ++sb) {
        const uint8_t* P = panel + sb * L::kBytes;
        __m512i isum[T], ioff[T];
        for (int j = 0; j < T; ++j) isum[j] = ioff[j] = _mm512_setzero_si512();
#pragma GCC unroll 16
        for (int s = 0; s < L::kSubs; ++s) {
            __m512i dot[T];
            for (int j = 0; j < T; ++j) dot[j] = _mm512_setzero_si512();
#pragma GCC unroll 8
            for (int k = 0; k < L::kSubVectors; ++k) {
                const int v = L::kSubVectors * s + k;
                const __m512i w = _mm512_load_si512(P + 64 * v);
                for (int j = 0; j < T; ++j) dot[j] = dpbusdBcast(dot[j], w, reinterpret_cast<const int8_t*>(x[j][sb].qs) + 4 * v);
            }
            const __m512i sc = _mm512_load_si512(P + L::kScales + 64 * s);
            for (int j = 0; j < T; ++j) isum[j] = _mm512_add_epi32(isum[j], _mm512_mullo_epi32(dot[j], sc));
        }
        for (int w = 0; w < L::kSubs / 2; ++w) {
            const __m512i pr = _mm512_load_si512(P + L::kPairs + 64 * w);
            for (int j = 0; j < T; ++j) {
                // (asum of sub-block 2w, of 2w + 1) as words: sums of 32 or (half scales) of 16
                int32_t sums;
                if constexpr (L::kSubs == 8) sums = x[j][sb].sum32Pairs[4 + w];
                else std::memcpy(&sums, x[j][sb].bsums + 2 * w, 4);
                ioff[j] = _mm512_dpwssd_epi32(ioff[j], pr, _mm512_set1_epi32(sums));
            }
        }
        const __m512 dw = _mm512_load_ps(reinterpret_cast<const float*>(P + L::kD));
        for (int j = 0; j < T; ++j) {
            const __m512i total = _mm512_sub_epi32(isum[j], _mm512_slli_epi32(ioff[j], 6));
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_mul_ps(dw, _mm512_set1_ps(x[j][sb].d)), acc[j]);
        }
    }
    for (int j = 0; j < T; ++j) _mm512_storeu_ps(a.Y + (t + j) * a.ldy + r, acc[j]);
}

template <TensorType T, TensorType U, class D, class Else>
using DecIf = std::conditional_t<T == U, D, Else>;
template <TensorType T>
using DecOf = DecIf<T, TensorType::IQ2_XXS, DecIQ2_XXS,
              DecIf<T, TensorType::IQ2_XS, DecIQ2_XS,
              DecIf<T, TensorType::IQ2_S, DecIQ2_S,
              DecIf<T, TensorType::IQ3_XXS, DecIQ3_XXS,
              DecIf<T, TensorType::IQ3_S, DecIQ3_S,
              DecIf<T, TensorType::IQ1_S, DecIQ1_S,
              DecIf<T, TensorType::IQ1_M, DecIQ1_M,
              DecIf<T, TensorType::TQ1_0, DecTQ1_0, DecTQ2_0>>>>>>>>;

}  // namespace

template <TensorType Type>
void computeGrid(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    static_assert(Type == TensorType::IQ2_XXS || Type == TensorType::IQ2_XS || Type == TensorType::IQ2_S ||
                  Type == TensorType::IQ3_XXS || Type == TensorType::IQ3_S || Type == TensorType::IQ1_S ||
                  Type == TensorType::IQ1_M || Type == TensorType::TQ1_0 || Type == TensorType::TQ2_0);
    using Dec = DecOf<Type>;
    using L = PanelLayout<Dec>;
    int64_t rowsLeft = r0;
    // Panels from 4 tokens: below that decoding a panel (its transposes) costs more than each
    // token's own row-wise pass (bench_kernels, 1 thread: 2 / 3 tokens at 0.54-0.81 / 0.78-1.1x of
    // the row-wise rate, 4 at 1.03-1.58x). Both give the same bits.
    if (t1 - t0 >= 4 && r1 - r0 >= 16) {
        const int64_t nSuper = a.K / 256, pEnd = r0 + (r1 - r0) / 16 * 16;
        // Tokens per block: their activations (384 bytes per 256 elements) about 384 KiB, in L2
        // beside the panel (~5 KiB per 256 elements).
        const int64_t tokBlock = std::clamp<int64_t>(1024 / nSuper, 32, 256);
        uint8_t* panel = threadBuffer<uint8_t>(static_cast<size_t>(nSuper) * L::kBytes);
        for (int64_t tb = t0; tb < t1; tb += tokBlock) {
            const int64_t te = std::min(tb + tokBlock, t1);
            for (int64_t r = r0; r < pEnd; r += 16) {
                decodePanel<Dec>(a, r, panel);
                int64_t u = tb;
                for (; u + 4 <= te; u += 4) panelTile<Dec, 4>(a, panel, r, u);
                for (; u < te; ++u) panelTile<Dec, 1>(a, panel, r, u);
            }
        }
        rowsLeft = pEnd;
    }
    if (rowsLeft < r1)
        for (int64_t t = t0; t < t1; ++t) rowsDecode<Dec>(a, rowsLeft, r1, t);
}

template void computeGrid<TensorType::IQ2_XXS>(const MatmulArgs&, int64_t, int64_t, int64_t, int64_t);
template void computeGrid<TensorType::IQ2_XS>(const MatmulArgs&, int64_t, int64_t, int64_t, int64_t);
template void computeGrid<TensorType::IQ2_S>(const MatmulArgs&, int64_t, int64_t, int64_t, int64_t);
template void computeGrid<TensorType::IQ3_XXS>(const MatmulArgs&, int64_t, int64_t, int64_t, int64_t);
template void computeGrid<TensorType::IQ3_S>(const MatmulArgs&, int64_t, int64_t, int64_t, int64_t);
template void computeGrid<TensorType::IQ1_S>(const MatmulArgs&, int64_t, int64_t, int64_t, int64_t);
template void computeGrid<TensorType::IQ1_M>(const MatmulArgs&, int64_t, int64_t, int64_t, int64_t);
template void computeGrid<TensorType::TQ1_0>(const MatmulArgs&, int64_t, int64_t, int64_t, int64_t);
template void computeGrid<TensorType::TQ2_0>(const MatmulArgs&, int64_t, int64_t, int64_t, int64_t);

}  // namespace verdict::cpu::avx512

#pragma GCC pop_options
