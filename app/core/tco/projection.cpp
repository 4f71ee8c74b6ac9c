#include "core/tco/projection.h"

#include <cmath>
#include <cstdio>

namespace verdict::core {
namespace {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string shortNum(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

}  // namespace

Result<ThroughputProjection> projectThroughput(const HardwareEntry& from, const HardwareEntry& to, double decodeTps,
                                               std::optional<double> prefillTps, std::optional<double> modelBytes) {
    if (!std::isfinite(decodeTps) || decodeTps <= 0)
        return Error{"decode throughput " + shortNum(decodeTps) + " tokens/s must be a positive number"};
    if (prefillTps && (!std::isfinite(*prefillTps) || *prefillTps <= 0))
        return Error{"prefill throughput " + shortNum(*prefillTps) + " tokens/s must be a positive number"};
    for (const HardwareEntry* e : {&from, &to})
        if (!e->memoryBandwidthGbs.value)
            return Error{"cannot project: '" + e->id + "' has no memory_bandwidth_gbs; set it in the user hardware file"};
    if (prefillTps)
        for (const HardwareEntry* e : {&from, &to})
            if (!e->fp16TflopsDense.value)
                return Error{"cannot project prefill: '" + e->id +
                             "' has no fp16_tflops_dense; set it in the user hardware file or leave out --prefill-tps"};

    ThroughputProjection p;
    p.fromId = from.id;
    p.toId = to.id;
    p.measuredDecodeTps = decodeTps;
    p.measuredPrefillTps = prefillTps;
    const double bwFrom = *from.memoryBandwidthGbs.value, bwTo = *to.memoryBandwidthGbs.value;
    p.decodeRatio = bwTo / bwFrom;
    p.decodeTps = decodeTps * p.decodeRatio;
    p.basis = "decode x " + shortNum(bwTo) + " GB/s / " + shortNum(bwFrom) + " GB/s (memory bandwidth ratio " +
              fixed(p.decodeRatio, 3) + ")";
    if (prefillTps) {
        const double fFrom = *from.fp16TflopsDense.value, fTo = *to.fp16TflopsDense.value;
        p.prefillRatio = fTo / fFrom;
        p.prefillTps = *prefillTps * *p.prefillRatio;
        p.basis += "; prefill x " + shortNum(fTo) + " TFLOPS / " + shortNum(fFrom) + " TFLOPS (dense FP16 ratio " +
                   fixed(*p.prefillRatio, 3) + ")";
    }

    // The caveats that apply to every projection, then the ones this pair triggers.
    p.caveats.push_back("roofline ratio of peak figures: real kernels reach a different share of peak on each device");
    p.caveats.push_back("decode scales with bandwidth only while it stays memory-bound (small batch); large batches become compute-bound");
    if (prefillTps)
        p.caveats.push_back("prefill at small batch or short prompts is often not compute-bound, so the FLOPS ratio overstates the gain");
    if (from.kind != to.kind)
        p.caveats.push_back("CPU and GPU run different kernels and software stacks; a CPU<->GPU ratio is a rough bound at best");
    if (from.vendor != to.vendor && !from.vendor.empty() && !to.vendor.empty())
        p.caveats.push_back("different vendors: software maturity (kernels, drivers, quantised formats) differs");
    if (modelBytes && to.memoryGb.value && *modelBytes / 1e9 > *to.memoryGb.value)
        p.caveats.push_back("the model (" + fixed(*modelBytes / 1e9, 1) + " GB) does not fit in " + to.id + "'s " +
                            shortNum(*to.memoryGb.value) + " GB: it would need several devices or offloading");
    return p;
}

nlohmann::json projectionJson(const ThroughputProjection& p) {
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    return {{"estimated", p.estimated},
            {"from", p.fromId},
            {"to", p.toId},
            {"measured_decode_tps", p.measuredDecodeTps},
            {"measured_prefill_tps", opt(p.measuredPrefillTps)},
            {"decode_ratio", p.decodeRatio},
            {"prefill_ratio", opt(p.prefillRatio)},
            {"decode_tps", p.decodeTps},
            {"prefill_tps", opt(p.prefillTps)},
            {"basis", p.basis},
            {"caveats", p.caveats}};
}

}  // namespace verdict::core
