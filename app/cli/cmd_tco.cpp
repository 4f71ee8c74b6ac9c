// verdict tco [RUN_ID] --hardware ID [--tps N] ...: cost per million output tokens, monthly and
// 3-year TCO for a daily volume, payback and NPV against a hosted API, from a measured
// throughput (--tps, or the median decode tok/s of a stored run). When the throughput was
// measured on another catalog device (--measured-on), the figures are projections and say so.
// Formulas: docs/tco.md. JSON shape: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "core/report/report_format.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/sweep_repository.h"
#include "core/tco/tco_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace verdict::cli {
namespace {

// Money as the window and the report print it (core::formatUsd).
std::string usd(double v) { return core::formatUsd(v); }

void printReport(const core::TcoReport& r) {
    const auto& a = r.request.assumptions;
    const char* est = r.estimated ? "ESTIMATED " : "";
    std::printf("hardware     %s (%s)\n", r.hardware.name.c_str(), r.hardware.id.c_str());
    std::string from = r.request.throughputSource == "run"
                           ? "median of " + std::to_string(r.request.runItems) + " items of run " + std::to_string(*r.request.runId)
                       : r.request.throughputSource == "sweep"
                           ? "output tok/s of sweep " + std::to_string(*r.request.sweepId) + " at batch " +
                                 std::to_string(r.request.sweepBatch)
                           : std::string("--tps");
    if (!r.projection) {
        std::printf("throughput   %.1f tok/s decode, measured on %s (%s)\n", r.costTps, r.measuredOn.id.c_str(), from.c_str());
    } else {
        const auto& p = *r.projection;
        std::printf("throughput   ESTIMATED %.1f tok/s decode on %s, projected from %.1f tok/s measured on %s (%s)\n",
                    p.decodeTps, p.toId.c_str(), p.measuredDecodeTps, p.fromId.c_str(), from.c_str());
        if (p.prefillTps)
            std::printf("             ESTIMATED %.1f tok/s prefill, from %.1f measured\n", *p.prefillTps, *p.measuredPrefillTps);
        std::printf("             basis: %s\n", p.basis.c_str());
        for (const auto& c : p.caveats) std::printf("             caveat: %s\n", c.c_str());
    }
    if (a.mode == core::Ownership::Buy)
        std::printf("assumptions  buy at %s, amortised over %g years; %g W x %.2f load x PUE %.2f x %s/kWh; "
                    "ops %s/month; utilisation %.0f %%\n",
                    usd(r.price.purchaseUsd.value_or(0)).c_str(), a.years, r.price.tdpW.value_or(0), a.loadFactor, a.pue,
                    usd(a.electricityUsdPerKwh).c_str(), usd(a.opsUsdPerMonth).c_str(), a.utilisation * 100);
    else
        std::printf("assumptions  rent at %s/hour; utilisation %.0f %%\n", usd(r.price.cloudUsdPerHour.value_or(0)).c_str(),
                    a.utilisation * 100);
    const auto& d = r.device;
    if (a.mode == core::Ownership::Buy)
        std::printf("per device   %s/hour = amortisation %s + power %s + ops %s\n", usd(d.hourlyUsd).c_str(),
                    usd(d.amortisationUsdPerHour).c_str(), usd(d.powerUsdPerHour).c_str(), usd(d.opsUsdPerHour).c_str());
    else
        std::printf("per device   %s/hour (rent)\n", usd(d.hourlyUsd).c_str());
    std::printf("             %s%s per 1M output tokens\n", est, usd(d.usdPerMtok).c_str());
    if (r.fleet) {
        const auto& f = *r.fleet;
        std::printf("fleet        %g tokens/day = %.1f tok/s -> %lld device(s)\n", f.tokensPerDay, f.requiredTps,
                    static_cast<long long>(f.devices));
        std::printf("             %scapex %s; monthly %s (amortisation %s, power %s, ops %s, rent %s, fixed %s)\n", est,
                    usd(f.capexUsd).c_str(), usd(f.monthlyUsd).c_str(), usd(f.monthlyAmortisationUsd).c_str(),
                    usd(f.monthlyPowerUsd).c_str(), usd(f.monthlyOpsUsd).c_str(), usd(f.monthlyRentUsd).c_str(),
                    usd(f.monthlyFixedUsd).c_str());
        std::printf("             %s3-year TCO %s; all-in %s per 1M tokens\n", est, usd(f.tco3yUsd).c_str(),
                    usd(f.usdPerMtokAllIn).c_str());
    }
    if (r.baseline) {
        const auto& b = *r.baseline;
        std::printf("baseline     API at %s per 1M tokens: %s/month; savings %s/month\n", usd(b.baselineUsdPerMtok).c_str(),
                    usd(b.baselineMonthlyUsd).c_str(), usd(b.monthlySavingsUsd).c_str());
        if (b.paybackMonths)
            std::printf("             %spayback %.1f months; NPV over %lld months at %.1f %%/year: %s\n", est,
                        *b.paybackMonths, static_cast<long long>(b.horizonMonths), a.discountRate * 100,
                        usd(b.npvUsd).c_str());
        else
            std::printf("             %sno payback (it costs more per month than the API); NPV over %lld months at %.1f %%/year: %s\n",
                        est, static_cast<long long>(b.horizonMonths), a.discountRate * 100, usd(b.npvUsd).c_str());
    }
}

}  // namespace

int runTco(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = {
        {"hardware", true, "ID", "catalog device to cost (required; see verdict hardware list)"},
        {"tps", true, "N", "measured decode tokens/s per device (instead of RUN_ID)"},
        {"sweep", true, "ID", "throughput from a stored sweep: the best output tok/s over its points (instead of RUN_ID)"},
        {"batch", true, "N", "with --sweep: the point at this batch (best output tok/s among its prompt lengths)"},
        {"prefill-tps", true, "N", "measured prefill tokens/s (projected with the FLOPS ratio)"},
        {"measured-on", true, "ID", "catalog device the throughput was measured on (default: --hardware; for a CPU run: this-machine)"},
        {"tokens-per-day", true, "N", "daily output volume: sizes the fleet, monthly and 3-year TCO"},
        {"baseline-usd-per-mtok", true, "X", "hosted API price per 1M tokens: payback and NPV (needs --tokens-per-day)"},
        {"buy", false, "", "buy the device (default)"},
        {"purchase-usd", true, "X", "override the catalog purchase price"},
        {"cloud-usd-per-hour", true, "X", "override the catalog cloud $/hour"},
        {"hardware-file", true, "PATH", "user hardware catalog (default: $XDG_CONFIG_HOME/verdict/hardware.json)"},
        dbOption("for RUN_ID"),
        jsonOption(),
        helpOption(),
    };
    {
        const auto cost = specsOf(costAssumptionOptions(), core::CostAssumptions{});
        auto at = std::find_if(specs.begin(), specs.end(), [](const OptionSpec& o) { return o.name == "tokens-per-day"; });
        specs.insert(at == specs.end() ? at : at + 1, cost.begin(), cost.end());
    }
    const std::string usage = "verdict tco [RUN_ID | --sweep ID [--batch N] | --tps N] --hardware ID [--tokens-per-day N] [options] [--json]";
    auto args = Args::parse(argv, specs);
    if (!args) return fail("tco", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp(usage, formatOptions(specs));
        return kExitOk;
    }
    const auto& pos = args->positionals();
    if (pos.size() > 1) return fail("tco", "at most one RUN_ID", kExitUsage);
    if (!args->has("hardware")) return fail("tco", "--hardware ID is required (see verdict hardware list)", kExitUsage);
    if (args->has("rent") && args->has("buy")) return fail("tco", "--rent and --buy exclude each other", kExitUsage);
    if ((pos.empty() ? 0 : 1) + (args->has("tps") ? 1 : 0) + (args->has("sweep") ? 1 : 0) != 1)
        return fail("tco", "give the throughput one way: RUN_ID, --sweep ID or --tps N", kExitUsage);

    core::TcoRequest req;
    req.hardwareId = *args->value("hardware");
    if (auto m = args->value("measured-on")) req.measuredOnId = *m;
    core::CostAssumptions& a = req.assumptions;
    if (auto e = applyOptions(costAssumptionOptions(), *args, a)) return fail("tco", *e, kExitUsage);
    struct OptionalOption {
        const char* name;
        std::optional<double>* target;
    };
    std::optional<double> tps;
    for (const OptionalOption& o : {OptionalOption{"tps", &tps}, OptionalOption{"prefill-tps", &req.prefillTps},
                                    OptionalOption{"tokens-per-day", &req.tokensPerDay},
                                    OptionalOption{"baseline-usd-per-mtok", &req.baselineUsdPerMtok},
                                    OptionalOption{"purchase-usd", &req.purchaseUsdOverride},
                                    OptionalOption{"cloud-usd-per-hour", &req.cloudUsdPerHourOverride}}) {
        if (!args->has(o.name)) continue;
        auto v = args->number(o.name, 0);
        if (!v) return fail("tco", v.error().message, kExitUsage);
        *o.target = *v;
    }

    auto catalog = core::loadHardwareCatalog(args->value("hardware-file"));
    if (!catalog) return fail("tco", catalog.error().message, kExitBadInput);

    if (tps) {
        req.decodeTps = *tps;
        req.throughputSource = "cli";
    } else if (args->has("sweep")) {
        auto sweepId = args->integer("sweep", 0);
        auto batch = args->integer("batch", 0);
        if (!sweepId || *sweepId <= 0) return fail("tco", "--sweep needs a sweep id", kExitUsage);
        if (!batch) return fail("tco", batch.error().message, kExitUsage);
        auto db = core::openStoreForReading(args->value("db"));
        if (!db) return fail("tco", db.error().message, kExitBadInput);
        core::SweepRepository sweeps(*db);
        auto sweep = sweeps.find(*sweepId);
        if (!sweep) return fail("tco", sweep.error().message, kExitRuntime);
        if (!*sweep) return fail("tco", "sweep " + std::to_string(*sweepId) + " does not exist", kExitBadInput);
        auto points = sweeps.points(*sweepId);
        if (!points) return fail("tco", points.error().message, kExitRuntime);
        // The whole device's output rate: the best point (or the best at the asked batch).
        std::vector<core::ThroughputPoint> measured;
        for (const auto& pt : *points) {
            const nlohmann::json m = core::pointMetrics(pt);
            if (pt.error.empty() && m.is_object())
                measured.push_back({pt.promptTokens, pt.genTokens, pt.batch, m.value("output_tok_per_s", 0.0)});
        }
        const auto best = core::bestThroughputPoint(measured, *batch);
        if (!best)
            return fail("tco", "sweep " + std::to_string(*sweepId) + " has no measured point" +
                                   (*batch > 0 ? " at batch " + std::to_string(*batch) : std::string()),
                        kExitBadInput);
        core::useSweepThroughput(req, *sweepId, *best);
        if ((*sweep)->modelBytes > 0) req.modelBytes = static_cast<double>((*sweep)->modelBytes);
        auto on = core::measuredOnFor((*sweep)->device, req.measuredOnId, "sweep " + std::to_string(*sweepId));
        if (!on) return fail("tco", on.error().message, kExitBadInput);
        req.measuredOnId = *on;
    } else {
        int64_t runId = 0;
        const std::string& p = pos[0];
        auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), runId);
        if (ec != std::errc() || end != p.data() + p.size() || runId <= 0)
            return fail("tco", "'" + p + "' is not a run id", kExitUsage);
        auto db = core::openStoreForReading(args->value("db"));
        if (!db) return fail("tco", db.error().message, kExitBadInput);
        core::RunRepository runs(*db);
        auto run = runs.find(runId);
        if (!run) return fail("tco", run.error().message, kExitRuntime);
        if (!*run) return fail("tco", "run " + p + " does not exist", kExitBadInput);
        auto items = runs.items(runId);
        if (!items) return fail("tco", items.error().message, kExitRuntime);
        const bool prefillFromRun = !req.prefillTps.has_value();
        if (auto r = core::useRunThroughput(req, runId, core::runThroughputOf(*items)); !r)
            return fail("tco", r.error().message, kExitBadInput);
        if ((*run)->modelBytes > 0) req.modelBytes = static_cast<double>((*run)->modelBytes);
        auto on = core::measuredOnFor((*run)->device, req.measuredOnId, "run " + p);
        if (!on) return fail("tco", on.error().message, kExitBadInput);
        req.measuredOnId = *on;
        // A prefill rate derived from the run is optional: drop it rather than fail when a device
        // lacks the FLOPS figure its projection needs (an explicit --prefill-tps still fails).
        if (prefillFromRun) core::dropUnprojectablePrefill(*catalog, req);
    }

    auto report = core::computeTco(*catalog, req);
    if (!report) return fail("tco", report.error().message, kExitBadInput);
    if (args->has("json"))
        std::cout << core::tcoReportJson(*report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else
        printReport(*report);
    return kExitOk;
}

}  // namespace verdict::cli
