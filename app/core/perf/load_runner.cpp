#include "core/perf/load_runner.h"

#include "core/net/http.h"
#include "core/perf/load_loop.h"
#include "core/store/sweep_repository.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <random>

namespace verdict::core {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
using namespace load_detail;

}  // namespace

std::string endpointApiRoot(const std::string& url) {
    std::string b = url;
    while (!b.empty() && b.back() == '/') b.pop_back();
    if (b.size() >= 3 && b.compare(b.size() - 3, 3, "/v1") == 0) b.resize(b.size() - 3);
    return b;
}

namespace {

std::string percentEncode(const std::string& s) {
    static const char* kHex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    return out;
}

}  // namespace

std::string endpointUrl(const EndpointConfig& e, EndpointRoute route) {
    std::string path = route == EndpointRoute::Chat          ? e.api.chatRoute
                       : route == EndpointRoute::Completions ? e.api.completionsRoute
                                                             : e.api.modelsRoute;
    if (path.empty()) return "";
    for (size_t at = path.find("{model}"); at != std::string::npos; at = path.find("{model}", at)) {
        const std::string m = percentEncode(e.model);
        path.replace(at, 7, m);
        at += m.size();
    }
    std::string url = endpointApiRoot(e.baseUrl) + path;
    if (!e.api.query.empty()) url += (url.find('?') == std::string::npos ? "?" : "&") + e.api.query;
    return url;
}

net::HttpClientOptions endpointClientOptions(const EndpointConfig& e, int readTimeoutMs, const std::atomic<bool>* cancel) {
    net::HttpClientOptions o;
    o.connectTimeoutMs = std::min(e.timeoutMs, 10000);
    o.readTimeoutMs = readTimeoutMs > 0 ? readTimeoutMs : e.timeoutMs;
    o.cancel = cancel;
    o.tls.caFile = e.caFile;
    o.tls.insecure = e.insecure;
    return o;
}

double retryAfterMsOf(const net::HttpResponse& r) {
    const auto it = r.headers.find("retry-after");
    if (it == r.headers.end()) return 0;
    char* end = nullptr;
    const double s = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || !(s >= 0)) return 0;  // an HTTP-date: the backoff alone decides
    return std::min(s, 600.0) * 1000;
}

double retryDelayMs(int attempt, double backoffMs, double retryAfterMs, std::mt19937_64& rng) {
    const double exp = backoffMs * std::pow(2.0, std::min(attempt, 16));
    const double jittered = exp * std::uniform_real_distribution<double>(0.5, 1.0)(rng);
    return std::min(std::max(jittered, retryAfterMs), 600000.0);
}

std::string endpointTlsMode(const EndpointConfig& e) {
    if (e.baseUrl.rfind("https://", 0) != 0) return "none";
    return e.insecure ? "unverified" : "verified";
}

std::string endpointDeviceLabel(const EndpointConfig& e) {
    return endpointTlsMode(e) == "unverified" ? "endpoint (TLS NOT VERIFIED: --insecure)" : "endpoint";
}

std::map<std::string, std::string> endpointHeaders(const EndpointConfig& e) {
    std::map<std::string, std::string> h = e.headers;
    h["Content-Type"] = "application/json";
    if (!e.apiKey.empty()) {
        if (e.api.auth == EndpointAuth::Bearer) h["Authorization"] = "Bearer " + e.apiKey;
        else if (e.api.auth == EndpointAuth::ApiKeyHeader) h["api-key"] = e.apiKey;
    }
    return h;
}

Result<std::vector<TraceEntry>> loadTrace(const std::string& path) {
    std::ifstream f(path);
    if (!f) return Error{path + ": cannot open the trace"};
    std::vector<TraceEntry> rows;
    std::string line;
    int64_t n = 0;
    auto count = [](const json& j, const char* key) -> std::optional<double> {
        const auto it = j.find(key);
        if (it == j.end() || !it->is_number()) return std::nullopt;
        return it->get<double>();
    };
    while (std::getline(f, line)) {
        ++n;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const json j = json::parse(line, nullptr, false);
        if (!j.is_object()) return Error{path + ":" + std::to_string(n) + ": not a JSON object"};
        const auto ts = count(j, "timestamp"), in = count(j, "input_length"), out = count(j, "output_length");
        if (!ts || !in || !out)
            return Error{path + ":" + std::to_string(n) + ": needs numbers \"timestamp\" (ms), \"input_length\" and \"output_length\""};
        if (!(*ts >= 0) || *ts > 1e10 || !(*in >= 0) || *in > 1e6 || !(*out >= 1) || *out > 1e6)
            return Error{path + ":" + std::to_string(n) + ": timestamp must be 0..1e10 ms, input_length 0..1e6, output_length 1..1e6"};
        if (!rows.empty() && *ts < rows.back().timestampMs)
            return Error{path + ":" + std::to_string(n) + ": timestamps must not go back in time"};
        if (rows.size() >= 10000000) return Error{path + ": more than 10 million rows"};
        rows.push_back({*ts, static_cast<int>(*in), static_cast<int>(*out)});
    }
    if (rows.empty()) return Error{path + ": the trace has no rows"};
    return rows;
}

Result<void> parseSlo(const std::string& text, LoadSpec& spec) {
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t comma = text.find(',', pos);
        const std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        pos = comma == std::string::npos ? text.size() : comma + 1;
        const size_t eq = part.find('=');
        if (eq == std::string::npos) return Error{"--slo: '" + part + "' is not NAME=VALUE (e.g. ttft=500ms)"};
        const std::string name = part.substr(0, eq), value = part.substr(eq + 1);
        char* end = nullptr;
        double v = std::strtod(value.c_str(), &end);
        const std::string unit = end ? std::string(end) : "";
        if (end == value.c_str() || !(v > 0)) return Error{"--slo: '" + value + "' is not a positive duration"};
        if (unit == "s") v *= 1000;
        else if (unit != "ms" && !unit.empty()) return Error{"--slo: unit '" + unit + "' (use ms or s)"};
        if (name == "ttft") spec.sloTtftMs = v;
        else if (name == "tpot") spec.sloTpotMs = v;
        else return Error{"--slo: unknown bound '" + name + "' (ttft, tpot)"};
    }
    return {};
}

Result<EndpointConfig> resolveEndpoint(EndpointConfig e) {
    auto base = net::parseHttpUrl(endpointApiRoot(e.baseUrl));
    if (!base) return base.error();
    const net::HttpClientOptions o = endpointClientOptions(e, std::min(e.timeoutMs, 30000));
    const std::string who = e.api.provider.empty() ? std::string("this endpoint") : "provider " + e.api.provider;
    if (endpointUrl(e, e.chat ? EndpointRoute::Chat : EndpointRoute::Completions).empty())
        return Error{who + " has no " + (e.chat ? "chat-completions" : "text-completions") + " route"};
    const bool modelInRoute = e.api.chatRoute.find("{model}") != std::string::npos;
    if (modelInRoute && e.model.empty())
        return Error{who + " needs the model (the deployment name) in its URL: give MODEL or --model NAME"};
    const std::string url = endpointUrl(e, EndpointRoute::Models);
    if (url.empty()) {
        if (e.model.empty()) return Error{who + " lists no models: pass --model NAME"};
        return e;
    }
    auto resp = net::httpRequest("GET", url, endpointHeaders(e), "", o);
    if (!resp) return resp.error();
    if (resp->status == 401 || resp->status == 403)
        return Error{url + ": HTTP " + std::to_string(resp->status) + " (check the API key)"};
    if (resp->status != 200) return Error{url + ": HTTP " + std::to_string(resp->status)};
    if (e.model.empty()) {  // (a deployment route never gets here: its model was checked above)
        const json j = json::parse(resp->body, nullptr, false);
        if (j.is_discarded() || !j.contains("data") || !j["data"].is_array() || j["data"].empty() ||
            !j["data"][0].contains("id") || !j["data"][0]["id"].is_string())
            return Error{url + ": no model listed; pass --model NAME"};
        e.model = j["data"][0]["id"].get<std::string>();
    }
    return e;
}

RequestTiming sendCompletion(const EndpointConfig& e, const std::string& prompt, int maxTokens, bool ignoreEos,
                             std::string* text, std::string* errorKind, const std::atomic<bool>* cancel) {
    RequestTiming t;
    std::string out, kind;
    attempt(e, prompt, maxTokens, ignoreEos, Clock::now(), t, out, kind, cancel);
    if (text) *text = out;
    if (errorKind) *errorKind = kind;
    return t;
}

json toJson(const LoadLevelResult& r, bool withRequests) {
    json j = {{"mode", r.mode},     {"level", r.level},       {"metrics", toJson(r.metrics)}, {"errors", r.errors},
              {"retries", r.retries}, {"good_requests", r.goodRequests}, {"goodput_per_s", r.goodputPerS},
              {"series", r.series},
              {"schedule_delay_ms", toJson(r.scheduleDelay)},
              {"behind_schedule", r.behindSchedule},
              {"client_cpu_ms", r.clientCpuMs},
              {"client_cpu_us_per_request",
               r.requests.empty() ? 0.0 : r.clientCpuMs * 1000 / static_cast<double>(r.requests.size())},
              {"token_accounting", toJson(r.tokens)}};
    if (withRequests) {
        json list = json::array();
        for (const auto& t : r.requests) list.push_back(toJson(t));
        j["requests"] = list;
    }
    return j;
}

Result<void> validateLoadSpec(const EndpointConfig& e, const LoadSpec& spec) {
    if (spec.concurrency.empty() && spec.rates.empty() && spec.trace.empty())
        return Error{"give at least one concurrency or rate level, or a trace"};
    if (!(spec.burstiness > 0) || spec.burstiness > 1000) return Error{"burstiness must be in (0, 1000] (1: Poisson arrivals)"};
    if (!(spec.rampUpS >= 0)) return Error{"the ramp-up must be 0 s or longer"};
    for (int c : spec.concurrency) {
        if (c < 1 || c > 4096) return Error{"concurrency " + std::to_string(c) + " is outside 1..4096"};
        if (e.api.maxConcurrency > 0 && c > e.api.maxConcurrency)
            return Error{"concurrency " + std::to_string(c) + " is above this endpoint's cap of " +
                         std::to_string(e.api.maxConcurrency) + " requests in flight (" +
                         (e.api.provider.empty() ? std::string("--max-concurrency") : "provider " + e.api.provider + "'s max_concurrency") +
                         "); lower the level, or give --max-concurrency N (0: no cap) to measure beyond it"};
    }
    for (double r : spec.rates)
        if (!(r > 0) || r > 10000) return Error{"rate " + std::to_string(r) + " is outside (0, 10000] requests/s"};
    if (spec.requests <= 0 && !(spec.durationS > 0)) return Error{"give a duration or a request count"};

    for (const TraceEntry& row : spec.trace)
        if (!(row.timestampMs >= 0) || row.inputWords < 0 || row.outputTokens < 1)
            return Error{"a trace row has a negative time or length, or asks for no output"};
    return {};
}

Result<std::vector<LoadLevelResult>> runLoad(const EndpointConfig& e, const LoadSpec& spec,
                                             const std::function<void(const LoadProgress&)>& progress,
                                             const std::atomic<bool>* cancel) {
    if (auto r = validateLoadSpec(e, spec); !r) return r.error();
    // Open loop: never more in flight than the cap; arrivals beyond it count as client_overload.
    LoadSpec capped = spec;
    if (e.api.maxConcurrency > 0) capped.maxInFlight = static_cast<int>(std::min<int64_t>(spec.maxInFlight, e.api.maxConcurrency));
    raiseOpenFileLimit(capped);

    std::vector<LoadLevelResult> out;
    std::vector<std::pair<std::string, double>> levels;
    for (int c : spec.concurrency) levels.emplace_back("concurrency", c);
    for (double r : spec.rates) levels.emplace_back("rate", r);
    if (!spec.trace.empty()) levels.emplace_back("trace", static_cast<double>(spec.trace.size()));
    uint64_t levelSeed = spec.seed;
    for (const auto& [mode, level] : levels) {
        if (cancel && cancel->load()) break;
        LoadLevelResult res;
        res.mode = mode;
        res.level = level;
        if (auto r = runLevel(e, capped, res, cancel, progress, levelSeed); !r) return r.error();
        const double windowS = res.windowS;
        std::vector<double> delays;
        for (const auto& t : res.requests)
            if (t.error != "client_overload") delays.push_back(t.scheduleDelayMs);
        res.scheduleDelay = distributionOf(std::move(delays));
        res.behindSchedule = res.scheduleDelay.n > 0 && res.scheduleDelay.p99 > kBehindScheduleMs;
        std::sort(res.requests.begin(), res.requests.end(), [](const auto& a, const auto& b) { return a.startMs < b.startMs; });
        res.metrics = summarizeLoad(res.requests, windowS);
        std::vector<RequestTokens> counts;
        for (const auto& t : res.requests)
            if (t.error.empty()) counts.push_back(t.tokens);
        res.tokens = accountTokens(counts, spec.tokenCounter.get());
        // Goodput and the per-second series (by completion time).
        std::map<int64_t, std::vector<const RequestTiming*>> bySecond;
        for (const auto& t : res.requests) {
            const int64_t sec = static_cast<int64_t>((t.startMs + t.e2eMs) / 1000.0);
            bySecond[sec].push_back(&t);
            if (!t.error.empty()) continue;
            const double tpot = t.outputTokens > 1 ? (t.e2eMs - t.ttftMs) / static_cast<double>(t.outputTokens - 1) : 0;
            if ((spec.sloTtftMs <= 0 || t.ttftMs <= spec.sloTtftMs) && (spec.sloTpotMs <= 0 || tpot <= spec.sloTpotMs))
                ++res.goodRequests;
        }
        res.goodputPerS = windowS > 0 ? static_cast<double>(res.goodRequests) / windowS : 0;
        for (const auto& [sec, list] : bySecond) {
            std::vector<double> ttft, e2e;
            int64_t errors = 0, tokens = 0;
            for (const RequestTiming* t : list) {
                if (!t->error.empty()) {
                    ++errors;
                    continue;
                }
                ttft.push_back(t->ttftMs);
                e2e.push_back(t->e2eMs);
                tokens += t->outputTokens;
            }
            const Distribution dt = distributionOf(ttft), de = distributionOf(e2e);
            res.series.push_back({{"t", sec},
                                  {"completed", static_cast<int64_t>(ttft.size())},
                                  {"errors", errors},
                                  {"output_tokens", tokens},
                                  {"ttft_p50", dt.p50},
                                  {"e2e_p50", de.p50},
                                  {"e2e_p99", de.p99}});
        }
        out.push_back(std::move(res));
        ++levelSeed;
    }
    return out;
}

Result<SweepRecord> storeLoadResults(Database& db, const EndpointConfig& ep, const LoadSpec& spec,
                                     const std::vector<LoadLevelResult>& results, const std::string& name,
                                     const std::string& engineVersion, bool cancelled) {
    SweepRepository repo(db);
    SweepRecord s;
    s.name = name.empty() ? ep.baseUrl + " " + ep.model : name;
    s.spec = {{"kind", "load"},
              {"concurrency", spec.concurrency},
              {"rates", spec.rates},
              {"duration_s", spec.requests > 0 ? nlohmann::json(nullptr) : nlohmann::json(spec.durationS)},
              {"requests", spec.requests},
              {"prompt_words", spec.promptWords},
              {"max_tokens", spec.maxTokens},
              {"api", ep.chat ? "chat" : "completions"},
              {"stream", ep.stream},
              {"slo", {{"ttft_ms", spec.sloTtftMs}, {"tpot_ms", spec.sloTpotMs}}},
              {"seed", spec.seed},
              {"burstiness", spec.burstiness},
              {"ramp_up_s", spec.rampUpS},
              {"trace_rows", spec.trace.size()},
              {"tls", endpointTlsMode(ep)},
              {"max_concurrency", ep.api.maxConcurrency},
              {"tokenizer", spec.tokenCounter ? spec.tokenCounter->path() : std::string()}};
    s.backend = "endpoint";
    s.modelPath = ep.baseUrl + " " + ep.model;
    s.device = endpointDeviceLabel(ep);
    s.engineVersion = engineVersion;
    auto created = repo.create(s);
    if (!created) return created.error();
    for (const auto& r : results) {
        SweepPointRecord p;
        p.sweepId = created->id;
        p.promptTokens = r.metrics.requests > 0 ? r.metrics.promptTokens / r.metrics.requests : spec.promptWords;
        p.genTokens = spec.maxTokens;
        p.batch = r.mode == "concurrency" ? static_cast<int64_t>(r.level) : spec.maxInFlight;
        p.rate = r.mode == "rate" ? r.level : 0;
        // The documented flat shape (docs/schema.md): the LoadMetrics figures at the top, the
        // level's extras (mode, errors, schedule delay, token accounting, ...) beside them.
        p.metrics = toJson(r.metrics);
        const nlohmann::json level = toJson(r, false);  // a named object: items() must not outlive it
        for (const auto& [k, v] : level.items())
            if (k != "metrics") p.metrics[k] = v;
        nlohmann::json reqs = nlohmann::json::array();
        for (const auto& t : r.requests) reqs.push_back(toJson(t));
        p.requests = std::move(reqs);
        if (auto st = repo.appendPoint(std::move(p)); !st) return st.error();
    }
    if (auto f = repo.finish(created->id, cancelled ? "cancelled" : "completed", ""); !f) return f.error();
    auto stored = repo.find(created->id);
    if (!stored) return stored.error();
    return **stored;
}

}  // namespace verdict::core
