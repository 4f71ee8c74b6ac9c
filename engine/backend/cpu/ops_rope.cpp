#include "backend/cpu/ops_rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace verdict::cpu {
namespace {

// YaRN: the dimension at which a frequency completes nRotations over the original context.
float yarnCorrDim(int nDims, int nCtxOrig, float nRotations, float base) {
    return static_cast<float>(nDims)
        * std::log(static_cast<float>(nCtxOrig) / (nRotations * 2.0f * std::numbers::pi_v<float>))
        / (2.0f * std::log(base));
}

// 1 below `low`, 0 above `high`, linear in between (pair index i0/2).
float yarnRamp(float low, float high, int i0) {
    const float y = (static_cast<float>(i0 / 2) - low) / std::max(0.001f, high - low);
    return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

}  // namespace

void ropeTable(const RopeParams& p, int32_t pos, float* table) {
    const float thetaScale = std::pow(p.freqBase, -2.0f / static_cast<float>(p.nRot));
    float corr0 = 0.0f, corr1 = 0.0f;
    if (p.extFactor != 0.0f) {
        const float start = std::floor(yarnCorrDim(p.nRot, p.nCtxOrig, p.betaFast, p.freqBase));
        const float end = std::ceil(yarnCorrDim(p.nRot, p.nCtxOrig, p.betaSlow, p.freqBase));
        corr0 = std::max(0.0f, start);
        corr1 = std::min(static_cast<float>(p.nRot - 1), end);
    }
    float theta = static_cast<float>(pos);
    for (int i0 = 0; i0 < p.nRot; i0 += 2) {
        const float ff = p.freqFactors ? p.freqFactors[i0 / 2] : 1.0f;
        const float thetaExtrap = theta / ff;
        const float thetaInterp = p.freqScale * thetaExtrap;
        float angle = thetaInterp;
        float mscale = p.attnFactor;
        if (p.extFactor != 0.0f) {
            const float mix = yarnRamp(corr0, corr1, i0) * p.extFactor;
            angle = thetaInterp * (1.0f - mix) + thetaExtrap * mix;
            mscale *= 1.0f + 0.1f * std::log(1.0f / p.freqScale);
        }
        table[i0] = std::cos(angle) * mscale;
        table[i0 + 1] = std::sin(angle) * mscale;
        theta *= thetaScale;
    }
}

void applyRope(RopeMode mode, float* x, int64_t nHead, int64_t headDim, int nRot, const float* table) {
    const int half = nRot / 2;
    for (int64_t h = 0; h < nHead; ++h) {
        float* v = x + h * headDim;
        if (mode == RopeMode::Norm) {
            for (int i0 = 0; i0 < nRot; i0 += 2) {
                const float c = table[i0], s = table[i0 + 1];
                const float x0 = v[i0], x1 = v[i0 + 1];
                v[i0] = x0 * c - x1 * s;
                v[i0 + 1] = x0 * s + x1 * c;
            }
        } else {
            for (int i0 = 0; i0 < nRot; i0 += 2) {
                const float c = table[i0], s = table[i0 + 1];
                const int i = i0 / 2;
                const float x0 = v[i], x1 = v[i + half];
                v[i] = x0 * c - x1 * s;
                v[i + half] = x0 * s + x1 * c;
            }
        }
    }
}

}  // namespace verdict::cpu
