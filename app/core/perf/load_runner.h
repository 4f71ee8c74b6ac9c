// Load tests against an OpenAI-compatible endpoint (vLLM, TGI, SGLang, llama-server, Ollama,
// `verdict serve`): closed-loop fixed concurrency (like `locust -u N`) or open-loop fixed rate
// with Poisson arrivals; for a duration or a request count. Per request TTFT, ITL (from the
// streamed chunks' arrival), E2E and token counts (from `usage` when the server gives it);
// failures counted by kind, never hidden; retries with exponential backoff only for 429, 5xx,
// timeouts and connection errors (never for other 4xx); goodput under an SLO; a per-second
// series of completions and latencies. Metric definitions: docs/metrics.md.
#pragma once

#include "core/endpoints/endpoint_api.h"
#include "core/net/http.h"
#include "core/perf/latency_stats.h"
#include "core/store/database.h"
#include "core/store/sweep_record.h"
#include "verdict/engine/result.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace verdict::core {

struct EndpointConfig {
    std::string baseUrl;                         // "http://host:port" (a trailing /v1 is accepted)
    std::string model;                           // "" : the first id of GET /v1/models
    std::string apiKey;                          // sent as api.auth says (Bearer by default); never stored
    std::map<std::string, std::string> headers;  // extra headers
    bool chat = true;                            // /v1/chat/completions, else /v1/completions
    bool stream = true;
    int timeoutMs = 60000;
    std::string caFile;                          // https: trust this PEM file instead of the system CA store
    bool insecure = false;                       // https: no certificate check (recorded with results, warned about)
    EndpointApi api;                             // routes, query and auth style (a provider preset's; OpenAI's by default)
};

// One row of a replayed trace (the Mooncake trace format AIPerf replays: JSONL rows
// {"timestamp": ms, "input_length": N, "output_length": M}); the prompt is N random words.
struct TraceEntry {
    double timestampMs = 0;
    int inputWords = 0;
    int outputTokens = 0;
};

struct LoadSpec {
    std::vector<int> concurrency;   // closed-loop levels
    std::vector<double> rates;      // open-loop levels (requests/s); both lists may be given
    double durationS = 60;          // per level (ignored when requests > 0)
    int64_t requests = 0;           // per level; 0: run for durationS
    int promptWords = 64;           // prompt length (random words; the server's token count is recorded)
    int maxTokens = 128;
    bool ignoreEos = true;          // ask for exactly maxTokens (vLLM / verdict serve extension)
    int maxRetries = 3;
    double backoffMs = 250;         // first retry delay; doubles each time
    double sloTtftMs = 0;           // goodput: TTFT <= this (0: no bound)
    double sloTpotMs = 0;           // goodput: TPOT <= this (0: no bound)
    int maxInFlight = 1024;         // open loop: arrivals beyond this count as client_overload errors
    double burstiness = 1;          // open loop: gamma shape of the gaps (1: Poisson; < 1 burstier; vLLM's --burstiness)
    double rampUpS = 0;             // closed loop: clients start spread over this; open loop: the rate rises linearly over it
    std::vector<TraceEntry> trace;  // non-empty: one more level that replays these arrivals (budget: the whole trace)
    uint64_t seed = 1;
    // Counts each completed request's prompt and output with the model's tokenizer too, beside
    // the server's usage (LoadLevelResult::tokens). Null: usage only (chunks when it is missing).
    std::shared_ptr<const TokenCounter> tokenCounter;
};

// Reads a trace file (JSONL, one {"timestamp", "input_length", "output_length"} per line; extra
// fields ignored). Errors name the file and line.
Result<std::vector<TraceEntry>> loadTrace(const std::string& path);

// Parses "ttft=500ms,tpot=50ms" (units ms or s) into the spec's SLO fields.
Result<void> parseSlo(const std::string& text, LoadSpec& spec);

struct LoadLevelResult {
    std::string mode;                      // "concurrency", "rate" or "trace"
    double level = 0;                      // the concurrency, the rate, or the trace's row count
    std::vector<RequestTiming> requests;   // every request, failed ones with their error
    std::map<std::string, int64_t> errors; // kind -> count: connect, timeout, http_429, http_4xx, http_5xx, protocol, client_overload
    int64_t retries = 0;
    LoadMetrics metrics;
    int64_t goodRequests = 0;              // completed within the SLO
    double goodputPerS = 0;
    Distribution scheduleDelay;            // how late requests left against their schedule (ms)
    bool behindSchedule = false;           // scheduleDelay.p99 > 10 ms: the client set the pace
    double clientCpuMs = 0;                // CPU time of the load generator's thread over the level
    double windowS = 0;                    // the level's wall time
    TokenAccounting tokens;                // usage against the client's count, max_tokens exceeded
    nlohmann::json series = nlohmann::json::array();  // per second: {t, completed, errors, output_tokens, ttft_p50, e2e_p50, e2e_p99}
};

struct LoadProgress {
    std::string mode;
    double level = 0;
    int64_t completed = 0, failed = 0;
    double elapsedS = 0;
};

// "http://host:port/v1/" -> "http://host:port" (the routes are appended to it).
std::string endpointApiRoot(const std::string& baseUrl);
// The URL of one route of the endpoint: API root + the route of endpoint.api ("{model}" replaced
// by the percent-encoded model name) + "?" + api.query. "" when the provider has no such route
// (an empty route: e.g. no text completions); callers say so naming endpoint.api.provider.
enum class EndpointRoute { Chat, Completions, Models };
std::string endpointUrl(const EndpointConfig& endpoint, EndpointRoute route);
// The client options every request to this endpoint uses: its TLS settings, connect timeout
// min(timeoutMs, 10 s), read timeout readTimeoutMs (<= 0: timeoutMs), the cancel flag.
net::HttpClientOptions endpointClientOptions(const EndpointConfig& endpoint, int readTimeoutMs = 0,
                                             const std::atomic<bool>* cancel = nullptr);
// Retries (load tests and suite runs on an endpoint): the Retry-After of a 429 / 503 answer in ms
// (delta-seconds, capped at 10 min; 0 when absent or an HTTP-date), and the wait before retry
// number attempt + 1: exponential backoff backoffMs * 2^attempt with jitter (a uniform factor in
// [0.5, 1), so that clients refused together do not return together), never shorter than the
// server's Retry-After.
double retryAfterMsOf(const net::HttpResponse& response);
double retryDelayMs(int attempt, double backoffMs, double retryAfterMs, std::mt19937_64& rng);
// What results record as the device of an endpoint: "endpoint", or, loudly, "endpoint (TLS NOT
// VERIFIED: --insecure)" when https ran without a certificate check.
std::string endpointDeviceLabel(const EndpointConfig& endpoint);
// "none" (http), "verified" (https) or "unverified" (https with --insecure).
std::string endpointTlsMode(const EndpointConfig& endpoint);
// Content-Type, the key when there is one (api.auth: "Authorization: Bearer KEY", "api-key: KEY",
// or none), and the extra headers.
std::map<std::string, std::string> endpointHeaders(const EndpointConfig& endpoint);

// Resolves the model (when not given) and checks the endpoint answers. Errors name the URL.
Result<EndpointConfig> resolveEndpoint(EndpointConfig endpoint);

// One request; `cancel` aborts it. Used by the load test and by suite runs on an endpoint.
RequestTiming sendCompletion(const EndpointConfig& endpoint, const std::string& prompt, int maxTokens,
                             bool ignoreEos, std::string* text, std::string* errorKind,
                             const std::atomic<bool>* cancel = nullptr);

// The levels and their bounds (concurrency 1..4096 and within the endpoint's cap, rates in
// (0, 10000], a duration or a request count, sane trace rows); runLoad checks them first.
Result<void> validateLoadSpec(const EndpointConfig& endpoint, const LoadSpec& spec);

Result<std::vector<LoadLevelResult>> runLoad(const EndpointConfig& endpoint, const LoadSpec& spec,
                                             const std::function<void(const LoadProgress&)>& progress = {},
                                             const std::atomic<bool>* cancel = nullptr);

nlohmann::json toJson(const LoadLevelResult& r, bool withRequests);

// Stores a finished load test as an endpoint sweep (one point per level, in the sweep_points
// chain), as `verdict load` and the window's Performance screen do. `name` "" = "URL MODEL".
// Returns the stored sweep (status completed, or cancelled when `cancelled`).
Result<SweepRecord> storeLoadResults(Database& db, const EndpointConfig& endpoint, const LoadSpec& spec,
                                     const std::vector<LoadLevelResult>& results, const std::string& name,
                                     const std::string& engineVersion, bool cancelled);

}  // namespace verdict::core
