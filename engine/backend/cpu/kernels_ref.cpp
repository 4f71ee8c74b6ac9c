// Scalar reference kernels: one plain dot product per (weight row, token), written for clarity.
// Every SIMD kernel is tested against these (same prepared activation values, so the only
// differences are float summation order).
//
// Activations: Q8_0 blocks for Q4_0 / Q5_0 / Q8_0 / IQ4_NL / MXFP4 weights, Q8_1 for Q4_1 / Q5_1,
// Q8_K for the K-quants, IQ4_XS, the lattice i-quants (IQ2_*, IQ3_*, IQ1_*) and TQ1_0 / TQ2_0
// (llama.cpp's vec_dot_type pairing); F16 / BF16 weights see activations rounded to f16 /
// bf16 (llama.cpp converts them the same way), F32 weights the activations as they are.
#include "backend/cpu/act_quant.h"
#include "backend/cpu/matmul_kernel.h"
#include "tensor/block_formats.h"
#include "tensor/half.h"
#include "tensor/iq_decode.h"

#include <cstring>

namespace verdict::cpu {
namespace {

using namespace verdict::tensor;

// ---- 32-element formats --------------------------------------------------------------------

inline uint32_t loadQh(const uint8_t* qh) {
    uint32_t v;
    std::memcpy(&v, qh, 4);
    return v;
}

float dotQ4_0(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockQ4_0*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 32; ++b) {
        int s = 0;
        for (int j = 0; j < 16; ++j) {
            s += ((x[b].qs[j] & 0xF) - 8) * y[b].qs[j];
            s += ((x[b].qs[j] >> 4) - 8) * y[b].qs[j + 16];
        }
        sum += static_cast<float>(s) * fp16ToFp32(x[b].d) * fp16ToFp32(y[b].d);
    }
    return sum;
}

float dotQ4_1(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockQ4_1*>(w);
    const auto* y = static_cast<const BlockQ8_1*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 32; ++b) {
        int s = 0;
        for (int j = 0; j < 16; ++j) {
            s += (x[b].qs[j] & 0xF) * y[b].qs[j];
            s += (x[b].qs[j] >> 4) * y[b].qs[j + 16];
        }
        sum += static_cast<float>(s) * fp16ToFp32(x[b].d) * fp16ToFp32(y[b].d) +
               fp16ToFp32(x[b].m) * fp16ToFp32(y[b].s);
    }
    return sum;
}

float dotQ5_0(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockQ5_0*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 32; ++b) {
        const uint32_t qh = loadQh(x[b].qh);
        int s = 0;
        for (int j = 0; j < 16; ++j) {
            const int q0 = (x[b].qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4);
            const int q1 = (x[b].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4);
            s += (q0 - 16) * y[b].qs[j] + (q1 - 16) * y[b].qs[j + 16];
        }
        sum += static_cast<float>(s) * fp16ToFp32(x[b].d) * fp16ToFp32(y[b].d);
    }
    return sum;
}

float dotQ5_1(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockQ5_1*>(w);
    const auto* y = static_cast<const BlockQ8_1*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 32; ++b) {
        const uint32_t qh = loadQh(x[b].qh);
        int s = 0;
        for (int j = 0; j < 16; ++j) {
            const int q0 = (x[b].qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4);
            const int q1 = (x[b].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4);
            s += q0 * y[b].qs[j] + q1 * y[b].qs[j + 16];
        }
        sum += static_cast<float>(s) * fp16ToFp32(x[b].d) * fp16ToFp32(y[b].d) +
               fp16ToFp32(x[b].m) * fp16ToFp32(y[b].s);
    }
    return sum;
}

float dotQ8_0(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockQ8_0*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 32; ++b) {
        int s = 0;
        for (int j = 0; j < 32; ++j) s += x[b].qs[j] * y[b].qs[j];
        sum += static_cast<float>(s) * fp16ToFp32(x[b].d) * fp16ToFp32(y[b].d);
    }
    return sum;
}

// Non-linear 4-bit formats against Q8_0 activations (llama.cpp pairs IQ4_NL and MXFP4 with Q8_0):
// an integer dot of the levels per block, times both scales.
int nibbleLevelDot(const int8_t* levels, const uint8_t* qs, const int8_t* a) {
    int s = 0;
    for (int j = 0; j < 16; ++j) s += levels[qs[j] & 0xF] * a[j] + levels[qs[j] >> 4] * a[j + 16];
    return s;
}

float dotIQ4_NL(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockIQ4_NL*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 32; ++b)
        sum += static_cast<float>(nibbleLevelDot(kIQ4NLValues, x[b].qs, y[b].qs)) * fp16ToFp32(x[b].d) * fp16ToFp32(y[b].d);
    return sum;
}

float dotMXFP4(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockMXFP4*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 32; ++b)
        sum += static_cast<float>(nibbleLevelDot(kMXFP4Values, x[b].qs, y[b].qs)) * mxfp4HalfScale(x[b].e) * fp16ToFp32(y[b].d);
    return sum;
}

// ---- K-quants (activations Q8_K) -----------------------------------------------------------

// IQ4_XS against Q8_K (its llama.cpp pairing): per sub-block of 32 an integer dot, times its scale.
float dotIQ4_XS(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockIQ4_XS*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 256; ++b) {
        int isum = 0;
        for (int i = 0; i < 8; ++i) {
            isum += (iq4xsScale(x[b], i) - 32) * nibbleLevelDot(kIQ4NLValues, x[b].qs + 16 * i, y[b].qs + 32 * i);
        }
        sum += y[b].d * fp16ToFp32(x[b].d) * static_cast<float>(isum);
    }
    return sum;
}


float dotQ2_K(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockQ2_K*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 256; ++b) {
        int isum = 0, msum = 0;
        for (int e = 0; e < 256; ++e) {
            const int h = e / 128, s = (e % 128) / 32, l = e % 32;
            const int q = (x[b].qs[32 * h + l] >> (2 * s)) & 3;
            isum += (x[b].scales[e / 16] & 0xF) * q * y[b].qs[e];
        }
        for (int j = 0; j < 16; ++j) msum += (x[b].scales[j] >> 4) * y[b].bsums[j];
        sum += y[b].d * (fp16ToFp32(x[b].d) * static_cast<float>(isum) -
                         fp16ToFp32(x[b].dmin) * static_cast<float>(msum));
    }
    return sum;
}

float dotQ3_K(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockQ3_K*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 256; ++b) {
        int8_t sc[16];
        unpackQ3KScales(x[b].scales, sc);
        int isum = 0;
        for (int e = 0; e < 256; ++e) {
            const int h = e / 128, s = (e % 128) / 32, l = e % 32;
            const int low = (x[b].qs[32 * h + l] >> (2 * s)) & 3;
            const int high = (x[b].hmask[l] >> (e / 32)) & 1;
            isum += sc[e / 16] * (low + 4 * high - 4) * y[b].qs[e];
        }
        sum += y[b].d * fp16ToFp32(x[b].d) * static_cast<float>(isum);
    }
    return sum;
}

float dotQ4_K(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockQ4_K*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 256; ++b) {
        int isum = 0, msum = 0;
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            scaleMinK4(j, x[b].scales, sc, m);
            const uint8_t* q = x[b].qs + 32 * (j / 2);
            int s = 0;
            for (int l = 0; l < 32; ++l) {
                const int v = (j % 2 == 0) ? (q[l] & 0xF) : (q[l] >> 4);
                s += v * y[b].qs[32 * j + l];
            }
            isum += sc * s;
            msum += m * (y[b].bsums[2 * j] + y[b].bsums[2 * j + 1]);
        }
        sum += y[b].d * (fp16ToFp32(x[b].d) * static_cast<float>(isum) -
                         fp16ToFp32(x[b].dmin) * static_cast<float>(msum));
    }
    return sum;
}

float dotQ5_K(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockQ5_K*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 256; ++b) {
        int isum = 0, msum = 0;
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            scaleMinK4(j, x[b].scales, sc, m);
            const uint8_t* q = x[b].qs + 32 * (j / 2);
            int s = 0;
            for (int l = 0; l < 32; ++l) {
                int v = (j % 2 == 0) ? (q[l] & 0xF) : (q[l] >> 4);
                v |= ((x[b].qh[l] >> j) & 1) << 4;
                s += v * y[b].qs[32 * j + l];
            }
            isum += sc * s;
            msum += m * (y[b].bsums[2 * j] + y[b].bsums[2 * j + 1]);
        }
        sum += y[b].d * (fp16ToFp32(x[b].d) * static_cast<float>(isum) -
                         fp16ToFp32(x[b].dmin) * static_cast<float>(msum));
    }
    return sum;
}

float dotQ6_K(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockQ6_K*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    for (int64_t b = 0; b < K / 256; ++b) {
        int isum = 0;
        for (int e = 0; e < 256; ++e) {
            const int h = e / 128, part = (e % 128) / 32, l = e % 32;
            const uint8_t qlByte = x[b].ql[64 * h + 32 * (part % 2) + l];
            const int low = part < 2 ? (qlByte & 0xF) : (qlByte >> 4);
            const int high = (x[b].qh[32 * h + l] >> (2 * part)) & 3;
            isum += x[b].scales[e / 16] * ((low | (high << 4)) - 32) * y[b].qs[e];
        }
        sum += y[b].d * fp16ToFp32(x[b].d) * static_cast<float>(isum);
    }
    return sum;
}

// ---- lattice i-quants and ternary formats (activations Q8_K, their llama.cpp pairing) --------
// The blocks decode to small signed integers (tensor/iq_decode.h); per sub-block an integer dot,
// times its odd scale ls, summed per super-block, then the float scales, in the order of ggml's
// vec_dot_*_q8_K (the format's fixed factor 1/8 or 1/4 once at the end).

int intDot(const int8_t* v, const int8_t* a, int n) {
    int s = 0;
    for (int j = 0; j < n; ++j) s += v[j] * a[j];
    return s;
}

int intSum(const int8_t* a, int n) {
    int s = 0;
    for (int j = 0; j < n; ++j) s += a[j];
    return s;
}

float dotIQ2_XXS(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockIQ2_XXS*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    int8_t v[32];
    for (int64_t b = 0; b < K / 256; ++b) {
        int isum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            const int ls = decodeIQ2_XXS(x[b], ib, v);
            isum += ls * intDot(v, y[b].qs + 32 * ib, 32);
        }
        sum += fp16ToFp32(x[b].d) * y[b].d * static_cast<float>(isum);
    }
    return 0.125f * sum;
}

// IQ2_XS and IQ2_S: one ls per half of 16.
template <class Block, void (*Decode)(const Block&, int, int8_t*, int*)>
float dotIQ2Halves(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const Block*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    int8_t v[32];
    int ls[2];
    for (int64_t b = 0; b < K / 256; ++b) {
        int isum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            Decode(x[b], ib, v, ls);
            const int8_t* q = y[b].qs + 32 * ib;
            isum += ls[0] * intDot(v, q, 16) + ls[1] * intDot(v + 16, q + 16, 16);
        }
        sum += fp16ToFp32(x[b].d) * y[b].d * static_cast<float>(isum);
    }
    return 0.125f * sum;
}

template <class Block, int (*Decode)(const Block&, int, int8_t*)>
float dotIQ3(const void* w, const void* a, int64_t K, float unit) {
    const auto* x = static_cast<const Block*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    int8_t v[32];
    for (int64_t b = 0; b < K / 256; ++b) {
        int isum = 0;
        for (int ib = 0; ib < 8; ++ib) isum += Decode(x[b], ib, v) * intDot(v, y[b].qs + 32 * ib, 32);
        sum += fp16ToFp32(x[b].d) * y[b].d * static_cast<float>(isum);
    }
    return unit * sum;
}

float dotIQ3_XXS(const void* w, const void* a, int64_t K) {
    return dotIQ3<BlockIQ3_XXS, decodeIQ3_XXS>(w, a, K, 0.25f);
}
float dotIQ3_S(const void* w, const void* a, int64_t K) { return dotIQ3<BlockIQ3_S, decodeIQ3_S>(w, a, K, 1.0f); }

// IQ1_S: sum of ls * (v . a) plus delta * ls * (sum of a), the latter from Q8_K's bsums.
float dotIQ1_S(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockIQ1_S*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    int8_t v[32];
    for (int64_t b = 0; b < K / 256; ++b) {
        int isum = 0, dsum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            int deltaSign;
            const int ls = decodeIQ1_S(x[b], ib, v, deltaSign);
            isum += ls * intDot(v, y[b].qs + 32 * ib, 32);
            dsum += ls * deltaSign * (y[b].bsums[2 * ib] + y[b].bsums[2 * ib + 1]);
        }
        sum += fp16ToFp32(x[b].d) * y[b].d * (static_cast<float>(isum) + kIQ1Delta * static_cast<float>(dsum));
    }
    return sum;
}

// IQ1_M: as IQ1_S with one ls per half of 16 and a delta per group of 8.
float dotIQ1_M(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const BlockIQ1_M*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    int8_t v[32];
    int ls[2], deltaSign[4];
    for (int64_t b = 0; b < K / 256; ++b) {
        int isum = 0, dsum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            decodeIQ1_M(x[b], ib, v, ls, deltaSign);
            for (int l = 0; l < 4; ++l) {
                const int8_t* q = y[b].qs + 32 * ib + 8 * l;
                isum += ls[l / 2] * intDot(v + 8 * l, q, 8);
                dsum += ls[l / 2] * deltaSign[l] * intSum(q, 8);
            }
        }
        const float d = fp16ToFp32(iq1mScale(x[b]));
        sum += d * y[b].d * (static_cast<float>(isum) + kIQ1Delta * static_cast<float>(dsum));
    }
    return sum;
}

template <class Block, void (*Decode)(const Block&, int8_t*)>
float dotTernary(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const Block*>(w);
    const auto* y = static_cast<const BlockQ8_K*>(a);
    float sum = 0;
    int8_t t[256];
    for (int64_t b = 0; b < K / 256; ++b) {
        Decode(x[b], t);
        sum += static_cast<float>(intDot(t, y[b].qs, 256)) * (fp16ToFp32(x[b].d) * y[b].d);
    }
    return sum;
}

// ---- float formats (activations: f32 values, already rounded as the weight type needs) -------

float dotF32(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const float*>(w);
    const auto* y = static_cast<const float*>(a);
    double sum = 0;
    for (int64_t k = 0; k < K; ++k) sum += static_cast<double>(x[k]) * y[k];
    return static_cast<float>(sum);
}

float dotF16(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const uint16_t*>(w);
    const auto* y = static_cast<const float*>(a);
    double sum = 0;
    for (int64_t k = 0; k < K; ++k) sum += static_cast<double>(fp16ToFp32(x[k])) * y[k];
    return static_cast<float>(sum);
}

float dotBF16(const void* w, const void* a, int64_t K) {
    const auto* x = static_cast<const uint16_t*>(w);
    const auto* y = static_cast<const float*>(a);
    double sum = 0;
    for (int64_t k = 0; k < K; ++k) sum += static_cast<double>(bf16ToFp32(x[k])) * y[k];
    return static_cast<float>(sum);
}

// ---- activation preparation ------------------------------------------------------------------

size_t bytesF32(int64_t K) { return roundUp64(static_cast<size_t>(K) * 4); }
size_t bytesQ8_0(int64_t K) { return roundUp64(static_cast<size_t>(K / 32) * sizeof(BlockQ8_0)); }
size_t bytesQ8_1(int64_t K) { return roundUp64(static_cast<size_t>(K / 32) * sizeof(BlockQ8_1)); }
size_t bytesQ8_K(int64_t K) { return roundUp64(static_cast<size_t>(K / 256) * sizeof(BlockQ8_K)); }

void prepF32(const float* x, int64_t K, void* out) { std::memcpy(out, x, static_cast<size_t>(K) * 4); }
void prepF16(const float* x, int64_t K, void* out) {
    auto* o = static_cast<float*>(out);
    for (int64_t k = 0; k < K; ++k) o[k] = fp16ToFp32(fp32ToFp16(x[k]));
}
void prepBF16(const float* x, int64_t K, void* out) {
    auto* o = static_cast<float*>(out);
    for (int64_t k = 0; k < K; ++k) o[k] = bf16ToFp32(fp32ToBf16(x[k]));
}
void prepQ8_0(const float* x, int64_t K, void* out) { quantizeActQ8_0(x, K, static_cast<BlockQ8_0*>(out)); }
void prepQ8_1(const float* x, int64_t K, void* out) { quantizeActQ8_1(x, K, static_cast<BlockQ8_1*>(out)); }
void prepQ8_K(const float* x, int64_t K, void* out) { quantizeActQ8_K(x, K, static_cast<BlockQ8_K*>(out)); }

template <float (*Dot)(const void*, const void*, int64_t)>
void computeRef(const MatmulArgs& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
        for (int64_t r = r0; r < r1; ++r)
            a.Y[t * a.ldy + r] = Dot(a.W + r * a.rowBytes, a.act + t * a.actStride, a.K);
}

constexpr MatmulKernel kRef[] = {
    {TensorType::F32, SimdLevel::Scalar, bytesF32, prepF32, computeRef<dotF32>},
    {TensorType::F16, SimdLevel::Scalar, bytesF32, prepF16, computeRef<dotF16>},
    {TensorType::BF16, SimdLevel::Scalar, bytesF32, prepBF16, computeRef<dotBF16>},
    {TensorType::Q4_0, SimdLevel::Scalar, bytesQ8_0, prepQ8_0, computeRef<dotQ4_0>},
    {TensorType::Q4_1, SimdLevel::Scalar, bytesQ8_1, prepQ8_1, computeRef<dotQ4_1>},
    {TensorType::Q5_0, SimdLevel::Scalar, bytesQ8_0, prepQ8_0, computeRef<dotQ5_0>},
    {TensorType::Q5_1, SimdLevel::Scalar, bytesQ8_1, prepQ8_1, computeRef<dotQ5_1>},
    {TensorType::Q8_0, SimdLevel::Scalar, bytesQ8_0, prepQ8_0, computeRef<dotQ8_0>},
    {TensorType::Q2_K, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotQ2_K>},
    {TensorType::Q3_K, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotQ3_K>},
    {TensorType::Q4_K, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotQ4_K>},
    {TensorType::Q5_K, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotQ5_K>},
    {TensorType::Q6_K, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotQ6_K>},
    {TensorType::IQ4_NL, SimdLevel::Scalar, bytesQ8_0, prepQ8_0, computeRef<dotIQ4_NL>},
    {TensorType::IQ4_XS, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotIQ4_XS>},
    {TensorType::MXFP4, SimdLevel::Scalar, bytesQ8_0, prepQ8_0, computeRef<dotMXFP4>},
    {TensorType::IQ2_XXS, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotIQ2_XXS>},
    {TensorType::IQ2_XS, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotIQ2Halves<BlockIQ2_XS, decodeIQ2_XS>>},
    {TensorType::IQ2_S, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotIQ2Halves<BlockIQ2_S, decodeIQ2_S>>},
    {TensorType::IQ3_XXS, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotIQ3_XXS>},
    {TensorType::IQ3_S, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotIQ3_S>},
    {TensorType::IQ1_S, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotIQ1_S>},
    {TensorType::IQ1_M, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotIQ1_M>},
    {TensorType::TQ1_0, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotTernary<BlockTQ1_0, decodeTQ1_0>>},
    {TensorType::TQ2_0, SimdLevel::Scalar, bytesQ8_K, prepQ8_K, computeRef<dotTernary<BlockTQ2_0, decodeTQ2_0>>},
};

}  // namespace

const MatmulKernel* referenceKernel(TensorType t) {
    for (const auto& k : kRef)
        if (k.type == t) return &k;
    return nullptr;
}

}  // namespace verdict::cpu
