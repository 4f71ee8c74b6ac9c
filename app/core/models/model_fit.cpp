#include "core/models/model_fit.h"

#include "verdict/engine/model_support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace verdict::core {

std::string_view fitName(Fit fit) {
    switch (fit) {
    case Fit::Fits: return "fits";
    case Fit::Tight: return "tight";
    case Fit::WontFit: return "wont_fit";
    case Fit::Unsupported: return "unsupported";
    }
    return "wont_fit";
}

std::string formatDecimalBytes(uint64_t bytes) {
    char buf[32];
    const double b = static_cast<double>(bytes);
    if (b >= 1e9) std::snprintf(buf, sizeof buf, "%.1f GB", b / 1e9);
    else if (b >= 1e6) std::snprintf(buf, sizeof buf, "%.0f MB", b / 1e6);
    else if (b >= 1e3) std::snprintf(buf, sizeof buf, "%.0f KB", b / 1e3);
    else std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
    return buf;
}

MemoryEstimate estimateAtCtx(const ModelCard& card, uint64_t ctx) {
    if (ctx == 0) ctx = card.nCtxTrain;
    if (card.memoryAtCtx && card.memoryAtCtx->ctx == ctx) return *card.memoryAtCtx;
    if (card.memoryTrained.ctx == ctx) return card.memoryTrained;
    MemoryEstimate m;
    m.ctx = ctx;
    m.weightsBytes = card.memoryTrained.weightsBytes;
    m.kvBytesPerToken = card.memoryTrained.kvBytesPerToken;
    m.kvBytesAtCtx = m.kvBytesPerToken * ctx;
    m.computeBytes = computeBytesEstimate(card, ctx);
    return m;
}

FitVerdict assessFit(const ModelCard& card, uint64_t ctx, const DeviceInfo& device) {
    const MemoryEstimate m = estimateAtCtx(card, ctx);
    FitVerdict v;
    v.needBytes = m.totalBytes() + (device.kind == "cuda" ? kOverheadCudaBytes : kOverheadCpuBytes);
    v.haveBytes = device.freeBytes;
    const std::string where = device.id.empty() ? device.kind : device.id;
    const std::string ctxText = " at " + std::to_string(m.ctx) + " tokens of context";
    if (const SupportReport support = checkCpuSupport(card); !support.ok()) {
        v.fit = Fit::Unsupported;
        v.reason = "this build cannot run it: ";
        for (size_t i = 0; i < support.missing.size(); ++i) {
            if (i) v.reason += "; ";
            v.reason += support.missing[i];
        }
        return v;
    }
    if (v.haveBytes == 0) {
        v.fit = Fit::Tight;
        v.reason = "needs " + formatDecimalBytes(v.needBytes) + ctxText + "; free memory on " + where + " is unknown";
        return v;
    }
    const double share = static_cast<double>(v.needBytes) / static_cast<double>(v.haveBytes);
    // need <= 80 % of have, in integers so that the boundary is exact: floor(have * 80 / 100).
    const uint64_t fitsLimit = v.haveBytes / 100 * kFitsPercent + v.haveBytes % 100 * kFitsPercent / 100;
    if (v.needBytes <= fitsLimit) v.fit = Fit::Fits;
    else if (v.needBytes <= v.haveBytes) v.fit = Fit::Tight;
    else v.fit = Fit::WontFit;
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f%%", std::floor(share * 100.0 + 0.5));
    v.reason = "needs " + formatDecimalBytes(v.needBytes) + " of " + formatDecimalBytes(v.haveBytes) + " free on " + where + ctxText +
               " (" + pct + ")";
    return v;
}

}  // namespace verdict::core
