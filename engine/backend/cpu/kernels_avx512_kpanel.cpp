// AVX-512 (VNNI) panels of the K-quants Q2_K, Q4_K, Q5_K, Q6_K and of IQ4_XS x Q8_K activations: weights repacked at load
// (packKPanels, reached through cpu::packWeights) so that 16 rows lie side by side, one
// row per 32-bit lane, for decode and prefill alike. Their numerics are their own (an exact integer
// sum per super-block, see "Q4_K" below), the same for every pass. The row-major kernels these
// rows fall back to (rows past the last whole panel, or an unpacked matrix) are in
// kernels_avx512_k.cpp.
#include "backend/cpu/act_layout.h"
#include "backend/cpu/kernels_x86.h"
#include "tensor/block_formats.h"

#include <immintrin.h>

#include <array>
#include <cstdint>
#include <cstring>

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

constexpr uint32_t kM1 = 0x3f3f3f3f, kM2 = 0x0f0f0f0f, kM3 = 0x03030303;

// ---- Q4_K, Q5_K ----
// 16 rows side by side per super-block, in the 16 x 144 bytes the rows' super-block took (so a
// matrix keeps its size, panel p at 16p rows): the 16 rows' 12 scale bytes as 3 vectors of dwords,
// their 16 d and 16 dmin (f16), then 32 vectors of 4 quant bytes of each row (lane = row; vector
// 8c + k = bytes 32c + 4k .. + 3: low nibbles elements 64c + 4k.., sub-block 2c; high nibbles
// 64c + 32 + 4k.., sub-block 2c + 1). Numerics of these rows (not the row-major tiles': those keep 16
// float lanes per row, which a lane-per-row layout cannot reproduce), the same for every pass:
// per super-block an exact integer sum isum = sum_s sc_s * (q_s . a_s) and imin = sum_s m_s *
// bsum_s, then acc = fma(isum, d * da, acc), acc = fma(imin, dmin * -da, acc) in super-block order.
// Q5_K (16 x 176 bytes) the same, its fifth bits as byte masks after each 8 quant vectors: for
// vector v, 8 bytes whose bit 4i + b says element b of row i's low nibbles has it, 8 for the high
// nibbles (16 rows x 32 bytes, what qh took); one masked vpaddb of 16 each. A block is read front
// to back: with all masks after all quants, matvec ran at half the bandwidth (800 vs 400-500 µs).
// Tokens per block: their activations (384 bytes per 256 elements) stay in L2.
constexpr int64_t kTokBlock = 48;

// Byte offsets in a Q4_K (kFive false) / Q5_K panel block.
template <bool kFive>
struct Q45Panel {
    static constexpr size_t kRowBlock = kFive ? 176 : 144;  // a row's super-block on disk
    static constexpr size_t kRowQs = kFive ? 48 : 16;       // its quants there
    static constexpr size_t kBlock = 16 * kRowBlock;
    static constexpr size_t kScales = 0, kD = kScales + 192, kDmin = kD + 32;
    // Quant vectors 8c .. 8c + 7 (and for Q5_K their fifth-bit masks right after them).
    static constexpr size_t quants(int c) { return kFive ? 256 + 640 * c : 256 + 512 * c; }
    static constexpr size_t masks(int c) { return quants(c) + 512; }
    static_assert((kFive ? masks(3) + 128 : quants(4)) == kBlock);
};

// Position of element e (a multiple of 4) of a super-block in the P64-ordered activations.
constexpr int posP64(int e) {
    const int base = e & ~127, q = e & 127;
    constexpr int kMap[4] = {0, 2, 1, 3};
    return base + 32 * kMap[q / 32] + q % 32;
}

template <bool kFive>
void packQ45_K(const uint8_t* W, size_t rowBytes, int64_t nRows, int64_t K, uint8_t* out) {
    using L = Q45Panel<kFive>;
    const int64_t nSuper = K / 256, nPanels = nRows / 16;
    for (int64_t pn = 0; pn < nPanels; ++pn)
        for (int64_t sb = 0; sb < nSuper; ++sb) {
            uint8_t* dst = out + 16 * pn * rowBytes + sb * L::kBlock;
            uint64_t masks[32][2] = {};
            for (int i = 0; i < 16; ++i) {
                const uint8_t* b = W + (16 * pn + i) * rowBytes + sb * L::kRowBlock;
                for (int v = 0; v < 32; ++v) std::memcpy(dst + L::quants(v / 8) + 64 * (v % 8) + 4 * i, b + L::kRowQs + 4 * v, 4);
                for (int w = 0; w < 3; ++w) std::memcpy(dst + L::kScales + 64 * w + 4 * i, b + 4 + 4 * w, 4);
                std::memcpy(dst + L::kD + 2 * i, b, 2);
                std::memcpy(dst + L::kDmin + 2 * i, b + 2, 2);
                if constexpr (kFive) {  // element e's fifth bit: bit e / 32 of qh[e % 32]
                    const uint8_t* qh = b + 16;
                    for (int v = 0; v < 32; ++v)
                        for (int h = 0; h < 2; ++h)
                            for (int e4 = 0; e4 < 4; ++e4) {
                                const int e = 64 * (v / 8) + 32 * h + 4 * (v % 8) + e4;
                                if ((qh[e % 32] >> (e / 32)) & 1) masks[v][h] |= uint64_t{1} << (4 * i + e4);
                            }
                }
            }
            if constexpr (kFive)
                for (int c = 0; c < 4; ++c) std::memcpy(dst + L::masks(c), masks[8 * c], 128);
        }
}

// The 16 rows of a Q4_K / Q5_K panel x T tokens.
template <bool kFive, int T>
void panelTileQ45_K(const MatmulArgs& a, const uint8_t* panel, int64_t r, int64_t t) {
    const int64_t nSuper = a.K / 256;
    const ActSuper* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const ActSuper*>(a.act + (t + j) * a.actStride);
    __m512 acc[T];
    for (int j = 0; j < T; ++j) acc[j] = _mm512_setzero_ps();
    const __m512i m4 = _mm512_set1_epi8(0x0F), ff = _mm512_set1_epi32(0xFF), fw = _mm512_set1_epi32(0x00FF00FF),
                  b16 = _mm512_set1_epi8(0x10);
    for (int64_t sb = 0; sb < nSuper; ++sb) {
        using L = Q45Panel<kFive>;
        const uint8_t* p = panel + sb * L::kBlock;
        const __m512i w0 = _mm512_loadu_si512(p + L::kScales), w1 = _mm512_loadu_si512(p + L::kScales + 64),
                      w2 = _mm512_loadu_si512(p + L::kScales + 128);
        const __m512i m1 = _mm512_set1_epi32(static_cast<int>(kM1)), m2 = _mm512_set1_epi32(static_cast<int>(kM2)),
                      m3 = _mm512_set1_epi32(static_cast<int>(kM3));
        // Scales (bytes s of scLo, s - 4 of scHi) and mins as word pairs (m_s, m_s+2) for vpdpwssd.
        const __m512i scLo = _mm512_and_si512(w0, m1);
        const __m512i scHi = _mm512_or_si512(_mm512_and_si512(w2, m2), _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(w0, 6), m3), 4));
        const __m512i mLo = _mm512_and_si512(w1, m1);
        const __m512i mHi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(w2, 4), m2),
                                            _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(w1, 6), m3), 4));
        const __m512i mins[4] = {_mm512_and_si512(mLo, fw), _mm512_and_si512(_mm512_srli_epi32(mLo, 8), fw),
                                 _mm512_and_si512(mHi, fw), _mm512_and_si512(_mm512_srli_epi32(mHi, 8), fw)};
        __m512i isum[T];
        for (int j = 0; j < T; ++j) isum[j] = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            __m512i dlo[T], dhi[T];
            for (int j = 0; j < T; ++j) dlo[j] = dhi[j] = _mm512_setzero_si512();
#pragma GCC unroll 8
            for (int k = 0; k < 8; ++k) {
                const __m512i w = _mm512_loadu_si512(p + L::quants(c) + 64 * k);
                __m512i lo = _mm512_and_si512(w, m4), hi = _mm512_and_si512(_mm512_srli_epi16(w, 4), m4);
                if constexpr (kFive) {
                    uint64_t mk[2];
                    std::memcpy(mk, p + L::masks(c) + 16 * k, 16);
                    lo = _mm512_mask_add_epi8(lo, _cvtu64_mask64(mk[0]), lo, b16);
                    hi = _mm512_mask_add_epi8(hi, _cvtu64_mask64(mk[1]), hi, b16);
                }
                for (int j = 0; j < T; ++j) {
                    dlo[j] = dpbusdBcast(dlo[j], lo, x[j][sb].qs + posP64(64 * c + 4 * k));
                    dhi[j] = dpbusdBcast(dhi[j], hi, x[j][sb].qs + posP64(64 * c + 32 + 4 * k));
                }
            }
            const __m512i sc = c < 2 ? scLo : scHi;
            const __m512i scEven = _mm512_and_si512(_mm512_srli_epi32(sc, 16 * (c % 2)), ff);
            const __m512i scOdd = _mm512_and_si512(_mm512_srli_epi32(sc, 16 * (c % 2) + 8), ff);
            for (int j = 0; j < T; ++j)
                isum[j] = _mm512_add_epi32(isum[j], _mm512_add_epi32(_mm512_mullo_epi32(dlo[j], scEven), _mm512_mullo_epi32(dhi[j], scOdd)));
        }
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + L::kD)));
        const __m512 dm = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + L::kDmin)));
        for (int j = 0; j < T; ++j) {
            const ActSuper& A = x[j][sb];
            __m512i imin = _mm512_setzero_si512();
            for (int w = 0; w < 4; ++w) imin = _mm512_dpwssd_epi32(imin, mins[w], _mm512_set1_epi32(A.sum32Pairs[w]));
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[j]), _mm512_mul_ps(dw, _mm512_set1_ps(A.d)), acc[j]);
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(imin), _mm512_mul_ps(dm, _mm512_set1_ps(-A.d)), acc[j]);
        }
    }
    for (int j = 0; j < T; ++j) _mm512_storeu_ps(a.Y + (t + j) * a.ldy + r, acc[j]);
}

// ---- Q6_K ----
// 16 x 210 bytes per super-block: 32 vectors of ql (vector 16h + v = bytes 64h + 4v .. + 3 of each
// row), 16 of qh (vector 8h + v = bytes 32h + 4v .. + 3), the 16 scales of each row as 4 vectors
// of dwords, the 16 d (f16). Element 128h + 32s + l (l = 4v .. 4v + 3) is ql vector 16h + v (s = 0,
// 2: low / high nibble) or 16h + 8 + v (s = 1, 3), with bits 2s, 2s + 1 of qh vector 8h + v (l %
// 32 = 4v'); sub-block 8h + 2s + l / 16. Numerics as Q4_K's panels: isum = sum_j sc_j * (q_j . a_j)
// - 32 * sum_j sc_j * bsum_j exactly, then acc = fma(isum, d * da, acc) in super-block order.
constexpr size_t kQ6KPanelBlock = 16 * 210;

// A Q6_K panel: per super-block 3328 bytes read front to back (the scales, then for each h and
// v the vectors a decode step takes together: ql 16h + v, ql 16h + 8 + v, qh 8h + v), and after
// all of them the super-blocks' d (32 bytes each), so that the 64-byte vectors stay aligned
// (3360-byte super-blocks side by side would split every other one over two cache lines).
struct Q6Panel {
    const uint8_t *blk, *d;
    Q6Panel(const uint8_t* panel, int64_t nSuper, int64_t sb) : blk(panel + sb * 3328), d(panel + nSuper * 3328 + sb * 32) {}
    // Scale dwords 4w .. 4w + 3; ql vector 16h + 8b + v; qh vector 8h + v.
    const uint8_t* sc(int w) const { return blk + 64 * w; }
    const uint8_t* ql(int h, int b, int v) const { return blk + 256 + 192 * (8 * h + v) + 64 * b; }
    const uint8_t* qh(int h, int v) const { return blk + 256 + 192 * (8 * h + v) + 128; }
};

void packQ6_K(const uint8_t* W, size_t rowBytes, int64_t nRows, int64_t K, uint8_t* out) {
    const int64_t nSuper = K / 256, nPanels = nRows / 16;
    for (int64_t pn = 0; pn < nPanels; ++pn)
        for (int64_t sb = 0; sb < nSuper; ++sb) {
            const Q6Panel q(out + 16 * pn * rowBytes, nSuper, sb);
            for (int i = 0; i < 16; ++i) {
                const uint8_t* b = W + (16 * pn + i) * rowBytes + sb * 210;
                for (int v = 0; v < 32; ++v) std::memcpy(const_cast<uint8_t*>(q.ql(v / 16, v / 8 % 2, v % 8)) + 4 * i, b + 4 * v, 4);
                for (int v = 0; v < 16; ++v) std::memcpy(const_cast<uint8_t*>(q.qh(v / 8, v % 8)) + 4 * i, b + 128 + 4 * v, 4);
                for (int w = 0; w < 4; ++w) std::memcpy(const_cast<uint8_t*>(q.sc(w)) + 4 * i, b + 192 + 4 * w, 4);
                std::memcpy(const_cast<uint8_t*>(q.d) + 2 * i, b + 208, 2);
            }
        }
}

// Unsigned 6-bit quants of elements 128h + 32s + 4v .. + 3 of the panel's 16 rows.
template <int s>
static inline __m512i q6Quants(const Q6Panel& p, int h, int v) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    const __m512i ql = _mm512_loadu_si512(p.ql(h, s % 2, v));
    const __m512i qh = _mm512_loadu_si512(p.qh(h, v));
    const __m512i lo = s < 2 ? ql : _mm512_srli_epi16(ql, 4);
    const __m512i hb = s == 0 ? _mm512_slli_epi16(qh, 4) : s == 1 ? _mm512_slli_epi16(qh, 2) : s == 2 ? qh : _mm512_srli_epi16(qh, 2);
    return _mm512_ternarylogic_epi32(lo, _mm512_and_si512(hb, m30), m4, 0xEC);  // (lo & 0x0F) | hb
}

template <int T>
void panelTileQ6_K(const MatmulArgs& a, const uint8_t* panel, int64_t r, int64_t t) {
    const int64_t nSuper = a.K / 256;
    const ActSuper* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const ActSuper*>(a.act + (t + j) * a.actStride);
    __m512 acc[T];
    for (int j = 0; j < T; ++j) acc[j] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < nSuper; ++sb) {
        const Q6Panel p(panel, nSuper, sb);
        __m512i isum[T];
        for (int j = 0; j < T; ++j) isum[j] = _mm512_setzero_si512();
        auto subBlocks = [&](auto sTag) {
            constexpr int s = decltype(sTag)::value;
#pragma GCC unroll 2
            for (int h = 0; h < 2; ++h)
#pragma GCC unroll 2
                for (int half = 0; half < 2; ++half) {  // sub-block 8h + 2s + half
                    __m512i dot[T];
                    for (int j = 0; j < T; ++j) dot[j] = _mm512_setzero_si512();
#pragma GCC unroll 4
                    for (int vv = 0; vv < 4; ++vv) {
                        const int v = 4 * half + vv;
                        const __m512i q = q6Quants<s>(p, h, v);
                        for (int j = 0; j < T; ++j) dot[j] = dpbusdBcast(dot[j], q, x[j][sb].qs + 128 * h + 32 * s + 4 * v);
                    }
                    const int sub = 8 * h + 2 * s + half;
                    const __m512i scw = _mm512_loadu_si512(p.sc(sub / 4));
                    const __m512i sc = _mm512_srai_epi32(_mm512_sllv_epi32(scw, _mm512_set1_epi32(24 - 8 * (sub % 4))), 24);
                    for (int j = 0; j < T; ++j) isum[j] = _mm512_add_epi32(isum[j], _mm512_mullo_epi32(dot[j], sc));
                }
        };
        if constexpr (T == 1) {
            // One token: the four quant planes of each (h, v) from one load of ql / qh each.
            const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
            const int8_t* aq = x[0][sb].qs;
#pragma GCC unroll 2
            for (int h = 0; h < 2; ++h)
#pragma GCC unroll 2
                for (int half = 0; half < 2; ++half) {
                    __m512i dot[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
#pragma GCC unroll 4
                    for (int vv = 0; vv < 4; ++vv) {
                        const int v = 4 * half + vv;
                        const __m512i A = _mm512_loadu_si512(p.ql(h, 0, v)), B = _mm512_loadu_si512(p.ql(h, 1, v));
                        const __m512i qh = _mm512_loadu_si512(p.qh(h, v));
                        const __m512i q0 = _mm512_ternarylogic_epi32(A, _mm512_and_si512(_mm512_slli_epi16(qh, 4), m30), m4, 0xEC);
                        const __m512i q1 = _mm512_ternarylogic_epi32(B, _mm512_and_si512(_mm512_slli_epi16(qh, 2), m30), m4, 0xEC);
                        const __m512i q2 = _mm512_ternarylogic_epi32(_mm512_srli_epi16(A, 4), _mm512_and_si512(qh, m30), m4, 0xEC);
                        const __m512i q3 = _mm512_ternarylogic_epi32(_mm512_srli_epi16(B, 4), _mm512_and_si512(_mm512_srli_epi16(qh, 2), m30), m4, 0xEC);
                        dot[0] = dpbusdBcast(dot[0], q0, aq + 128 * h + 4 * v);
                        dot[1] = dpbusdBcast(dot[1], q1, aq + 128 * h + 32 + 4 * v);
                        dot[2] = dpbusdBcast(dot[2], q2, aq + 128 * h + 64 + 4 * v);
                        dot[3] = dpbusdBcast(dot[3], q3, aq + 128 * h + 96 + 4 * v);
                    }
                    // sub-blocks 8h + 2s + half: scale bytes (2s + half) % 4 of dword vector 2h + s / 2
#pragma GCC unroll 4
                    for (int s = 0; s < 4; ++s) {
                        const int sub = 8 * h + 2 * s + half;
                        const __m512i scw = _mm512_loadu_si512(p.sc(sub / 4));
                        const __m512i sc = _mm512_srai_epi32(_mm512_slli_epi32(scw, 24 - 8 * (sub % 4)), 24);
                        isum[0] = _mm512_add_epi32(isum[0], _mm512_mullo_epi32(dot[s], sc));
                    }
                }
        } else {
            subBlocks(std::integral_constant<int, 0>{});
            subBlocks(std::integral_constant<int, 1>{});
            subBlocks(std::integral_constant<int, 2>{});
            subBlocks(std::integral_constant<int, 3>{});
        }
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.d)));
        for (int j = 0; j < T; ++j) {
            const ActSuper& A = x[j][sb];
            __m512i ioff = _mm512_setzero_si512();
            for (int w = 0; w < 4; ++w) {  // scales 4w .. 4w + 3 as word pairs (sc_4w, sc_4w+2), (sc_4w+1, sc_4w+3)
                const __m512i scw = _mm512_loadu_si512(p.sc(w));
                const __m512i even = _mm512_srai_epi16(_mm512_slli_epi16(scw, 8), 8), odd = _mm512_srai_epi16(scw, 8);
                auto pair = [&](int j0) {
                    return _mm512_set1_epi32(static_cast<int32_t>(static_cast<uint16_t>(A.bsums[j0]) |
                                                                  static_cast<uint32_t>(static_cast<uint16_t>(A.bsums[j0 + 2])) << 16));
                };
                ioff = _mm512_dpwssd_epi32(ioff, even, pair(4 * w));
                ioff = _mm512_dpwssd_epi32(ioff, odd, pair(4 * w + 1));
            }
            const __m512i total = _mm512_sub_epi32(isum[j], _mm512_slli_epi32(ioff, 5));
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_mul_ps(dw, _mm512_set1_ps(A.d)), acc[j]);
        }
    }
    for (int j = 0; j < T; ++j) _mm512_storeu_ps(a.Y + (t + j) * a.ldy + r, acc[j]);
}

// ---- Q2_K ----
// 16 x 84 bytes per super-block, read front to back: the 16 rows' 16 scale bytes (scale | min <<
// 4) as 4 vectors of dwords, the bytes of dword w in the order of sub-blocks 4w, 4w + 2, 4w + 1,
// 4w + 3 (so that the mins of 4w, 4w + 1 and of 4w + 2, 4w + 3 are word pairs under one mask, for
// vpdpwssd against the activation's adjacent bsums); 16 vectors of 4 quant bytes of each row
// (vector v = qs bytes 4v .. + 3: bits 2j, 2j + 1 are elements 128(v / 8) + 32j + 4(v % 8) ..,
// sub-block 8(v / 8) + 2j + (v % 8) / 4); the 16 d and the 16 dmin (f16). Numerics as Q4_K's
// panels: isum = sum_s sc_s * (q_s . a_s), imin = sum_s m_s * bsum_s exactly, then acc =
// fma(isum, d * da, acc), acc = fma(imin, dmin * -da, acc) in super-block order.
constexpr size_t kQ2KPanelBlock = 16 * 84;
constexpr size_t kQ2KQuants = 256, kQ2KD = 1280, kQ2KDmin = 1312;
constexpr int kQ2KScaleByte[4] = {0, 2, 1, 3};  // byte of sub-block 4w + k in scale dword w

void packQ2_K(const uint8_t* W, size_t rowBytes, int64_t nRows, int64_t K, uint8_t* out) {
    const int64_t nSuper = K / 256, nPanels = nRows / 16;
    for (int64_t pn = 0; pn < nPanels; ++pn)
        for (int64_t sb = 0; sb < nSuper; ++sb) {
            uint8_t* dst = out + 16 * pn * rowBytes + sb * kQ2KPanelBlock;
            for (int i = 0; i < 16; ++i) {
                const uint8_t* b = W + (16 * pn + i) * rowBytes + sb * 84;
                for (int sub = 0; sub < 16; ++sub) dst[64 * (sub / 4) + 4 * i + kQ2KScaleByte[sub % 4]] = b[sub];
                for (int v = 0; v < 16; ++v) std::memcpy(dst + kQ2KQuants + 64 * v + 4 * i, b + 16 + 4 * v, 4);
                std::memcpy(dst + kQ2KD + 2 * i, b + 80, 2);
                std::memcpy(dst + kQ2KDmin + 2 * i, b + 82, 2);
            }
        }
}

// Position of element 128n + 32j + l of a super-block in the P32x-ordered activations.
constexpr int posP32x(int n, int j, int l) { return 64 * j + 32 * n + l; }

template <int T>
void panelTileQ2_K(const MatmulArgs& a, const uint8_t* panel, int64_t r, int64_t t) {
    const int64_t nSuper = a.K / 256;
    const ActSuper* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const ActSuper*>(a.act + (t + j) * a.actStride);
    __m512 acc[T];
    for (int j = 0; j < T; ++j) acc[j] = _mm512_setzero_ps();
    const __m512i m3 = _mm512_set1_epi8(3), f4 = _mm512_set1_epi32(0xF), n4 = _mm512_set1_epi8(0x0F),
                  fw = _mm512_set1_epi32(0x00FF00FF);
    for (int64_t sb = 0; sb < nSuper; ++sb) {
        const uint8_t* p = panel + sb * kQ2KPanelBlock;
        __m512i isum[T];
        for (int j = 0; j < T; ++j) isum[j] = _mm512_setzero_si512();
#pragma GCC unroll 2
        for (int n = 0; n < 2; ++n)
#pragma GCC unroll 4
            for (int sh = 0; sh < 4; ++sh)
#pragma GCC unroll 2
                for (int h = 0; h < 2; ++h) {  // sub-block 8n + 2sh + h
                    __m512i dot[T];
                    for (int j = 0; j < T; ++j) dot[j] = _mm512_setzero_si512();
#pragma GCC unroll 4
                    for (int vv = 0; vv < 4; ++vv) {
                        const int v = 8 * n + 4 * h + vv;
                        const __m512i q = _mm512_and_si512(_mm512_srli_epi16(_mm512_loadu_si512(p + kQ2KQuants + 64 * v), 2 * sh), m3);
                        for (int j = 0; j < T; ++j) dot[j] = dpbusdBcast(dot[j], q, x[j][sb].qs + posP32x(n, sh, 4 * (4 * h + vv)));
                    }
                    const int sub = 8 * n + 2 * sh + h;
                    const __m512i sc = _mm512_and_si512(_mm512_srli_epi32(_mm512_loadu_si512(p + 64 * (sub / 4)), 8 * kQ2KScaleByte[sub % 4]), f4);
                    for (int j = 0; j < T; ++j) isum[j] = _mm512_add_epi32(isum[j], _mm512_mullo_epi32(dot[j], sc));
                }
        __m512i mPair[8];  // words (m_2k, m_2k+1) for the bsums dword k
        for (int w = 0; w < 4; ++w) {
            const __m512i mb = _mm512_and_si512(_mm512_srli_epi32(_mm512_loadu_si512(p + 64 * w), 4), n4);
            mPair[2 * w] = _mm512_and_si512(mb, fw);
            mPair[2 * w + 1] = _mm512_and_si512(_mm512_srli_epi32(mb, 8), fw);
        }
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + kQ2KD)));
        const __m512 dm = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + kQ2KDmin)));
        for (int j = 0; j < T; ++j) {
            const ActSuper& A = x[j][sb];
            __m512i imin = _mm512_setzero_si512();
            for (int k = 0; k < 8; ++k) {
                int32_t bs;
                std::memcpy(&bs, A.bsums + 2 * k, 4);
                imin = _mm512_dpwssd_epi32(imin, mPair[k], _mm512_set1_epi32(bs));
            }
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[j]), _mm512_mul_ps(dw, _mm512_set1_ps(A.d)), acc[j]);
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(imin), _mm512_mul_ps(dm, _mm512_set1_ps(-A.d)), acc[j]);
        }
    }
    for (int j = 0; j < T; ++j) _mm512_storeu_ps(a.Y + (t + j) * a.ldy + r, acc[j]);
}

// ---- IQ4_XS ----
// 16 x 136 bytes per super-block, read front to back: the 16 rows' scales_l (dwords), scales_h and
// d (words), then 32 vectors of 4 quant bytes of each row (vector v = bytes 4v .. + 3 of qs:
// sub-block s = v / 4, low nibbles elements 32s + 4(v % 4).., high nibbles 16 further). Levels looked up by vpshufb as level +
// 127 (unsigned, 0 .. 240) for vpdpbusd; the offset comes back out through the activation's
// sub-block sums. Numerics as Q4_K's panels: per super-block the exact integer sum
// isum = sum_s sc_s * ((q_s + 127) . a_s) - 127 * sum_s sc_s * asum_s (sc_s = ls_s - 32), then
// acc = fma(isum, d * da, acc) in super-block order.
constexpr size_t kIQ4XSPanelBlock = 16 * 136;
constexpr size_t kIQ4XSScalesL = 0, kIQ4XSScalesH = 64, kIQ4XSD = 96, kIQ4XSQuants = 128;
constexpr int kIQ4XSOffset = 127;  // -kIQ4NLValues[0]
static_assert(tensor::kIQ4NLValues[0] == -kIQ4XSOffset);

alignas(16) constexpr auto kIQ4XSLevels = [] {
    std::array<uint8_t, 16> t{};
    for (int i = 0; i < 16; ++i) t[i] = static_cast<uint8_t>(tensor::kIQ4NLValues[i] + kIQ4XSOffset);
    return t;
}();

// Position of element e (a multiple of 4) of a super-block in the Q4x-ordered activations.
constexpr int posQ4x(int e) {
    const int base = e & ~127, q = e & 127;
    return base + 64 * ((q % 32) / 16) + 16 * (q / 32) + q % 16;
}

void packIQ4_XS(const uint8_t* W, size_t rowBytes, int64_t nRows, int64_t K, uint8_t* out) {
    const int64_t nSuper = K / 256, nPanels = nRows / 16;
    for (int64_t pn = 0; pn < nPanels; ++pn)
        for (int64_t sb = 0; sb < nSuper; ++sb) {
            uint8_t* dst = out + 16 * pn * rowBytes + sb * kIQ4XSPanelBlock;
            for (int i = 0; i < 16; ++i) {
                const uint8_t* b = W + (16 * pn + i) * rowBytes + sb * 136;
                std::memcpy(dst + kIQ4XSScalesL + 4 * i, b + 4, 4);
                std::memcpy(dst + kIQ4XSScalesH + 2 * i, b + 2, 2);
                std::memcpy(dst + kIQ4XSD + 2 * i, b, 2);
                for (int v = 0; v < 32; ++v) std::memcpy(dst + kIQ4XSQuants + 64 * v + 4 * i, b + 8 + 4 * v, 4);
            }
        }
}

// The 16 rows of an IQ4_XS panel x T tokens.
template <int T>
void panelTileIQ4_XS(const MatmulArgs& a, const uint8_t* panel, int64_t r, int64_t t) {
    const int64_t nSuper = a.K / 256;
    const ActSuper* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const ActSuper*>(a.act + (t + j) * a.actStride);
    __m512 acc[T];
    for (int j = 0; j < T; ++j) acc[j] = _mm512_setzero_ps();
    const __m512i m4 = _mm512_set1_epi8(0x0F), f4 = _mm512_set1_epi32(0xF), f2 = _mm512_set1_epi32(3),
                  lw = _mm512_set1_epi32(0xFFFF), k32 = _mm512_set1_epi32(32);
    const __m512i table = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kIQ4XSLevels.data())));
    for (int64_t sb = 0; sb < nSuper; ++sb) {
        const uint8_t* p = panel + sb * kIQ4XSPanelBlock;
        const __m512i sl = _mm512_loadu_si512(p + kIQ4XSScalesL);
        const __m512i sh = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + kIQ4XSScalesH)));
        __m512i sc[8];
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s)
            sc[s] = _mm512_sub_epi32(_mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(sl, 4 * s), f4),
                                                     _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(sh, 2 * s), f2), 4)),
                                     k32);
        __m512i isum[T];
        for (int j = 0; j < T; ++j) isum[j] = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int s = 0; s < 8; ++s) {
            __m512i ds[T];
            for (int j = 0; j < T; ++j) ds[j] = _mm512_setzero_si512();
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k) {
                const __m512i w = _mm512_loadu_si512(p + kIQ4XSQuants + 64 * (4 * s + k));
                const __m512i lo = _mm512_shuffle_epi8(table, _mm512_and_si512(w, m4));
                const __m512i hi = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(w, 4), m4));
                for (int j = 0; j < T; ++j) {
                    ds[j] = dpbusdBcast(ds[j], lo, x[j][sb].qs + posQ4x(32 * s + 4 * k));
                    ds[j] = dpbusdBcast(ds[j], hi, x[j][sb].qs + posQ4x(32 * s + 16 + 4 * k));
                }
            }
            for (int j = 0; j < T; ++j) isum[j] = _mm512_add_epi32(isum[j], _mm512_mullo_epi32(ds[j], sc[s]));
        }
        // Scale pairs (sc_2w, sc_2w+1) as words, for vpdpwssd against the sub-block sums.
        __m512i scPair[4];
        for (int w = 0; w < 4; ++w) scPair[w] = _mm512_or_si512(_mm512_and_si512(sc[2 * w], lw), _mm512_slli_epi32(sc[2 * w + 1], 16));
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + kIQ4XSD)));
        for (int j = 0; j < T; ++j) {
            const ActSuper& A = x[j][sb];
            __m512i ioff = _mm512_setzero_si512();
            for (int w = 0; w < 4; ++w) ioff = _mm512_dpwssd_epi32(ioff, scPair[w], _mm512_set1_epi32(A.sum32Pairs[4 + w]));
            const __m512i total = _mm512_sub_epi32(isum[j], _mm512_mullo_epi32(ioff, _mm512_set1_epi32(kIQ4XSOffset)));
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_mul_ps(dw, _mm512_set1_ps(A.d)), acc[j]);
        }
    }
    for (int j = 0; j < T; ++j) _mm512_storeu_ps(a.Y + (t + j) * a.ldy + r, acc[j]);
}

// Each panel type's pack function and its tiles of 4 tokens and of 1.
template <TensorType T>
struct Panel;
template <>
struct Panel<TensorType::Q2_K> {
    static constexpr auto pack = packQ2_K;
    template <int N>
    static constexpr auto tile = panelTileQ2_K<N>;
};
template <>
struct Panel<TensorType::Q4_K> {
    static constexpr auto pack = packQ45_K<false>;
    template <int N>
    static constexpr auto tile = panelTileQ45_K<false, N>;
};
template <>
struct Panel<TensorType::Q5_K> {
    static constexpr auto pack = packQ45_K<true>;
    template <int N>
    static constexpr auto tile = panelTileQ45_K<true, N>;
};
template <>
struct Panel<TensorType::Q6_K> {
    static constexpr auto pack = packQ6_K;
    template <int N>
    static constexpr auto tile = panelTileQ6_K<N>;
};
template <>
struct Panel<TensorType::IQ4_XS> {
    static constexpr auto pack = packIQ4_XS;
    template <int N>
    static constexpr auto tile = panelTileIQ4_XS<N>;
};

}  // namespace

template <TensorType T>
void packKPanels(const uint8_t* W, size_t rowBytes, int64_t nRows, int64_t K, uint8_t* out) {
    Panel<T>::pack(W, rowBytes, nRows, K, out);
}

template <TensorType T>
int64_t computeKPanels(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    return forEachPanel(
        a, r0, r1, t0, t1, kTokBlock, [&](const uint8_t* p, int64_t r, int64_t u) { Panel<T>::template tile<4>(a, p, r, u); },
        [&](const uint8_t* p, int64_t r, int64_t u) { Panel<T>::template tile<1>(a, p, r, u); });
}

#define VERDICT_K_PANELS(T)                                                                            \
    template void packKPanels<TensorType::T>(const uint8_t*, size_t, int64_t, int64_t, uint8_t*); \
    template int64_t computeKPanels<TensorType::T>(const MatmulArgs&, int64_t, int64_t, int64_t, int64_t);
VERDICT_K_PANELS(Q2_K)
VERDICT_K_PANELS(Q4_K)
VERDICT_K_PANELS(Q5_K)
VERDICT_K_PANELS(Q6_K)
VERDICT_K_PANELS(IQ4_XS)
#undef VERDICT_K_PANELS

}  // namespace verdict::cpu::avx512

#pragma GCC pop_options
