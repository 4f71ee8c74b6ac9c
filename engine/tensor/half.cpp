// Row conversions of half.h. The F16C paths are compiled with a target attribute and chosen at
// run time, so the library still runs on x86-64 CPUs without F16C.
#include "tensor/half.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define VERDICT_X86 1
#endif

namespace verdict::tensor {
namespace {

#if VERDICT_X86
bool hasF16c() {
    static const bool has = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
    return has;
}

__attribute__((target("avx,f16c"))) void fp16ToFp32F16c(const uint16_t* src, float* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) dst[i] = fp16ToFp32(src[i]);
}

__attribute__((target("avx,f16c"))) void fp32ToFp16F16c(const float* src, uint16_t* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
    }
    for (; i < n; ++i) dst[i] = fp32ToFp16(src[i]);
}
#endif

}  // namespace

void fp16ToFp32Row(const uint16_t* src, float* dst, int64_t n) {
#if VERDICT_X86
    if (hasF16c()) return fp16ToFp32F16c(src, dst, n);
#endif
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16ToFp32(src[i]);
}

void fp32ToFp16Row(const float* src, uint16_t* dst, int64_t n) {
#if VERDICT_X86
    if (hasF16c()) return fp32ToFp16F16c(src, dst, n);
#endif
    for (int64_t i = 0; i < n; ++i) dst[i] = fp32ToFp16(src[i]);
}

void bf16ToFp32Row(const uint16_t* src, float* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16ToFp32(src[i]);  // a shift; vectorises as is
}

void fp32ToBf16Row(const float* src, uint16_t* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = fp32ToBf16(src[i]);
}

}  // namespace verdict::tensor
