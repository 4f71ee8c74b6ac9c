#include "core/services/tco.h"

#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/sweep_repository.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace verdict::core {

namespace {

ServiceError badInput(std::string message) { return {ServiceFailure::BadInput, std::move(message)}; }
ServiceError storage(std::string message) { return {ServiceFailure::Storage, std::move(message)}; }

// The sweep's best point (at the asked batch) as the throughput; its model's size; where it ran.
std::optional<ServiceError> readSweep(Database& db, const TcoSettings& s, TcoRequest& req, TcoDone& done) {
    const int64_t id = *s.sweepId;
    const std::string what = "sweep " + std::to_string(id);
    SweepRepository sweeps(db);
    auto sweep = sweeps.find(id);
    if (!sweep) return storage(sweep.error().message);
    if (!*sweep) return badInput(what + " does not exist");
    auto points = sweeps.points(id);
    if (!points) return storage(points.error().message);
    // The whole device's output rate: the best point (or the best at the asked batch).
    std::vector<ThroughputPoint> measured;
    for (const auto& pt : *points) {
        const nlohmann::json m = pointMetrics(pt);
        if (pt.error.empty() && m.is_object())
            measured.push_back({pt.promptTokens, pt.genTokens, pt.batch, m.value("output_tok_per_s", 0.0)});
    }
    const auto best = bestThroughputPoint(measured, s.sweepBatch);
    if (!best)
        return badInput(what + " has no measured point" +
                        (s.sweepBatch > 0 ? " at batch " + std::to_string(s.sweepBatch) : std::string()));
    useSweepThroughput(req, id, *best);
    done.sweepPoint = best;
    if ((*sweep)->modelBytes > 0) req.modelBytes = static_cast<double>((*sweep)->modelBytes);
    auto on = measuredOnFor((*sweep)->device, req.measuredOnId, what);
    if (!on) return badInput(on.error().message);
    req.measuredOnId = *on;
    return std::nullopt;
}

// The run's median decode rate (and prefill rate) as the throughput; its model's size; where it ran.
std::optional<ServiceError> readRun(Database& db, const HardwareCatalog& catalog, const TcoSettings& s, TcoRequest& req) {
    const int64_t id = *s.runId;
    const std::string what = "run " + std::to_string(id);
    RunRepository runs(db);
    auto run = runs.find(id);
    if (!run) return storage(run.error().message);
    if (!*run) return badInput(what + " does not exist");
    auto items = runs.items(id);
    if (!items) return storage(items.error().message);
    const bool prefillFromRun = !req.prefillTps.has_value();
    if (auto r = useRunThroughput(req, id, runThroughputOf(*items)); !r) return badInput(r.error().message);
    if ((*run)->modelBytes > 0) req.modelBytes = static_cast<double>((*run)->modelBytes);
    auto on = measuredOnFor((*run)->device, req.measuredOnId, what);
    if (!on) return badInput(on.error().message);
    req.measuredOnId = *on;
    // A prefill rate derived from the run is optional: drop it rather than fail when a device
    // lacks the FLOPS figure its projection needs (a rate the person gave still fails).
    if (prefillFromRun) dropUnprojectablePrefill(catalog, req);
    return std::nullopt;
}

}  // namespace

Result<void> validateTcoSettings(const TcoSettings& s) {
    if (s.hardwareId.empty()) return Error{"no device to cost: name a hardware id of the catalog"};
    const int ways = (s.runId ? 1 : 0) + (s.sweepId ? 1 : 0) + (s.decodeTps ? 1 : 0);
    if (ways != 1) return Error{"give the throughput one way: a run, a sweep or a measured rate"};
    if (s.runId && *s.runId <= 0) return Error{"a run id is a positive number"};
    if (s.sweepId && *s.sweepId <= 0) return Error{"a sweep id is a positive number"};
    return {};
}

ServiceResult<TcoDone> costFromThroughput(const TcoSettings& s) {
    if (auto v = validateTcoSettings(s); !v) return badInput(v.error().message);
    auto catalog = loadHardwareCatalog(s.hardwareFile);
    if (!catalog) return badInput(catalog.error().message);

    TcoRequest req;
    req.hardwareId = s.hardwareId;
    req.measuredOnId = s.measuredOnId;
    req.assumptions = s.assumptions;
    req.prefillTps = s.prefillTps;
    req.tokensPerDay = s.tokensPerDay;
    req.baselineUsdPerMtok = s.baselineUsdPerMtok;
    req.purchaseUsdOverride = s.purchaseUsd;
    req.cloudUsdPerHourOverride = s.cloudUsdPerHour;

    TcoDone done;
    if (s.decodeTps) {
        req.decodeTps = *s.decodeTps;
        req.throughputSource = "cli";
    } else {
        auto db = openStoreForReading(s.database);
        if (!db) return badInput(db.error().message);
        const auto failed = s.sweepId ? readSweep(*db, s, req, done) : readRun(*db, *catalog, s, req);
        if (failed) return *failed;
    }

    auto report = computeTco(*catalog, req);
    if (!report) return badInput(report.error().message);
    done.throughputSource = describeThroughput(report->request, done.sweepPoint);
    done.report = std::move(*report);
    return done;
}

}  // namespace verdict::core
