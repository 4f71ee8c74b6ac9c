#include "core/perf/latency_stats.h"

#include "core/stats/quantile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace verdict::core {

Distribution distributionOf(std::vector<double> values) {
    Distribution d;
    values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }), values.end());
    if (values.empty()) return d;
    std::sort(values.begin(), values.end());
    d.n = static_cast<int64_t>(values.size());
    d.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    d.min = values.front();
    d.max = values.back();
    d.p50 = quantileSorted(values, 0.50);
    d.p90 = quantileSorted(values, 0.90);
    d.p95 = quantileSorted(values, 0.95);
    d.p99 = quantileSorted(values, 0.99);
    return d;
}

LoadMetrics summarizeLoad(const std::vector<RequestTiming>& requests, double durationS) {
    LoadMetrics m;
    std::vector<double> ttft, tpot, itl, e2e;
    double prefillSum = 0;
    int64_t prefillN = 0;
    double first = std::numeric_limits<double>::infinity(), last = -std::numeric_limits<double>::infinity();
    for (const RequestTiming& r : requests) {
        if (!r.error.empty()) {
            ++m.failed;
            continue;
        }
        ++m.requests;
        m.promptTokens += r.promptTokens;
        m.outputTokens += r.outputTokens;
        first = std::min(first, r.startMs);
        last = std::max(last, r.startMs + r.e2eMs);
        ttft.push_back(r.ttftMs);
        e2e.push_back(r.e2eMs);
        if (r.outputTokens > 1) tpot.push_back((r.e2eMs - r.ttftMs) / static_cast<double>(r.outputTokens - 1));
        itl.insert(itl.end(), r.itlMs.begin(), r.itlMs.end());
        if (r.ttftMs > 0 && r.promptTokens > 0) {
            prefillSum += static_cast<double>(r.promptTokens) / (r.ttftMs / 1000.0);
            ++prefillN;
        }
    }
    m.durationS = durationS > 0 ? durationS : (m.requests > 0 ? (last - first) / 1000.0 : 0);
    if (m.durationS > 0) {
        m.requestsPerS = static_cast<double>(m.requests) / m.durationS;
        m.outputTokPerS = static_cast<double>(m.outputTokens) / m.durationS;
        m.totalTokPerS = static_cast<double>(m.promptTokens + m.outputTokens) / m.durationS;
    }
    m.prefillTokPerS = prefillN > 0 ? prefillSum / static_cast<double>(prefillN) : 0;
    m.ttftMs = distributionOf(std::move(ttft));
    m.tpotMs = distributionOf(std::move(tpot));
    m.itlMs = distributionOf(std::move(itl));
    m.e2eMs = distributionOf(std::move(e2e));
    return m;
}

nlohmann::json toJson(const Distribution& d) {
    return {{"n", d.n},     {"mean", d.mean}, {"min", d.min}, {"max", d.max},
            {"p50", d.p50}, {"p90", d.p90},   {"p95", d.p95}, {"p99", d.p99}};
}

nlohmann::json toJson(const LoadMetrics& m) {
    return {{"requests", m.requests},
            {"failed", m.failed},
            {"duration_s", m.durationS},
            {"prompt_tokens", m.promptTokens},
            {"output_tokens", m.outputTokens},
            {"requests_per_s", m.requestsPerS},
            {"output_tok_per_s", m.outputTokPerS},
            {"total_tok_per_s", m.totalTokPerS},
            {"prefill_tok_per_s", m.prefillTokPerS},
            {"ttft_ms", toJson(m.ttftMs)},
            {"tpot_ms", toJson(m.tpotMs)},
            {"itl_ms", toJson(m.itlMs)},
            {"e2e_ms", toJson(m.e2eMs)}};
}

nlohmann::json toJson(const RequestTiming& r) {
    nlohmann::json j = {{"prompt_tokens", r.promptTokens}, {"output_tokens", r.outputTokens},
                        {"start_ms", r.startMs},           {"ttft_ms", r.ttftMs},
                        {"e2e_ms", r.e2eMs},               {"itl_ms", r.itlMs}};
    if (r.ttfaMs > 0) j["ttfa_ms"] = r.ttfaMs;
    if (r.reasoningTokens > 0) j["reasoning_tokens"] = r.reasoningTokens;
    if (r.scheduleDelayMs > 0) j["schedule_delay_ms"] = r.scheduleDelayMs;
    if (!r.error.empty()) j["error"] = r.error;
    // Token accounting, only what is known (-1: no usage / no tokenizer).
    const RequestTokens& k = r.tokens;
    if (k.usagePrompt >= 0) j["usage_prompt_tokens"] = k.usagePrompt;
    if (k.usageOutput >= 0) j["usage_output_tokens"] = k.usageOutput;
    if (k.countedPrompt >= 0) j["counted_prompt_tokens"] = k.countedPrompt;
    if (k.countedOutput >= 0) j["counted_output_tokens"] = k.countedOutput;
    if (k.chunks > 0) j["chunks"] = k.chunks;
    if (k.maxTokens > 0) j["max_tokens"] = k.maxTokens;
    return j;
}

RequestTiming requestTimingFromJson(const nlohmann::json& j) {
    RequestTiming r;
    if (!j.is_object()) return r;
    auto num = [&](const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0; };
    r.promptTokens = static_cast<int64_t>(num("prompt_tokens"));
    r.outputTokens = static_cast<int64_t>(num("output_tokens"));
    r.startMs = num("start_ms");
    r.ttftMs = num("ttft_ms");
    r.e2eMs = num("e2e_ms");
    r.ttfaMs = num("ttfa_ms");
    r.reasoningTokens = static_cast<int64_t>(num("reasoning_tokens"));
    r.scheduleDelayMs = num("schedule_delay_ms");
    if (j.contains("itl_ms") && j["itl_ms"].is_array())
        for (const auto& v : j["itl_ms"])
            if (v.is_number()) r.itlMs.push_back(v.get<double>());
    if (j.contains("error") && j["error"].is_string()) r.error = j["error"].get<std::string>();
    auto count = [&](const char* k, int64_t missing) { return j.contains(k) && j[k].is_number() ? j[k].get<int64_t>() : missing; };
    r.tokens.usagePrompt = count("usage_prompt_tokens", -1);
    r.tokens.usageOutput = count("usage_output_tokens", -1);
    r.tokens.countedPrompt = count("counted_prompt_tokens", -1);
    r.tokens.countedOutput = count("counted_output_tokens", -1);
    r.tokens.chunks = count("chunks", 0);
    r.tokens.maxTokens = count("max_tokens", 0);
    return r;
}

}  // namespace verdict::core
