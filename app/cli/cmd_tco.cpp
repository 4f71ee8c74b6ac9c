// verdict tco [RUN_ID] --hardware ID [--tps N] ...: cost per million output tokens, monthly and
// 3-year TCO for a daily volume, payback and NPV against a hosted API, from a measured
// throughput (--tps, or the median decode tok/s of a stored run). When the throughput was
// measured on another catalog device (--measured-on), the figures are projections and say so.
// Formulas: docs/tco.md. JSON shape: docs/cli.md. Reading the run or sweep and the cost are the
// service's (core/services/tco.h); this file binds the options and prints.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "cli/options.h"
#include "core/report/report_format.h"
#include "core/services/tco.h"

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

// An optional number (--tps 1500): any value the shell gives as a number; computeTco says what
// it refuses (bad input), as before the options were bound.
template <class Field>
BoundOption<core::TcoSettings> optionalNumber(std::string name, std::string valueName, std::string help, Field field) {
    BoundOption<core::TcoSettings> o;
    o.spec = {name, true, valueName, std::move(help)};
    o.apply = [name, field](const Args& args, core::TcoSettings& s) -> std::optional<std::string> {
        auto v = args.number(name, 0);
        if (!v) return v.error().message;
        field(s) = *v;
        return std::nullopt;
    };
    o.shownDefault = [](const core::TcoSettings&) { return std::string(); };
    return o;
}

// The options of `verdict tco` other than the cost assumptions (cli/cost_options.h), bound to the
// service's settings (core/services/tco.h TcoSettings). RUN_ID is the positional argument.
const OptionTable<core::TcoSettings>& tcoOptions() {
    using S = core::TcoSettings;
    static const OptionTable<S> table = [] {
        BoundOption<S> sweep;
        sweep.spec = {"sweep", true, "ID", "throughput from a stored sweep: the best output tok/s over its points (instead of RUN_ID)"};
        sweep.apply = [](const Args& args, S& s) -> std::optional<std::string> {
            auto v = args.integer("sweep", 0);
            if (!v || *v <= 0) return std::string("--sweep needs a sweep id");
            s.sweepId = *v;
            return std::nullopt;
        };
        sweep.shownDefault = [](const S&) { return std::string(); };
        BoundOption<S> batch;
        batch.spec = {"batch", true, "N", "with --sweep: the point at this batch (best output tok/s among its prompt lengths)"};
        batch.apply = [](const Args& args, S& s) -> std::optional<std::string> {
            if (!args.has("sweep")) return std::nullopt;  // read with --sweep only
            auto v = args.integer("batch", 0);
            if (!v) return v.error().message;
            s.sweepBatch = *v;
            return std::nullopt;
        };
        batch.shownDefault = [](const S&) { return std::string(); };
        return OptionTable<S>{
            textOption<S>("hardware", "ID", "catalog device to cost (required; see verdict hardware list)",
                          [](auto& s) -> auto& { return s.hardwareId; }),
            optionalNumber("tps", "N", "measured decode tokens/s per device (instead of RUN_ID)",
                           [](S& s) -> auto& { return s.decodeTps; }),
            std::move(sweep),
            std::move(batch),
            optionalNumber("prefill-tps", "N", "measured prefill tokens/s (projected with the FLOPS ratio)",
                           [](S& s) -> auto& { return s.prefillTps; }),
            optionalTextOption<S>("measured-on", "ID", "catalog device the throughput was measured on (default: --hardware; for a CPU run: this-machine)",
                                  [](auto& s) -> auto& { return s.measuredOnId; }),
            optionalNumber("tokens-per-day", "N", "daily output volume: sizes the fleet, monthly and 3-year TCO",
                           [](S& s) -> auto& { return s.tokensPerDay; }),
            optionalNumber("baseline-usd-per-mtok", "X", "hosted API price per 1M tokens: payback and NPV (needs --tokens-per-day)",
                           [](S& s) -> auto& { return s.baselineUsdPerMtok; }),
            flagOption<S>("buy", "buy the device (default)", [](S& s) { s.assumptions.mode = core::Ownership::Buy; }),
            optionalNumber("purchase-usd", "X", "override the catalog purchase price", [](S& s) -> auto& { return s.purchaseUsd; }),
            optionalNumber("cloud-usd-per-hour", "X", "override the catalog cloud $/hour", [](S& s) -> auto& { return s.cloudUsdPerHour; }),
            optionalTextOption<S>("hardware-file", "PATH", "user hardware catalog (default: $XDG_CONFIG_HOME/verdict/hardware.json)",
                                  [](auto& s) -> auto& { return s.hardwareFile; }),
        };
    }();
    return table;
}

}  // namespace

int runTco(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(tcoOptions(), core::TcoSettings{});
    {
        const auto cost = specsOf(costAssumptionOptions(), core::CostAssumptions{});
        auto at = std::find_if(specs.begin(), specs.end(), [](const OptionSpec& o) { return o.name == "tokens-per-day"; });
        specs.insert(at == specs.end() ? at : at + 1, cost.begin(), cost.end());
    }
    for (OptionSpec o : {dbOption("for RUN_ID"), jsonOption(), helpOption()}) specs.push_back(std::move(o));
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

    core::TcoSettings settings;
    if (auto e = applyOptions(costAssumptionOptions(), *args, settings.assumptions)) return fail("tco", *e, kExitUsage);
    if (auto e = applyOptions(tcoOptions(), *args, settings)) return fail("tco", *e, kExitUsage);
    if (!pos.empty()) {
        int64_t runId = 0;
        const std::string& p = pos[0];
        auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), runId);
        if (ec != std::errc() || end != p.data() + p.size() || runId <= 0)
            return fail("tco", "'" + p + "' is not a run id", kExitUsage);
        settings.runId = runId;
    }
    settings.database = args->value("db");

    // Bad input (exit 2): an unknown device, catalog, database, run or sweep, numbers the cost
    // model refuses; a refused read (exit 3).
    auto done = core::costFromThroughput(settings);
    if (!done) return failService("tco", done.error(), "cpu");
    if (args->has("json"))
        std::cout << core::tcoReportJson(done->report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else
        printReport(done->report);
    return kExitOk;
}

}  // namespace verdict::cli
