// One latency sweep (table sweeps) and one measured grid point (table sweep_points), as stored.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace verdict::core {

// Stored as text in sweeps.status: "running", "completed", "cancelled", "failed".
struct SweepRecord {
    int64_t id = 0;
    std::string name;
    nlohmann::json spec = nlohmann::json::object();  // the grid (prompt/gen/batch lists, reps, warm-ups, seed, threads)
    std::string createdAt;
    std::string status = "running";
    std::string backend;        // "engine" or "endpoint"
    std::string modelPath;
    std::string modelSha256;
    int64_t modelBytes = 0;
    std::string device;
    std::string engineVersion;
    nlohmann::json environment = nlohmann::json::object();  // machine, memory bandwidth, load time ...
    std::string headerHash;     // SHA-256 of the immutable columns (audit_chain.h)
    std::string finishedAt;     // "" while running
    std::string error;
};

struct SweepPointRecord {
    int64_t seq = 0;
    int64_t sweepId = 0;
    int64_t promptTokens = 0;
    int64_t genTokens = 0;
    int64_t batch = 0;          // sequences decoded together, or a load test's concurrency
    double rate = 0;            // a load test's request rate (requests/s, Poisson); 0: closed loop
    nlohmann::json metrics = nlohmann::json::object();   // LoadMetrics + roofline + memory (docs/schema.md)
    nlohmann::json requests = nlohmann::json::array();   // every measured request's timings
    std::string error;          // non-empty: the point could not be measured
    std::string createdAt;
    std::string prevHash;
    std::string rowHash;
};

// A point's metrics in the documented flat shape (docs/schema.md). Load-test points stored before
// 2026-12-03 nested the figures under "metrics" beside the level's extras ({mode, level, metrics:
// {...}, errors, ...}); for those the inner object is returned with the extras merged in, so
// that every reader sees one shape (the stored row, and so its hash, is left as it is).
nlohmann::json pointMetrics(const SweepPointRecord& p);

}  // namespace verdict::core
