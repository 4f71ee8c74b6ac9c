// Reference dequantizers of the lattice i-quants and the ternary formats (block_formats.h).
// Read only, like quant_iq.cpp: these files come from llama-quantize. The block decoding is
// iq_decode.h (shared with the dot products); here only the scales are applied, in the order of
// float operations ggml's dequantize_row_* use (scale d * ls first, then times each value).
#include "tensor/half.h"
#include "tensor/iq_decode.h"
#include "tensor/quant_internal.h"

namespace verdict::tensor::detail {

namespace {
// out[j] = scale * v[j] for a run of n values.
void scaleValues(const int8_t* v, float scale, float* out, int n) {
    for (int j = 0; j < n; ++j) out[j] = scale * static_cast<float>(v[j]);
}
}  // namespace

void dequantizeIQ2_XXS(const BlockIQ2_XXS* x, float* y, int64_t k) {
    for (int64_t b = 0; b < k / kQKK; ++b, y += kQKK) {
        const float d = fp16ToFp32(x[b].d);
        int8_t v[32];
        for (int ib = 0; ib < 8; ++ib) {
            const int ls = decodeIQ2_XXS(x[b], ib, v);
            scaleValues(v, d * static_cast<float>(ls) * 0.125f, y + 32 * ib, 32);
        }
    }
}

void dequantizeIQ2_XS(const BlockIQ2_XS* x, float* y, int64_t k) {
    for (int64_t b = 0; b < k / kQKK; ++b, y += kQKK) {
        const float d = fp16ToFp32(x[b].d);
        int8_t v[32];
        int ls[2];
        for (int ib = 0; ib < 8; ++ib) {
            decodeIQ2_XS(x[b], ib, v, ls);
            for (int h = 0; h < 2; ++h)
                scaleValues(v + 16 * h, d * static_cast<float>(ls[h]) * 0.125f, y + 32 * ib + 16 * h, 16);
        }
    }
}

void dequantizeIQ2_S(const BlockIQ2_S* x, float* y, int64_t k) {
    for (int64_t b = 0; b < k / kQKK; ++b, y += kQKK) {
        const float d = fp16ToFp32(x[b].d);
        int8_t v[32];
        int ls[2];
        for (int ib = 0; ib < 8; ++ib) {
            decodeIQ2_S(x[b], ib, v, ls);
            for (int h = 0; h < 2; ++h)
                scaleValues(v + 16 * h, d * static_cast<float>(ls[h]) * 0.125f, y + 32 * ib + 16 * h, 16);
        }
    }
}

void dequantizeIQ3_XXS(const BlockIQ3_XXS* x, float* y, int64_t k) {
    for (int64_t b = 0; b < k / kQKK; ++b, y += kQKK) {
        const float d = fp16ToFp32(x[b].d);
        int8_t v[32];
        for (int ib = 0; ib < 8; ++ib) {
            const int ls = decodeIQ3_XXS(x[b], ib, v);
            scaleValues(v, d * static_cast<float>(ls) * 0.25f, y + 32 * ib, 32);
        }
    }
}

void dequantizeIQ3_S(const BlockIQ3_S* x, float* y, int64_t k) {
    for (int64_t b = 0; b < k / kQKK; ++b, y += kQKK) {
        const float d = fp16ToFp32(x[b].d);
        int8_t v[32];
        for (int ib = 0; ib < 8; ++ib) {
            const int ls = decodeIQ3_S(x[b], ib, v);
            scaleValues(v, d * static_cast<float>(ls), y + 32 * ib, 32);
        }
    }
}

namespace {
// out[j] = scale * (v[j] + delta) for a group of 8 (IQ1_S / IQ1_M).
void shiftedGroup(const int8_t* v, float scale, float delta, float* out) {
    for (int j = 0; j < 8; ++j) out[j] = scale * (static_cast<float>(v[j]) + delta);
}
}  // namespace

void dequantizeIQ1_S(const BlockIQ1_S* x, float* y, int64_t k) {
    for (int64_t b = 0; b < k / kQKK; ++b, y += kQKK) {
        const float d = fp16ToFp32(x[b].d);
        int8_t v[32];
        for (int ib = 0; ib < 8; ++ib) {
            int deltaSign;
            const int ls = decodeIQ1_S(x[b], ib, v, deltaSign);
            const float dl = d * static_cast<float>(ls);
            const float delta = kIQ1Delta * static_cast<float>(deltaSign);
            for (int l = 0; l < 4; ++l) shiftedGroup(v + 8 * l, dl, delta, y + 32 * ib + 8 * l);
        }
    }
}

void dequantizeIQ1_M(const BlockIQ1_M* x, float* y, int64_t k) {
    for (int64_t b = 0; b < k / kQKK; ++b, y += kQKK) {
        const float d = fp16ToFp32(iq1mScale(x[b]));
        int8_t v[32];
        int ls[2], deltaSign[4];
        for (int ib = 0; ib < 8; ++ib) {
            decodeIQ1_M(x[b], ib, v, ls, deltaSign);
            for (int l = 0; l < 4; ++l)
                shiftedGroup(v + 8 * l, d * static_cast<float>(ls[l / 2]), kIQ1Delta * static_cast<float>(deltaSign[l]),
                             y + 32 * ib + 8 * l);
        }
    }
}

void dequantizeTQ1_0(const BlockTQ1_0* x, float* y, int64_t k) {
    int8_t t[kQKK];
    for (int64_t b = 0; b < k / kQKK; ++b, y += kQKK) {
        decodeTQ1_0(x[b], t);
        scaleValues(t, fp16ToFp32(x[b].d), y, kQKK);
    }
}

void dequantizeTQ2_0(const BlockTQ2_0* x, float* y, int64_t k) {
    int8_t t[kQKK];
    for (int64_t b = 0; b < k / kQKK; ++b, y += kQKK) {
        decodeTQ2_0(x[b], t);
        scaleValues(t, fp16ToFp32(x[b].d), y, kQKK);
    }
}

}  // namespace verdict::tensor::detail
