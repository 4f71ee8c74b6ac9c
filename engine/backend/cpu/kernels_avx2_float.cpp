// AVX2 kernels for float weights F32, F16 (F16C) and BF16 (widened to f32), FMA over f32
// activations (rounded to f16 / bf16 for those weight types, as llama.cpp does).
#include "backend/cpu/kernels_x86.h"
#include "tensor/half.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

#include "backend/cpu/simd_x86.h"

namespace verdict::cpu::avx2 {
namespace {

using namespace verdict::cpu::simd;

struct WF32 {
    static constexpr int kElem = 4;
    static inline __m256 load(const uint8_t* row, int64_t k) { return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + k); }
    static inline float one(const uint8_t* row, int64_t k) { return reinterpret_cast<const float*>(row)[k]; }
};
struct WF16 {
    static constexpr int kElem = 2;
    static inline __m256 load(const uint8_t* row, int64_t k) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * k)));
    }
    static inline float one(const uint8_t* row, int64_t k) { return tensor::fp16ToFp32(loadU16(row + 2 * k)); }
};
struct WBF16 {
    static constexpr int kElem = 2;
    static inline __m256 load(const uint8_t* row, int64_t k) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * k));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    static inline float one(const uint8_t* row, int64_t k) { return tensor::bf16ToFp32(loadU16(row + 2 * k)); }
};

template <class Wt, int R, int T>
void tile(const MatmulArgs& a, int64_t r, int64_t t) {
    const uint8_t* w[R];
    for (int i = 0; i < R; ++i) w[i] = a.W + (r + i) * a.rowBytes;
    const float* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const float*>(a.act + (t + j) * a.actStride);
    __m256 acc[R][T];
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < T; ++j) acc[i][j] = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 8 <= a.K; k += 8) {
        if constexpr (T == 1)
            if (k % 32 == 0)
                for (int i = 0; i < R; ++i)
                    _mm_prefetch(reinterpret_cast<const char*>(w[i] + R * a.rowBytes + k * Wt::kElem), _MM_HINT_T0);
        __m256 wv[R];
        for (int i = 0; i < R; ++i) wv[i] = Wt::load(w[i], k);
        for (int j = 0; j < T; ++j) {
            const __m256 xv = _mm256_loadu_ps(x[j] + k);
            for (int i = 0; i < R; ++i) acc[i][j] = _mm256_fmadd_ps(wv[i], xv, acc[i][j]);
        }
    }
    for (int j = 0; j < T; ++j)
        for (int i = 0; i < R; ++i) {
            float s = hsum256(acc[i][j]);
            for (int64_t kk = k; kk < a.K; ++kk) s += Wt::one(w[i], kk) * x[j][kk];
            a.Y[(t + j) * a.ldy + r + i] = s;
        }
}

template <class Wt>
void compute(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    constexpr int kR = 3, kT = 4, kRDec = 8;
    int64_t t = t0;
    for (; t + kT <= t1; t += kT) {
        int64_t r = r0;
        for (; r + kR <= r1; r += kR) tile<Wt, kR, kT>(a, r, t);
        for (; r < r1; ++r) tile<Wt, 1, kT>(a, r, t);
    }
    for (; t < t1; ++t) {
        int64_t r = r0;
        for (; r + kRDec <= r1; r += kRDec) tile<Wt, kRDec, 1>(a, r, t);
        for (; r < r1; ++r) tile<Wt, 1, 1>(a, r, t);
    }
}

size_t bytesF32(int64_t K) { return roundUp64(static_cast<size_t>(K) * 4); }
void prepF32(const float* x, int64_t K, void* out) { std::memcpy(out, x, static_cast<size_t>(K) * 4); }
void prepF16(const float* x, int64_t K, void* out) {
    auto* o = static_cast<float*>(out);
    int64_t k = 0;
    for (; k + 8 <= K; k += 8)
        _mm256_storeu_ps(o + k, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + k), _MM_FROUND_TO_NEAREST_INT)));
    for (; k < K; ++k) o[k] = tensor::fp16ToFp32(tensor::fp32ToFp16(x[k]));
}
void prepBf16(const float* x, int64_t K, void* out) {
    auto* o = static_cast<float*>(out);
    for (int64_t k = 0; k < K; ++k) o[k] = tensor::bf16ToFp32(tensor::fp32ToBf16(x[k]));
}

}  // namespace

const MatmulKernel* floatKernel(tensor::TensorType t) {
    using tensor::TensorType;
    static constexpr MatmulKernel kKernels[] = {
        {TensorType::F32, SimdLevel::Avx2, bytesF32, prepF32, compute<WF32>},
        {TensorType::F16, SimdLevel::Avx2, bytesF32, prepF16, compute<WF16>},
        {TensorType::BF16, SimdLevel::Avx2, bytesF32, prepBf16, compute<WBF16>},
    };
    for (const auto& k : kKernels)
        if (k.type == t) return &k;
    return nullptr;
}

}  // namespace verdict::cpu::avx2

#pragma GCC pop_options
