#include "core/tco/tco_report.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace verdict::core {
namespace {

using nlohmann::json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json hardwareRef(const HardwareEntry& e) {
    return {{"id", e.id}, {"name", e.name}, {"kind", hardwareKindName(e.kind)}, {"origin", hardwareOriginName(e.origin)}};
}

}  // namespace

double medianOf(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

RunThroughput runThroughputOf(const std::vector<RunItemRecord>& items) {
    std::vector<double> decode, prefill;
    for (const RunItemRecord& it : items) {
        if (!it.error.empty()) continue;
        if (it.decodeTps && std::isfinite(*it.decodeTps) && *it.decodeTps > 0) decode.push_back(*it.decodeTps);
        if (it.tokensIn > 0 && it.ttftMs && std::isfinite(*it.ttftMs) && *it.ttftMs > 0)
            prefill.push_back(static_cast<double>(it.tokensIn) / (*it.ttftMs / 1000.0));
    }
    RunThroughput t;
    t.itemsWithDecode = static_cast<int64_t>(decode.size());
    t.itemsWithPrefill = static_cast<int64_t>(prefill.size());
    if (!decode.empty()) t.medianDecodeTps = medianOf(decode);
    if (!prefill.empty()) t.medianPrefillTps = medianOf(prefill);
    return t;
}

std::optional<ThroughputPoint> bestThroughputPoint(const std::vector<ThroughputPoint>& points, int64_t batch) {
    std::optional<ThroughputPoint> best;
    for (const ThroughputPoint& p : points) {
        if (batch > 0 && p.batch != batch) continue;
        if (!(std::isfinite(p.outputTokPerS) && p.outputTokPerS > 0)) continue;
        if (!best || p.outputTokPerS > best->outputTokPerS) best = p;
    }
    return best;
}

void useSweepThroughput(TcoRequest& req, int64_t sweepId, const ThroughputPoint& best) {
    req.decodeTps = best.outputTokPerS;  // a sweep's prefill rate is not used: cost follows output tokens
    req.throughputSource = "sweep";
    req.sweepId = sweepId;
    req.sweepBatch = best.batch;
    req.runId.reset();
    req.runItems = 0;
}

Result<void> useRunThroughput(TcoRequest& req, int64_t runId, const RunThroughput& t) {
    if (!t.medianDecodeTps)
        return Error{"run " + std::to_string(runId) + " has no stored item with a decode tok/s (nothing to cost)"};
    req.decodeTps = *t.medianDecodeTps;
    req.throughputSource = "run";
    req.runId = runId;
    req.runItems = t.itemsWithDecode;
    req.sweepId.reset();
    req.sweepBatch = 0;
    if (!req.prefillTps) req.prefillTps = t.medianPrefillTps;
    return {};
}

Result<std::string> measuredOnFor(const std::string& device, const std::optional<std::string>& given, const std::string& what) {
    if (given) return *given;
    // A CPU run of the built-in engine ran here; a GPU names a device the catalog cannot match
    // reliably by name, so the person says which entry it is.
    if (device.rfind("cpu", 0) == 0) return std::string(kThisMachineId);
    return Error{what + " was measured on '" + device +
                 "'; say which catalog entry that is with --measured-on ID (see verdict hardware list)"};
}

void dropUnprojectablePrefill(const HardwareCatalog& catalog, TcoRequest& req) {
    if (!req.prefillTps || req.throughputSource != "run") return;
    const std::string from = req.measuredOnId.value_or(req.hardwareId);
    if (from == req.hardwareId) return;
    const HardwareEntry* a = catalog.find(from);
    const HardwareEntry* b = catalog.find(req.hardwareId);
    if (a && b && (!a->fp16TflopsDense.value || !b->fp16TflopsDense.value)) req.prefillTps.reset();
}

std::string describeThroughput(const TcoRequest& req, const std::optional<ThroughputPoint>& point) {
    if (req.throughputSource == "sweep" && req.sweepId) {
        std::string s = "sweep " + std::to_string(*req.sweepId) + ": best output tok/s";
        if (point)
            s += " (prompt " + std::to_string(point->promptTokens) + ", gen " + std::to_string(point->genTokens) + ", batch " +
                 std::to_string(point->batch) + ")";
        return s;
    }
    if (req.throughputSource == "run" && req.runId)
        return "run " + std::to_string(*req.runId) + ": median decode tok/s of " + std::to_string(req.runItems) + " items (batch 1)";
    return "given on the command line";
}

Result<TcoReport> computeTco(const HardwareCatalog& catalog, const TcoRequest& req) {
    auto hw = catalog.lookup(req.hardwareId);
    if (!hw) return hw.error();
    auto measured = catalog.lookup(req.measuredOnId.value_or(req.hardwareId));
    if (!measured) return measured.error();
    if (auto r = validateAssumptions(req.assumptions); !r) return r.error();
    if (req.baselineUsdPerMtok && !req.tokensPerDay)
        return Error{"a baseline price needs a daily volume (--tokens-per-day) for payback and NPV"};

    TcoReport rep;
    rep.hardware = **hw;
    rep.measuredOn = **measured;
    rep.request = req;
    rep.price = devicePriceOf(rep.hardware);
    for (const auto& [given, slot, what] :
         {std::tuple{req.purchaseUsdOverride, &rep.price.purchaseUsd, "purchase price"},
          std::tuple{req.cloudUsdPerHourOverride, &rep.price.cloudUsdPerHour, "cloud $/hour"}}) {
        if (!given) continue;
        if (!std::isfinite(*given) || *given <= 0)
            return Error{std::string(what) + " override must be a positive number"};
        *slot = *given;
    }

    if (rep.measuredOn.id != rep.hardware.id) {
        auto p = projectThroughput(rep.measuredOn, rep.hardware, req.decodeTps, req.prefillTps, req.modelBytes);
        if (!p) return p.error();
        rep.projection = std::move(*p);
        rep.costTps = rep.projection->decodeTps;
        rep.estimated = true;
    } else {
        if (!std::isfinite(req.decodeTps) || req.decodeTps <= 0) return Error{"throughput must be a positive number of tokens/s"};
        rep.costTps = req.decodeTps;
    }

    auto dev = deviceCost(rep.price, rep.costTps, req.assumptions, rep.hardware.id);
    if (!dev) return dev.error();
    rep.device = *dev;
    if (req.tokensPerDay) {
        auto fleet = fleetCost(rep.device, rep.price, rep.costTps, *req.tokensPerDay, req.assumptions);
        if (!fleet) return fleet.error();
        rep.fleet = *fleet;
        if (req.baselineUsdPerMtok) {
            auto b = compareToBaseline(*rep.fleet, *req.baselineUsdPerMtok, req.assumptions);
            if (!b) return b.error();
            rep.baseline = *b;
        }
    }
    return rep;
}

json tcoReportJson(const TcoReport& r) {
    const CostAssumptions& a = r.request.assumptions;
    json out;
    out["hardware"] = hardwareRef(r.hardware);
    out["estimated"] = r.estimated;
    out["throughput"] = {{"source", r.request.throughputSource},
                         {"run_id", r.request.runId ? json(*r.request.runId) : json(nullptr)},
                         {"run_items", r.request.runId ? json(r.request.runItems) : json(nullptr)},
                         {"sweep_id", r.request.sweepId ? json(*r.request.sweepId) : json(nullptr)},
                         {"sweep_batch", r.request.sweepId ? json(r.request.sweepBatch) : json(nullptr)},
                         {"measured_on", hardwareRef(r.measuredOn)},
                         {"decode_tps", r.request.decodeTps},
                         {"prefill_tps", opt(r.request.prefillTps)},
                         {"estimated", false}};
    out["projection"] = r.projection ? projectionJson(*r.projection) : json(nullptr);
    out["cost_tps"] = r.costTps;
    out["assumptions"] = {{"mode", ownershipName(a.mode)},
                          {"utilisation", a.utilisation},
                          {"years", a.years},
                          {"electricity_usd_per_kwh", a.electricityUsdPerKwh},
                          {"pue", a.pue},
                          {"load_factor", a.loadFactor},
                          {"ops_usd_per_month", a.opsUsdPerMonth},
                          {"fixed_usd_per_year", a.fixedUsdPerYear},
                          {"discount_rate", a.discountRate},
                          {"purchase_usd", opt(r.price.purchaseUsd)},
                          {"cloud_usd_per_hour", opt(r.price.cloudUsdPerHour)},
                          {"tdp_w", opt(r.price.tdpW)},
                          {"tokens_per_day", opt(r.request.tokensPerDay)},
                          {"baseline_usd_per_mtok", opt(r.request.baselineUsdPerMtok)}};
    out["per_device"] = {{"estimated", r.estimated},
                         {"amortisation_usd_per_hour", r.device.amortisationUsdPerHour},
                         {"power_usd_per_hour", r.device.powerUsdPerHour},
                         {"ops_usd_per_hour", r.device.opsUsdPerHour},
                         {"rent_usd_per_hour", r.device.rentUsdPerHour},
                         {"hourly_usd", r.device.hourlyUsd},
                         {"usd_per_mtok", r.device.usdPerMtok}};
    if (r.fleet) {
        const FleetCost& f = *r.fleet;
        out["fleet"] = {{"estimated", r.estimated},
                        {"tokens_per_day", f.tokensPerDay},
                        {"required_tps", f.requiredTps},
                        {"devices", f.devices},
                        {"capex_usd", f.capexUsd},
                        {"monthly_usd", f.monthlyUsd},
                        {"monthly", {{"amortisation_usd", f.monthlyAmortisationUsd},
                                     {"power_usd", f.monthlyPowerUsd},
                                     {"ops_usd", f.monthlyOpsUsd},
                                     {"rent_usd", f.monthlyRentUsd},
                                     {"fixed_usd", f.monthlyFixedUsd}}},
                        {"monthly_cash_operating_usd", f.monthlyCashOperatingUsd},
                        {"tco_3y_usd", f.tco3yUsd},
                        {"usd_per_mtok_all_in", f.usdPerMtokAllIn}};
    } else {
        out["fleet"] = nullptr;
    }
    if (r.baseline) {
        const BaselineComparison& b = *r.baseline;
        out["baseline"] = {{"estimated", r.estimated},
                           {"usd_per_mtok", b.baselineUsdPerMtok},
                           {"monthly_usd", b.baselineMonthlyUsd},
                           {"monthly_savings_usd", b.monthlySavingsUsd},
                           {"payback_months", opt(b.paybackMonths)},
                           {"npv_usd", b.npvUsd},
                           {"horizon_months", b.horizonMonths}};
    } else {
        out["baseline"] = nullptr;
    }
    return out;
}

}  // namespace verdict::core
