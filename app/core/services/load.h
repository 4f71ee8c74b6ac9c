// A load test of an OpenAI-compatible endpoint: the use case behind `verdict load URL` and the
// Performance screen's "Run sweeps" for an endpoint (its batch sizes as concurrency levels). Both
// fill a LoadSettings and call runEndpointLoad: the same checks, the same refusal when nothing
// could be measured, the same stored sweep.
//
//   LoadSettings s;            // LoadSpec's defaults (perf/load_runner.h): 64-word prompts,
//   s.spec.concurrency = {1, 8};  // 128 tokens, 60 s per level, 3 retries, seed 1
//   auto done = runEndpointLoad(&db, endpoint, s, progress, cancel);
#pragma once

#include "core/perf/load_runner.h"
#include "core/services/service_result.h"
#include "core/store/database.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

struct LoadSettings {
    LoadSpec spec;     // levels, duration or requests, lengths, SLO, retries, seed, token counter
    std::string name;  // of the stored sweep; "" = "URL MODEL"
};

struct LoadDone {
    EndpointConfig endpoint;              // resolved: the model the server named
    std::vector<LoadLevelResult> levels;
    std::optional<SweepRecord> stored;    // when a database was given
    bool cancelled = false;               // stopped part-way; the finished levels are kept
};

// Checks the levels (BadInput, validateLoadSpec's message), asks the endpoint for its model
// (ModelOpen: it does not answer, or refuses the key), runs every level, refuses a test in which
// not one request was answered (Runtime: the error kinds and the first error, nothing stored),
// and stores the levels as an endpoint sweep when `db` is given (Storage when it refuses).
ServiceResult<LoadDone> runEndpointLoad(Database* db, EndpointConfig endpoint, const LoadSettings& settings,
                                        const std::function<void(const LoadProgress&)>& progress = {},
                                        const std::atomic<bool>* cancel = nullptr);

}  // namespace verdict::core
