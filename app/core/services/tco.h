// The cost of serving a model on a catalog device, from a throughput read from the results
// database (a stored run or sweep) or given by the person: the use case behind `verdict tco`.
// The CLI fills a TcoSettings and calls costFromThroughput; reading the run or sweep (which rate,
// which point, which device it was measured on, the model's size) is done here, with the rule
// `verdict report` and the window's Cost screen apply too (core/tco/tco_report.h:
// bestThroughputPoint, useSweepThroughput, useRunThroughput, measuredOnFor,
// dropUnprojectablePrefill).
//
//   TcoSettings s;                     // CostAssumptions' defaults (cost_model.h): buy, 3 years ...
//   s.hardwareId = "h100-sxm";
//   s.sweepId = 3;                     // or s.runId, or s.decodeTps
//   auto done = costFromThroughput(s); // shape of tcoReportJson(done->report): docs/cli.md
//
// The Cost screen compares two runs at once and reads their sweeps the way the decision report
// does (core/report: the sweeps of each run's model file), so it goes through buildReportData.
#pragma once

#include "core/services/service_result.h"
#include "core/tco/tco_report.h"

#include <cstdint>
#include <optional>
#include <string>

namespace verdict::core {

struct TcoSettings {
    std::string hardwareId;                     // the catalog device to cost (required)
    std::optional<std::string> measuredOnId;    // where the throughput was measured (default: hardwareId; a CPU run or sweep: this-machine)
    // The throughput, one way exactly:
    std::optional<int64_t> runId;               // a stored run: the median decode tok/s of its items (and their prefill rate)
    std::optional<int64_t> sweepId;             // a stored sweep: its point with the best output tok/s
    int64_t sweepBatch = 0;                     // with sweepId: the best point at this batch (0: at any batch)
    std::optional<double> decodeTps;            // measured decode tokens/s per device, given
    std::optional<double> prefillTps;           // measured prefill tokens/s, given (projected with the FLOPS ratio)
    std::optional<double> tokensPerDay;         // daily output volume: fleet, monthly and 3-year TCO
    std::optional<double> baselineUsdPerMtok;   // hosted API price: payback and NPV (needs tokensPerDay)
    std::optional<double> purchaseUsd;          // overrides the catalog purchase price
    std::optional<double> cloudUsdPerHour;      // overrides the catalog cloud $/hour
    CostAssumptions assumptions;                // buy or rent, utilisation, years, power, ops ... (cost_model.h)
    std::optional<std::string> hardwareFile;    // user hardware catalog (default: $XDG_CONFIG_HOME/verdict/hardware.json)
    std::optional<std::string> database;        // results database for runId / sweepId (default: store.h's), opened for reading
};

// The checks made before anything is read: a device, and the throughput given one way exactly
// (a run, a sweep or a rate), run and sweep ids positive. Errors are bad input.
Result<void> validateTcoSettings(const TcoSettings& settings);

struct TcoDone {
    TcoReport report;                           // report.request: the throughput as read (source, run or sweep, items or batch)
    std::optional<ThroughputPoint> sweepPoint;  // the sweep's point used
    std::string throughputSource;               // describeThroughput: "sweep 3: best output tok/s (prompt 128, gen 128, batch 4)"
};

// validateTcoSettings, loads the catalog, reads the run or sweep (the database opened for reading
// only then), applies the shared throughput rule and computes the cost (computeTco). BadInput: a
// catalog, database, run or sweep that does not exist or cannot be used, a sweep without a
// measured point (at that batch), a run without a decode rate, a GPU measurement without
// measuredOnId, numbers computeTco refuses; Storage: a read the database refuses.
ServiceResult<TcoDone> costFromThroughput(const TcoSettings& settings);

}  // namespace verdict::core
