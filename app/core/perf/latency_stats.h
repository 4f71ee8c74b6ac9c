// Latency statistics of a load: per-request timings in, the figures serving benchmarks report out.
//
// Definitions follow vLLM's benchmark_serving (docs/metrics.md has the details and how other
// tools differ):
//   TTFT  request start -> first output token
//   TPOT  (E2E - TTFT) / (output tokens - 1), per request; requests with one token have none
//   ITL   every gap between consecutive output tokens, pooled over all requests
//   E2E   request start -> last output token
// Percentiles interpolate linearly between order statistics (numpy.percentile's default, which
// vLLM uses; core/stats/quantile.h), over all requests of the point (ITL: over all gaps).
#pragma once

#include "core/endpoints/token_count.h"

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace verdict::core {

// One request of a load, as measured by whoever sent it. Times in milliseconds; startMs is
// relative to the start of the measured window.
struct RequestTiming {
    int64_t promptTokens = 0;
    int64_t outputTokens = 0;
    double startMs = 0;
    double ttftMs = 0;
    double e2eMs = 0;
    std::vector<double> itlMs;  // outputTokens - 1 gaps when the tokens were seen one by one
    std::string error;          // non-empty: the request failed (its timings are not used)
    double ttfaMs = 0;          // first answer token when reasoning came first (reasoning_content); 0: none seen
    int64_t reasoningTokens = 0; // the server's count (usage), part of outputTokens
    double scheduleDelayMs = 0; // load tests: how late the request left against its schedule
    RequestTokens tokens;       // the server's usage and the client's own count, apart (token_count.h)
};

struct Distribution {
    int64_t n = 0;
    double mean = 0, min = 0, max = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0;
};

// n = 0 and zeros for an empty input.
Distribution distributionOf(std::vector<double> values);

struct LoadMetrics {
    int64_t requests = 0;        // completed requests
    int64_t failed = 0;          // requests with an error
    double durationS = 0;        // the measured window (wall time)
    int64_t promptTokens = 0;    // over completed requests
    int64_t outputTokens = 0;
    double requestsPerS = 0;     // completed / duration
    double outputTokPerS = 0;    // output tokens / duration
    double totalTokPerS = 0;     // (prompt + output tokens) / duration
    double prefillTokPerS = 0;   // mean over requests of promptTokens / TTFT
    Distribution ttftMs, tpotMs, itlMs, e2eMs;
};

// durationS <= 0: the window is taken as max(start + e2e) - min(start) over the requests.
LoadMetrics summarizeLoad(const std::vector<RequestTiming>& requests, double durationS);

nlohmann::json toJson(const Distribution& d);
nlohmann::json toJson(const LoadMetrics& m);
nlohmann::json toJson(const RequestTiming& r);
// The inverse of toJson(RequestTiming); missing fields read as 0 / empty.
RequestTiming requestTimingFromJson(const nlohmann::json& j);

}  // namespace verdict::core
