#include "backend/cpu/ops_vec.h"

#include "tensor/half.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define VERDICT_OPS_X86 1
#endif

namespace verdict::cpu {
namespace {

#if VERDICT_OPS_X86
bool haveAvx2Fma() {
    static const bool kHave =
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    return kHave;
}

__attribute__((target("avx2,fma"))) float hsum256(__m256 v) {
    __m128 lo = _mm256_castps256_ps128(v);
    __m128 hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}

__attribute__((target("avx2,fma"))) float dotAvx2(const float* a, const float* b, int64_t n) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    }
    for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    float s = hsum256(_mm256_add_ps(acc0, acc1));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

__attribute__((target("avx2,fma,f16c"))) float dotF16Avx2(const float* a, const uint16_t* b, int64_t n) {
    __m256 acc0 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 bv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), bv, acc0);
    }
    float s = hsum256(acc0);
    for (; i < n; ++i) s += a[i] * tensor::fp16ToFp32(b[i]);
    return s;
}

__attribute__((target("avx2,fma"))) void axpyAvx2(float a, const float* x, float* y, int64_t n) {
    const __m256 av = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] += a * x[i];
}

__attribute__((target("avx2,fma,f16c"))) void axpyF16Avx2(float a, const uint16_t* x, float* y, int64_t n) {
    const __m256 av = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 xv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, xv, _mm256_loadu_ps(y + i)));
    }
    for (; i < n; ++i) y[i] += a * tensor::fp16ToFp32(x[i]);
}

__attribute__((target("avx2,f16c"))) void roundToF16Avx2(float* x, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT)));
    for (; i < n; ++i) x[i] = tensor::fp16ToFp32(tensor::fp32ToFp16(x[i]));
}

// --- many rows at once (ops_vec.h: bit for bit the one-row functions above) ---
// Tiles of H query rows x J key rows (dots) or H probability rows x C chunks of 8 outputs
// (accumulation), sized to stay within the 16 ymm registers.

// H x J dots as dotAvx2 computes each: two partial sums over alternate 8-element chunks while 16
// remain, a last chunk into the first, then hsum256 of their sum. d % 8 == 0.
template <int H, int J>
__attribute__((target("avx2,fma"))) inline void dotTileF32(const float* q, int64_t ldq, const float* k, int64_t d,
                                                           float* out, int64_t ldo) {
    __m256 acc0[H][J], acc1[H][J];
    for (int i = 0; i < H; ++i)
        for (int j = 0; j < J; ++j) acc0[i][j] = acc1[i][j] = _mm256_setzero_ps();
    int64_t e = 0;
    for (; e + 16 <= d; e += 16) {
        __m256 k0[J], k1[J];
        for (int j = 0; j < J; ++j) {
            k0[j] = _mm256_loadu_ps(k + j * d + e);
            k1[j] = _mm256_loadu_ps(k + j * d + e + 8);
        }
        for (int i = 0; i < H; ++i) {
            const __m256 q0 = _mm256_loadu_ps(q + i * ldq + e), q1 = _mm256_loadu_ps(q + i * ldq + e + 8);
            for (int j = 0; j < J; ++j) {
                acc0[i][j] = _mm256_fmadd_ps(q0, k0[j], acc0[i][j]);
                acc1[i][j] = _mm256_fmadd_ps(q1, k1[j], acc1[i][j]);
            }
        }
    }
    if (e < d)
        for (int i = 0; i < H; ++i)
            for (int j = 0; j < J; ++j)
                acc0[i][j] =
                    _mm256_fmadd_ps(_mm256_loadu_ps(q + i * ldq + e), _mm256_loadu_ps(k + j * d + e), acc0[i][j]);
    for (int i = 0; i < H; ++i)
        for (int j = 0; j < J; ++j) out[i * ldo + j] = hsum256(_mm256_add_ps(acc0[i][j], acc1[i][j]));
}

// H x J dots as dotF16Avx2 computes each: one partial sum over 8-element chunks, hsum256. d % 8 == 0.
template <int H, int J>
__attribute__((target("avx2,fma,f16c"))) inline void dotTileF16(const float* q, int64_t ldq, const uint16_t* k,
                                                                int64_t d, float* out, int64_t ldo) {
    __m256 acc[H][J];
    for (int i = 0; i < H; ++i)
        for (int j = 0; j < J; ++j) acc[i][j] = _mm256_setzero_ps();
    for (int64_t e = 0; e < d; e += 8) {
        __m256 kv[J];
        for (int j = 0; j < J; ++j)
            kv[j] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(k + j * d + e)));
        for (int i = 0; i < H; ++i) {
            const __m256 qv = _mm256_loadu_ps(q + i * ldq + e);
            for (int j = 0; j < J; ++j) acc[i][j] = _mm256_fmadd_ps(qv, kv[j], acc[i][j]);
        }
    }
    for (int i = 0; i < H; ++i)
        for (int j = 0; j < J; ++j) out[i * ldo + j] = hsum256(acc[i][j]);
}

struct F32Dots {
    using Key = float;
    template <int H, int J>
    __attribute__((target("avx2,fma,f16c"))) static void tile(const float* q, int64_t ldq, const float* k, int64_t d,
                                                              float* out, int64_t ldo) {
        dotTileF32<H, J>(q, ldq, k, d, out, ldo);
    }
};
struct F16Dots {
    using Key = uint16_t;
    template <int H, int J>
    __attribute__((target("avx2,fma,f16c"))) static void tile(const float* q, int64_t ldq, const uint16_t* k, int64_t d,
                                                              float* out, int64_t ldo) {
        dotTileF16<H, J>(q, ldq, k, d, out, ldo);
    }
};

// H query rows against every key: J keys per tile, then the last ones one by one.
template <class Dots, int H, int J>
__attribute__((target("avx2,fma,f16c"))) void dotHeads(const float* q, int64_t ldq, const typename Dots::Key* keys,
                                                       int64_t nKeys, int64_t d, float* out, int64_t ldo) {
    int64_t j = 0;
    for (; j + J <= nKeys; j += J) Dots::template tile<H, J>(q, ldq, keys + j * d, d, out + j, ldo);
    for (; j < nKeys; ++j) Dots::template tile<H, 1>(q, ldq, keys + j * d, d, out + j, ldo);
}

// Query rows 4 at a time, then the 1-3 left; J4..J1: keys per tile for 4..1 rows.
template <class Dots, int J4, int J3, int J2, int J1>
__attribute__((target("avx2,fma,f16c"))) void dotRowsTiled(const float* q, int64_t ldq, int64_t nq,
                                                           const typename Dots::Key* keys, int64_t nKeys, int64_t d,
                                                           float* out, int64_t ldo) {
    int64_t i = 0;
    for (; i + 4 <= nq; i += 4) dotHeads<Dots, 4, J4>(q + i * ldq, ldq, keys, nKeys, d, out + i * ldo, ldo);
    switch (nq - i) {
        case 3:
            dotHeads<Dots, 3, J3>(q + i * ldq, ldq, keys, nKeys, d, out + i * ldo, ldo);
            break;
        case 2:
            dotHeads<Dots, 2, J2>(q + i * ldq, ldq, keys, nKeys, d, out + i * ldo, ldo);
            break;
        case 1:
            dotHeads<Dots, 1, J1>(q + i * ldq, ldq, keys, nKeys, d, out + i * ldo, ldo);
            break;
        default:
            break;
    }
}

// out rows (H of them, d apart) += p[i * ldp + j] * values[j] for every key j in order, chunks
// [e0, e0 + 8C) of the outputs kept in registers across the keys: per element the same FMAs in
// the same order as axpyAvx2 / axpyF16Avx2 called key by key.
template <int H, int C, bool F16>
__attribute__((target("avx2,fma,f16c"))) inline void accumulateTile(const float* p, int64_t ldp, const void* values,
                                                                    int64_t nKeys, int64_t d, float* out, int64_t e0) {
    __m256 acc[H][C];
    for (int i = 0; i < H; ++i)
        for (int c = 0; c < C; ++c) acc[i][c] = _mm256_loadu_ps(out + i * d + e0 + 8 * c);
    for (int64_t j = 0; j < nKeys; ++j) {
        __m256 xv[C];
        for (int c = 0; c < C; ++c) {
            if constexpr (F16)
                xv[c] = _mm256_cvtph_ps(_mm_loadu_si128(
                    reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(values) + j * d + e0 + 8 * c)));
            else
                xv[c] = _mm256_loadu_ps(static_cast<const float*>(values) + j * d + e0 + 8 * c);
        }
        for (int i = 0; i < H; ++i) {
            const __m256 pv = _mm256_set1_ps(p[i * ldp + j]);
            for (int c = 0; c < C; ++c) acc[i][c] = _mm256_fmadd_ps(pv, xv[c], acc[i][c]);
        }
    }
    for (int i = 0; i < H; ++i)
        for (int c = 0; c < C; ++c) _mm256_storeu_ps(out + i * d + e0 + 8 * c, acc[i][c]);
}

template <int H, int C, bool F16>
__attribute__((target("avx2,fma,f16c"))) void accumulateHeads(const float* p, int64_t ldp, const void* values,
                                                              int64_t nKeys, int64_t d, float* out) {
    int64_t e = 0;
    for (; e + 8 * C <= d; e += 8 * C) accumulateTile<H, C, F16>(p, ldp, values, nKeys, d, out, e);
    for (; e < d; e += 8) accumulateTile<H, 1, F16>(p, ldp, values, nKeys, d, out, e);
}

template <bool F16>
__attribute__((target("avx2,fma,f16c"))) void accumulateRowsAvx2(const float* p, int64_t np, int64_t ldp,
                                                                 const void* values, int64_t nKeys, int64_t d,
                                                                 float* out) {
    int64_t i = 0;
    for (; i + 4 <= np; i += 4) accumulateHeads<4, 2, F16>(p + i * ldp, ldp, values, nKeys, d, out + i * d);
    switch (np - i) {
        case 3:
            accumulateHeads<3, 2, F16>(p + i * ldp, ldp, values, nKeys, d, out + i * d);
            break;
        case 2:
            accumulateHeads<2, 4, F16>(p + i * ldp, ldp, values, nKeys, d, out + i * d);
            break;
        case 1:
            accumulateHeads<1, 4, F16>(p + i * ldp, ldp, values, nKeys, d, out + i * d);
            break;
        default:
            break;
    }
}
#endif

float dotPortable(const float* a, const float* b, int64_t n) {
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
    float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

}  // namespace

float dotF32(const float* a, const float* b, int64_t n) {
#if VERDICT_OPS_X86
    if (haveAvx2Fma()) return dotAvx2(a, b, n);
#endif
    return dotPortable(a, b, n);
}

float dotF32F16(const float* a, const uint16_t* b, int64_t n) {
#if VERDICT_OPS_X86
    if (haveAvx2Fma()) return dotF16Avx2(a, b, n);
#endif
    float s = 0;
    for (int64_t i = 0; i < n; ++i) s += a[i] * tensor::fp16ToFp32(b[i]);
    return s;
}

void axpyF32(float a, const float* x, float* y, int64_t n) {
#if VERDICT_OPS_X86
    if (haveAvx2Fma()) return axpyAvx2(a, x, y, n);
#endif
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void axpyF16(float a, const uint16_t* x, float* y, int64_t n) {
#if VERDICT_OPS_X86
    if (haveAvx2Fma()) return axpyF16Avx2(a, x, y, n);
#endif
    for (int64_t i = 0; i < n; ++i) y[i] += a * tensor::fp16ToFp32(x[i]);
}

void scaleF32(float* x, float s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void roundToF16(float* x, int64_t n) {
#if VERDICT_OPS_X86
    if (haveAvx2Fma()) return roundToF16Avx2(x, n);
#endif
    for (int64_t i = 0; i < n; ++i) x[i] = tensor::fp16ToFp32(tensor::fp32ToFp16(x[i]));
}

// The tiled paths need whole 8-element chunks; any other width takes the one-row functions.
void dotRowsF32(const float* q, int64_t ldq, int64_t nq, const float* keys, int64_t nKeys, int64_t d, float* out,
                int64_t ldo) {
#if VERDICT_OPS_X86
    if (haveAvx2Fma() && d % 8 == 0) {
        // two partial sums per dot: 4 x 1, 3 x 1, 2 x 2, 1 x 3 tiles (8, 6, 8, 6 sums in flight)
        dotRowsTiled<F32Dots, 1, 1, 2, 3>(q, ldq, nq, keys, nKeys, d, out, ldo);
        return;
    }
#endif
    for (int64_t i = 0; i < nq; ++i)
        for (int64_t j = 0; j < nKeys; ++j) out[i * ldo + j] = dotF32(q + i * ldq, keys + j * d, d);
}

void dotRowsF16(const float* q, int64_t ldq, int64_t nq, const uint16_t* keys, int64_t nKeys, int64_t d, float* out,
                int64_t ldo) {
#if VERDICT_OPS_X86
    if (haveAvx2Fma() && d % 8 == 0) {
        // one partial sum per dot: 4 x 2, 3 x 2, 2 x 4, 1 x 4 tiles
        dotRowsTiled<F16Dots, 2, 2, 4, 4>(q, ldq, nq, keys, nKeys, d, out, ldo);
        return;
    }
#endif
    for (int64_t i = 0; i < nq; ++i)
        for (int64_t j = 0; j < nKeys; ++j) out[i * ldo + j] = dotF32F16(q + i * ldq, keys + j * d, d);
}

void accumulateRowsF32(const float* p, int64_t np, int64_t ldp, const float* values, int64_t nKeys, int64_t d,
                       float* out) {
#if VERDICT_OPS_X86
    if (haveAvx2Fma() && d % 8 == 0) return accumulateRowsAvx2<false>(p, np, ldp, values, nKeys, d, out);
#endif
    for (int64_t j = 0; j < nKeys; ++j)
        for (int64_t i = 0; i < np; ++i) axpyF32(p[i * ldp + j], values + j * d, out + i * d, d);
}

void accumulateRowsF16(const float* p, int64_t np, int64_t ldp, const uint16_t* values, int64_t nKeys, int64_t d,
                       float* out) {
#if VERDICT_OPS_X86
    if (haveAvx2Fma() && d % 8 == 0) return accumulateRowsAvx2<true>(p, np, ldp, values, nKeys, d, out);
#endif
    for (int64_t j = 0; j < nKeys; ++j)
        for (int64_t i = 0; i < np; ++i) axpyF16(p[i * ldp + j], values + j * d, out + i * d, d);
}

}  // namespace verdict::cpu
