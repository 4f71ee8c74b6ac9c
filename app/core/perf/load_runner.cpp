#include "core/perf/load_runner.h"

#include "core/net/http.h"
#include "core/net/openai_response.h"
#include "core/store/sweep_repository.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

namespace verdict::core {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double msBetween(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

// A prompt of n pseudo-random common words (seeded): the server's tokenizer decides the count.
std::string randomPrompt(std::mt19937_64& rng, int words) {
    static const char* const kWords[] = {"the", "model", "time", "river", "small", "green", "number", "city", "write",
                                         "answer", "quick", "story", "light", "water", "house", "paper", "seven",
                                         "bright", "table", "music", "north", "garden", "simple", "engine", "cloud"};
    std::string s = "Continue the text:";
    for (int i = 0; i < words; ++i) {
        s += ' ';
        s += kWords[rng() % (sizeof kWords / sizeof *kWords)];
    }
    return s;
}

bool retryable(const std::string& kind) {
    return kind == "http_429" || kind == "http_5xx" || kind == "timeout" || kind == "connect" || kind == "dropped";
}

std::string errorKindOf(const std::string& message) {
    if (message.find("timed out") != std::string::npos || message.find("timeout") != std::string::npos) return "timeout";
    if (message.find("cannot connect") != std::string::npos || message.find("cannot resolve") != std::string::npos)
        return "connect";
    if (message.find("TLS with") != std::string::npos) return "tls";
    if (message.find("cancelled") != std::string::npos) return "cancelled";
    if (message.find("connection lost") != std::string::npos || message.find("body ended early") != std::string::npos ||
        message.find("closed the connection") != std::string::npos)
        return "dropped";
    return "protocol";
}

// One attempt. Fills timing (relative to `start`), text, and the error kind ("" on success).
void attempt(const EndpointConfig& e, const std::string& prompt, int maxTokens, bool ignoreEos, Clock::time_point start,
             RequestTiming& t, std::string& text, std::string& kind, const std::atomic<bool>* cancel,
             double* retryAfterMs = nullptr) {
    json body = {{"model", e.model}, {"max_tokens", maxTokens}, {"temperature", 0}, {"stream", e.stream}};
    if (ignoreEos) body["ignore_eos"] = true;
    if (e.stream) body["stream_options"] = {{"include_usage", true}};
    if (e.chat) body["messages"] = json::array({{{"role", "user"}, {"content", prompt}}});
    else body["prompt"] = prompt;
    const std::string url = endpointApiRoot(e.baseUrl) + (e.chat ? "/v1/chat/completions" : "/v1/completions");
    const net::HttpClientOptions o = endpointClientOptions(e, 0, cancel);
    std::vector<double> arrivals;
    int64_t usagePrompt = -1, usageCompletion = -1;
    std::string protocolError;
    bool sawReasoning = false;
    net::SseParser sse;
    std::string raw;
    auto onEvent = [&](const std::string& data) {
        const net::OpenAiStreamChunk c = net::parseOpenAiStreamChunk(data);
        if (c.done) return;
        if (!c.object) {
            protocolError = "an event is not JSON: " + data.substr(0, 80);
            return;
        }
        if (c.error) {
            protocolError = "stream error: " + c.error->substr(0, 200);
            return;
        }
        if (c.usage) {
            usagePrompt = c.usage->promptTokens.value_or(-1);
            usageCompletion = c.usage->completionTokens.value_or(-1);
            t.reasoningTokens = c.usage->reasoningTokens.value_or(0);
        }
        // Role-only or empty chunks carry no token (AIPerf ignores them too); a reasoning piece is a
        // token (TTFT counts it), and the first answer piece after reasoning sets TTFA.
        if (c.piece.empty() && c.reasoningPiece.empty()) return;
        arrivals.push_back(msBetween(start, Clock::now()));
        if (c.piece.empty()) {
            sawReasoning = true;
            return;
        }
        if (sawReasoning && t.ttfaMs == 0) t.ttfaMs = arrivals.back();
        text += c.piece;
    };
    auto resp = net::httpRequest("POST", url, endpointHeaders(e), body.dump(), o, [&](std::string_view d) {
        if (e.stream) sse.feed(d, onEvent);
        else raw.append(d);
        return true;
    });
    const auto end = Clock::now();
    if (!resp) {
        t.error = resp.error().message;
        kind = errorKindOf(t.error);
        return;
    }
    if (resp->status != 200) {
        kind = resp->status == 429 ? "http_429" : resp->status >= 500 ? "http_5xx" : "http_4xx";
        if (retryAfterMs) *retryAfterMs = retryAfterMsOf(*resp);
        t.error = "HTTP " + std::to_string(resp->status) + ": " + (e.stream ? std::string() : raw.substr(0, 300));
        return;
    }
    if (!e.stream) {
        auto completion = net::parseOpenAiCompletion(raw);
        if (!completion) {
            kind = "protocol";
            t.error = "the response is not a completion: " + raw.substr(0, 200);
            return;
        }
        text = std::move(completion->text);
        if (completion->usage) {
            usagePrompt = completion->usage->promptTokens.value_or(-1);
            usageCompletion = completion->usage->completionTokens.value_or(-1);
        }
        t.ttftMs = t.e2eMs = msBetween(start, end);  // no stream: the first token arrives with the last
    } else {
        if (!protocolError.empty()) {
            kind = "protocol";
            t.error = protocolError;
            return;
        }
        if (arrivals.empty()) {
            kind = "protocol";
            t.error = "the stream ended without any token";
            return;
        }
        t.ttftMs = arrivals.front();
        t.e2eMs = arrivals.back();
        for (size_t i = 1; i < arrivals.size(); ++i) t.itlMs.push_back(arrivals[i] - arrivals[i - 1]);
    }
    t.promptTokens = std::max<int64_t>(usagePrompt, 0);
    t.outputTokens = usageCompletion >= 0 ? usageCompletion : static_cast<int64_t>(arrivals.size());
    kind.clear();
}

}  // namespace

std::string endpointApiRoot(const std::string& url) {
    std::string b = url;
    while (!b.empty() && b.back() == '/') b.pop_back();
    if (b.size() >= 3 && b.compare(b.size() - 3, 3, "/v1") == 0) b.resize(b.size() - 3);
    return b;
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
    if (!e.apiKey.empty()) h["Authorization"] = "Bearer " + e.apiKey;
    return h;
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
    const std::string url = endpointApiRoot(e.baseUrl) + "/v1/models";
    auto resp = net::httpRequest("GET", url, endpointHeaders(e), "", o);
    if (!resp) return resp.error();
    if (resp->status == 401 || resp->status == 403)
        return Error{url + ": HTTP " + std::to_string(resp->status) + " (check the API key)"};
    if (resp->status != 200) return Error{url + ": HTTP " + std::to_string(resp->status)};
    if (e.model.empty()) {
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
              {"series", r.series}};
    if (withRequests) {
        json list = json::array();
        for (const auto& t : r.requests) list.push_back(toJson(t));
        j["requests"] = list;
    }
    return j;
}

Result<std::vector<LoadLevelResult>> runLoad(const EndpointConfig& e, const LoadSpec& spec,
                                             const std::function<void(const LoadProgress&)>& progress,
                                             const std::atomic<bool>* cancel) {
    if (spec.concurrency.empty() && spec.rates.empty()) return Error{"give at least one concurrency or rate level"};
    for (int c : spec.concurrency)
        if (c < 1 || c > 4096) return Error{"concurrency " + std::to_string(c) + " is outside 1..4096"};
    for (double r : spec.rates)
        if (!(r > 0) || r > 10000) return Error{"rate " + std::to_string(r) + " is outside (0, 10000] requests/s"};
    if (spec.requests <= 0 && !(spec.durationS > 0)) return Error{"give a duration or a request count"};

    std::vector<LoadLevelResult> out;
    std::vector<std::pair<std::string, double>> levels;
    for (int c : spec.concurrency) levels.emplace_back("concurrency", c);
    for (double r : spec.rates) levels.emplace_back("rate", r);
    uint64_t levelSeed = spec.seed;
    for (const auto& [mode, level] : levels) {
        if (cancel && cancel->load()) break;
        LoadLevelResult res;
        res.mode = mode;
        res.level = level;
        std::mutex mu;
        std::atomic<int64_t> issued{0};
        const auto t0 = Clock::now();
        auto timeUp = [&] {
            if (cancel && cancel->load()) return true;
            if (spec.requests > 0) return false;
            return std::chrono::duration<double>(Clock::now() - t0).count() >= spec.durationS;
        };
        auto claim = [&] {  // false when the level's request budget is used up
            if (spec.requests > 0) return issued.fetch_add(1) < spec.requests;
            issued.fetch_add(1);
            return !timeUp();
        };
        auto one = [&](uint64_t seed) {
            std::mt19937_64 rng(seed);
            const std::string prompt = randomPrompt(rng, spec.promptWords);
            const auto start = Clock::now();
            RequestTiming t;
            std::string text, kind;
            int64_t tries = 0;
            for (int a = 0;; ++a) {
                t = RequestTiming{};
                double retryAfterMs = 0;
                attempt(e, prompt, spec.maxTokens, spec.ignoreEos, start, t, text, kind, cancel, &retryAfterMs);
                if (kind.empty() || !retryable(kind) || a >= spec.maxRetries || (cancel && cancel->load())) break;
                ++tries;
                const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(
                                                      retryDelayMs(a, spec.backoffMs, retryAfterMs, rng)));
                while (Clock::now() < until && !(cancel && cancel->load()))
                    std::this_thread::sleep_until(std::min(until, Clock::now() + std::chrono::milliseconds(100)));
            }
            t.startMs = msBetween(t0, start);
            if (!kind.empty() && t.error.empty()) t.error = kind;
            std::lock_guard lock(mu);
            res.retries += tries;
            if (!kind.empty()) ++res.errors[kind];
            res.requests.push_back(std::move(t));
            if (progress) {
                LoadProgress p{mode, level, 0, 0, std::chrono::duration<double>(Clock::now() - t0).count()};
                for (const auto& r : res.requests) (r.error.empty() ? p.completed : p.failed)++;
                progress(p);
            }
        };
        if (mode == "concurrency") {
            std::vector<std::thread> workers;
            for (int w = 0; w < static_cast<int>(level); ++w)
                workers.emplace_back([&, w] {
                    uint64_t n = 0;
                    while (claim()) one(levelSeed * 7919 + static_cast<uint64_t>(w) * 104729 + n++);
                });
            for (auto& th : workers) th.join();
        } else {
            std::mt19937_64 rng(levelSeed);
            std::exponential_distribution<double> gap(level);  // Poisson arrivals: exponential gaps
            std::vector<std::thread> inflight;
            std::atomic<int> running{0};
            double at = 0;
            uint64_t n = 0;
            while (claim()) {
                at += gap(rng);
                const auto when = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(at));
                while (Clock::now() < when && !(cancel && cancel->load())) std::this_thread::sleep_until(std::min(when, Clock::now() + std::chrono::milliseconds(100)));
                if (spec.requests <= 0 && timeUp()) break;
                if (running.load() >= spec.maxInFlight) {
                    std::lock_guard lock(mu);
                    ++res.errors["client_overload"];
                    RequestTiming t;
                    t.startMs = at * 1000;
                    t.error = "client_overload";
                    res.requests.push_back(t);
                    continue;
                }
                ++running;
                inflight.emplace_back([&, seed = levelSeed * 7919 + n++] {
                    one(seed);
                    --running;
                });
            }
            for (auto& th : inflight) th.join();
        }
        const double windowS = std::chrono::duration<double>(Clock::now() - t0).count();
        std::sort(res.requests.begin(), res.requests.end(), [](const auto& a, const auto& b) { return a.startMs < b.startMs; });
        res.metrics = summarizeLoad(res.requests, windowS);
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
              {"tls", endpointTlsMode(ep)}};
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
        p.metrics = toJson(r, false);
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
