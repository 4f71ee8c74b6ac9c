// AVX-512 kernels for float weights: F32, F16 (F16C conversion + FMA) and BF16 (vdpbf16ps on CPUs
// with AVX512_BF16, else widened to f32 + FMA; see kernel_registry.cpp).
//
// Activations: F32 as is; F16 weights see activations rounded to f16 and BF16 weights rounded to
// bf16, as llama.cpp computes them (values stored as f32, or as bf16 pairs for vdpbf16ps).
// Tile: R rows x T tokens, 16 (or 32) elements per step; each weight vector is converted once per
// step and used for T tokens.
#include "backend/cpu/kernels_x86.h"
#include "tensor/half.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

// GCC 12 reports -W(maybe-)uninitialized inside its own AVX-512 intrinsics (_mm512_undefined_*).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")

namespace verdict::cpu::avx512 {
namespace {

struct WF32 {
    static constexpr int kElem = 4;
    static inline __m512 load(const uint8_t* row, int64_t k) {
        return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + k);
    }
    static inline __m512 loadPart(const uint8_t* row, int64_t k, __mmask16 m) {
        return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + k);
    }
};
struct WF16 {
    static constexpr int kElem = 2;
    static inline __m512 load(const uint8_t* row, int64_t k) {
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * k)));
    }
    static inline __m512 loadPart(const uint8_t* row, int64_t k, __mmask16 m) {
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * k));
    }
};
struct WBF16 {
    static constexpr int kElem = 2;
    static inline __m512 widen(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }
    static inline __m512 load(const uint8_t* row, int64_t k) {
        return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * k)));
    }
    static inline __m512 loadPart(const uint8_t* row, int64_t k, __mmask16 m) {
        return widen(_mm256_maskz_loadu_epi16(m, row + 2 * k));
    }
};

// FMA tile over f32 activations.
template <class Wt, int R, int T>
void tileFma(const MatmulArgs& a, int64_t r, int64_t t) {
    const uint8_t* w[R];
    for (int i = 0; i < R; ++i) w[i] = a.W + (r + i) * a.rowBytes;
    const float* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const float*>(a.act + (t + j) * a.actStride);
    __m512 acc[R][T];
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < T; ++j) acc[i][j] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 16 <= a.K; k += 16) {
        if constexpr (T == 1)
            for (int i = 0; i < R; ++i)
                _mm_prefetch(reinterpret_cast<const char*>(w[i] + R * a.rowBytes + k * Wt::kElem), _MM_HINT_T0);
        __m512 wv[R];
        for (int i = 0; i < R; ++i) wv[i] = Wt::load(w[i], k);
        for (int j = 0; j < T; ++j) {
            const __m512 xv = _mm512_loadu_ps(x[j] + k);
            for (int i = 0; i < R; ++i) acc[i][j] = _mm512_fmadd_ps(wv[i], xv, acc[i][j]);
        }
    }
    if (k < a.K) {
        const __mmask16 m = static_cast<__mmask16>((1u << (a.K - k)) - 1);
        __m512 wv[R];
        for (int i = 0; i < R; ++i) wv[i] = Wt::loadPart(w[i], k, m);
        for (int j = 0; j < T; ++j) {
            const __m512 xv = _mm512_maskz_loadu_ps(m, x[j] + k);
            for (int i = 0; i < R; ++i) acc[i][j] = _mm512_fmadd_ps(wv[i], xv, acc[i][j]);
        }
    }
    for (int j = 0; j < T; ++j)
        for (int i = 0; i < R; ++i) a.Y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]);
}

template <void (*Tile)(const MatmulArgs&, int64_t, int64_t), void (*TileR1)(const MatmulArgs&, int64_t, int64_t),
          void (*Tile1T)(const MatmulArgs&, int64_t, int64_t), void (*Tile11)(const MatmulArgs&, int64_t, int64_t),
          void (*TileDec)(const MatmulArgs&, int64_t, int64_t), int R, int T, int RDec>
void computeTiles(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    int64_t t = t0;
    for (; t + T <= t1; t += T) {
        int64_t r = r0;
        for (; r + R <= r1; r += R) Tile(a, r, t);
        for (; r < r1; ++r) Tile1T(a, r, t);
    }
    for (; t < t1; ++t) {
        int64_t r = r0;
        for (; r + RDec <= r1; r += RDec) TileDec(a, r, t);
        for (; r + R <= r1; r += R) TileR1(a, r, t);
        for (; r < r1; ++r) Tile11(a, r, t);
    }
}

constexpr int kR = 6, kT = 4, kRDec = 8;

// ---- Panels: F16 / BF16 weights repacked at load (packPanelsHalf, cpu::packWeights) ----
// 16 rows side by side, element by element: element k of the 16 rows (row i in lane i) at byte
// 32k of the panel, which takes the 16 rows' bytes (rows 16p.. at 16p * rowBytes; rows after the
// last full panel as they are). Decode reads one stream per panel and needs no horizontal sums.
// Numerics of these rows (the row-major tiles sum 16 lanes per row, then reduce), the same for
// every pass: four float chains by k % 4, y = (c0 + c1) + (c2 + c3).
void packPanelsHalf(const uint8_t* W, size_t rowBytes, int64_t nRows, int64_t K, uint8_t* out) {
    const int64_t nPanels = nRows / 16;
    for (int64_t pn = 0; pn < nPanels; ++pn) {
        const uint8_t* src = W + 16 * pn * rowBytes;
        uint8_t* dst = out + 16 * pn * rowBytes;
        for (int64_t k0 = 0; k0 < K; k0 += 16) {  // 16 x 16 blocks through a small buffer
            const int64_t n = K - k0 < 16 ? K - k0 : 16;
            uint16_t blk[16][16];
            for (int i = 0; i < 16; ++i) std::memcpy(blk[i], src + i * rowBytes + 2 * k0, static_cast<size_t>(2 * n));
            for (int64_t k = 0; k < n; ++k) {
                uint16_t col[16];
                for (int i = 0; i < 16; ++i) col[i] = blk[i][k];
                std::memcpy(dst + 32 * (k0 + k), col, 32);
            }
        }
    }
}

template <class Wt>
static inline __m512 panelLoad(const uint8_t* panel, int64_t k) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + 32 * k));
    if constexpr (std::is_same_v<Wt, WF16>) return _mm512_cvtph_ps(h);
    else return WBF16::widen(h);
}

// The 16 rows of a panel x T tokens.
template <class Wt, int T>
void panelTileHalf(const MatmulArgs& a, const uint8_t* panel, int64_t r, int64_t t) {
    const float* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const float*>(a.act + (t + j) * a.actStride);
    __m512 acc[4][T];
    for (int c = 0; c < 4; ++c)
        for (int j = 0; j < T; ++j) acc[c][j] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 4 <= a.K; k += 4)
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const __m512 w = panelLoad<Wt>(panel, k + c);
            for (int j = 0; j < T; ++j) acc[c][j] = _mm512_fmadd_ps(w, _mm512_set1_ps(x[j][k + c]), acc[c][j]);
        }
    for (int c = 0; k + c < a.K; ++c) {
        const __m512 w = panelLoad<Wt>(panel, k + c);
        for (int j = 0; j < T; ++j) acc[c][j] = _mm512_fmadd_ps(w, _mm512_set1_ps(x[j][k + c]), acc[c][j]);
    }
    for (int j = 0; j < T; ++j)
        _mm512_storeu_ps(a.Y + (t + j) * a.ldy + r,
                         _mm512_add_ps(_mm512_add_ps(acc[0][j], acc[1][j]), _mm512_add_ps(acc[2][j], acc[3][j])));
}

template <class Wt>
void computeFma(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    if constexpr (!std::is_same_v<Wt, WF32>) {  // packed at load: panels up to packedRows, then row-major
        r0 = forEachPanel(
            a, r0, r1, t0, t1, 32, [&](const uint8_t* p, int64_t r, int64_t u) { panelTileHalf<Wt, 4>(a, p, r, u); },
            [&](const uint8_t* p, int64_t r, int64_t u) { panelTileHalf<Wt, 1>(a, p, r, u); });
        if (r0 == r1) return;
    }
    computeTiles<tileFma<Wt, kR, kT>, tileFma<Wt, kR, 1>, tileFma<Wt, 1, kT>, tileFma<Wt, 1, 1>, tileFma<Wt, kRDec, 1>,
                 kR, kT, kRDec>(a, r0, r1, t0, t1);
}

size_t bytesF32(int64_t K) { return roundUp64(static_cast<size_t>(K) * 4); }
size_t bytesBf16(int64_t K) { return roundUp64(static_cast<size_t>(K) * 2); }

void prepF32(const float* x, int64_t K, void* out) { std::memcpy(out, x, static_cast<size_t>(K) * 4); }

void prepF16(const float* x, int64_t K, void* out) {
    auto* o = static_cast<float*>(out);
    int64_t k = 0;
    for (; k + 16 <= K; k += 16)
        _mm512_storeu_ps(o + k, _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_loadu_ps(x + k), _MM_FROUND_TO_NEAREST_INT)));
    for (; k < K; ++k) o[k] = tensor::fp16ToFp32(tensor::fp32ToFp16(x[k]));
}

// ggml's f32 -> bf16 rounding (tensor::fp32ToBf16), 16 lanes at a time: round to nearest even on
// the top 16 bits, NaN made quiet. (VCVTNEPS2BF16 is not used: it flushes subnormals.)
static inline __m512i toBf16Bits(__m512 v) {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                  _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(64)));
}

void prepBf16AsF32(const float* x, int64_t K, void* out) {
    auto* o = static_cast<float*>(out);
    int64_t k = 0;
    for (; k + 16 <= K; k += 16)
        _mm512_storeu_si512(o + k, _mm512_slli_epi32(toBf16Bits(_mm512_loadu_ps(x + k)), 16));
    for (; k < K; ++k) o[k] = tensor::bf16ToFp32(tensor::fp32ToBf16(x[k]));
}

void prepBf16(const float* x, int64_t K, void* out) {
    auto* o = static_cast<uint16_t*>(out);
    int64_t k = 0;
    for (; k + 16 <= K; k += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + k), _mm512_cvtepi32_epi16(toBf16Bits(_mm512_loadu_ps(x + k))));
    for (; k < K; ++k) o[k] = tensor::fp32ToBf16(x[k]);
}

// vdpbf16ps tile (AVX512_BF16): activations stored as bf16, 32 elements per step.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")

template <int R, int T>
void tileBf16Dot(const MatmulArgs& a, int64_t r, int64_t t) {
    const uint16_t* w[R];
    for (int i = 0; i < R; ++i) w[i] = reinterpret_cast<const uint16_t*>(a.W + (r + i) * a.rowBytes);
    const uint16_t* x[T];
    for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const uint16_t*>(a.act + (t + j) * a.actStride);
    __m512 acc[R][T];
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < T; ++j) acc[i][j] = _mm512_setzero_ps();
    for (int64_t k = 0; k < a.K; k += 32) {
        // The last step loads only the K - k elements that remain (masked: no read past the row).
        const __mmask32 m = a.K - k >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1ull << (a.K - k)) - 1);
        if constexpr (T == 1)
            for (int i = 0; i < R; ++i)
                _mm_prefetch(reinterpret_cast<const char*>(w[i] + R * a.rowBytes / 2 + k), _MM_HINT_T0);
        __m512i wv[R];
        for (int i = 0; i < R; ++i) wv[i] = _mm512_maskz_loadu_epi16(m, w[i] + k);
        for (int j = 0; j < T; ++j) {
            const __m512i xv = _mm512_maskz_loadu_epi16(m, x[j] + k);
            for (int i = 0; i < R; ++i)
                acc[i][j] = _mm512_dpbf16_ps(acc[i][j], (__m512bh)wv[i], (__m512bh)xv);
        }
    }
    for (int j = 0; j < T; ++j)
        for (int i = 0; i < R; ++i) a.Y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]);
}

// ---- vdpbf16ps panels: BF16 weights repacked at load (packPanelsBf16Pairs, cpu::packWeights) ----
// 16 rows side by side, a pair of elements at a time: elements 2m, 2m + 1 of row i in dword lane i
// of the 64-byte vector at byte 64m, the operand vdpbf16ps takes against the token's pair of bf16
// activations broadcast from memory (32 products per instruction, no widening). An odd K's last
// element of the 16 rows takes the last 32 bytes. Numerics of these rows, the same for every pass:
// chains by m % kBf16Chains (vdpbf16ps adds its lane's two products into the chain), then summed.
constexpr int kBf16Chains = 2;

void packPanelsBf16Pairs(const uint8_t* W, size_t rowBytes, int64_t nRows, int64_t K, uint8_t* out) {
    const int64_t nPanels = nRows / 16;
    for (int64_t pn = 0; pn < nPanels; ++pn) {
        const uint8_t* src = W + 16 * pn * rowBytes;
        uint8_t* dst = out + 16 * pn * rowBytes;
        for (int64_t k0 = 0; k0 < K; k0 += 32) {  // 16 rows x 32 elements through a small buffer
            const int64_t n = K - k0 < 32 ? K - k0 : 32;
            uint32_t blk[16][16];
            for (int i = 0; i < 16; ++i) std::memcpy(blk[i], src + i * rowBytes + 2 * k0, static_cast<size_t>(2 * n));
            for (int64_t m = 0; m < n / 2; ++m) {
                uint32_t col[16];
                for (int i = 0; i < 16; ++i) col[i] = blk[i][m];
                std::memcpy(dst + 2 * 16 * (k0 + 2 * m), col, 64);
            }
            if (n % 2) {  // K odd: the last element of the 16 rows
                uint16_t col[16];
                for (int i = 0; i < 16; ++i) std::memcpy(&col[i], reinterpret_cast<const uint8_t*>(blk[i]) + 2 * (n - 1), 2);
                std::memcpy(dst + 2 * 16 * (K - 1), col, 32);
            }
        }
    }
}

// The 16 rows of a vdpbf16ps panel x T tokens.
template <int T>
void panelTileBf16Dot(const MatmulArgs& a, const uint8_t* panel, int64_t r, int64_t t) {
    const uint8_t* x[T];
    for (int j = 0; j < T; ++j) x[j] = a.act + (t + j) * a.actStride;
    __m512 acc[kBf16Chains][T];
    for (int c = 0; c < kBf16Chains; ++c)
        for (int j = 0; j < T; ++j) acc[c][j] = _mm512_setzero_ps();
    const int64_t nPairs = a.K / 2;
    int64_t m = 0;
    auto step = [&](int c, __m512i w, int64_t pair) {
        for (int j = 0; j < T; ++j) {
            uint32_t xp;
            std::memcpy(&xp, x[j] + 4 * pair, 4);
            acc[c][j] = _mm512_dpbf16_ps(acc[c][j], (__m512bh)w, (__m512bh)_mm512_set1_epi32(static_cast<int>(xp)));
        }
    };
    for (; m + kBf16Chains <= nPairs; m += kBf16Chains)
#pragma GCC unroll 4
        for (int c = 0; c < kBf16Chains; ++c) step(c, _mm512_loadu_si512(panel + 64 * (m + c)), m + c);
    int c = 0;
    for (; m + c < nPairs; ++c) step(c, _mm512_loadu_si512(panel + 64 * (m + c)), m + c);
    if (a.K % 2) {  // the last element against (x, 0): a pair whose second weight is zero
        const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + 64 * nPairs)));
        for (int j = 0; j < T; ++j) {
            uint16_t xl;
            std::memcpy(&xl, x[j] + 2 * (a.K - 1), 2);
            acc[c % kBf16Chains][j] = _mm512_dpbf16_ps(acc[c % kBf16Chains][j], (__m512bh)w, (__m512bh)_mm512_set1_epi32(xl));
        }
    }
    for (int j = 0; j < T; ++j) {
        __m512 y = acc[0][j];
        for (int c2 = 1; c2 < kBf16Chains; ++c2) y = _mm512_add_ps(y, acc[c2][j]);
        _mm512_storeu_ps(a.Y + (t + j) * a.ldy + r, y);
    }
}

void computeBf16Dot(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    // Packed at load: panels up to packedRows, then row-major.
    r0 = forEachPanel(
        a, r0, r1, t0, t1, 64, [&](const uint8_t* p, int64_t r, int64_t u) { panelTileBf16Dot<4>(a, p, r, u); },
        [&](const uint8_t* p, int64_t r, int64_t u) { panelTileBf16Dot<1>(a, p, r, u); });
    int64_t t = t0;
    for (; t + kT <= t1; t += kT) {
        int64_t r = r0;
        for (; r + kR <= r1; r += kR) tileBf16Dot<kR, kT>(a, r, t);
        for (; r < r1; ++r) tileBf16Dot<1, kT>(a, r, t);
    }
    for (; t < t1; ++t) {
        int64_t r = r0;
        for (; r + kRDec <= r1; r += kRDec) tileBf16Dot<kRDec, 1>(a, r, t);
        for (; r < r1; ++r) tileBf16Dot<1, 1>(a, r, t);
    }
}

#pragma GCC pop_options

}  // namespace

const MatmulKernel* floatKernel(tensor::TensorType t, bool useBf16Dot) {
    using tensor::TensorType;
    static constexpr MatmulKernel kF32{TensorType::F32, SimdLevel::Avx512, bytesF32, prepF32, computeFma<WF32>};
    static constexpr MatmulKernel kF16{TensorType::F16, SimdLevel::Avx512, bytesF32, prepF16, computeFma<WF16>, packPanelsHalf, true};
    static constexpr MatmulKernel kBF16Fma{TensorType::BF16, SimdLevel::Avx512, bytesF32, prepBf16AsF32, computeFma<WBF16>,
                                           packPanelsHalf, true};
    static constexpr MatmulKernel kBF16Dot{TensorType::BF16, SimdLevel::Avx512, bytesBf16, prepBf16, computeBf16Dot,
                                           packPanelsBf16Pairs, true, "bf16dot"};
    switch (t) {
        case TensorType::F32: return &kF32;
        case TensorType::F16: return &kF16;
        case TensorType::BF16: return useBf16Dot ? &kBF16Dot : &kBF16Fma;
        default: return nullptr;
    }
}

}  // namespace verdict::cpu::avx512

#pragma GCC pop_options
