// Small x86 SIMD helpers shared by the kernel files. Include it AFTER the file's
// `#pragma GCC target(...)`: everything here is static inline and takes that target.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

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

// Prefetches [p, p + bytes) into L1. Decode (matrix-vector) kernels call it for the rows of
// the NEXT tile while computing this one: rows are short streams (~1-4 KB) that the hardware
// prefetchers pick up too late, and this doubled single-thread bandwidth on Zen 5.
static inline void prefetchSpan(const uint8_t* p, size_t bytes) {
    for (size_t off = 0; off < bytes; off += 64) _mm_prefetch(reinterpret_cast<const char*>(p + off), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p + bytes - 1), _MM_HINT_T0);
}

// A 64-byte aligned buffer of n U's per thread and U, grown on demand, never shrunk: the
// prefill kernels' unpacked / packed weight rows.
template <class U>
static inline U* threadBuffer(size_t n) {
    struct Free {
        void operator()(U* p) const { std::free(p); }
    };
    thread_local std::unique_ptr<U, Free> buf;
    thread_local size_t cap = 0;
    if (n > cap) {
        buf.reset(static_cast<U*>(std::aligned_alloc(64, (n * sizeof(U) + 63) / 64 * 64)));
        if (!buf) throw std::bad_alloc();
        cap = n;
    }
    return buf.get();
}

// acc += w (unsigned bytes) . the 4 signed bytes at p broadcast to every lane, with vpdpbusd's
// embedded {1to16} broadcast (GCC 12 does not fold _mm512_set1_epi32 into it: a separate
// vpbroadcastd per step and a register for each). The row-interleaved (lane = row) kernels; only
// files compiled for AVX512-VNNI may call it.
__attribute__((target("avx512f,avx512vnni"))) static inline __m512i dpbusdBcast(__m512i acc, __m512i w,
                                                                            const int8_t* p) {
    using I32 = int32_t __attribute__((may_alias, aligned(1)));
    asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*reinterpret_cast<const I32*>(p)));
    return acc;
}

// The lattice step: isum += sc (words) x pairs of q (unsigned magnitudes) x a (64 signed bytes at
// a, 64-byte aligned), the activation bytes negated where neg is set: vpmaddubsw then vpdpwssd.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static inline __m512i gridDot(__m512i isum, __m512i q, __m512i sc,
                                                                                 __mmask64 neg, const int8_t* a) {
    const __m512i av = _mm512_load_si512(a);
    const __m512i as = _mm512_mask_sub_epi8(av, neg, _mm512_setzero_si512(), av);
    return _mm512_dpwssd_epi32(isum, _mm512_maddubs_epi16(q, as), sc);
}

static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

}  // namespace verdict::cpu::simd
