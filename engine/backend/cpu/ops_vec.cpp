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
    static const bool kHave = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
        && __builtin_cpu_supports("f16c");
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

}  // namespace verdict::cpu
