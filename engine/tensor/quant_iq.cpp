// Reference dequantizers of the non-linear 4-bit formats (block_formats.h: IQ4_NL, IQ4_XS, MXFP4).
// Verdict reads these files; it does not write them (no quantizer: they come from llama-quantize).
#include "tensor/half.h"
#include "tensor/quant_internal.h"

namespace verdict::tensor::detail {

namespace {
// 16 bytes of nibbles, Q4_0's order, scaled: out[j] = scale * levels[low nibble of qs[j]],
// out[j + 16] = scale * levels[high nibble].
template <class Level>
void unpackNibbles(const uint8_t* qs, const Level* levels, float scale, float* out) {
    for (int j = 0; j < 16; ++j) {
        out[j] = scale * static_cast<float>(levels[qs[j] & 0xF]);
        out[j + 16] = scale * static_cast<float>(levels[qs[j] >> 4]);
    }
}
}  // namespace

void dequantizeIQ4_NL(const BlockIQ4_NL* x, float* y, int64_t k) {
    for (int64_t b = 0; b < k / kQK; ++b) unpackNibbles(x[b].qs, kIQ4NLValues, fp16ToFp32(x[b].d), y + b * kQK);
}

void dequantizeIQ4_XS(const BlockIQ4_XS* x, float* y, int64_t k) {
    for (int64_t b = 0; b < k / kQKK; ++b) {
        const float d = fp16ToFp32(x[b].d);
        for (int i = 0; i < kQKK / 32; ++i)
            unpackNibbles(x[b].qs + 16 * i, kIQ4NLValues, d * static_cast<float>(iq4xsScale(x[b], i) - 32),
                          y + b * kQKK + 32 * i);
    }
}

void dequantizeMXFP4(const BlockMXFP4* x, float* y, int64_t k) {
    for (int64_t b = 0; b < k / kQK; ++b) unpackNibbles(x[b].qs, kMXFP4Values, mxfp4HalfScale(x[b].e), y + b * kQK);
}

}  // namespace verdict::tensor::detail
