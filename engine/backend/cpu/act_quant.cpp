#include "backend/cpu/act_quant.h"

#include "tensor/half.h"
#include "tensor/quant_internal.h"

#include <cmath>
#include <cstring>

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

}  // namespace verdict::cpu
