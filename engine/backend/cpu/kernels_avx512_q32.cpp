// AVX-512 (VNNI) kernels for the 32-element formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4.
//
// Weight decoders: 4 weight blocks of one row unpack into two zmm of unsigned bytes (lo = low
// halves of the 4 blocks, hi = high halves, block k in 128-bit lane k), matching the activation
// group layout of act_layout.h; the group's bias vector holds the correction for the weights'
// offset (Q4_0 stores q + 8, Q8_0 is made unsigned by ^ 0x80). vpdpbusd (u8 x s8 -> s32) does
// the products; every block's integer sum is exact, goes to float once and is scaled by
// (weight scale x activation scale) into one of four float chains (the numerics section below).
//
// Weights repacked at load (packPanels; the model does it for every matrix it multiplies, see
// cpu::packWeights) are read as panels of 16 interleaved rows: decode then needs no horizontal
// sums either (panelTile, 1-4 tokens), and prefill only unpacks a panel (no transposes) per block
// of tokens for tile16. On Zen 4, tg128 of the perf model, 2 threads: Q4_0 47 -> ~80 tok/s,
// Q8_0 28 -> ~48 (tests/bench/README.md).
// Decode (a few tokens) on rows as they are on disk: row-major tiles of 8 rows x 1 token; each
// row's four 32-bit lanes per block are summed in integer, four rows at a time.
// Prefill: 16 rows are packed once per block of 96 tokens into a per-thread buffer, transposed so
// that one zmm holds 4 bytes of each of the 16 rows (lane = row); a 16-row x 8-token tile then
// runs one weight load per 8 vpdpbusd whose activation operand is 4 bytes broadcast from memory,
// and a block's integer sums need no horizontal reduction. Per block and token that is 8 vpdpbusd
// for one convert, multiply and FMA (the old row-major prefill tile: 2 per 3). bench_kernels'
// 5632 x 2048 x 512-token Q4_0 product, 1 thread, Zen 4: ~270 GOP/s from 185 (vpdpbusd's peak
// there: 460, bench_peak).
// Both shapes do the same float operations in the same order per (row, token), so results are
// bit-identical whichever tile computes a token (test_kernels: tokenResultIndependentOfPass).
// IQ4_NL and MXFP4 (signed levels from a 16-entry table, Q8_0 activations like the AVX2 and
// reference kernels) take Q8_0's route: vpshufb looks the nibbles up in a table of level + offset
// (unsigned; the offset is minus the lowest level: 127 for IQ4_NL, 12 for MXFP4), and the
// activation group's bias (-offset x the block's quant sum) takes it back out in the exact
// integer sum.
#include "backend/cpu/act_layout.h"
#include "backend/cpu/kernels_x86.h"
#include "tensor/block_formats.h"
#include "tensor/half.h"

#include <immintrin.h>

#include <array>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

// GCC 12 reports -W(maybe-)uninitialized inside its own AVX-512 intrinsics (_mm512_undefined_*).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c,bmi,bmi2")

#include "backend/cpu/kernels_avx512_q32_formats.h"
#include "backend/cpu/simd_x86.h"

namespace verdict::cpu::avx512 {
namespace {

using namespace verdict::cpu::simd;
using namespace verdict::cpu::avx512::q32;

// ---- The numerics every path below shares ----
// Per (row, token): block b's exact integer sum s_b (the bias included; all 32-bit sums here are
// exact) goes to float once and joins chain c = b % 4 (the block's place in its group):
//   acc_c = fma(float(s_b), dw_b * da_b, acc_c)   [then acc_c = fma(m_b, s_b', acc_c): Q4_1 / Q5_1]
// in block order, and y = (acc_0 + acc_1) + (acc_2 + acc_3). The row-major tiles (decode) hold a
// group's four blocks in the four 128-bit lanes of a register, so chain c is lane c; the
// interleaved prefill tiles hold 16 rows in the lanes and the four chains in four registers. Both
// do the same float operations in the same order, so a (row, token) result is bit-identical
// whichever tile computes it: a token's output does not depend on the pass it is in.

// Four rows of one group (a row may repeat where a tile has fewer): each row's 32-bit lane sums
// reduced to block sums, interleaved per 128-bit lane (= block) as [r0, r1, r2, r3]; 9
// instructions for the four rows.
static inline __m512i quadBlockSums(__m512i s0, __m512i s1, __m512i s2, __m512i s3) {
    const __m512i u = _mm512_add_epi32(_mm512_unpacklo_epi32(s0, s1), _mm512_unpackhi_epi32(s0, s1));
    const __m512i v = _mm512_add_epi32(_mm512_unpacklo_epi32(s2, s3), _mm512_unpackhi_epi32(s2, s3));
    return _mm512_add_epi32(_mm512_unpacklo_epi64(u, v), _mm512_unpackhi_epi64(u, v));
}
// Per-block values of four rows (each repeated over its block's lanes) in the same interleave.
static inline __m512 quadScales(__m512 d0, __m512 d1, __m512 d2, __m512 d3) {
    return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(_mm512_unpacklo_ps(d0, d1)),
                                               _mm512_castps_pd(_mm512_unpacklo_ps(d2, d3))));
}

// Chain lanes -> (acc_0 + acc_1) + (acc_2 + acc_3) in lanes 0-3 (= the quad's rows).
static inline __m128 sumChains(__m512 acc) {
    const __m512 x = _mm512_add_ps(acc, _mm512_shuffle_f32x4(acc, acc, _MM_SHUFFLE(2, 3, 0, 1)));
    const __m512 y = _mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm512_castps512_ps128(y);
}

// A row's last 1-3 blocks (after nFull groups) copied into a zeroed group (zero scales), so that a
// whole group's loads stay in bounds; returns `out`.
template <class Dec>
static inline const uint8_t* tailGroup(const uint8_t* row, int64_t nFull, int64_t tail, uint8_t* out) {
    std::memset(out, 0, 4 * Dec::kBlock);
    std::memcpy(out, row + nFull * 4 * Dec::kBlock, static_cast<size_t>(tail) * Dec::kBlock);
    return out;
}

// Row-major tile: R rows (1, 2 or a multiple of 4) x T tokens over the whole row, weights in
// their on-disk blocks. The decode path, and what the interleaved tiles leave over.
template <class Dec, int R, int T>
void tile(const MatmulArgs& a, int64_t r, int64_t t) {
    static_assert(R == 1 || R == 2 || R % 4 == 0);
    constexpr int Q = (R + 3) / 4;  // row quads
    using G = typename Dec::Group;
    const int64_t nBlocks = a.K / 32, nFull = nBlocks / 4, tail = nBlocks % 4;
    const uint8_t* w[R];
    for (int i = 0; i < R; ++i) w[i] = a.W + (r + i) * a.rowBytes;
    const G* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const G*>(a.act + (t + j) * a.actStride);
    __m512 acc[Q][T];
    for (int q = 0; q < Q; ++q)
        for (int j = 0; j < T; ++j) acc[q][j] = _mm512_setzero_ps();

    // Quad by quad: few registers live at once (four rows' quants, their sums and scales).
    auto step = [&](const uint8_t* const* wg, int64_t gi) {
        for (int q = 0; q < Q; ++q) {
            constexpr int kRows = R < 4 ? R : 4;
            __m512i lo[kRows], hi[kRows];
            __m512 dw[kRows], mw[kRows];
            for (int m = 0; m < kRows; ++m) Dec::decode(wg[4 * q + m], lo[m], hi[m], dw[m], mw[m]);
            auto row = [](int m) { return m < kRows ? m : kRows - 1; };  // lanes past R repeat the last row
            const __m512 dq = quadScales(dw[row(0)], dw[row(1)], dw[row(2)], dw[row(3)]);
            __m512 mq;
            if constexpr (Dec::kMin) mq = quadScales(mw[row(0)], mw[row(1)], mw[row(2)], mw[row(3)]);
            for (int j = 0; j < T; ++j) {
                const G& A = x[j][gi];
                const __m512i alo = _mm512_load_si512(A.lo), ahi = _mm512_load_si512(A.hi);
                const __m512i bias = Dec::kBiasMul ? _mm512_load_si512(A.bias) : _mm512_setzero_si512();
                __m512i sm[kRows];
                for (int m = 0; m < kRows; ++m) sm[m] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(bias, lo[m], alo), hi[m], ahi);
                const __m512i sum = quadBlockSums(sm[row(0)], sm[row(1)], sm[row(2)], sm[row(3)]);
                acc[q][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(dq, _mm512_load_ps(A.d)), acc[q][j]);
                if constexpr (Dec::kMin)
                    acc[q][j] = _mm512_fmadd_ps(
                        mq, _mm512_permute_ps(_mm512_load_ps(reinterpret_cast<const ActGroupS&>(A).s), 0), acc[q][j]);
            }
        }
    };

    for (int64_t gi = 0; gi < nFull; ++gi) {
        const uint8_t* wg[R];
        for (int i = 0; i < R; ++i) wg[i] = w[i] + gi * 4 * Dec::kBlock;
        if constexpr (T == 1)  // decode: fetch the same group of the next tile's rows
            for (int i = 0; i < R; ++i) prefetchSpan(wg[i] + R * a.rowBytes, 4 * Dec::kBlock);
        step(wg, gi);
    }
    if (tail) {
        alignas(64) uint8_t buf[R][4 * Dec::kBlock];
        const uint8_t* wg[R];
        for (int i = 0; i < R; ++i) wg[i] = tailGroup<Dec>(w[i], nFull, tail, buf[i]);
        step(wg, nFull);
    }
    for (int j = 0; j < T; ++j)
        for (int q = 0; q < Q; ++q) {
            float* y = a.Y + (t + j) * a.ldy + r + 4 * q;
            const __m128 v = sumChains(acc[q][j]);
            if constexpr (R >= 4) {
                _mm_storeu_ps(y, v);
            } else {
                alignas(16) float lanes[4];
                _mm_store_ps(lanes, v);
                for (int m = 0; m < R; ++m) y[m] = lanes[m];
            }
        }
}

// In-register transpose of a 16 x 16 matrix of 32-bit elements: out[c] lane r = in[r] lane c.
static inline void transpose16(const __m512i* in, __m512i* out) {
    __m512i t[16], u[16];
    for (int k = 0; k < 8; ++k) {
        t[2 * k] = _mm512_unpacklo_epi32(in[2 * k], in[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_epi32(in[2 * k], in[2 * k + 1]);
    }
    for (int k = 0; k < 4; ++k) {  // u[4k + c]: rows 4k..4k+3 of column 4q + c in 128-bit lane q
        u[4 * k] = _mm512_unpacklo_epi64(t[4 * k], t[4 * k + 2]);
        u[4 * k + 1] = _mm512_unpackhi_epi64(t[4 * k], t[4 * k + 2]);
        u[4 * k + 2] = _mm512_unpacklo_epi64(t[4 * k + 1], t[4 * k + 3]);
        u[4 * k + 3] = _mm512_unpackhi_epi64(t[4 * k + 1], t[4 * k + 3]);
    }
    for (int c = 0; c < 4; ++c) {  // 4 x 4 transpose of the 128-bit lanes of u[c], u[4 + c], ...
        const __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44), v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xEE);
        const __m512i v2 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44), v3 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xEE);
        out[c] = _mm512_shuffle_i32x4(v0, v2, 0x88);
        out[4 + c] = _mm512_shuffle_i32x4(v0, v2, 0xDD);
        out[8 + c] = _mm512_shuffle_i32x4(v1, v3, 0x88);
        out[12 + c] = _mm512_shuffle_i32x4(v1, v3, 0xDD);
    }
}

// One group (4 blocks) of 16 rows, interleaved for the prefill tiles: q[k] lane i = the k-th 4
// bytes of row i's unsigned quants (k < 16: the `lo` half as Dec::decode gives it, 16..31: `hi`),
// so one vpdpbusd with a broadcast 4 bytes of activation advances 16 rows; d[b] / m[b] lane i =
// row i's scale / min of block b. 2304 bytes (2560 with mins).
template <bool Min>
struct alignas(64) Packed16T {
    __m512i q[32];
    __m512 d[4];
};
template <>
struct alignas(64) Packed16T<true> {
    __m512i q[32];
    __m512 d[4], m[4];
};
template <class Dec>
using Packed16 = Packed16T<Dec::kMin>;

// Rows [r, r + 16) into out[gi] for every group gi (the last, partial one zero-padded as tile()
// pads it).
template <class Dec>
void pack16(const MatmulArgs& a, int64_t r, Packed16<Dec>* out) {
    const int64_t nBlocks = a.K / 32, nFull = nBlocks / 4, tail = nBlocks % 4, nGroups = groupCount(a.K);
    for (int64_t gi = 0; gi < nGroups; ++gi) {
        __m512i lo[16], hi[16], d[16], m[16], tr[16];
        for (int i = 0; i < 16; ++i) {
            const uint8_t* g = a.W + (r + i) * a.rowBytes + gi * 4 * Dec::kBlock;
            alignas(64) uint8_t buf[4 * Dec::kBlock];
            if (gi == nFull) {
                std::memset(buf, 0, sizeof buf);
                std::memcpy(buf, g, static_cast<size_t>(tail) * Dec::kBlock);
                g = buf;
            }
            __m512 df, mf;
            Dec::decode(g, lo[i], hi[i], df, mf);
            d[i] = _mm512_castps_si512(df);
            if constexpr (Dec::kMin) m[i] = _mm512_castps_si512(mf);
        }
        Packed16<Dec>& p = out[gi];
        transpose16(lo, p.q);
        transpose16(hi, p.q + 16);
        transpose16(d, tr);
        for (int b = 0; b < 4; ++b) p.d[b] = _mm512_castsi512_ps(tr[4 * b]);
        if constexpr (Dec::kMin) {
            transpose16(m, tr);
            for (int b = 0; b < 4; ++b) p.m[b] = _mm512_castsi512_ps(tr[4 * b]);
        }
    }
}

// Interleaved tile: 16 rows x T tokens; per 4 bytes of K, one weight load feeds T vpdpbusd, and
// a block's integer sums need no horizontal reduction (each lane is one row).
template <class Dec, int T>
void tile16(const MatmulArgs& a, const Packed16<Dec>* rows, int64_t r, int64_t t) {
    using G = typename Dec::Group;
    const int64_t nGroups = groupCount(a.K);
    const G* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const G*>(a.act + (t + j) * a.actStride);
    __m512 acc[4][T];
    for (int c = 0; c < 4; ++c)
        for (int j = 0; j < T; ++j) acc[c][j] = _mm512_setzero_ps();
    for (int64_t gi = 0; gi < nGroups; ++gi) {
        const Packed16<Dec>& p = rows[gi];
        const G* A[T];
        for (int j = 0; j < T; ++j) A[j] = x[j] + gi;
        for (int b = 0; b < 4; ++b) {
            __m512i s[T];
            for (int j = 0; j < T; ++j)
                s[j] = Dec::kBiasMul ? _mm512_set1_epi32(A[j]->bias[4 * b]) : _mm512_setzero_si512();
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k) {
                const __m512i wlo = _mm512_load_si512(&p.q[4 * b + k]);
                for (int j = 0; j < T; ++j) s[j] = dpbusdBcast(s[j], wlo, A[j]->lo + 16 * b + 4 * k);
                const __m512i whi = _mm512_load_si512(&p.q[16 + 4 * b + k]);
                for (int j = 0; j < T; ++j) s[j] = dpbusdBcast(s[j], whi, A[j]->hi + 16 * b + 4 * k);
            }
            const __m512 dw = _mm512_load_ps(&p.d[b]);
            for (int j = 0; j < T; ++j) {
                acc[b][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[j]), _mm512_mul_ps(dw, _mm512_set1_ps(A[j]->d[4 * b])), acc[b][j]);
                if constexpr (Dec::kMin)
                    acc[b][j] = _mm512_fmadd_ps(_mm512_load_ps(&p.m[b]),
                                                _mm512_set1_ps(reinterpret_cast<const ActGroupS*>(A[j])->s[4 * b]), acc[b][j]);
            }
        }
    }
    for (int j = 0; j < T; ++j)
        _mm512_storeu_ps(a.Y + (t + j) * a.ldy + r,
                         _mm512_add_ps(_mm512_add_ps(acc[0][j], acc[1][j]), _mm512_add_ps(acc[2][j], acc[3][j])));
}

// Panel tile: the 16 rows of a packed panel x T tokens, the numerics of tile16 (a block's exact
// integer sum, chain = the block's place in its group). Decode (T = 1) splits each block's integer
// sum over two dependency chains (exact either way).
template <class Dec, int T>
void panelTile(const MatmulArgs& a, const uint8_t* panel, int64_t r, int64_t t) {
    using G = typename Dec::Group;
    constexpr size_t kPanelBlock = 16 * Dec::kBlock;
    const int64_t nBlocks = a.K / 32;
    const G* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const G*>(a.act + (t + j) * a.actStride);
    __m512 acc[4][T];
    for (int c = 0; c < 4; ++c)
        for (int j = 0; j < T; ++j) acc[c][j] = _mm512_setzero_ps();
    auto block = [&](int64_t bi, int c) {
        const uint8_t* p = panel + static_cast<size_t>(bi) * kPanelBlock;
        const G* A[T];
        for (int j = 0; j < T; ++j) A[j] = x[j] + bi / 4;
        __m512i s[T], s2[T];
        for (int j = 0; j < T; ++j) {
            s[j] = Dec::kBiasMul ? _mm512_set1_epi32(A[j]->bias[4 * c]) : _mm512_setzero_si512();
            if constexpr (T == 1) s2[j] = _mm512_setzero_si512();
        }
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
            __m512i lo, hi;
            Dec::panelQuants(p, k, lo, hi);
            for (int j = 0; j < T; ++j) {
                s[j] = dpbusdBcast(s[j], lo, A[j]->lo + 16 * c + 4 * k);
                if constexpr (T == 1)
                    s2[j] = dpbusdBcast(s2[j], hi, A[j]->hi + 16 * c + 4 * k);
                else
                    s[j] = dpbusdBcast(s[j], hi, A[j]->hi + 16 * c + 4 * k);
            }
        }
        const __m512 dw = Dec::panelScales(p);
        for (int j = 0; j < T; ++j) {
            if constexpr (T == 1) s[j] = _mm512_add_epi32(s[j], s2[j]);
            acc[c][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[j]), _mm512_mul_ps(dw, _mm512_set1_ps(A[j]->d[4 * c])), acc[c][j]);
            if constexpr (Dec::kMin)
                acc[c][j] = _mm512_fmadd_ps(Dec::panelMins(p), _mm512_set1_ps(reinterpret_cast<const ActGroupS*>(A[j])->s[4 * c]),
                                            acc[c][j]);
        }
    };
    const int64_t nFull = nBlocks / 4 * 4;
    for (int64_t bi = 0; bi < nFull; bi += 4) {
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) block(bi + c, c);
    }
    // The last 1-3 blocks: tile() and tile16() add zero-scaled padding blocks to the other chains,
    // which leaves them as they are (+0 never meets a -0 chain: chains start at +0 and x + -x is +0).
    for (int c = 0; nFull + c < nBlocks; ++c) block(nFull + c, c);
    for (int j = 0; j < T; ++j)
        _mm512_storeu_ps(a.Y + (t + j) * a.ldy + r,
                         _mm512_add_ps(_mm512_add_ps(acc[0][j], acc[1][j]), _mm512_add_ps(acc[2][j], acc[3][j])));
}

// A packed panel as the prefill tiles read it (Packed16, one per group of 4 blocks; a partial last
// group padded with zero quants and scales, which add +0 as pack16's padding does): the panel's
// vectors are already row-interleaved, so this is only the unpacking of quants and scales.
template <class Dec>
void unpackPanel(const uint8_t* panel, int64_t K, Packed16<Dec>* out) {
    const int64_t nBlocks = K / 32, nGroups = groupCount(K);
    for (int64_t gi = 0; gi < nGroups; ++gi) {
        Packed16<Dec>& o = out[gi];
        for (int c = 0; c < 4; ++c) {
            const int64_t bi = 4 * gi + c;
            if (bi >= nBlocks) {
                for (int k = 0; k < 4; ++k) o.q[4 * c + k] = o.q[16 + 4 * c + k] = _mm512_setzero_si512();
                o.d[c] = _mm512_setzero_ps();
                if constexpr (Dec::kMin) o.m[c] = _mm512_setzero_ps();
                continue;
            }
            const uint8_t* p = panel + static_cast<size_t>(bi) * 16 * Dec::kBlock;
            for (int k = 0; k < 4; ++k) Dec::panelQuants(p, k, o.q[4 * c + k], o.q[16 + 4 * c + k]);
            o.d[c] = Dec::panelScales(p);
            if constexpr (Dec::kMin) o.m[c] = Dec::panelMins(p);
        }
    }
}

// Rows [0, nRows) of W (whole panels) into panels at out (the same size).
template <class Dec>
void packPanels(const uint8_t* W, size_t rowBytes, int64_t nRows, int64_t K, uint8_t* out) {
    const int64_t nBlocks = K / 32, nPanels = nRows / 16;
    for (int64_t pn = 0; pn < nPanels; ++pn) {
        const uint8_t* src[16];
        for (int64_t b = 0; b < nBlocks; ++b) {
            for (int i = 0; i < 16; ++i) src[i] = W + (16 * pn + i) * rowBytes + b * Dec::kBlock;
            Dec::packBlock(src, out + 16 * pn * rowBytes + b * 16 * Dec::kBlock);
        }
    }
}

// Decode on rows as they are on disk (a GPU split's CPU half, VERDICT_CPU_REPACK=0, the rows past
// the panels): four rows at a time, each read front to back — one stream through memory, as
// kernels_avx512_grid.cpp's rowsDecode — keeping each group's lane sums and scales, then the quad's
// float steps in group order: tile<Dec, 4, 1>'s operations in its order, so the same bits.
// tile<Dec, 8, 1> read its eight rows group by group (eight interleaved streams) and ran ~1.5x
// slower than the packed panels (tests/bench/README.md).
template <class Dec>
struct alignas(64) RowGroup {
    __m512i sm;     // the group's lane sums (bias included)
    __m512 dw, mw;  // its block scales (and minimums: Q4_1 / Q5_1) as Dec::decode gives them
};

template <class Dec>
static inline void rowGroup(const uint8_t* wg, const typename Dec::Group& A, RowGroup<Dec>& o) {
    __m512i lo, hi;
    __m512 mw;
    Dec::decode(wg, lo, hi, o.dw, mw);
    if constexpr (Dec::kMin) o.mw = mw;  // stored only where it is read
    const __m512i bias = Dec::kBiasMul ? _mm512_load_si512(A.bias) : _mm512_setzero_si512();
    o.sm = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(bias, lo, _mm512_load_si512(A.lo)), hi, _mm512_load_si512(A.hi));
}

template <class Dec>
void rowsDecode(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t) {
    using G = typename Dec::Group;
    const int64_t nBlocks = a.K / 32, nFull = nBlocks / 4, tail = nBlocks % 4;
    const int64_t nGroups = nFull + (tail ? 1 : 0);
    const G* x = reinterpret_cast<const G*>(a.act + t * a.actStride);
    int64_t r = r0;
    if (r + 4 <= r1) {
        RowGroup<Dec>* buf = threadBuffer<RowGroup<Dec>>(static_cast<size_t>(4 * nGroups));  // [group][row]
        for (; r + 4 <= r1; r += 4) {
            for (int m = 0; m < 4; ++m) {
                const uint8_t* w = a.W + (r + m) * a.rowBytes;
                for (int64_t gi = 0; gi < nFull; ++gi) {
                    const uint8_t* wg = w + gi * 4 * Dec::kBlock;
                    rowGroup<Dec>(wg, x[gi], buf[4 * gi + m]);
                }
                if (tail) {
                    alignas(64) uint8_t last[4 * Dec::kBlock];
                    rowGroup<Dec>(tailGroup<Dec>(w, nFull, tail, last), x[nFull], buf[4 * nFull + m]);
                }
            }
            __m512 acc = _mm512_setzero_ps();
            for (int64_t gi = 0; gi < nGroups; ++gi) {
                const RowGroup<Dec>* g = buf + 4 * gi;
                const G& A = x[gi];
                const __m512 dq = quadScales(g[0].dw, g[1].dw, g[2].dw, g[3].dw);
                const __m512i sum = quadBlockSums(g[0].sm, g[1].sm, g[2].sm, g[3].sm);
                acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(dq, _mm512_load_ps(A.d)), acc);
                if constexpr (Dec::kMin)
                    acc = _mm512_fmadd_ps(quadScales(g[0].mw, g[1].mw, g[2].mw, g[3].mw),
                                          _mm512_permute_ps(_mm512_load_ps(reinterpret_cast<const ActGroupS&>(A).s), 0), acc);
            }
            _mm_storeu_ps(a.Y + t * a.ldy + r, sumChains(acc));
        }
    }
    for (; r + 2 <= r1; r += 2) tile<Dec, 2, 1>(a, r, t);
    if (r < r1) tile<Dec, 1, 1>(a, r, t);
}

// Rows [r0, r1) x token t with the row-major tiles.
template <class Dec, int T>
void rowsTile(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t) {
    int64_t r = r0;
    for (; r + 8 <= r1; r += 8) tile<Dec, 8, T>(a, r, t);
    for (; r + 4 <= r1; r += 4) tile<Dec, 4, T>(a, r, t);
    for (; r + 2 <= r1; r += 2) tile<Dec, 2, T>(a, r, t);
    if (r < r1) tile<Dec, 1, T>(a, r, t);
}

template <class Dec>
void compute(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    // Tokens per block (a multiple of 8): their activations (256-320 bytes per 128 elements) stay
    // in L2 while every 16-row tile of the task passes over them; packing 16 rows costs about
    // 1/10 of what 96 tokens then compute with them.
    constexpr int64_t kTokBlock = 96;
    if (r0 < a.packedRows) {  // weights packed at load: panels up to packedRows, then row-major
        // Passes of 8 tokens and more unpack each panel once per token block for tile16 (nibbles
        // split, levels looked up, scales widened once, not once per 8 tokens); fewer tokens read
        // the panel directly.
        const int64_t pEnd = std::min(r1, a.packedRows);
        Packed16<Dec>* unpacked = t1 - t0 >= 8 ? threadBuffer<Packed16<Dec>>(static_cast<size_t>(groupCount(a.K))) : nullptr;
        for (int64_t tb = t0; tb < t1; tb += kTokBlock) {
            const int64_t te = std::min(tb + kTokBlock, t1);
            for (int64_t r = r0; r < pEnd; r += 16) {
                const uint8_t* panel = a.W + r * a.rowBytes;
                int64_t u = tb;
                if (unpacked && te - tb >= 8) {
                    unpackPanel<Dec>(panel, a.K, unpacked);
                    for (; u + 8 <= te; u += 8) tile16<Dec, 8>(a, unpacked, r, u);
                    for (; u + 4 <= te; u += 4) tile16<Dec, 4>(a, unpacked, r, u);
                }
                for (; u + 4 <= te; u += 4) panelTile<Dec, 4>(a, panel, r, u);
                for (; u < te; ++u) panelTile<Dec, 1>(a, panel, r, u);
            }
        }
        if (pEnd == r1) return;
        r0 = pEnd;
    }
    const int64_t tiled = (t1 - t0) / 4 * 4, rows16 = (r1 - r0) / 16 * 16;
    int64_t t = t0;
    if (tiled >= 8 && rows16 > 0) {
        auto* packed = threadBuffer<Packed16<Dec>>(static_cast<size_t>(groupCount(a.K)));
        for (int64_t tb = t0; tb < t0 + tiled; tb += kTokBlock) {
            const int64_t te = std::min(tb + kTokBlock, t0 + tiled);
            for (int64_t r = r0; r < r0 + rows16; r += 16) {
                pack16<Dec>(a, r, packed);
                int64_t u = tb;
                for (; u + 8 <= te; u += 8) tile16<Dec, 8>(a, packed, r, u);
                if (u < te) tile16<Dec, 4>(a, packed, r, u);
            }
            if (r0 + rows16 < r1)
                for (int64_t u = tb; u < te; u += 4) rowsTile<Dec, 4>(a, r0 + rows16, r1, u);
        }
        t = t0 + tiled;
    }
    for (; t < t1; ++t) rowsDecode<Dec>(a, r0, r1, t);
}

// Activation quantization, vectorised; values identical to quantizeActBlock32 (round to nearest
// even of x * (127 / amax), d = f16(amax / 127)).
template <class G, int BiasMul>
void prepare(const float* x, int64_t K, void* out) {
    auto* g = static_cast<G*>(out);
    const int64_t nb = K / 32;
    if (nb % 4) std::memset(static_cast<void*>(g + nb / 4), 0, sizeof(G));
    const __m512 signMask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    for (int64_t i = 0; i < nb; ++i) {
        const __m512 v0 = _mm512_loadu_ps(x + 32 * i), v1 = _mm512_loadu_ps(x + 32 * i + 16);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_and_ps(v0, signMask), _mm512_and_ps(v1, signMask)));
        const float d = amax / 127.f;
        const float id = amax != 0.0f ? 127.f / amax : 0.0f;
        const __m512 vid = _mm512_set1_ps(id);
        const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, vid));
        const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, vid));
        const int sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
        G& grp = g[i / 4];
        const int k = static_cast<int>(i % 4);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(grp.lo + 16 * k), _mm512_cvtepi32_epi8(q0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(grp.hi + 16 * k), _mm512_cvtepi32_epi8(q1));
        const float dr = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(d), _MM_FROUND_TO_NEAREST_INT)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(grp.bias + 4 * k), _mm_setr_epi32(BiasMul * sum, 0, 0, 0));
        _mm_storeu_ps(grp.d + 4 * k, _mm_set1_ps(dr));
        if constexpr (sizeof(G) == sizeof(ActGroupS)) {
            const float s = d * static_cast<float>(sum);
            const float sr = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(s), _MM_FROUND_TO_NEAREST_INT)));
            _mm_storeu_ps(grp.s + 4 * k, _mm_setr_ps(sr, 0, 0, 0));
        }
    }
}

}  // namespace

const MatmulKernel* q32Kernel(tensor::TensorType t) {
    using tensor::TensorType;
    static constexpr MatmulKernel kKernels[] = {
        {TensorType::Q4_0, SimdLevel::Avx512, groupActBytes<ActGroup>, prepare<ActGroup, -8>, compute<DecQ4_0>, packPanels<DecQ4_0>},
        {TensorType::Q4_1, SimdLevel::Avx512, groupActBytes<ActGroupS>, prepare<ActGroupS, 0>, compute<DecQ4_1>, packPanels<DecQ4_1>},
        {TensorType::Q5_0, SimdLevel::Avx512, groupActBytes<ActGroup>, prepare<ActGroup, -16>, compute<DecQ5_0>, packPanels<DecQ5_0>},
        {TensorType::Q5_1, SimdLevel::Avx512, groupActBytes<ActGroupS>, prepare<ActGroupS, 0>, compute<DecQ5_1>, packPanels<DecQ5_1>},
        {TensorType::Q8_0, SimdLevel::Avx512, groupActBytes<ActGroup>, prepare<ActGroup, -128>, compute<DecQ8_0>, packPanels<DecQ8_0>},
        {TensorType::IQ4_NL, SimdLevel::Avx512, groupActBytes<ActGroup>, prepare<ActGroup, DecIQ4_NL::kBiasMul>, compute<DecIQ4_NL>, packPanels<DecIQ4_NL>},
        {TensorType::MXFP4, SimdLevel::Avx512, groupActBytes<ActGroup>, prepare<ActGroup, DecMXFP4::kBiasMul>, compute<DecMXFP4>, packPanels<DecMXFP4>},
    };
    for (const auto& k : kKernels)
        if (k.type == t) return &k;
    return nullptr;
}

}  // namespace verdict::cpu::avx512

#pragma GCC pop_options
