// The scale searches behind ggml's K-quant reference quantizers (ggml-quants.c: make_qx_quants,
// make_q3_quants, make_qkx2_quants). Their float operations are kept in ggml's order, because a
// different rounding of one partial sum can flip a choice and change the file's bytes.
#include "tensor/quant_internal.h"
#include "tensor/quantize.h"

#include <algorithm>
#include <cmath>

namespace verdict::tensor::detail {
namespace {
constexpr float kGroupMaxEps = 1e-15f;  // GROUP_MAX_EPS: a group below this is all zero

inline float weightFor(const float* qw, int rmseType, float x, int i) {
    if (qw) return qw[i];
    switch (rmseType) {
        case 1: return x * x;
        case 2: return 1.0f;
        case 3: return std::fabs(x);
        default: return std::sqrt(std::fabs(x));
    }
}
}  // namespace

// Symmetric scale search: L[i] in [0, 2*nmax), x ~ scale * (L - nmax). Tries the plain scale
// -nmax/max and 18 nearby ones, keeping the best weighted least-squares fit.
float makeQxQuants(int n, int nmax, const float* x, int8_t* L, int rmseType, const float* qw) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = static_cast<float>(-nmax) / max;
    if (rmseType == 0) {
        for (int i = 0; i < n; ++i) {
            const int l = nearestInt(iscale * x[i]);
            L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
        }
        return 1 / iscale;
    }
    bool returnEarly = false;
    if (rmseType < 0) {
        rmseType = -rmseType;
        returnEarly = true;
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = nearestInt(iscale * x[i]);
        l = std::max(-nmax, std::min(nmax - 1, l));
        L[i] = static_cast<int8_t>(l + nmax);
        const float w = weightFor(qw, rmseType, x[i], i);
        const float fl = static_cast<float>(l);
        sumlx += w * x[i] * fl;
        suml2 += w * fl * fl;
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    if (returnEarly) return suml2 > 0 ? 0.5f * (scale + 1 / iscale) : 1 / iscale;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearestInt(iscale * x[i]);
            l = std::max(-nmax, std::min(nmax - 1, l));
            const float w = weightFor(qw, rmseType, x[i], i);
            const float fl = static_cast<float>(l);
            sumlx += w * x[i] * fl;
            suml2 += w * fl * fl;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                const int l = nearestInt(iscale * x[i]);
                L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

// Q3_K's search: start from -nmax/max, then up to 5 passes of coordinate descent on each L[i]
// (weights x^2). L[i] returned in [0, 2*nmax).
float makeQ3Quants(int n, int nmax, const float* x, int8_t* L, bool doRmse) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    const float iscale = static_cast<float>(-nmax) / max;
    if (doRmse) {
        float sumlx = 0, suml2 = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearestInt(iscale * x[i]);
            l = std::max(-nmax, std::min(nmax - 1, l));
            L[i] = static_cast<int8_t>(l);
            const float w = x[i] * x[i];
            const float fl = static_cast<float>(l);
            sumlx += w * x[i] * fl;
            suml2 += w * fl * fl;
        }
        for (int itry = 0; itry < 5; ++itry) {
            int nChanged = 0;
            for (int i = 0; i < n; ++i) {
                const float w = x[i] * x[i];
                const float li = static_cast<float>(L[i]);
                float slx = sumlx - w * x[i] * li;
                if (slx > 0) {
                    float sl2 = suml2 - w * li * li;
                    int newL = nearestInt(x[i] * sl2 / slx);
                    newL = std::max(-nmax, std::min(nmax - 1, newL));
                    if (newL != L[i]) {
                        const float fn = static_cast<float>(newL);
                        slx += w * x[i] * fn;
                        sl2 += w * fn * fn;
                        if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                            L[i] = static_cast<int8_t>(newL);
                            sumlx = slx;
                            suml2 = sl2;
                            ++nChanged;
                        }
                    }
                }
            }
            if (!nChanged) break;
        }
        for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
        return sumlx / suml2;
    }
    for (int i = 0; i < n; ++i) {
        int l = nearestInt(iscale * x[i]);
        l = std::max(-nmax, std::min(nmax - 1, l));
        L[i] = static_cast<int8_t>(l + nmax);
    }
    return 1 / iscale;
}

// Asymmetric (scale, min) search: x ~ scale * L - theMin, L in [0, nmax]. Tries nstep+1 scales
// (rmin + rdelta*is + nmax)/(max - min) and solves the weighted least squares for each.
float makeQkx2Quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                     float* theMin, uint8_t* Laux, float rmin, float rdelta, int nstep, bool useMad) {
    float min = x[0], max = x[0];
    float sumW = weights[0];
    float sumX = sumW * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sumW += w;
        sumX += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *theMin = -min;
        return 0.f;
    }
    const float fmax = static_cast<float>(nmax);
    float iscale = fmax / (max - min);
    float scale = 1 / iscale;
    float bestError = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearestInt(iscale * (x[i] - min));
        L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
        float diff = scale * static_cast<float>(L[i]) + min - x[i];
        diff = useMad ? std::fabs(diff) : diff * diff;
        bestError += weights[i] * diff;
    }
    if (nstep < 1) {
        *theMin = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * static_cast<float>(is) + fmax) / (max - min);
        float sumL = 0, sumL2 = 0, sumXL = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearestInt(iscale * (x[i] - min));
            l = std::max(0, std::min(nmax, l));
            Laux[i] = static_cast<uint8_t>(l);
            const float w = weights[i];
            const float fl = static_cast<float>(l);
            sumL += w * fl;
            sumL2 += w * fl * fl;
            sumXL += w * fl * x[i];
        }
        const float D = sumW * sumL2 - sumL * sumL;
        if (D > 0) {
            float thisScale = (sumW * sumXL - sumX * sumL) / D;
            float thisMin = (sumL2 * sumX - sumL * sumXL) / D;
            if (thisMin > 0) {
                thisMin = 0;
                thisScale = sumXL / sumL2;
            }
            float curError = 0;
            for (int i = 0; i < n; ++i) {
                float diff = thisScale * static_cast<float>(Laux[i]) + thisMin - x[i];
                diff = useMad ? std::fabs(diff) : diff * diff;
                curError += weights[i] * diff;
            }
            if (curError < bestError) {
                for (int i = 0; i < n; ++i) L[i] = Laux[i];
                bestError = curError;
                scale = thisScale;
                min = thisMin;
            }
        }
    }
    *theMin = -min;
    return scale;
}

}  // namespace verdict::tensor::detail
