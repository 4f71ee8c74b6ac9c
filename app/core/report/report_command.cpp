#include "core/report/report_command.h"

#include "core/report/report_decision.h"

#include <cmath>
#include <cstdio>

namespace verdict::core {

namespace {

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

}  // namespace

std::string shellQuote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
                          std::string::npos)
        return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string reportCommandLine(const ReportRequest& r, const std::string& output, const std::string& dbPath) {
    std::string cmd = "verdict report --run " + std::to_string(r.runA) + " --run " + std::to_string(r.runB);
    for (int64_t s : r.sweepIds) cmd += " --sweep " + std::to_string(s);
    if (!r.autoSweeps) cmd += " --no-auto-sweep";
    if (r.quantCompareId) cmd += " --quant-compare " + std::to_string(*r.quantCompareId);
    if (!r.autoQuant) cmd += " --no-auto-quant";
    for (int64_t s : r.soakIds) cmd += " --soak " + std::to_string(s);
    if (!r.autoSoak) cmd += " --no-auto-soak";
    if (r.tco && !r.tco->hardwareId.empty()) {
        const ReportTcoInputs& t = *r.tco;
        const CostAssumptions defaults;
        cmd += " --hardware " + shellQuote(t.hardwareId);
        if (t.measuredOnId) cmd += " --measured-on " + shellQuote(*t.measuredOnId);
        if (t.tokensPerDay) cmd += " --tokens-per-day " + number(*t.tokensPerDay);
        if (t.baselineUsdPerMtok) cmd += " --baseline-usd-per-mtok " + number(*t.baselineUsdPerMtok);
        const CostAssumptions& a = t.assumptions;
        auto opt = [&](const char* name, double v, double d) {
            if (v != d) cmd += std::string(" --") + name + " " + number(v);
        };
        opt("utilisation", a.utilisation, defaults.utilisation);
        opt("years", a.years, defaults.years);
        opt("electricity-usd-per-kwh", a.electricityUsdPerKwh, defaults.electricityUsdPerKwh);
        opt("pue", a.pue, defaults.pue);
        opt("load-factor", a.loadFactor, defaults.loadFactor);
        opt("ops-usd-per-month", a.opsUsdPerMonth, defaults.opsUsdPerMonth);
        opt("fixed-usd-per-year", a.fixedUsdPerYear, defaults.fixedUsdPerYear);
        opt("discount-rate", a.discountRate, defaults.discountRate);
        if (a.mode == Ownership::Rent) cmd += " --rent";
        if (t.hardwareFile) cmd += " --hardware-file " + shellQuote(*t.hardwareFile);
    }
    const auto defaults = defaultCriterionWeights();
    std::string weights;
    for (const auto& [key, w] : r.weights) {
        auto d = defaults.find(key);
        if (d != defaults.end() && d->second == w) continue;
        weights += (weights.empty() ? "" : ",") + key + "=" + number(w);
    }
    if (!weights.empty()) cmd += " --weights " + weights;
    if (r.sla.ttftMs) cmd += " --sla-ttft-ms " + number(*r.sla.ttftMs);
    if (r.sla.tpotMs) cmd += " --sla-tpot-ms " + number(*r.sla.tpotMs);
    if (!r.quality.noWorseSignificant) cmd += " --quality-gate off";
    if (r.quality.minAccuracy) cmd += " --min-accuracy " + number(*r.quality.minAccuracy * 100);
    if (r.maxDisagreements != ReportRequest{}.maxDisagreements) cmd += " --disagreements " + std::to_string(r.maxDisagreements);
    if (!dbPath.empty()) cmd += " --db " + shellQuote(dbPath);
    return cmd + " -o " + shellQuote(output);
}

}  // namespace verdict::core
