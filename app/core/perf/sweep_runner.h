// A latency sweep: a grid of (prompt tokens, output tokens, batch) points measured on one
// SweepTarget with warm-ups and repetitions, each point stored as soon as it is measured
// (store/sweep_repository.h), so a killed sweep keeps every finished point.
//
// Per point: `warmups` unmeasured batches, then `reps` measured batches of `batch` concurrent
// requests with random prompt tokens (seeded); the metrics (latency_stats.h) pool all measured
// requests. Also per point: the decode roofline bound from the measured memory bandwidth
// (weights read once per step for the whole batch, plus each sequence's KV cache) and the
// fraction of it reached. Cold start: the model load time and the first request's latency
// against the warm median of the same point, stored with the first point.
#pragma once

#include "core/perf/bandwidth_probe.h"
#include "core/perf/latency_stats.h"
#include "core/perf/sweep_target.h"
#include "core/store/database.h"
#include "core/store/sweep_record.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

struct SweepSpec {
    std::vector<int64_t> promptTokens{128, 512};
    std::vector<int64_t> genTokens{128};
    std::vector<int64_t> batches{1};
    int reps = 3;
    int warmups = 1;
    uint64_t seed = 1;
};

// Checks the grid: non-empty lists, prompt >= 1, gen >= 2 (TPOT needs two tokens), batch in
// [1, maxBatch], reps >= 1, warm-ups >= 0, at most 1000 points. Errors name the field.
Result<void> validateSweepSpec(const SweepSpec& spec, int maxBatch);
nlohmann::json toJson(const SweepSpec& spec);

struct SweepProgress {
    int pointIndex = 0;       // 0-based
    int pointCount = 0;
    int64_t promptTokens = 0, genTokens = 0, batch = 0;
    std::string phase;        // "warm-up", "measure", "stored"
    double elapsedS = 0;
    double etaS = -1;         // -1 while unknown
};

struct SweepOptions {
    std::string name;                       // defaults to the model file's name
    std::string engineVersion;
    std::string modelSha256;                // recorded with the sweep (may be "")
    int64_t modelBytes = 0;
    double bandwidthGbPerS = 0;             // <= 0: measured with measureMemoryBandwidth (host RAM; a GPU target: none, roofline 0)
    // What the probe is checked against; nullopt: catalogBandwidthForThisMachine() (tests set it).
    std::optional<BandwidthReference> bandwidthReference;
    std::function<void(const SweepProgress&)> progress;
    const std::atomic<bool>* cancel = nullptr;  // checked between batches
    // Why the sweep was made when it is part of a larger measurement ("quant-compare #3"), stored
    // as environment.purpose; such sweeps are not picked by the report's automatic sweep choice.
    std::string purpose;
};

struct SweepOutcome {
    SweepRecord sweep;
    std::vector<SweepPointRecord> points;
    bool cancelled = false;
    std::vector<std::string> warnings;  // the bandwidth probe's (also stored: environment.bandwidth_probe.warnings)
};

// The metrics JSON of one point (what sweep_points.metrics holds; docs/schema.md).
nlohmann::json pointMetricsJson(const LoadMetrics& m, int64_t batch, int64_t promptTokens, int64_t genTokens,
                                const SweepTargetInfo& info, const TargetMemory& mem, double bandwidthGbPerS);

// Runs the sweep, storing it in `db`. Point failures (e.g. a context too large to allocate) are
// stored as points with an error and the sweep goes on; database failures stop it.
Result<SweepOutcome> runSweep(Database& db, SweepTarget& target, const SweepSpec& spec, const SweepOptions& options);

}  // namespace verdict::core
