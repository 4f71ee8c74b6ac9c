// AVX-512 (VNNI) kernels for the 32-element formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4.
//
// Shape of the inner step: 4 weight blocks of one row unpack into two zmm of unsigned bytes
// (lo = low halves of the 4 blocks, hi = high halves), matching the activation group layout of
// act_layout.h. vpdpbusd (u8 x s8 -> s32) accumulates into the group's bias vector, which holds
// the correction for the weights' offset (Q4_0 stores q + 8, Q8_0 is made unsigned by ^ 0x80);
// each 32-bit lane then belongs to one block, and one FMA with (weight scale x activation scale)
// per lane moves it into the float accumulator. A tile is R rows x T tokens: every weight group
// is unpacked once for T tokens, every activation group loaded once for R rows.
//
// Prefill (many tokens): unpacking a group costs about as many instructions as the R x T dot
// products it feeds, so a 4-row tile unpacks its whole row once per block of tokens into a small
// per-thread buffer (lo, hi and the scales as the decoders produce them) and every 4 x 3 tile of
// that block reads them back with plain loads. The arithmetic per (row, token) is the same
// instruction sequence as the unpacking tile's, so the results are bit-identical to it, and a
// token's output does not depend on the pass it is in.
// IQ4_NL and MXFP4 (signed levels from a 16-entry table, Q8_0 activations like the AVX2 and
// reference kernels) take Q8_0's route: vpshufb looks the nibbles up in a table of level + offset
// (unsigned; the offset is minus the lowest level: 127 for IQ4_NL, 12 for MXFP4), and the
// activation group's bias (-offset x the block's quant sum) takes it back out, so the 32-bit lane
// sums are exact integers as in the reference. The offset is the smallest possible because the
// bias sits in one lane of the block and the offset products in all four: the lanes go to float
// before they cancel, so a larger offset costs float precision (MXFP4 with + 128: ~10x the error).
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

#include "backend/cpu/simd_x86.h"

namespace verdict::cpu::avx512 {
namespace {

using namespace verdict::cpu::simd;

static inline __m512i load4x16(const uint8_t* p, size_t stride) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + stride)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * stride)), 2);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 3 * stride)), 3);
    return v;
}

// f16 scales of 4 blocks -> each repeated over its block's four 32-bit lanes.
static inline __m512 load4Scales(const uint8_t* p, size_t stride) {
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi64_si128(static_cast<long long>(gather4Half(p, stride))));
    const __m512i idx = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(f));
}

// 5th bits of 4 Q5 blocks: bits 0-15 of each qh -> mask for `lo`, bits 16-31 -> mask for `hi`.
static inline void q5Masks(const uint8_t* qh, size_t stride, __mmask64& mlo, __mmask64& mhi) {
    const uint64_t h0 = loadU32(qh), h1 = loadU32(qh + stride), h2 = loadU32(qh + 2 * stride),
                   h3 = loadU32(qh + 3 * stride);
    mlo = (h0 & 0xFFFF) | (h1 & 0xFFFF) << 16 | (h2 & 0xFFFF) << 32 | (h3 & 0xFFFF) << 48;
    mhi = (h0 >> 16) | (h1 >> 16) << 16 | (h2 >> 16) << 32 | (h3 >> 16) << 48;
}

// Weight decoders: one group of 4 blocks -> unsigned quants lo/hi, scales d (and mins m).
struct DecQ4_0 {
    static constexpr size_t kBlock = 18;
    static constexpr int kBiasMul = -8;
    static constexpr bool kMin = false;
    using Group = ActGroup;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512&) {
        const __m512i m4 = _mm512_set1_epi8(0x0F);
        const __m512i q = load4x16(g + 2, kBlock);
        lo = _mm512_and_si512(q, m4);
        hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        d = load4Scales(g, kBlock);
    }
};

struct DecQ4_1 {
    static constexpr size_t kBlock = 20;
    static constexpr int kBiasMul = 0;
    static constexpr bool kMin = true;
    using Group = ActGroupS;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512& m) {
        const __m512i m4 = _mm512_set1_epi8(0x0F);
        const __m512i q = load4x16(g + 4, kBlock);
        lo = _mm512_and_si512(q, m4);
        hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        d = load4Scales(g, kBlock);
        m = load4Scales(g + 2, kBlock);
    }
};

struct DecQ5_0 {
    static constexpr size_t kBlock = 22;
    static constexpr int kBiasMul = -16;
    static constexpr bool kMin = false;
    using Group = ActGroup;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512&) {
        const __m512i m4 = _mm512_set1_epi8(0x0F), b4 = _mm512_set1_epi8(0x10);
        const __m512i q = load4x16(g + 6, kBlock);
        __mmask64 mlo, mhi;
        q5Masks(g + 2, kBlock, mlo, mhi);
        const __m512i l = _mm512_and_si512(q, m4);
        lo = _mm512_mask_add_epi8(l, mlo, l, b4);
        const __m512i h = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        hi = _mm512_mask_add_epi8(h, mhi, h, b4);
        d = load4Scales(g, kBlock);
    }
};

struct DecQ5_1 {
    static constexpr size_t kBlock = 24;
    static constexpr int kBiasMul = 0;
    static constexpr bool kMin = true;
    using Group = ActGroupS;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512& m) {
        const __m512i m4 = _mm512_set1_epi8(0x0F), b4 = _mm512_set1_epi8(0x10);
        const __m512i q = load4x16(g + 8, kBlock);
        __mmask64 mlo, mhi;
        q5Masks(g + 4, kBlock, mlo, mhi);
        const __m512i l = _mm512_and_si512(q, m4);
        lo = _mm512_mask_add_epi8(l, mlo, l, b4);
        const __m512i h = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        hi = _mm512_mask_add_epi8(h, mhi, h, b4);
        d = load4Scales(g, kBlock);
        m = load4Scales(g + 2, kBlock);
    }
};

struct DecQ8_0 {
    static constexpr size_t kBlock = 34;
    static constexpr int kBiasMul = -128;
    static constexpr bool kMin = false;
    using Group = ActGroup;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512&) {
        const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // s8 -> u8 = q + 128
        lo = _mm512_xor_si512(load4x16(g + 2, kBlock), flip);
        hi = _mm512_xor_si512(load4x16(g + 18, kBlock), flip);
        d = load4Scales(g, kBlock);
    }
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

// qs: the 16 nibble bytes of the group's first block, the next blocks `stride` bytes apart.
static inline void decodeLevels(const std::array<uint8_t, 16>& table, const uint8_t* qs, size_t stride,
                                __m512i& lo, __m512i& hi) {
    const __m512i t = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(table.data())));
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i q = load4x16(qs, stride);
    lo = _mm512_shuffle_epi8(t, _mm512_and_si512(q, m4));
    hi = _mm512_shuffle_epi8(t, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4));
}

struct DecIQ4_NL {
    static constexpr size_t kBlock = 18;
    static constexpr int kBiasMul = kIQ4NLBias;
    static constexpr bool kMin = false;
    using Group = ActGroup;
    static inline void decode(const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512&) {
        decodeLevels(kIQ4NLOffset, g + 2, kBlock, lo, hi);
        d = load4Scales(g, kBlock);
    }
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
        decodeLevels(kMXFP4Offset, g + 1, kBlock, lo, hi);
        d = mxfp4Scales(g, kBlock);
    }
};

// One tile: R rows x T tokens over the whole row.
template <class Dec, int R, int T>
void tile(const MatmulArgs& a, int64_t r, int64_t t) {
    using G = typename Dec::Group;
    const int64_t nBlocks = a.K / 32, nFull = nBlocks / 4, tail = nBlocks % 4;
    const uint8_t* w[R];
    for (int i = 0; i < R; ++i) w[i] = a.W + (r + i) * a.rowBytes;
    const G* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const G*>(a.act + (t + j) * a.actStride);
    __m512 acc[R][T];
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < T; ++j) acc[i][j] = _mm512_setzero_ps();

    auto step = [&](const uint8_t* const* wg, int64_t gi) {
        __m512i lo[R], hi[R];
        __m512 dw[R], mw[R];
        for (int i = 0; i < R; ++i) Dec::decode(wg[i], lo[i], hi[i], dw[i], mw[i]);
        for (int j = 0; j < T; ++j) {
            const G& A = x[j][gi];
            const __m512i alo = _mm512_load_si512(A.lo), ahi = _mm512_load_si512(A.hi);
            const __m512i bias = Dec::kBiasMul ? _mm512_load_si512(A.bias) : _mm512_setzero_si512();
            const __m512 ad = _mm512_load_ps(A.d);
            for (int i = 0; i < R; ++i) {
                __m512i s = _mm512_dpbusd_epi32(bias, lo[i], alo);
                s = _mm512_dpbusd_epi32(s, hi[i], ahi);
                acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dw[i], ad), acc[i][j]);
                if constexpr (Dec::kMin) {
                    if constexpr (sizeof(G) == sizeof(ActGroupS))
                        acc[i][j] = _mm512_fmadd_ps(mw[i], _mm512_load_ps(reinterpret_cast<const ActGroupS&>(A).s),
                                                    acc[i][j]);
                }
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
        // Last 1-3 blocks: copy into a zeroed group (zero scales) so the loads stay in bounds.
        alignas(64) uint8_t buf[R][4 * Dec::kBlock];
        const uint8_t* wg[R];
        for (int i = 0; i < R; ++i) {
            std::memset(buf[i], 0, sizeof buf[i]);
            std::memcpy(buf[i], w[i] + nFull * 4 * Dec::kBlock, static_cast<size_t>(tail) * Dec::kBlock);
            wg[i] = buf[i];
        }
        step(wg, nFull);
    }
    for (int j = 0; j < T; ++j)
        for (int i = 0; i < R; ++i) a.Y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]);
}

// What Dec::decode gives for one group of one row, stored for the pre-decoded tiles (192 bytes;
// 256 with the mins of Q4_1 / Q5_1), so a 4-row tile of a 2048-wide matrix stays in L1.
template <bool Min>
struct alignas(64) DecodedGroupT {
    __m512i lo, hi;
    __m512 d;
    void decode(const auto& dec, const uint8_t* g) {
        __m512 unused;
        dec(g, lo, hi, d, unused);
    }
    __m512 mins() const { return _mm512_setzero_ps(); }
};
template <>
struct alignas(64) DecodedGroupT<true> {
    __m512i lo, hi;
    __m512 d, m;
    void decode(const auto& dec, const uint8_t* g) { dec(g, lo, hi, d, m); }
    __m512 mins() const { return m; }
};
template <class Dec>
using DecodedGroup = DecodedGroupT<Dec::kMin>;

// Rows [r, r + R) unpacked into out[gi * R + i] for every group gi (the last, partial one
// zero-padded as tile() pads it).
template <class Dec, int R>
void unpackRows(const MatmulArgs& a, int64_t r, DecodedGroup<Dec>* out) {
    const int64_t nBlocks = a.K / 32, nFull = nBlocks / 4, tail = nBlocks % 4;
    const auto dec = [](const uint8_t* g, __m512i& lo, __m512i& hi, __m512& d, __m512& m) { Dec::decode(g, lo, hi, d, m); };
    for (int i = 0; i < R; ++i) {
        const uint8_t* w = a.W + (r + i) * a.rowBytes;
        for (int64_t gi = 0; gi < nFull; ++gi) out[gi * R + i].decode(dec, w + gi * 4 * Dec::kBlock);
        if (tail) {
            alignas(64) uint8_t buf[4 * Dec::kBlock];
            std::memset(buf, 0, sizeof buf);
            std::memcpy(buf, w + nFull * 4 * Dec::kBlock, static_cast<size_t>(tail) * Dec::kBlock);
            out[nFull * R + i].decode(dec, buf);
        }
    }
}

// tile() over rows already unpacked by unpackRows: the same products in the same order.
template <class Dec, int R, int T>
void tileUnpacked(const MatmulArgs& a, const DecodedGroup<Dec>* rows, int64_t r, int64_t t) {
    using G = typename Dec::Group;
    const int64_t nGroups = groupCount(a.K);
    const G* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const G*>(a.act + (t + j) * a.actStride);
    __m512 acc[R][T];
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < T; ++j) acc[i][j] = _mm512_setzero_ps();
    for (int64_t gi = 0; gi < nGroups; ++gi) {
        const DecodedGroup<Dec>* g = rows + gi * R;
        for (int j = 0; j < T; ++j) {
            const G& A = x[j][gi];
            const __m512i alo = _mm512_load_si512(A.lo), ahi = _mm512_load_si512(A.hi);
            const __m512i bias = Dec::kBiasMul ? _mm512_load_si512(A.bias) : _mm512_setzero_si512();
            const __m512 ad = _mm512_load_ps(A.d);
            for (int i = 0; i < R; ++i) {
                __m512i s = _mm512_dpbusd_epi32(bias, g[i].lo, alo);
                s = _mm512_dpbusd_epi32(s, g[i].hi, ahi);
                acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(g[i].d, ad), acc[i][j]);
                if constexpr (Dec::kMin) {
                    if constexpr (sizeof(G) == sizeof(ActGroupS))
                        acc[i][j] = _mm512_fmadd_ps(g[i].mins(), _mm512_load_ps(reinterpret_cast<const ActGroupS&>(A).s),
                                                    acc[i][j]);
                }
            }
        }
    }
    for (int j = 0; j < T; ++j)
        for (int i = 0; i < R; ++i) a.Y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]);
}

// The per-thread buffer of unpacked rows, grown on demand.
template <class G>
G* unpackBuffer(size_t groups) {
    struct Free {
        void operator()(G* p) const { std::free(p); }
    };
    thread_local std::unique_ptr<G, Free> buf;
    thread_local size_t cap = 0;
    if (groups > cap) {
        cap = groups;
        buf.reset(static_cast<G*>(std::aligned_alloc(64, cap * sizeof(G))));
    }
    return buf.get();
}

template <class Dec>
void compute(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    constexpr int kR = 4, kT = 3, kRDecode = 8;
    // Tokens per block of the unpacked path: its activations (256-320 bytes per 128 elements)
    // stay in L2 while every 4-row tile of the task passes over them.
    constexpr int64_t kTokBlock = 48;
    int64_t t = t0;
    const int64_t tiled = (t1 - t0) / kT * kT;
    // Only while a tile's unpacked rows fit in L1 beside the activations they meet (K <= 2048 for
    // the 192-byte groups): wider rows (a down projection) read from L2 cost more than unpacking.
    constexpr size_t kUnpackedBytes = 24 * 1024;
    const size_t unpackedBytes = static_cast<size_t>(groupCount(a.K) * kR) * sizeof(DecodedGroup<Dec>);
    if (tiled >= 2 * kT && r1 - r0 >= kR && unpackedBytes <= kUnpackedBytes) {
        auto* rows = unpackBuffer<DecodedGroup<Dec>>(static_cast<size_t>(groupCount(a.K) * kR));
        for (int64_t tb = t0; tb < t0 + tiled; tb += kTokBlock) {
            const int64_t te = std::min(tb + kTokBlock, t0 + tiled);
            int64_t r = r0;
            for (; r + kR <= r1; r += kR) {
                unpackRows<Dec, kR>(a, r, rows);
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
        {TensorType::Q4_0, SimdLevel::Avx512, groupActBytes<ActGroup>, prepare<ActGroup, -8>, compute<DecQ4_0>},
        {TensorType::Q4_1, SimdLevel::Avx512, groupActBytes<ActGroupS>, prepare<ActGroupS, 0>, compute<DecQ4_1>},
        {TensorType::Q5_0, SimdLevel::Avx512, groupActBytes<ActGroup>, prepare<ActGroup, -16>, compute<DecQ5_0>},
        {TensorType::Q5_1, SimdLevel::Avx512, groupActBytes<ActGroupS>, prepare<ActGroupS, 0>, compute<DecQ5_1>},
        {TensorType::Q8_0, SimdLevel::Avx512, groupActBytes<ActGroup>, prepare<ActGroup, -128>, compute<DecQ8_0>},
        {TensorType::IQ4_NL, SimdLevel::Avx512, groupActBytes<ActGroup>, prepare<ActGroup, DecIQ4_NL::kBiasMul>, compute<DecIQ4_NL>},
        {TensorType::MXFP4, SimdLevel::Avx512, groupActBytes<ActGroup>, prepare<ActGroup, DecMXFP4::kBiasMul>, compute<DecMXFP4>},
    };
    for (const auto& k : kKernels)
        if (k.type == t) return &k;
    return nullptr;
}

}  // namespace verdict::cpu::avx512

#pragma GCC pop_options
