// Stability under load: a soak test of an endpoint, or of a local model served in-process, for
// minutes or hours — the use case behind `verdict soak` and the Performance screen's "Soak…"
// dialog. The time is cut into windows (default 60 s); each window is one open-loop load level
// (Poisson arrivals at the window's rate, core/perf/load_runner.h) and records its TTFT / E2E /
// ITL percentiles, throughput, errors by kind, and the server's resident memory at its end:
//   * an endpoint: process_resident_memory_bytes of its /metrics (vLLM, SGLang, TGI and `verdict
//     serve` export it), or /proc/PID/status (VmRSS) when a local server's pid is given;
//   * a GGUF file: served by this process (`verdict serve`'s server on a free port), so its own
//     /proc/self/status — in the window that is the whole workbench's memory, other jobs included.
// Each window lasts its length (the load level ends when its last arrival is answered; the rest of
// the window passes idle); a window cut short by a cancel is stored with partial = true and left
// out of the summary.
// With a burst rate the windows alternate between the rate (low) and the burst rate (high).
// Summary (addSoakSummary): the drift of each series over time — least-squares slope per hour with
// its 95 % interval (stats/drift.h), warm-up windows left out — for memory (leaks), TTFT / E2E
// P99 and P50 (latency creep), throughput and error rate (with bursts the latency and throughput
// fits use the low-rate windows, the baseline); and for bursts the spread of the P99s
// across the high windows and across the low ones ("P99 jitter"). Stored as a study of kind "soak"
// (store/study_repository.h) after every window, so a killed soak keeps every finished window.
#pragma once

#include "core/endpoints/endpoint_api.h"
#include "core/services/service_result.h"

#include <verdict/engine/result.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

namespace verdict::core {

class Database;

struct SoakRequest {
    std::string target;          // "http(s)://host:port[/v1]" (an endpoint) or a GGUF file (served here)
    std::string model;           // endpoint: the served model name ("" = the first of /v1/models)
    std::string apiKey;          // endpoint: Bearer token (memory only, never stored)
    std::string caFile;          // endpoint over https: trust this PEM file
    bool insecure = false;       // endpoint over https: no certificate check
    EndpointApi api;             // endpoint: routes, query and key header (a provider preset's; OpenAI's by default)
    double durationS = 3600;
    double windowS = 60;
    double rate = 1;             // requests/s (Poisson arrivals)
    double burstRate = 0;        // > 0: odd windows run at this rate instead (bursts)
    int promptWords = 64;
    int maxTokens = 128;
    int warmupWindows = 1;       // first windows left out of the drift fits (caches, allocator growth)
    int64_t pid = 0;             // endpoint: read the server's RSS from /proc/PID/status (0: its /metrics)
    int threads = 0;             // GGUF: compute threads (<= 0: physical cores)
    int parallel = 8;            // GGUF: sequences the in-process server decodes together
    std::string device = "cpu";  // GGUF: "cpu", "cuda:N"
    int gpuLayers = -1;
    uint64_t seed = 1;
    std::string name;            // default: the target's file or host name
};

// The checks made before anything runs; errors name the option (window at least 0.5 s and at
// most the duration, at most 10 000 windows, rate and burst rate in (0, 10000], ...).
Result<void> validateSoakRequest(const SoakRequest& request);

struct SoakProgress {
    int window = 0, windows = 0;     // 0-based window, count
    double rate = 0;
    std::string phase;               // "steady", "low", "high"
    int64_t completed = 0, failed = 0;  // in this window so far
    double elapsedS = 0;             // since the soak started
};

struct SoakEvents {
    std::function<void(const SoakProgress&)> progress;
    std::function<void(const nlohmann::json&)> stored;  // the soak after each stored window
};

struct SoakDone {
    int64_t id = 0;
    nlohmann::json soak;             // the stored shape (docs/cli.md, "verdict soak")
    bool cancelled = false;
};

// BadInput: an invalid request, a file that cannot be served, an endpoint that does not answer;
// ModelOpen: the model cannot be loaded; Storage: the database refuses. A cancelled soak keeps its
// finished windows (status cancelled).
ServiceResult<SoakDone> runSoak(Database& db, const SoakRequest& request, const SoakEvents& events, std::stop_token stop);

// Recomputes soak["summary"] from soak["windows"] (pure; exposed for tests): totals, drift of each
// series ({slope per hour, ci: [lo, hi] | null, n, r2, drifting, first, last}), burst spreads.
void addSoakSummary(nlohmann::json& soak);

// "process_resident_memory_bytes 1.5e+09" in a Prometheus text; nullopt when absent.
std::optional<double> residentBytesFromMetrics(const std::string& prometheusText);
// VmRSS of /proc/PID/status in bytes; nullopt when unreadable.
std::optional<double> residentBytesOfPid(int64_t pid);

// Stored soaks, newest first (each: id, name, created_at, status, target, windows), and one by id.
Result<nlohmann::json> listSoaks(Database& db);
Result<std::optional<nlohmann::json>> loadSoak(Database& db, int64_t id);

}  // namespace verdict::core
