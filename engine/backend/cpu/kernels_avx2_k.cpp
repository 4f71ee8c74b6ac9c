// AVX2 kernels for the K-quants Q2_K .. Q6_K and IQ4_XS x Q8_K activations.
//
// A row's super-block unpacks into 8 ymm of unsigned quants (in the activation order of
// act_layout.h, 32 per ymm) and 8 ymm of 16-bit scales (one per pair of quants). vpmaddubsw
// then vpmaddwd by the scales gives 32-bit lane sums; offsets (Q3_K, Q6_K) and mins (Q2_K, Q4_K,
// Q5_K) go through the activation's 16-element sums as in the AVX-512 kernels.
#include "backend/cpu/act_layout.h"
#include "backend/cpu/kernels_x86.h"
#include "tensor/block_formats.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2")

#include "backend/cpu/simd_x86.h"

namespace verdict::cpu::avx2 {
namespace {

using namespace verdict::cpu::simd;

struct Unpacked {
    __m256i q[8];
    __m256i sc[8];
    __m256i extra;  // 16 words x bsums: -offset * sc (Q3_K, Q6_K) or the mins (Q2_K, Q4_K, Q5_K)
    float d, dmin;
};

static inline float half(const uint8_t* p) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(loadU16(p)))); }

static inline __m256i scalePair(int a, int b) {  // words 0-7 = a, 8-15 = b
    return _mm256_set_m128i(_mm_set1_epi16(static_cast<short>(b)), _mm_set1_epi16(static_cast<short>(a)));
}

static inline __m256i loadY(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

static inline void scalesK4(const uint8_t* s, uint8_t sc[8], uint8_t m[8], Unpacked& u) {
    for (int j = 0; j < 8; ++j) tensor::scaleMinK4(j, s, sc[j], m[j]);
    alignas(32) int16_t mw[16];
    for (int j = 0; j < 8; ++j) mw[2 * j] = mw[2 * j + 1] = m[j];
    u.extra = _mm256_load_si256(reinterpret_cast<const __m256i*>(mw));
}

struct DecQ4_K {
    static constexpr size_t kBlock = 144;
    static constexpr bool kMin = true;
    static constexpr KOrder kOrder = KOrder::P64;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        u.d = half(p);
        u.dmin = half(p + 2);
        uint8_t sc[8], m[8];
        scalesK4(p + 4, sc, m, u);
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        for (int z = 0; z < 4; ++z)
            for (int h = 0; h < 2; ++h) {
                const __m256i q = loadY(p + 16 + 32 * (2 * (z / 2) + h));
                u.q[2 * z + h] = (z % 2) ? _mm256_and_si256(_mm256_srli_epi16(q, 4), m4) : _mm256_and_si256(q, m4);
                u.sc[2 * z + h] = _mm256_set1_epi16(sc[4 * (z / 2) + z % 2 + 2 * h]);
            }
    }
};

struct DecQ5_K {
    static constexpr size_t kBlock = 176;
    static constexpr bool kMin = true;
    static constexpr KOrder kOrder = KOrder::P64;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        u.d = half(p);
        u.dmin = half(p + 2);
        uint8_t sc[8], m[8];
        scalesK4(p + 4, sc, m, u);
        const __m256i m4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
        const __m256i qh = loadY(p + 16);
        for (int z = 0; z < 4; ++z)
            for (int h = 0; h < 2; ++h) {
                const int c = 2 * (z / 2) + h;
                const __m256i q = loadY(p + 48 + 32 * c);
                const __m256i lowBits = (z % 2) ? _mm256_and_si256(_mm256_srli_epi16(q, 4), m4) : _mm256_and_si256(q, m4);
                const __m256i hb = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * c + z % 2)), one);
                u.q[2 * z + h] = _mm256_or_si256(lowBits, _mm256_slli_epi16(hb, 4));
                u.sc[2 * z + h] = _mm256_set1_epi16(sc[4 * (z / 2) + z % 2 + 2 * h]);
            }
    }
};

struct DecQ6_K {
    static constexpr size_t kBlock = 210;
    static constexpr bool kMin = false;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        u.d = half(p + 208);
        u.dmin = 0;
        const int8_t* sc = reinterpret_cast<const int8_t*>(p + 192);
        const __m256i m4 = _mm256_set1_epi8(0x0F), three = _mm256_set1_epi8(3);
        for (int z = 0; z < 4; ++z)
            for (int h = 0; h < 2; ++h) {
                const int hh = z / 2, nib = z % 2;
                const __m256i ql = loadY(p + 64 * hh + 32 * h);
                const __m256i qh = loadY(p + 128 + 32 * hh);
                const __m256i lowBits = nib ? _mm256_and_si256(_mm256_srli_epi16(ql, 4), m4) : _mm256_and_si256(ql, m4);
                const __m256i hb = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * (2 * nib + h))), three);
                u.q[2 * z + h] = _mm256_or_si256(lowBits, _mm256_slli_epi16(hb, 4));
                const int sb = 4 * z + 2 * h;
                u.sc[2 * z + h] = scalePair(sc[sb], sc[sb + 1]);
            }
        const __m256i scw = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc)));
        u.extra = _mm256_slli_epi16(_mm256_sub_epi16(_mm256_setzero_si256(), scw), 5);  // -32 * sc
    }
};

struct DecQ3_K {
    static constexpr size_t kBlock = 110;
    static constexpr bool kMin = false;
    static constexpr KOrder kOrder = KOrder::P32x;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        u.d = half(p + 108);
        u.dmin = 0;
        int8_t sc[16];
        tensor::unpackQ3KScales(p + 96, sc);
        const __m256i three = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
        const __m256i hm = loadY(p);
        for (int s = 0; s < 4; ++s)
            for (int h = 0; h < 2; ++h) {
                const __m256i q = loadY(p + 32 + 32 * h);
                const __m256i lowBits = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * s)), three);
                const __m256i hb = _mm256_and_si256(_mm256_srl_epi16(hm, _mm_cvtsi32_si128(s + 4 * h)), one);
                u.q[2 * s + h] = _mm256_or_si256(lowBits, _mm256_slli_epi16(hb, 2));
                const int sb = 8 * h + 2 * s;
                u.sc[2 * s + h] = scalePair(sc[sb], sc[sb + 1]);
            }
        const __m256i scw = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc)));
        u.extra = _mm256_slli_epi16(_mm256_sub_epi16(_mm256_setzero_si256(), scw), 2);  // -4 * sc
    }
};

struct DecQ2_K {
    static constexpr size_t kBlock = 84;
    static constexpr bool kMin = true;
    static constexpr KOrder kOrder = KOrder::P32x;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        u.d = half(p + 80);
        u.dmin = half(p + 82);
        const uint8_t* scales = p;
        const __m256i three = _mm256_set1_epi8(3);
        for (int s = 0; s < 4; ++s)
            for (int h = 0; h < 2; ++h) {
                const __m256i q = loadY(p + 16 + 32 * h);
                u.q[2 * s + h] = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2 * s)), three);
                const int sb = 8 * h + 2 * s;
                u.sc[2 * s + h] = scalePair(scales[sb] & 0xF, scales[sb + 1] & 0xF);
            }
        const __m128i sv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales));
        u.extra = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sv, 4), _mm_set1_epi8(0x0F)));
    }
};

// IQ4_XS: signed levels (kIQ4NLValues via vpshufb) in natural order, one 6-bit scale (ls - 32)
// per 32; no mins or offsets. Signed quants take Q8_0's sign trick in accumulate (|q| x sign(a, q)).
struct DecIQ4_XS {
    static constexpr size_t kBlock = 136;
    static constexpr bool kMin = false, kSigned = true;
    static constexpr KOrder kOrder = KOrder::Natural;
    static inline void decode(const uint8_t* p, Unpacked& u) {
        const auto& b = *reinterpret_cast<const tensor::BlockIQ4_XS*>(p);
        u.d = half(p);
        u.dmin = 0;
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tensor::kIQ4NLValues)));
        const __m128i m4 = _mm_set1_epi8(0x0F);
        for (int i = 0; i < 8; ++i) {
            const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8 + 16 * i));
            const __m256i nib = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m4), _mm_and_si128(q, m4));
            u.q[i] = _mm256_shuffle_epi8(table, nib);
            u.sc[i] = _mm256_set1_epi16(static_cast<short>(tensor::iq4xsScale(b, i) - 32));
        }
        u.extra = _mm256_setzero_si256();
    }
};

template <class Dec>
constexpr bool signedQuants() {
    if constexpr (requires { Dec::kSigned; }) return Dec::kSigned;
    return false;
}

template <class Dec>
static inline void accumulate(const Unpacked& u, const ActSuper& A, __m256& acc) {
    __m256i isum = _mm256_setzero_si256();
    for (int k = 0; k < 8; ++k) {
        const __m256i a = _mm256_load_si256(reinterpret_cast<const __m256i*>(A.qs + 32 * k));
        if constexpr (signedQuants<Dec>())
            isum = _mm256_add_epi32(
                isum, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(u.q[k], u.q[k]), _mm256_sign_epi8(a, u.q[k])), u.sc[k]));
        else
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(_mm256_maddubs_epi16(u.q[k], a), u.sc[k]));
    }
    const __m256i bs = _mm256_load_si256(reinterpret_cast<const __m256i*>(A.bsums));
    const __m256i ex = _mm256_madd_epi16(u.extra, bs);
    if constexpr (Dec::kMin) {
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(u.d * A.d), acc);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ex), _mm256_set1_ps(-u.dmin * A.d), acc);
    } else {
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(isum, ex)), _mm256_set1_ps(u.d * A.d), acc);
    }
}

template <class Dec, int R, int T>
void tile(const MatmulArgs& a, int64_t r, int64_t t) {
    const int64_t nSuper = a.K / 256;
    __m256 acc[R][T];
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < T; ++j) acc[i][j] = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < nSuper; ++sb) {
        for (int i = 0; i < R; ++i) {
            const uint8_t* wp = a.W + (r + i) * a.rowBytes + sb * Dec::kBlock;
            if constexpr (T == 1) prefetchSpan(wp + R * a.rowBytes, Dec::kBlock);
            Unpacked u;
            Dec::decode(wp, u);
            for (int j = 0; j < T; ++j)
                accumulate<Dec>(u, reinterpret_cast<const ActSuper*>(a.act + (t + j) * a.actStride)[sb], acc[i][j]);
        }
    }
    for (int j = 0; j < T; ++j)
        for (int i = 0; i < R; ++i) a.Y[(t + j) * a.ldy + r + i] = hsum256(acc[i][j]);
}

template <class Dec>
void compute(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    constexpr int kR = 2, kT = 4, kRDecode = 4;
    int64_t t = t0;
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

}  // namespace

const MatmulKernel* kquantKernel(tensor::TensorType t) {
    using tensor::TensorType;
    static constexpr MatmulKernel kKernels[] = {
        {TensorType::Q2_K, SimdLevel::Avx2, superActBytes, packSuperAct<DecQ2_K::kOrder>, compute<DecQ2_K>},
        {TensorType::Q3_K, SimdLevel::Avx2, superActBytes, packSuperAct<DecQ3_K::kOrder>, compute<DecQ3_K>},
        {TensorType::Q4_K, SimdLevel::Avx2, superActBytes, packSuperAct<DecQ4_K::kOrder>, compute<DecQ4_K>},
        {TensorType::Q5_K, SimdLevel::Avx2, superActBytes, packSuperAct<DecQ5_K::kOrder>, compute<DecQ5_K>},
        {TensorType::Q6_K, SimdLevel::Avx2, superActBytes, packSuperAct<DecQ6_K::kOrder>, compute<DecQ6_K>},
        {TensorType::IQ4_XS, SimdLevel::Avx2, superActBytes, packSuperAct<DecIQ4_XS::kOrder>, compute<DecIQ4_XS>},
    };
    for (const auto& k : kKernels)
        if (k.type == t) return &k;
    return nullptr;
}

}  // namespace verdict::cpu::avx2

#pragma GCC pop_options
