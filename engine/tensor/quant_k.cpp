// Reference quantizers / dequantizers of the K-quants (256-element super-blocks): Q2_K, Q3_K,
// Q4_K, Q5_K, Q6_K and the activation format Q8_K. Arithmetic follows ggml-quants.c
// (quantize_row_q*_K_ref, dequantize_row_q*_K) step by step so the bytes match llama-quantize.
#include "tensor/half.h"
#include "tensor/quant_internal.h"
#include "tensor/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace verdict::tensor::detail {
namespace {

// Packs 8 6-bit scales and mins into Q4_K / Q5_K's 12 bytes (inverse of scaleMinK4).
void packScaleMinK4(uint8_t* dst, const uint8_t ls[8], const uint8_t lm[8]) {
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            dst[j] = ls[j];
            dst[j + 4] = lm[j];
        } else {
            dst[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
            dst[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
            dst[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
        }
    }
}

// 2-bit packing shared by Q2_K and Q3_K: element 128h + 32s + l -> bits 2s of qs[32h + l].
void pack2Bit(const uint8_t* L, uint8_t* qs) {
    for (int j = 0; j < kQKK; j += 128)
        for (int l = 0; l < 32; ++l)
            qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) |
                                                 (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

// Q4_K / Q5_K share everything but the number of levels and the search parameters.
void quantizeScaleMinK(const float* x, uint16_t& dOut, uint16_t& dminOut, uint8_t* scalesOut,
                       uint8_t* L, int nmax, float rmin, float rdelta, int nstep) {
    uint8_t Laux[32];
    float weights[32];
    float mins[kQKK / 32];
    float scales[kQKK / 32];
    float maxScale = 0, maxMin = 0;
    for (int j = 0; j < kQKK / 32; ++j) {
        float sumX2 = 0;
        for (int l = 0; l < 32; ++l) sumX2 += x[32 * j + l] * x[32 * j + l];
        const float avX = std::sqrt(sumX2 / 32);
        for (int l = 0; l < 32; ++l) weights[l] = avX + std::fabs(x[32 * j + l]);
        scales[j] = makeQkx2Quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin,
                                   rdelta, nstep, false);
        if (scales[j] > maxScale) maxScale = scales[j];
        if (mins[j] > maxMin) maxMin = mins[j];
    }
    const float invScale = maxScale > 0 ? 63.f / maxScale : 0.f;
    const float invMin = maxMin > 0 ? 63.f / maxMin : 0.f;
    uint8_t ls[8], lm[8];
    for (int j = 0; j < kQKK / 32; ++j) {
        ls[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearestInt(invScale * scales[j])));
        lm[j] = std::min<uint8_t>(63, static_cast<uint8_t>(nearestInt(invMin * mins[j])));
    }
    packScaleMinK4(scalesOut, ls, lm);
    dOut = fp32ToFp16(maxScale / 63.f);
    dminOut = fp32ToFp16(maxMin / 63.f);
    // Re-quantize every element with the rounded (6-bit, f16) scales actually stored.
    for (int j = 0; j < kQKK / 32; ++j) {
        uint8_t sc, m;
        scaleMinK4(j, scalesOut, sc, m);
        const float d = fp16ToFp32(dOut) * static_cast<float>(sc);
        if (d == 0.0f) continue;
        const float dm = fp16ToFp32(dminOut) * static_cast<float>(m);
        for (int ii = 0; ii < 32; ++ii) {
            const int l = nearestInt((x[32 * j + ii] + dm) / d);
            L[32 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
        }
    }
}

}  // namespace

void quantizeQ2_K(const float* x, BlockQ2_K* y, int64_t k) {
    const int64_t nb = k / kQKK;
    uint8_t L[kQKK];
    uint8_t Laux[16];
    float weights[16];
    float mins[kQKK / 16];
    float scales[kQKK / 16];
    const float q4scale = 15.f;
    for (int64_t i = 0; i < nb; ++i, x += kQKK) {
        float maxScale = 0, maxMin = 0;
        for (int j = 0; j < kQKK / 16; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
            scales[j] = makeQkx2Quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f,
                                       0.1f, 15, true);
            if (scales[j] > maxScale) maxScale = scales[j];
            if (mins[j] > maxMin) maxMin = mins[j];
        }
        if (maxScale > 0) {
            const float iscale = q4scale / maxScale;
            for (int j = 0; j < kQKK / 16; ++j)
                y[i].scales[j] = static_cast<uint8_t>(nearestInt(iscale * scales[j]));
            y[i].d = fp32ToFp16(maxScale / q4scale);
        } else {
            for (int j = 0; j < kQKK / 16; ++j) y[i].scales[j] = 0;
            y[i].d = fp32ToFp16(0.f);
        }
        if (maxMin > 0) {
            const float iscale = q4scale / maxMin;
            for (int j = 0; j < kQKK / 16; ++j)
                y[i].scales[j] |= static_cast<uint8_t>(nearestInt(iscale * mins[j]) << 4);
            y[i].dmin = fp32ToFp16(maxMin / q4scale);
        } else {
            y[i].dmin = fp32ToFp16(0.f);
        }
        for (int j = 0; j < kQKK / 16; ++j) {
            const float d = fp16ToFp32(y[i].d) * static_cast<float>(y[i].scales[j] & 0xF);
            if (d == 0.0f) continue;
            const float dm = fp16ToFp32(y[i].dmin) * static_cast<float>(y[i].scales[j] >> 4);
            for (int ii = 0; ii < 16; ++ii) {
                const int l = nearestInt((x[16 * j + ii] + dm) / d);
                L[16 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(3, l)));
            }
        }
        pack2Bit(L, y[i].qs);
    }
}

void quantizeQ3_K(const float* x, BlockQ3_K* y, int64_t k) {
    const int64_t nb = k / kQKK;
    int8_t L[kQKK];
    float scales[kQKK / 16];
    for (int64_t i = 0; i < nb; ++i, x += kQKK) {
        float maxScale = 0, amax = 0;
        for (int j = 0; j < kQKK / 16; ++j) {
            scales[j] = makeQ3Quants(16, 4, x + 16 * j, L + 16 * j, true);
            const float scale = std::fabs(scales[j]);
            if (scale > amax) {
                amax = scale;
                maxScale = scales[j];
            }
        }
        std::memset(y[i].scales, 0, 12);
        if (maxScale != 0.0f) {
            const float iscale = -32.f / maxScale;
            for (int j = 0; j < kQKK / 16; ++j) {
                int8_t l = static_cast<int8_t>(nearestInt(iscale * scales[j]));
                l = static_cast<int8_t>(std::max<int>(-32, std::min<int>(31, l)) + 32);
                if (j < 8)
                    y[i].scales[j] = static_cast<uint8_t>(l & 0xF);
                else
                    y[i].scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
                l = static_cast<int8_t>(l >> 4);
                y[i].scales[j % 4 + 8] |= static_cast<uint8_t>(l << (2 * (j / 4)));
            }
            y[i].d = fp32ToFp16(1 / iscale);
        } else {
            y[i].d = fp32ToFp16(0.f);
        }
        int8_t sc[16];
        unpackQ3KScales(y[i].scales, sc);
        for (int j = 0; j < kQKK / 16; ++j) {
            const float d = fp16ToFp32(y[i].d) * static_cast<float>(sc[j]);
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ++ii) {
                int l = nearestInt(x[16 * j + ii] / d);
                l = std::max(-4, std::min(3, l));
                L[16 * j + ii] = static_cast<int8_t>(l + 4);
            }
        }
        // High bit of element j goes to hmask[j % 32] bit j / 32; the low 2 bits stay in L.
        std::memset(y[i].hmask, 0, kQKK / 8);
        int m = 0;
        uint8_t hm = 1;
        for (int j = 0; j < kQKK; ++j) {
            if (L[j] > 3) {
                y[i].hmask[m] |= hm;
                L[j] = static_cast<int8_t>(L[j] - 4);
            }
            if (++m == kQKK / 8) {
                m = 0;
                hm = static_cast<uint8_t>(hm << 1);
            }
        }
        pack2Bit(reinterpret_cast<const uint8_t*>(L), y[i].qs);
    }
}

void quantizeQ4_K(const float* x, BlockQ4_K* y, int64_t k) {
    const int64_t nb = k / kQKK;
    uint8_t L[kQKK];
    for (int64_t i = 0; i < nb; ++i, x += kQKK) {
        quantizeScaleMinK(x, y[i].d, y[i].dmin, y[i].scales, L, 15, -1.f, 0.1f, 20);
        uint8_t* q = y[i].qs;
        for (int j = 0; j < kQKK; j += 64, q += 32)
            for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
}

void quantizeQ5_K(const float* x, BlockQ5_K* y, int64_t k) {
    const int64_t nb = k / kQKK;
    uint8_t L[kQKK];
    for (int64_t i = 0; i < nb; ++i, x += kQKK) {
        quantizeScaleMinK(x, y[i].d, y[i].dmin, y[i].scales, L, 31, -0.5f, 0.1f, 15);
        uint8_t* qh = y[i].qh;
        uint8_t* ql = y[i].qs;
        std::memset(qh, 0, kQKK / 8);
        uint8_t m1 = 1, m2 = 2;
        for (int n = 0; n < kQKK; n += 64, ql += 32) {
            for (int j = 0; j < 32; ++j) {
                int l1 = L[n + j];
                if (l1 > 15) {
                    l1 -= 16;
                    qh[j] |= m1;
                }
                int l2 = L[n + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    qh[j] |= m2;
                }
                ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
            }
            m1 = static_cast<uint8_t>(m1 << 2);
            m2 = static_cast<uint8_t>(m2 << 2);
        }
    }
}

void quantizeQ6_K(const float* x, BlockQ6_K* y, int64_t k) {
    const int64_t nb = k / kQKK;
    int8_t L[kQKK];
    float scales[kQKK / 16];
    for (int64_t i = 0; i < nb; ++i, x += kQKK) {
        float maxScale = 0, maxAbsScale = 0;
        for (int ib = 0; ib < kQKK / 16; ++ib) {
            const float scale = makeQxQuants(16, 32, x + 16 * ib, L + 16 * ib, 1, nullptr);
            scales[ib] = scale;
            const float absScale = std::fabs(scale);
            if (absScale > maxAbsScale) {
                maxAbsScale = absScale;
                maxScale = scale;
            }
        }
        if (maxAbsScale < 1e-15f) {  // GROUP_MAX_EPS: an all-zero super-block
            std::memset(&y[i], 0, sizeof(BlockQ6_K));
            y[i].d = fp32ToFp16(0.f);
            continue;
        }
        const float iscale = -128.f / maxScale;
        y[i].d = fp32ToFp16(1 / iscale);
        for (int ib = 0; ib < kQKK / 16; ++ib)
            y[i].scales[ib] = static_cast<int8_t>(std::min(127, nearestInt(iscale * scales[ib])));
        for (int j = 0; j < kQKK / 16; ++j) {
            const float d = fp16ToFp32(y[i].d) * static_cast<float>(y[i].scales[j]);
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ++ii) {
                int l = nearestInt(x[16 * j + ii] / d);
                l = std::max(-32, std::min(31, l));
                L[16 * j + ii] = static_cast<int8_t>(l + 32);
            }
        }
        uint8_t* ql = y[i].ql;
        uint8_t* qh = y[i].qh;
        for (int j = 0; j < kQKK; j += 128, ql += 64, qh += 32) {
            for (int l = 0; l < 32; ++l) {
                const uint8_t q1 = L[j + l + 0] & 0xF;
                const uint8_t q2 = L[j + l + 32] & 0xF;
                const uint8_t q3 = L[j + l + 64] & 0xF;
                const uint8_t q4 = L[j + l + 96] & 0xF;
                ql[l + 0] = static_cast<uint8_t>(q1 | (q3 << 4));
                ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
                qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                             ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
            }
        }
    }
}

void quantizeQ8_K(const float* x, BlockQ8_K* y, int64_t k) {
    const int64_t nb = k / kQKK;
    for (int64_t i = 0; i < nb; ++i, x += kQKK) {
        float max = 0, amax = 0;
        for (int j = 0; j < kQKK; ++j) {
            const float ax = std::fabs(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
        }
        if (amax == 0.0f) {
            y[i].d = 0;
            std::memset(y[i].qs, 0, kQKK);
            std::memset(y[i].bsums, 0, sizeof y[i].bsums);  // ggml leaves these unset
            continue;
        }
        // -127 (not -128) as in ggml: keeps every quant in [-127, 127].
        const float iscale = -127.f / max;
        for (int j = 0; j < kQKK; ++j)
            y[i].qs[j] = static_cast<int8_t>(std::min(127, nearestInt(iscale * x[j])));
        for (int j = 0; j < kQKK / 16; ++j) {
            int sum = 0;
            for (int ii = 0; ii < 16; ++ii) sum += y[i].qs[j * 16 + ii];
            y[i].bsums[j] = static_cast<int16_t>(sum);
        }
        y[i].d = 1 / iscale;
    }
}

void dequantizeQ2_K(const BlockQ2_K* x, float* y, int64_t k) {
    const int64_t nb = k / kQKK;
    for (int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const float min = fp16ToFp32(x[i].dmin);
        const uint8_t* q = x[i].qs;
        int is = 0;
        for (int n = 0; n < kQKK; n += 128, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; ++half) {
                    const uint8_t sc = x[i].scales[is++];
                    const float dl = d * static_cast<float>(sc & 0xF);
                    const float ml = min * static_cast<float>(sc >> 4);
                    for (int l = 0; l < 16; ++l)
                        *y++ = dl * static_cast<float>((q[l + 16 * half] >> shift) & 3) - ml;
                }
            }
        }
    }
}

void dequantizeQ3_K(const BlockQ3_K* x, float* y, int64_t k) {
    const int64_t nb = k / kQKK;
    for (int64_t i = 0; i < nb; ++i) {
        const float dAll = fp16ToFp32(x[i].d);
        int8_t scales[16];
        unpackQ3KScales(x[i].scales, scales);
        const uint8_t* q = x[i].qs;
        const uint8_t* hm = x[i].hmask;
        uint8_t m = 1;
        int is = 0;
        for (int n = 0; n < kQKK; n += 128, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
                for (int half = 0; half < 2; ++half) {
                    const float dl = dAll * static_cast<float>(scales[is++]);
                    for (int l = 0; l < 16; ++l) {
                        const int idx = l + 16 * half;
                        const int v = ((q[idx] >> shift) & 3) - ((hm[idx] & m) ? 0 : 4);
                        *y++ = dl * static_cast<float>(v);
                    }
                }
            }
        }
    }
}

void dequantizeQ4_K(const BlockQ4_K* x, float* y, int64_t k) {
    const int64_t nb = k / kQKK;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* q = x[i].qs;
        const float d = fp16ToFp32(x[i].d);
        const float min = fp16ToFp32(x[i].dmin);
        for (int j = 0, is = 0; j < kQKK; j += 64, q += 32, is += 2) {
            uint8_t sc, m;
            scaleMinK4(is, x[i].scales, sc, m);
            const float d1 = d * static_cast<float>(sc), m1 = min * static_cast<float>(m);
            scaleMinK4(is + 1, x[i].scales, sc, m);
            const float d2 = d * static_cast<float>(sc), m2 = min * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
        }
    }
}

void dequantizeQ5_K(const BlockQ5_K* x, float* y, int64_t k) {
    const int64_t nb = k / kQKK;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t* ql = x[i].qs;
        const uint8_t* qh = x[i].qh;
        const float d = fp16ToFp32(x[i].d);
        const float min = fp16ToFp32(x[i].dmin);
        uint8_t u1 = 1, u2 = 2;
        for (int j = 0, is = 0; j < kQKK; j += 64, ql += 32, is += 2) {
            uint8_t sc, m;
            scaleMinK4(is, x[i].scales, sc, m);
            const float d1 = d * static_cast<float>(sc), m1 = min * static_cast<float>(m);
            scaleMinK4(is + 1, x[i].scales, sc, m);
            const float d2 = d * static_cast<float>(sc), m2 = min * static_cast<float>(m);
            for (int l = 0; l < 32; ++l)
                *y++ = d1 * static_cast<float>((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l)
                *y++ = d2 * static_cast<float>((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
            u1 = static_cast<uint8_t>(u1 << 2);
            u2 = static_cast<uint8_t>(u2 << 2);
        }
    }
}

void dequantizeQ6_K(const BlockQ6_K* x, float* y, int64_t k) {
    const int64_t nb = k / kQKK;
    for (int64_t i = 0; i < nb; ++i) {
        const float d = fp16ToFp32(x[i].d);
        const uint8_t* ql = x[i].ql;
        const uint8_t* qh = x[i].qh;
        const int8_t* sc = x[i].scales;
        for (int n = 0; n < kQKK; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l + 0] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
                y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
                y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
                y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
            }
        }
    }
}

void dequantizeQ8_K(const BlockQ8_K* x, float* y, int64_t k) {
    const int64_t nb = k / kQKK;
    for (int64_t i = 0; i < nb; ++i)
        for (int j = 0; j < kQKK; ++j) *y++ = x[i].d * static_cast<float>(x[i].qs[j]);
}

}  // namespace verdict::tensor::detail
