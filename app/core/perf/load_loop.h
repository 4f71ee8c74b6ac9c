// Internal to the load runner (load_runner.cpp): one load level run on a single event-loop thread
// (libcurl easy handles on one multi handle, woken by epoll; arrivals, retries and scheduling
// delay as load_runner.h describes), and one blocking completion request. Not a public API.
#pragma once

#include "core/perf/load_runner.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace verdict::core::load_detail {

// A request that left more than this late against its schedule (p99) means the client, not the
// server, set the pace: the level is flagged and `verdict load` warns.
constexpr double kBehindScheduleMs = 10;

// Runs one level (res.mode and res.level say which) and fills res.requests, errors, retries,
// clientCpuMs and windowS. Fails only when the event loop cannot be set up.
Result<void> runLevel(const EndpointConfig& endpoint, const LoadSpec& spec, LoadLevelResult& res,
                      const std::atomic<bool>* cancel, const std::function<void(const LoadProgress&)>& progress,
                      uint64_t levelSeed);

// A thousand streams need a thousand sockets: the soft limit on open files (often 1024) is raised
// to the hard one when the spec needs more than it allows.
void raiseOpenFileLimit(const LoadSpec& spec);

// One blocking request (sendCompletion). Fills timing (relative to `start`), text, the error kind
// ("" on success) and, for a 429 / 5xx, the server's Retry-After.
void attempt(const EndpointConfig& endpoint, const std::string& prompt, int maxTokens, bool ignoreEos,
             std::chrono::steady_clock::time_point start, RequestTiming& t, std::string& text, std::string& kind,
             const std::atomic<bool>* cancel, double* retryAfterMs = nullptr);

}  // namespace verdict::core::load_detail
