#include "backend/cpu/ops_activation.h"

#include "tensor/half.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace verdict::cpu {

float silu(float x) { return x / (1.0f + std::exp(-x)); }

void swigluInPlace(float* gate, const float* up, int64_t n) {
    for (int64_t i = 0; i < n; ++i) gate[i] = silu(gate[i]) * up[i];
}

void swigluOaiInPlace(float* gate, const float* up, int64_t n, float alpha, float limit) {
    for (int64_t i = 0; i < n; ++i) {
        const float x = std::min(gate[i], limit);
        const float y = std::clamp(up[i], -limit, limit);
        gate[i] = x / (1.0f + std::exp(-alpha * x)) * (y + 1.0f);
    }
}

float geluTanh(float x) {
    // ggml.c: GELU_COEF_A = 0.044715f, SQRT_2_OVER_PI = 0.79788456080286535587989211986876f
    constexpr float kCoefA = 0.044715f;
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoefA * x * x)));
}

namespace {
// geluTanh of every f16 value, rounded to f16: the table ggml builds at init (ggml_table_gelu_f16).
const std::vector<uint16_t>& geluF16Table() {
    static const std::vector<uint16_t> kTable = [] {
        std::vector<uint16_t> t(65536);
        for (uint32_t i = 0; i < 65536; ++i)
            t[i] = tensor::fp32ToFp16(geluTanh(tensor::fp16ToFp32(static_cast<uint16_t>(i))));
        return t;
    }();
    return kTable;
}
}  // namespace

float geluTanhF16(float x) {
    if (x <= -10.0f) return 0.0f;
    if (x >= 10.0f) return x;
    return tensor::fp16ToFp32(geluF16Table()[tensor::fp32ToFp16(x)]);
}

void gegluInPlace(float* gate, const float* up, int64_t n) {
    const std::vector<uint16_t>& table = geluF16Table();
    for (int64_t i = 0; i < n; ++i) {
        const float x = gate[i];
        const float g = x <= -10.0f ? 0.0f : x >= 10.0f ? x : tensor::fp16ToFp32(table[tensor::fp32ToFp16(x)]);
        gate[i] = g * up[i];
    }
}

void softCapInPlace(float* x, int64_t n, float cap) {
    const float inv = 1.0f / cap;
    for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i] * inv) * cap;
}

}  // namespace verdict::cpu
