#include "core/services/soak.h"

#include "core/net/http.h"
#include "core/perf/load_runner.h"
#include "core/run/backend_factory.h"
#include "core/run/device_check.h"
#include "core/serve/openai_server.h"
#include "core/stats/drift.h"
#include "core/store/study_repository.h"
#include "core/version.h"
#include "util/quote.h"

#include <verdict/engine/model.h>
#include <verdict/engine/timings.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace verdict::core {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kSoakStudy = "soak";

ServiceError bad(std::string m) { return {ServiceFailure::BadInput, std::move(m)}; }
ServiceError storage(std::string m) { return {ServiceFailure::Storage, std::move(m)}; }

json orNull(double v, bool have) { return have && std::isfinite(v) ? json(v) : json(nullptr); }

json trendJson(const LinearTrend& t, const std::vector<double>& y) {
    json first = nullptr, last = nullptr;
    for (double v : y)
        if (std::isfinite(v)) {
            if (first.is_null()) first = v;
            last = v;
        }
    return {{"slope_per_hour", t.n >= 2 ? json(t.slope) : json(nullptr)},
            {"ci", t.slopeCi ? json{t.slopeCi->lo, t.slopeCi->hi} : json(nullptr)},
            {"n", t.n},
            {"r2", t.n >= 2 ? json(t.r2) : json(nullptr)},
            {"drifting", t.drifting()},
            {"first", first},
            {"last", last}};
}

json spreadJson(const Spread& s) {
    if (s.n == 0) return nullptr;
    return {{"n", s.n}, {"mean", s.mean}, {"stddev", s.stddev}, {"cv", s.cv}, {"min", s.min}, {"max", s.max}};
}

double numberAt(const json& w, std::initializer_list<const char*> path) {
    const json& v = studyField(w, path);
    return v.is_number() ? v.get<double>() : std::nan("");
}

// The RSS of what is soaked: a pid's /proc, else the endpoint's /metrics.
struct RssSource {
    std::string kind;  // "pid", "metrics", "none"
    int64_t pid = 0;
    std::string metricsUrl;
    EndpointConfig endpoint;

    std::optional<double> read(const std::atomic<bool>* cancel) const {
        if (kind == "pid") return residentBytesOfPid(pid);
        if (kind != "metrics") return std::nullopt;
        auto r = net::httpRequest("GET", metricsUrl, endpointHeaders(endpoint), "", endpointClientOptions(endpoint, 10000, cancel));
        if (!r || r->status != 200) return std::nullopt;
        return residentBytesFromMetrics(r->body);
    }
};

// A GGUF file served by this process on a free port, for as long as the soak runs.
struct LocalServer {
    std::shared_ptr<const Model> model;
    std::unique_ptr<OpenAiServer> server;
    std::unique_ptr<net::HttpServer> http;
};

}  // namespace

std::optional<double> residentBytesFromMetrics(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    const std::string key = "process_resident_memory_bytes";
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) != 0) continue;
        size_t p = key.size();
        if (p < line.size() && line[p] == '{') p = line.find('}', p);  // labels
        if (p == std::string::npos || p >= line.size() || (line[p] != ' ' && line[p] != '}')) continue;
        const std::string value = line.substr(line[p] == '}' ? p + 1 : p);
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (end != value.c_str() && std::isfinite(v) && v >= 0) return v;
    }
    return std::nullopt;
}

std::optional<double> residentBytesOfPid(int64_t pid) {
    const uint64_t b = residentBytes(pid);
    return b > 0 ? std::optional<double>(static_cast<double>(b)) : std::nullopt;
}

Result<void> validateSoakRequest(const SoakRequest& r) {
    if (r.target.empty()) return Error{"target: an endpoint URL or a GGUF file is required"};
    if (!(r.windowS >= 0.5)) return Error{"window: at least 0.5 s"};
    if (!(r.durationS >= r.windowS)) return Error{"duration: at least one window long"};
    if (r.durationS / r.windowS > 10000) return Error{"duration: at most 10000 windows (use a longer --window)"};
    if (!(r.rate > 0) || r.rate > 10000) return Error{"rate: must be in (0, 10000] requests/s"};
    if (r.burstRate < 0 || r.burstRate > 10000) return Error{"burst-rate: must be 0 (no bursts) or in (0, 10000] requests/s"};
    if (r.promptWords < 1 || r.promptWords > 100000) return Error{"prompt-words: 1..100000"};
    if (r.maxTokens < 1 || r.maxTokens > 100000) return Error{"max-tokens: 1..100000"};
    if (r.warmupWindows < 0) return Error{"warmup-windows: must not be negative"};
    if (r.pid < 0) return Error{"pid: must not be negative (0: read the endpoint's /metrics)"};
    if (r.pid > 0 && !isEndpointRef(r.target)) return Error{"pid: only for an endpoint (a GGUF file is served by this process)"};
    if (r.parallel < 1 || r.parallel > 256) return Error{"parallel: 1..256"};
    return {};
}

void addSoakSummary(json& soak) {
    const json windows = soak.value("windows", json::array());
    const int warmup = soak.contains("settings") ? soak["settings"].value("warmup_windows", 1) : 1;
    // With bursts, the latency and throughput fits use the low-rate windows only (the baseline:
    // alternating rates would otherwise be fitted as noise, or as a trend when the count is odd);
    // memory and errors use every window.
    bool bursts = false;
    for (const json& w : windows) bursts = bursts || w.value("phase", "steady") == "high";
    std::vector<double> t, tBase, rss, err, ttft99, e2e50, e2e99, tps;
    std::vector<double> highE2e, lowE2e, highTtft, lowTtft;
    int64_t requests = 0, failed = 0;
    for (size_t k = 0; k < windows.size(); ++k) {
        const json& w = windows[k];
        requests += w.value("requests", int64_t(0));
        failed += w.value("failed", int64_t(0));
        const std::string phase = w.value("phase", "steady");
        if (static_cast<int>(k) < warmup || w.value("partial", false)) continue;  // warm-up; cut short by a cancel
        if (phase == "high") highE2e.push_back(numberAt(w, {"e2e_ms", "p99"})), highTtft.push_back(numberAt(w, {"ttft_ms", "p99"}));
        if (phase == "low") lowE2e.push_back(numberAt(w, {"e2e_ms", "p99"})), lowTtft.push_back(numberAt(w, {"ttft_ms", "p99"}));
        const double hours = (numberAt(w, {"start_s"}) + numberAt(w, {"end_s"})) / 2 / 3600.0;
        t.push_back(hours);
        rss.push_back(numberAt(w, {"rss_bytes"}));
        err.push_back(numberAt(w, {"error_rate"}));
        if (bursts && phase == "high") continue;
        tBase.push_back(hours);
        ttft99.push_back(numberAt(w, {"ttft_ms", "p99"}));
        e2e50.push_back(numberAt(w, {"e2e_ms", "p50"}));
        e2e99.push_back(numberAt(w, {"e2e_ms", "p99"}));
        tps.push_back(numberAt(w, {"output_tok_per_s"}));
    }
    auto trend = [](const std::vector<double>& x, const std::vector<double>& y) { return trendJson(linearTrend(x, y), y); };
    json summary = {{"windows", windows.size()},
                    {"requests", requests},
                    {"failed", failed},
                    {"error_rate", requests + failed > 0 ? json(double(failed) / double(requests + failed)) : json(nullptr)},
                    {"drift",
                     {{"rss_bytes", trend(t, rss)},
                      {"ttft_p99_ms", trend(tBase, ttft99)},
                      {"e2e_p50_ms", trend(tBase, e2e50)},
                      {"e2e_p99_ms", trend(tBase, e2e99)},
                      {"output_tok_per_s", trend(tBase, tps)},
                      {"error_rate", trend(t, err)}}},
                    {"latency_fit", bursts ? "low_rate" : "all"},
                    {"bursts", nullptr}};
    if (!highE2e.empty() || !lowE2e.empty())
        summary["bursts"] = {{"high", {{"e2e_p99_ms", spreadJson(spreadOf(highE2e))}, {"ttft_p99_ms", spreadJson(spreadOf(highTtft))}}},
                             {"low", {{"e2e_p99_ms", spreadJson(spreadOf(lowE2e))}, {"ttft_p99_ms", spreadJson(spreadOf(lowTtft))}}}};
    soak["summary"] = std::move(summary);
}

ServiceResult<SoakDone> runSoak(Database& db, const SoakRequest& r, const SoakEvents& events, std::stop_token stop) {
    if (auto v = validateSoakRequest(r); !v) return bad(v.error().message);
    std::atomic<bool> cancelFlag{false};
    std::stop_callback onStop(stop, [&] { cancelFlag = true; });

    // What is soaked: an endpoint as given, or the file served here on a free port.
    const bool local = !isEndpointRef(r.target);
    LocalServer served;
    EndpointConfig endpoint;
    if (local) {
        if (!std::filesystem::is_regular_file(r.target)) return bad(util::quoteFileText(r.target) + ": no such file");
        auto model = openLocalModel(r.target, r.threads, r.device, r.gpuLayers, &cancelFlag);
        if (stop.stop_requested()) return ServiceError{ServiceFailure::Cancelled, "cancelled while loading"};
        if (!model) return ServiceError{ServiceFailure::ModelOpen, model.error().message};
        served.model = *model;
        ServeOptions so;
        so.maxSequences = r.parallel;
        so.maxTokensLimit = std::max(4096, r.maxTokens);
        so.maxQueue = 4096;
        auto server = OpenAiServer::create(served.model, so);
        if (!server) return ServiceError{ServiceFailure::ModelOpen, server.error().message};
        served.server = std::move(*server);
        net::HttpServerOptions ho;
        ho.host = "127.0.0.1";
        ho.port = 0;
        OpenAiServer* raw = served.server.get();
        auto http = net::HttpServer::start(ho, [raw](const net::HttpRequest& q, net::HttpResponder& a) { raw->handle(q, a); });
        if (!http) return ServiceError{ServiceFailure::ModelOpen, "serving " + r.target + ": " + http.error().message};
        served.http = std::move(*http);
        endpoint.baseUrl = "http://127.0.0.1:" + std::to_string(served.http->port());
    } else {
        const EndpointRef ref = parseEndpointRef(r.target);
        endpoint.baseUrl = ref.url;
        endpoint.model = !r.model.empty() ? r.model : ref.model;
        endpoint.apiKey = r.apiKey;
        endpoint.caFile = r.caFile;
        endpoint.insecure = r.insecure;
        endpoint.api = r.api;
    }
    endpoint.timeoutMs = 120000;
    auto resolved = resolveEndpoint(endpoint);
    if (!resolved) return bad(resolved.error().message);
    endpoint = std::move(*resolved);

    RssSource rss;
    rss.endpoint = endpoint;
    if (local) {
        rss.kind = "pid";
        rss.pid = getpid();
    } else if (r.pid > 0) {
        rss.kind = "pid";
        rss.pid = r.pid;
        if (!residentBytesOfPid(r.pid)) return bad("pid " + std::to_string(r.pid) + ": no such process (its /proc/PID/status cannot be read)");
    } else {
        rss.kind = "metrics";
        rss.metricsUrl = endpointApiRoot(endpoint.baseUrl) + "/metrics";
        if (!rss.read(&cancelFlag)) rss.kind = "none";  // no /metrics, or no process_resident_memory_bytes in it
    }

    const int windows = static_cast<int>(std::floor(r.durationS / r.windowS + 1e-9));
    const std::string name = !r.name.empty() ? r.name
                             : local         ? std::filesystem::path(r.target).filename().string()
                                             : endpoint.baseUrl + " " + endpoint.model;
    json soak = {{"name", name},
                 {"target", local ? normalizeModelRef(r.target) : r.target},
                 {"endpoint", {{"url", endpoint.baseUrl}, {"model", endpoint.model}, {"served_here", local}}},
                 {"settings",
                  {{"duration_s", r.durationS},
                   {"window_s", r.windowS},
                   {"windows", windows},
                   {"rate", r.rate},
                   {"burst_rate", r.burstRate > 0 ? json(r.burstRate) : json(nullptr)},
                   {"prompt_words", r.promptWords},
                   {"max_tokens", r.maxTokens},
                   {"warmup_windows", r.warmupWindows},
                   {"seed", r.seed},
                   {"device", local ? served.model->device() : endpointDeviceLabel(endpoint)},
                   {"engine_version", toolVersion()}}},
                 {"rss_source", rss.kind == "pid" ? json("/proc/" + std::to_string(rss.pid) + "/status")
                                : rss.kind == "metrics" ? json(rss.metricsUrl)
                                                        : json(nullptr)},
                 {"windows", json::array()}};
    addSoakSummary(soak);
    StudyRepository studies(db);
    const std::string subject = local ? normalizeModelRef(r.target) : endpoint.baseUrl + " " + endpoint.model;
    auto id = studies.create(kSoakStudy, name, subject, soak);
    if (!id) return storage(id.error().message);
    soak["id"] = *id;
    auto save = [&](const std::string& status) -> Result<void> {
        addSoakSummary(soak);
        soak["status"] = status;
        if (auto u = studies.update(*id, soak, status); !u) return u;
        if (events.stored) events.stored(soak);
        return {};
    };

    const auto t0 = Clock::now();
    auto since = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    bool cancelled = false;
    for (int w = 0; w < windows && !cancelled; ++w) {
        const bool high = r.burstRate > 0 && w % 2 == 1;
        const std::string phase = r.burstRate > 0 ? (high ? "high" : "low") : "steady";
        const double rate = high ? r.burstRate : r.rate;
        LoadSpec spec;
        spec.rates = {rate};
        spec.durationS = r.windowS;
        spec.promptWords = r.promptWords;
        spec.maxTokens = r.maxTokens;
        spec.maxRetries = 0;  // a soak counts every failure; retries would hide them
        spec.maxInFlight = 4096;
        spec.seed = r.seed + static_cast<uint64_t>(w);
        const double start = since();
        auto progress = [&](const LoadProgress& p) {
            if (events.progress) events.progress({w, windows, rate, phase, p.completed, p.failed, since()});
        };
        auto level = runLoad(endpoint, spec, progress, &cancelFlag);
        // The level ends when its last arrival is answered, often before the window is over: the
        // rest of the window passes idle, so that windows keep their length and the soak its duration.
        while (!cancelFlag && since() < start + r.windowS)
            std::this_thread::sleep_for(std::chrono::milliseconds(std::clamp<int64_t>(
                static_cast<int64_t>((start + r.windowS - since()) * 1000), 1, 100)));
        const double end = since();
        if (cancelFlag) cancelled = true;
        if (!level) {
            soak["error"] = level.error().message;
            (void)save("failed");
            return bad(level.error().message);
        }
        if (level->empty()) break;  // cancelled before the level started
        const LoadLevelResult& res = level->front();
        const LoadMetrics& m = res.metrics;
        const auto mem = rss.read(&cancelFlag);
        json window = {{"index", w},
                       {"start_s", start},
                       {"end_s", end},
                       {"phase", phase},
                       {"rate", rate},
                       {"requests", m.requests},
                       {"failed", m.failed},
                       {"errors", res.errors},
                       {"error_rate", m.requests + m.failed > 0 ? json(double(m.failed) / double(m.requests + m.failed)) : json(nullptr)},
                       {"ttft_ms", {{"p50", orNull(m.ttftMs.p50, m.ttftMs.n > 0)}, {"p99", orNull(m.ttftMs.p99, m.ttftMs.n > 0)}}},
                       {"e2e_ms", {{"p50", orNull(m.e2eMs.p50, m.e2eMs.n > 0)}, {"p99", orNull(m.e2eMs.p99, m.e2eMs.n > 0)}}},
                       {"itl_ms_p99", orNull(m.itlMs.p99, m.itlMs.n > 0)},
                       {"output_tok_per_s", m.outputTokPerS},
                       {"behind_schedule", res.behindSchedule},
                       {"rss_bytes", mem ? json(*mem) : json(nullptr)},
                       {"warmup", w < r.warmupWindows},
                       {"partial", cancelled}};
        soak["windows"].push_back(std::move(window));
        if (auto s = save("running"); !s) return storage(s.error().message);
    }
    cancelled = cancelled || cancelFlag;
    if (auto s = save(cancelled ? "cancelled" : "completed"); !s) return storage(s.error().message);
    return SoakDone{*id, soak, cancelled};
}

Result<json> listSoaks(Database& db) {
    auto list = StudyRepository(db).list(kSoakStudy);
    if (!list) return list.error();
    json out = json::array();
    for (const StudyRecord& s : *list)
        out.push_back({{"id", s.id},
                       {"name", s.name},
                       {"created_at", s.createdAt},
                       {"status", s.status},
                       {"target", s.subject},
                       {"windows", s.result.value("windows", json::array()).size()}});
    return out;
}

Result<std::optional<json>> loadSoak(Database& db, int64_t id) {
    auto s = StudyRepository(db).find(id, kSoakStudy);
    if (!s) return s.error();
    if (!*s) return std::optional<json>{};
    return std::optional<json>(studyDocument(**s));
}

}  // namespace verdict::core
