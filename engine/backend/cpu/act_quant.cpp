#include "backend/cpu/act_quant.h"

#include "tensor/half.h"
#include "tensor/quant_internal.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace verdict::cpu {

using namespace verdict::tensor;

void quantizeActBlock32(const float* x, ActBlock32& out) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.f;
    const float id = amax != 0.0f ? 127.f / amax : 0.0f;
    int sum = 0;
    for (int j = 0; j < 32; ++j) {
        const int q = static_cast<int>(std::nearbyint(x[j] * id));  // current mode: nearest-even
        out.qs[j] = static_cast<int8_t>(q);
        sum += q;
    }
    out.d = fp16ToFp32(fp32ToFp16(d));
    out.s = fp16ToFp32(fp32ToFp16(d * static_cast<float>(sum)));
    out.sum = sum;
}

void quantizeActQ8_0(const float* x, int64_t K, BlockQ8_0* out) {
    ActBlock32 b;
    for (int64_t i = 0; i < K / 32; ++i) {
        quantizeActBlock32(x + 32 * i, b);
        out[i].d = fp32ToFp16(b.d);
        std::memcpy(out[i].qs, b.qs, 32);
    }
}

void quantizeActQ8_1(const float* x, int64_t K, BlockQ8_1* out) {
    ActBlock32 b;
    for (int64_t i = 0; i < K / 32; ++i) {
        quantizeActBlock32(x + 32 * i, b);
        out[i].d = fp32ToFp16(b.d);
        out[i].s = fp32ToFp16(b.s);
        std::memcpy(out[i].qs, b.qs, 32);
    }
}

void quantizeActQ8_K(const float* x, int64_t K, BlockQ8_K* out) { detail::quantizeQ8_K(x, out, K); }

void roundAsMatmulInput(TensorType type, float* x, int64_t K) {
    switch (type) {
        case TensorType::F32: return;
        case TensorType::F16:
            for (int64_t i = 0; i < K; ++i) x[i] = fp16ToFp32(fp32ToFp16(x[i]));
            return;
        case TensorType::BF16:
            for (int64_t i = 0; i < K; ++i) x[i] = bf16ToFp32(fp32ToBf16(x[i]));
            return;
        case TensorType::Q4_1:
        case TensorType::Q5_1: {
            thread_local std::vector<BlockQ8_1> blocks;
            blocks.resize(static_cast<size_t>(K / 32));
            quantizeActQ8_1(x, K, blocks.data());
            for (int64_t i = 0; i < K; ++i) x[i] = fp16ToFp32(blocks[i / 32].d) * static_cast<float>(blocks[i / 32].qs[i % 32]);
            return;
        }
        case TensorType::Q4_0:
        case TensorType::Q5_0:
        case TensorType::Q8_0:
        case TensorType::IQ4_NL:
        case TensorType::MXFP4: {
            thread_local std::vector<BlockQ8_0> blocks;
            blocks.resize(static_cast<size_t>(K / 32));
            quantizeActQ8_0(x, K, blocks.data());
            for (int64_t i = 0; i < K; ++i) x[i] = fp16ToFp32(blocks[i / 32].d) * static_cast<float>(blocks[i / 32].qs[i % 32]);
            return;
        }
        default: {  // K-quants, IQ4_XS, the lattice i-quants, TQ1_0 / TQ2_0: Q8_K
            thread_local std::vector<BlockQ8_K> blocks;
            blocks.resize(static_cast<size_t>(K / 256));
            quantizeActQ8_K(x, K, blocks.data());
            for (int64_t i = 0; i < K; ++i) x[i] = blocks[i / 256].d * static_cast<float>(blocks[i / 256].qs[i % 256]);
            return;
        }
    }
}

}  // namespace verdict::cpu
