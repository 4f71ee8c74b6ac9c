// Small x86 SIMD helpers shared by the kernel files. Include it AFTER the file's
// `#pragma GCC target(...)`: everything here is static inline and takes that target.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace verdict::cpu::simd {

static inline uint16_t loadU16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
static inline uint32_t loadU32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// Four f16 at p, p+stride, ... as a u64 (for _mm_cvtph_ps).
static inline uint64_t gather4Half(const uint8_t* p, size_t stride) {
    return static_cast<uint64_t>(loadU16(p)) | static_cast<uint64_t>(loadU16(p + stride)) << 16 |
           static_cast<uint64_t>(loadU16(p + 2 * stride)) << 32 |
           static_cast<uint64_t>(loadU16(p + 3 * stride)) << 48;
}

// Prefetches [p, p + bytes) into L1. Decode (matrix-vector) kernels call it for the rows of
// the NEXT tile while computing this one: rows are short streams (~1-4 KB) that the hardware
// prefetchers pick up too late, and this doubled single-thread bandwidth on Zen 5.
static inline void prefetchSpan(const uint8_t* p, size_t bytes) {
    for (size_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p + bytes - 1), _MM_HINT_T0);
}

static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

}  // namespace verdict::cpu::simd
