// One TCO answer, as `verdict tco` prints it and the GUI shows it: the device, where the
// throughput came from, the projection when the device is not the one measured, the per-device
// cost, the fleet for a daily volume and the comparison with a hosted API.
//
//   auto catalog = loadHardwareCatalog(std::nullopt);
//   TcoRequest req; req.hardwareId = "h100-sxm"; req.decodeTps = 1500; req.tokensPerDay = 5e8;
//   auto report = computeTco(*catalog, req);          // Error: unknown id, bad inputs, missing prices
//   std::cout << tcoReportJson(*report).dump(2);      // shape: docs/cli.md "verdict tco"
#pragma once

#include "core/store/run_record.h"
#include "core/tco/cost_model.h"
#include "core/tco/hardware_catalog.h"
#include "core/tco/projection.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// Throughput read from a stored run's items.
struct RunThroughput {
    int64_t itemsWithDecode = 0;          // items with a positive decode tok/s and no error
    std::optional<double> medianDecodeTps;
    int64_t itemsWithPrefill = 0;         // items with tokens_in > 0 and a positive TTFT
    std::optional<double> medianPrefillTps;  // median of tokens_in / TTFT (TTFT includes more than prefill)
};
RunThroughput runThroughputOf(const std::vector<RunItemRecord>& items);
// The median of a non-empty list (mean of the middle two for an even count).
double medianOf(std::vector<double> values);

struct TcoRequest {
    std::string hardwareId;                   // the device to cost
    std::optional<std::string> measuredOnId;  // where the throughput was measured (default: hardwareId)
    double decodeTps = 0;                     // measured output tokens/s per device
    std::optional<double> prefillTps;         // measured prefill tokens/s (projection only)
    std::string throughputSource = "cli";     // "cli" (--tps) | "run" | "sweep"
    std::optional<int64_t> runId;
    std::optional<int64_t> sweepId;           // source "sweep": the sweep and the point's batch
    int64_t sweepBatch = 0;
    int64_t runItems = 0;                     // items the run median is over
    std::optional<double> modelBytes;         // weights' size, for the fits-in-memory caveat
    CostAssumptions assumptions;
    std::optional<double> tokensPerDay;       // sizes the fleet (monthly, 3-year TCO)
    std::optional<double> baselineUsdPerMtok; // needs tokensPerDay
    std::optional<double> purchaseUsdOverride;
    std::optional<double> cloudUsdPerHourOverride;
};

// The measured throughput a cost is computed from: one rule for `verdict tco` and the decision
// report (and so the window's Cost screen).
//   a sweep: its point with the best output tok/s (at one batch when asked), error-free points only;
//   a run:   the median decode tok/s of its items (batch 1), and their median prefill tok/s for the
//            projection (dropped when a device on either side has no FLOPS figure to project with).
struct ThroughputPoint {
    int64_t promptTokens = 0, genTokens = 0, batch = 0;
    double outputTokPerS = 0;
};
// nullopt when no point (at that batch, when batch > 0) measured a rate.
std::optional<ThroughputPoint> bestThroughputPoint(const std::vector<ThroughputPoint>& points, int64_t batch = 0);
void useSweepThroughput(TcoRequest& request, int64_t sweepId, const ThroughputPoint& best);
// Fails naming the run when none of its items has a decode rate.
Result<void> useRunThroughput(TcoRequest& request, int64_t runId, const RunThroughput& throughput);
// The catalog entry the throughput was measured on: `given`, else this-machine for a CPU device;
// a GPU is no catalog entry by name, so without `given` it is an error naming `what` and the device.
Result<std::string> measuredOnFor(const std::string& device, const std::optional<std::string>& given, const std::string& what);
// Drops the prefill rate useRunThroughput took from the run when it cannot be projected (a
// device without fp16_tflops_dense). Callers skip it for a rate the person gave: that one stays,
// and computeTco says why it cannot be projected.
void dropUnprojectablePrefill(const HardwareCatalog& catalog, TcoRequest& request);
// "sweep 3: best output tok/s (prompt 128, gen 128, batch 4)", "run 7: median decode tok/s of 40 items (batch 1)".
std::string describeThroughput(const TcoRequest& request, const std::optional<ThroughputPoint>& point = std::nullopt);

struct TcoReport {
    HardwareEntry hardware;
    HardwareEntry measuredOn;
    TcoRequest request;
    DevicePrice price;                           // after overrides
    std::optional<ThroughputProjection> projection;  // set when measuredOn != hardware
    double costTps = 0;                          // the throughput the cost uses (measured or projected)
    bool estimated = false;                      // true when costTps is a projection
    DeviceCost device;
    std::optional<FleetCost> fleet;
    std::optional<BaselineComparison> baseline;
};

// Every error is about the input: unknown ids (with the known ids listed), bad numbers,
// missing prices, a baseline without a daily volume.
Result<TcoReport> computeTco(const HardwareCatalog& catalog, const TcoRequest& request);

nlohmann::json tcoReportJson(const TcoReport& report);

}  // namespace verdict::core
