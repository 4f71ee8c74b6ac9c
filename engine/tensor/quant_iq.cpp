// Reference quantizers and dequantizers of the non-linear 4-bit formats (block_formats.h: IQ4_NL,
// IQ4_XS, MXFP4). The dequantizers follow ggml's dequantize_row_*; the quantizers are Verdict's own
// (a least-squared-error scale search, no importance matrix), so a file Verdict writes in these types
// decodes like llama-quantize's but is not byte-identical to it.
#include "tensor/half.h"
#include "tensor/quant_internal.h"
#include "tensor/quantize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

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

// The inverse of unpackNibbles' order: 32 indices into 16 bytes.
void packNibbles(const uint8_t* idx, uint8_t* qs) {
    for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(idx[j] | (idx[j + 16] << 4));
}

// Index 8 of kIQ4NLValues is the level 1, so a zero scale decodes to +0 rather than -0.
constexpr uint8_t kNLZeroIndex = 8;

// Index of the IQ4_NL level nearest to v, by table: the midpoints between neighbouring levels are
// multiples of 0.5, so every half-unit bin of [-128, 128) lies on one side of each of them. Values
// outside the range are nearest to the end levels anyway.
constexpr int kNLBinsPerUnit = 2;
constexpr int kNLBins = 256 * kNLBinsPerUnit;
constexpr std::array<uint8_t, kNLBins> kNLNearest = [] {
    std::array<uint8_t, kNLBins> t{};
    for (int b = 0; b < kNLBins; ++b) {
        const float v = (static_cast<float>(b) + 0.5f) / kNLBinsPerUnit - 128.0f;  // the bin's centre
        auto dist = [v](int i) { return v > kIQ4NLValues[i] ? v - kIQ4NLValues[i] : kIQ4NLValues[i] - v; };
        int best = 0;
        for (int i = 1; i < 16; ++i)
            if (dist(i) < dist(best)) best = i;
        t[b] = static_cast<uint8_t>(best);
    }
    return t;
}();

int nearestNLIndex(float v) {
    const float c = std::clamp(v, -128.0f, 127.75f);
    return kNLNearest[static_cast<int>((c + 128.0f) * kNLBinsPerUnit)];
}

// Squared error of x[0..n) on the grid d * kIQ4NLValues with every value at its nearest level,
// computed with the dequantizer's own products; the chosen indices go to idx when given.
float nlGridError(const float* x, int n, float d, uint8_t* idx) {
    float err = 0;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    for (int j = 0; j < n; ++j) {
        const int q = d != 0 ? nearestNLIndex(x[j] * id) : kNLZeroIndex;
        const float e = x[j] - d * static_cast<float>(kIQ4NLValues[q]);
        err += e * e;
        if (idx) idx[j] = static_cast<uint8_t>(q);
    }
    return err;
}

// Largest-magnitude element, keeping its sign.
float signedAbsMax(const float* x, int n) {
    float max = 0;
    for (int j = 0; j < n; ++j)
        if (std::fabs(x[j]) > std::fabs(max)) max = x[j];
    return max;
}

// A scale as an f16 field stores it, clamped to the f16 range so a huge block never decodes to inf
// (and inf * 0 to NaN).
float storedF16(float d) {
    constexpr float kF16Max = 65504.0f;
    return fp16ToFp32(fp32ToFp16(std::clamp(d, -kF16Max, kF16Max)));
}
float unrounded(float d) { return d; }

// The scale of a run of n values on the IQ4_NL grid with the least squared error, as `stored`
// rounds it. Candidates: the largest-magnitude value on each level in turn (the levels are
// asymmetric, so both signs of d matter; a run that is exactly d * levels comes back exactly), then
// two least-squares refinements of the best (d = sum x*l / sum l*l for its levels).
template <class Stored>
float bestNLScale(const float* x, int n, Stored stored) {
    const float xm = signedAbsMax(x, n);
    if (xm == 0) return 0;
    float best = 0, bestErr = nlGridError(x, n, 0, nullptr);
    auto tryScale = [&](float d) {
        d = stored(d);
        if (const float e = nlGridError(x, n, d, nullptr); e < bestErr) {
            bestErr = e;
            best = d;
        }
    };
    for (int8_t level : kIQ4NLValues) tryScale(xm / static_cast<float>(level));
    uint8_t idx[kQK];
    for (int it = 0; it < 2 && best != 0; ++it) {
        nlGridError(x, n, best, idx);
        double sxl = 0, sll = 0;
        for (int j = 0; j < n; ++j) {
            sxl += double(x[j]) * kIQ4NLValues[idx[j]];
            sll += double(kIQ4NLValues[idx[j]]) * kIQ4NLValues[idx[j]];
        }
        tryScale(static_cast<float>(sxl / sll));
    }
    return best;
}

// IQ4_XS: for super-block scale d, each sub-block's 6-bit scale ls (around its own best scale s / d,
// trying the neighbours too) with the least error; returns the super-block's total squared error.
float fitSubScales(const float* x, const float* s, float d, uint8_t* ls) {
    float total = 0;
    for (int i = 0; i < kQKK / 32; ++i) {
        const int l0 = std::clamp(nearestInt(std::clamp(s[i] / d, -64.0f, 64.0f)), -32, 31);
        float bestErr = std::numeric_limits<float>::max();
        for (int l = std::max(-32, l0 - 1); l <= std::min(31, l0 + 1); ++l) {
            if (const float e = nlGridError(x + 32 * i, 32, d * static_cast<float>(l), nullptr); e < bestErr) {
                bestErr = e;
                ls[i] = static_cast<uint8_t>(l + 32);
            }
        }
        total += bestErr;
    }
    return total;
}

// Magnitude midpoints of the doubled E2M1 levels 0 1 2 3 4 6 8 12 (kMXFP4Values[0..7]).
constexpr float kFP4Midpoints[7] = {0.5f, 1.5f, 2.5f, 3.5f, 5.0f, 7.0f, 10.0f};

// Squared error of a block on the MXFP4 grid with half-scale h (mxfp4HalfScale), every value at its
// nearest level (the largest saturates); the codes go to codes when given.
float fp4GridError(const float* x, float h, uint8_t* codes) {
    float err = 0;
    for (int j = 0; j < kQK; ++j) {
        const float a = std::fabs(x[j]) / h;
        int c = 0;
        for (float m : kFP4Midpoints) c += a > m;
        if (x[j] < 0 && c != 0) c |= 8;  // codes 8..15 are the negatives; zero stays +0
        const float e = x[j] - h * static_cast<float>(kMXFP4Values[c]);
        err += e * e;
        if (codes) codes[j] = static_cast<uint8_t>(c);
    }
    return err;
}

// The smallest E8M0 exponent whose largest level (6 * 2^(e - 127)) covers amax > 0: with it every
// value of the form 2^(e' - 127) * E2M1 for some e' is still on the grid, so such blocks round-trip
// exactly. Doubles keep 12 * 2^(e - 128) finite at e = 254 (E8M0 255 is NaN).
int coveringExponent(float amax) {
    int e = std::clamp(std::ilogb(amax) + 125, 0, 254);
    while (e < 254 && 12.0 * std::ldexp(1.0, e - 128) < amax) ++e;
    while (e > 0 && 12.0 * std::ldexp(1.0, e - 129) >= amax) --e;
    return e;
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

void quantizeIQ4_NL(const float* x, BlockIQ4_NL* y, int64_t k) {
    uint8_t idx[kQK];
    for (int64_t b = 0; b < k / kQK; ++b, x += kQK) {
        const float d = bestNLScale(x, kQK, storedF16);
        y[b].d = fp32ToFp16(d);
        nlGridError(x, kQK, d, idx);
        packNibbles(idx, y[b].qs);
    }
}

// Each sub-block's best unrounded scale first; then the super-block scale maps the largest of them
// to an end of the 6-bit range (-32 or 31, or one step in, whichever fits best overall).
void quantizeIQ4_XS(const float* x, BlockIQ4_XS* y, int64_t k) {
    constexpr int kSub = kQKK / 32;
    for (int64_t b = 0; b < k / kQKK; ++b, x += kQKK) {
        float s[kSub];
        for (int i = 0; i < kSub; ++i) s[i] = bestNLScale(x + 32 * i, 32, unrounded);
        const float smax = signedAbsMax(s, kSub);
        float d = 0;
        uint8_t ls[kSub], trial[kSub];
        std::fill(ls, ls + kSub, uint8_t{32});  // scale 0: an all-zero super-block
        float bestErr = nlGridError(x, kQKK, 0, nullptr);
        for (int m : {-32, -31, 31, 30}) {
            const float dc = smax != 0 ? storedF16(smax / static_cast<float>(m)) : 0.0f;
            if (dc == 0) continue;
            if (const float e = fitSubScales(x, s, dc, trial); e < bestErr) {
                bestErr = e;
                d = dc;
                std::copy(trial, trial + kSub, ls);
            }
        }
        y[b].d = fp32ToFp16(d);
        y[b].scales_h = 0;
        std::fill(y[b].scales_l, y[b].scales_l + kQKK / 64, uint8_t{0});
        uint8_t idx[32];
        for (int i = 0; i < kSub; ++i) {
            y[b].scales_l[i / 2] |= static_cast<uint8_t>((ls[i] & 0xF) << (4 * (i % 2)));
            y[b].scales_h |= static_cast<uint16_t>((ls[i] >> 4) << (2 * i));
            nlGridError(x + 32 * i, 32, d * static_cast<float>(ls[i] - 32), idx);
            packNibbles(idx, y[b].qs + 16 * i);
        }
    }
}

// The covering exponent, or one below it when saturating the largest values costs less than the
// coarser grid (ties keep the covering one).
void quantizeMXFP4(const float* x, BlockMXFP4* y, int64_t k) {
    for (int64_t b = 0; b < k / kQK; ++b, x += kQK) {
        const float amax = std::fabs(signedAbsMax(x, kQK));
        int e = amax > 0 ? coveringExponent(amax) : 0;
        if (e > 0 && fp4GridError(x, mxfp4HalfScale(static_cast<uint8_t>(e - 1)), nullptr) <
                         fp4GridError(x, mxfp4HalfScale(static_cast<uint8_t>(e)), nullptr))
            --e;
        y[b].e = static_cast<uint8_t>(e);
        uint8_t codes[kQK];
        fp4GridError(x, mxfp4HalfScale(y[b].e), codes);
        packNibbles(codes, y[b].qs);
    }
}

}  // namespace verdict::tensor::detail
