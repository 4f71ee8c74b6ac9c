// Reference quantizers / dequantizers of the 32-element formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// Q8_1. Arithmetic follows ggml-quants.c (quantize_row_q*_ref, dequantize_row_q*) step by step:
// same float operations in the same order, same truncating casts, so outputs are bit-identical.
#include "tensor/half.h"
#include "tensor/quant_internal.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace verdict::tensor::detail {
namespace {

// Largest-magnitude element of a block, keeping its sign (ggml picks the first on ties).
float signedAbsMax(const float* x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

void minMax(const float* x, int n, float& min, float& max) {
    min = FLT_MAX;
    max = -FLT_MAX;
    for (int j = 0; j < n; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
}

// C's float -> int8_t conversion (truncation toward zero) for in-range values.
inline int truncI8(float v) { return static_cast<int8_t>(static_cast<int>(v)); }

}  // namespace

void quantizeQ4_0(const float* x, BlockQ4_0* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        const float d = signedAbsMax(x, kQK) / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32ToFp16(d);
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[kQK / 2 + j] * id;
            const int q0 = std::min(15, truncI8(x0 + 8.5f));
            const int q1 = std::min(15, truncI8(x1 + 8.5f));
            y[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantizeQ4_1(const float* x, BlockQ4_1* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        float min, max;
        minMax(x, kQK, min, max);
        const float d = (max - min) / ((1 << 4) - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32ToFp16(d);
        y[i].m = fp32ToFp16(min);
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = (x[j] - min) * id;
            const float x1 = (x[kQK / 2 + j] - min) * id;
            const int q0 = std::min(15, truncI8(x0 + 0.5f));
            const int q1 = std::min(15, truncI8(x1 + 0.5f));
            y[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantizeQ5_0(const float* x, BlockQ5_0* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        const float d = signedAbsMax(x, kQK) / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32ToFp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[kQK / 2 + j] * id;
            const uint32_t q0 = static_cast<uint8_t>(std::min(31, truncI8(x0 + 16.5f)));
            const uint32_t q1 = static_cast<uint8_t>(std::min(31, truncI8(x1 + 16.5f)));
            y[i].qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= ((q0 & 0x10u) >> 4) << j;
            qh |= ((q1 & 0x10u) >> 4) << (j + kQK / 2);
        }
        std::memcpy(y[i].qh, &qh, sizeof qh);
    }
}

void quantizeQ5_1(const float* x, BlockQ5_1* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        float min, max;
        minMax(x, kQK, min, max);
        const float d = (max - min) / ((1 << 5) - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32ToFp16(d);
        y[i].m = fp32ToFp16(min);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = (x[j] - min) * id;
            const float x1 = (x[kQK / 2 + j] - min) * id;
            // ggml casts straight to uint8_t here (no clamp): values stay within 0..31.
            const uint32_t q0 = static_cast<uint8_t>(static_cast<int>(x0 + 0.5f));
            const uint32_t q1 = static_cast<uint8_t>(static_cast<int>(x1 + 0.5f));
            y[i].qs[j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= ((q0 & 0x10u) >> 4) << j;
            qh |= ((q1 & 0x10u) >> 4) << (j + kQK / 2);
        }
        std::memcpy(y[i].qh, &qh, sizeof qh);
    }
}

void quantizeQ8_0(const float* x, BlockQ8_0* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / ((1 << 7) - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32ToFp16(d);
        for (int j = 0; j < kQK; ++j) y[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
    }
}

void quantizeQ8_1(const float* x, BlockQ8_1* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / ((1 << 7) - 1);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = fp32ToFp16(d);
        int sum = 0;
        for (int j = 0; j < kQK; ++j) {
            y[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
            sum += y[i].qs[j];
        }
        y[i].s = fp32ToFp16(static_cast<float>(sum) * d);
    }
}

void dequantizeQ4_0(const BlockQ4_0* x, float* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = static_cast<float>((x[i].qs[j] & 0x0F) - 8) * d;
            y[j + kQK / 2] = static_cast<float>((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantizeQ4_1(const BlockQ4_1* x, float* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        const float m = fp16ToFp32(x[i].m);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = static_cast<float>(x[i].qs[j] & 0x0F) * d + m;
            y[j + kQK / 2] = static_cast<float>(x[i].qs[j] >> 4) * d + m;
        }
    }
}

void dequantizeQ5_0(const BlockQ5_0* x, float* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        uint32_t qh;
        std::memcpy(&qh, x[i].qh, sizeof qh);
        for (int j = 0; j < kQK / 2; ++j) {
            const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10);
            const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
            y[j] = static_cast<float>(((x[i].qs[j] & 0x0F) | h0) - 16) * d;
            y[j + kQK / 2] = static_cast<float>(((x[i].qs[j] >> 4) | h1) - 16) * d;
        }
    }
}

void dequantizeQ5_1(const BlockQ5_1* x, float* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        const float m = fp16ToFp32(x[i].m);
        uint32_t qh;
        std::memcpy(&qh, x[i].qh, sizeof qh);
        for (int j = 0; j < kQK / 2; ++j) {
            const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10);
            const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
            y[j] = static_cast<float>((x[i].qs[j] & 0x0F) | h0) * d + m;
            y[j + kQK / 2] = static_cast<float>((x[i].qs[j] >> 4) | h1) * d + m;
        }
    }
}

void dequantizeQ8_0(const BlockQ8_0* x, float* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
    }
}

void dequantizeQ8_1(const BlockQ8_1* x, float* y, int64_t k) {
    const int64_t nb = k / kQK;
    for (int64_t i = 0; i < nb; ++i, y += kQK) {
        const float d = fp16ToFp32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
    }
}

}  // namespace verdict::tensor::detail
