#include "core/serve/openai_server.h"

#include "core/run/prompt_tokenizer.h"
#include "verdict/engine/batch_scheduler.h"
#include "verdict/engine/timings.h"

#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>

namespace verdict::core {

size_t completeUtf8Prefix(std::string_view s) {
    // Look back at most 3 bytes for the start of a multi-byte sequence that is not complete yet.
    const size_t n = s.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        const auto c = static_cast<unsigned char>(s[n - back]);
        if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
        size_t need = 1;
        if ((c & 0xE0) == 0xC0) need = 2;
        else if ((c & 0xF0) == 0xE0) need = 3;
        else if ((c & 0xF8) == 0xF0) need = 4;
        return back < need ? n - back : n;
    }
    return n;
}

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

std::string dumpJson(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

struct ApiError {
    int status = 400;
    std::string message;
    std::string param;
};

void sendError(net::HttpResponder& r, const ApiError& e) {
    const char* type = e.status == 401 ? "authentication_error"
                       : e.status >= 500 ? "server_error"
                                         : "invalid_request_error";
    json j = {{"error", {{"message", e.message}, {"type", type}, {"param", e.param.empty() ? json(nullptr) : json(e.param)}}}};
    r.send(e.status, "application/json", dumpJson(j), {});
}

// A Prometheus histogram with fixed buckets (seconds).
struct Histogram {
    std::vector<double> bounds;
    std::vector<uint64_t> counts;  // cumulative at render time
    double sum = 0;
    uint64_t n = 0;
    explicit Histogram(std::vector<double> b) : bounds(std::move(b)), counts(bounds.size(), 0) {}
    void observe(double v) {
        for (size_t i = 0; i < bounds.size(); ++i)
            if (v <= bounds[i]) ++counts[i];
        sum += v;
        ++n;
    }
    void render(std::string& out, const std::string& name, const std::string& help) const {
        out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
        for (size_t i = 0; i < bounds.size(); ++i) {
            char b[64];
            std::snprintf(b, sizeof b, "%g", bounds[i]);
            out += name + "_bucket{le=\"" + b + "\"} " + std::to_string(counts[i]) + "\n";
        }
        out += name + "_bucket{le=\"+Inf\"} " + std::to_string(n) + "\n";
        char s[64];
        std::snprintf(s, sizeof s, "%.6f", sum);
        out += name + "_sum " + s + "\n" + name + "_count " + std::to_string(n) + "\n";
    }
};

// What a connection thread waits on: pieces of text as they are generated, then the end.
struct Stream {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::string> pieces;
    bool done = false;
    std::optional<Result<GenerateResult>> result;
    Clock::time_point firstToken{};
    bool gotFirst = false;
};

struct Parsed {
    Prompt prompt;
    GenerateConfig cfg;
    bool stream = false;
    bool includeUsage = false;
};

}  // namespace

struct OpenAiServer::Impl {
    std::shared_ptr<const Model> model;
    ServeOptions options;
    std::unique_ptr<PromptTokenizer> renderer;
    std::unique_ptr<BatchScheduler> scheduler;
    std::time_t started = std::time(nullptr);

    mutable std::mutex metricsMu;
    std::map<std::string, uint64_t> requests;  // "endpoint|status" -> count
    uint64_t promptTokens = 0, generatedTokens = 0;
    Histogram ttft{{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}};
    Histogram latency{{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}};
    Histogram tpot{{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}};
    std::atomic<uint64_t> nextId{1};

    void count(const std::string& endpoint, int status) {
        std::lock_guard lock(metricsMu);
        ++requests[endpoint + "|" + std::to_string(status)];
    }

    std::optional<ApiError> parse(const json& j, bool chat, Parsed& p) const;

    void completion(const net::HttpRequest& req, net::HttpResponder& r, bool chat);
};

// Field checks: every wrong type or range is a 400 naming the field.
std::optional<ApiError> OpenAiServer::Impl::parse(const json& j, bool chat, Parsed& p) const {
    auto bad = [](std::string field, std::string why) { return ApiError{400, "'" + field + "' " + why, field}; };
    if (!j.is_object()) return ApiError{400, "the request body must be a JSON object", ""};
    if (j.contains("model") && !j["model"].is_string()) return bad("model", "must be a string");
    if (j.contains("model") && j["model"].get<std::string>() != options.modelId)
        return ApiError{404, "the model '" + j["model"].get<std::string>() + "' does not exist; this server serves '" +
                                 options.modelId + "'", "model"};
    if (chat) {
        if (!j.contains("messages") || !j["messages"].is_array() || j["messages"].empty())
            return bad("messages", "must be a non-empty array");
        for (size_t i = 0; i < j["messages"].size(); ++i) {
            const json& m = j["messages"][i];
            const std::string at = "messages[" + std::to_string(i) + "]";
            if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) return bad(at + ".role", "must be a string");
            {
                const std::string& role = m["role"].get_ref<const std::string&>();
                if (role != "system" && role != "user" && role != "assistant" && role != "tool" && role != "developer")
                    return bad(at + ".role", "must be one of system, user, assistant, tool, developer");
            }
            std::string content;
            if (m.contains("content") && m["content"].is_string()) {
                content = m["content"].get<std::string>();
            } else if (m.contains("content") && m["content"].is_array()) {
                for (const json& part : m["content"]) {
                    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string())
                        return bad(at + ".content", "parts must be {\"type\": \"text\", \"text\": ...}");
                    content += part["text"].get<std::string>();
                }
            } else if (!(m.contains("content") && m["content"].is_null())) {
                return bad(at + ".content", "must be a string or an array of text parts");
            }
            p.prompt.messages.push_back({m["role"].get<std::string>(), content});
        }
        p.prompt.useChatTemplate = true;
    } else {
        if (!j.contains("prompt")) return bad("prompt", "is required");
        const json& pr = j["prompt"];
        if (pr.is_string()) p.prompt.text = pr.get<std::string>();
        else if (pr.is_array() && pr.size() == 1 && pr[0].is_string()) p.prompt.text = pr[0].get<std::string>();
        else return bad("prompt", "must be a string (a list of one string is accepted)");
        p.prompt.useChatTemplate = false;
    }
    auto shortNumber = [](double v) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.10g", v);
        return std::string(buf);
    };
    auto numberOf = [&](const char* k, double lo, double hi, double& out, bool integral) -> std::optional<ApiError> {
        if (!j.contains(k) || j[k].is_null()) return std::nullopt;
        if (!j[k].is_number()) return bad(k, integral ? "must be an integer" : "must be a number");
        const double v = j[k].get<double>();
        if (integral && !(std::isfinite(v) && v == std::floor(v))) return bad(k, "must be an integer");
        if (!(v >= lo && v <= hi)) return bad(k, "must be between " + shortNumber(lo) + " and " + shortNumber(hi));
        out = v;
        return std::nullopt;
    };
    auto number = [&](const char* k, double lo, double hi, double& out) { return numberOf(k, lo, hi, out, false); };
    auto integer = [&](const char* k, double lo, double hi, double& out) { return numberOf(k, lo, hi, out, true); };
    double maxTokens = options.defaultMaxTokens, temperature = 1.0, topP = 1.0, topK = 0, minP = 0, seed = 0,
           presence = 0, frequency = 0, repetition = 1, n = 1;
    const char* mtKey = j.contains("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
    if (auto e = integer(mtKey, 1, options.maxTokensLimit, maxTokens)) return *e;
    if (auto e = number("temperature", 0, 2, temperature)) return *e;
    if (auto e = number("top_p", 0, 1, topP)) return *e;
    if (auto e = integer("top_k", 0, 1e9, topK)) return *e;
    if (auto e = number("min_p", 0, 1, minP)) return *e;
    if (auto e = integer("seed", -9.2e18, 9.2e18, seed)) return *e;
    if (auto e = number("presence_penalty", -2, 2, presence)) return *e;
    if (auto e = number("frequency_penalty", -2, 2, frequency)) return *e;
    if (auto e = number("repetition_penalty", 0.01, 10, repetition)) return *e;
    if (integer("n", 1, 1, n)) return ApiError{400, "'n' other than 1 is not supported", "n"};
    p.cfg.maxTokens = static_cast<int32_t>(maxTokens);
    p.cfg.sampling.temperature = static_cast<float>(temperature);
    p.cfg.sampling.topP = static_cast<float>(topP);
    p.cfg.sampling.topK = static_cast<int32_t>(topK);
    p.cfg.sampling.minP = static_cast<float>(minP);
    p.cfg.sampling.seed = static_cast<uint64_t>(static_cast<int64_t>(seed));
    p.cfg.sampling.presencePenalty = static_cast<float>(presence);
    p.cfg.sampling.frequencyPenalty = static_cast<float>(frequency);
    p.cfg.sampling.repeatPenalty = static_cast<float>(repetition);
    if (j.contains("stop") && !j["stop"].is_null()) {
        if (j["stop"].is_string()) {
            p.cfg.stopStrings.push_back(j["stop"].get<std::string>());
        } else if (j["stop"].is_array() && j["stop"].size() <= 16) {
            for (const json& s : j["stop"]) {
                if (!s.is_string()) return bad("stop", "must be a string or a list of strings");
                p.cfg.stopStrings.push_back(s.get<std::string>());
            }
        } else {
            return bad("stop", "must be a string or a list of at most 16 strings");
        }
    }
    if (j.contains("ignore_eos") && !j["ignore_eos"].is_boolean()) return bad("ignore_eos", "must be a boolean");
    p.cfg.stopAtEos = !j.value("ignore_eos", false);
    if (j.contains("stream") && !j["stream"].is_boolean() && !j["stream"].is_null()) return bad("stream", "must be a boolean");
    p.stream = j.value("stream", false) == true;
    if (j.contains("stream_options") && j["stream_options"].is_object())
        p.includeUsage = j["stream_options"].value("include_usage", false);
    return std::nullopt;
}

void OpenAiServer::Impl::completion(const net::HttpRequest& req, net::HttpResponder& r, bool chat) {
    const std::string endpoint = chat ? "/v1/chat/completions" : "/v1/completions";
    const auto t0 = Clock::now();
    auto fail = [&](const ApiError& e) {
        count(endpoint, e.status);
        sendError(r, e);
    };
    const json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded()) return fail({400, "the request body is not valid JSON", ""});
    Parsed parsedValue;
    if (auto e = parse(body, chat, parsedValue)) return fail(*e);
    Parsed* parsed = &parsedValue;
    auto tokens = renderer->render(parsed->prompt, [&r] { return r.clientGone(); });
    if (!tokens) return fail({400, tokens.error().message, chat ? "messages" : "prompt"});
    const int64_t promptLen = static_cast<int64_t>(tokens->tokens.size());
    if (promptLen + 1 > scheduler->nCtx())
        return fail({400, "the prompt has " + std::to_string(promptLen) + " tokens; the context holds " +
                              std::to_string(scheduler->nCtx()), chat ? "messages" : "prompt"});

    auto stream = std::make_shared<Stream>();
    BatchRequest br;
    br.prompt = tokens->tokens;
    br.cfg = parsed->cfg;
    br.cfg.onToken = [stream](int32_t, std::string_view piece) {
        std::lock_guard lock(stream->mu);
        if (!stream->gotFirst) {
            stream->gotFirst = true;
            stream->firstToken = Clock::now();
        }
        stream->pieces.emplace_back(piece);
        stream->cv.notify_all();
        return true;
    };
    br.onDone = [stream](Result<GenerateResult> res) {
        std::lock_guard lock(stream->mu);
        stream->result = std::move(res);
        stream->done = true;
        stream->cv.notify_all();
    };
    auto id = scheduler->submit(std::move(br));
    if (!id) return fail({503, id.error().message, ""});

    const std::string cid = (chat ? "chatcmpl-" : "cmpl-") + std::to_string(nextId++);
    const std::time_t created = std::time(nullptr);
    const std::string object = chat ? "chat.completion" : "text_completion";
    auto finishReason = [](StopReason s) { return s == StopReason::MaxTokens || s == StopReason::ContextFull ? "length" : "stop"; };
    auto usageOf = [&](const GenerateResult& g) {
        return json{{"prompt_tokens", promptLen},
                    {"completion_tokens", g.tokens.size()},
                    {"total_tokens", promptLen + static_cast<int64_t>(g.tokens.size())}};
    };
    auto record = [&](const GenerateResult& g, int status) {
        count(endpoint, status);
        std::lock_guard lock(metricsMu);
        promptTokens += static_cast<uint64_t>(promptLen);
        generatedTokens += g.tokens.size();
        const double e2e = std::chrono::duration<double>(Clock::now() - t0).count();
        latency.observe(e2e);
        ttft.observe(g.timings.ttftMs / 1000.0);
        if (g.tokens.size() > 1) tpot.observe((e2e - g.timings.ttftMs / 1000.0) / static_cast<double>(g.tokens.size() - 1));
    };

    if (!parsed->stream) {
        std::unique_lock lock(stream->mu);
        bool left = false;  // the client went away: stop generating for it, answer nobody
        while (!stream->cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return stream->done; }))
            if (!left && r.clientGone()) {
                left = true;
                lock.unlock();  // the scheduler's callbacks take stream->mu: never call it holding that
                scheduler->cancel(*id);
                lock.lock();
            }
        const Result<GenerateResult>& res = *stream->result;
        if (left) {
            count(endpoint, 499);
            return;
        }
        if (!res) {
            lock.unlock();
            return fail({500, res.error().message, ""});
        }
        json choice = {{"index", 0}, {"finish_reason", finishReason(res->stopReason)}, {"logprobs", nullptr}};
        if (chat) choice["message"] = {{"role", "assistant"}, {"content", res->text}};
        else choice["text"] = res->text;
        const json out = {{"id", cid},           {"object", object},           {"created", created},
                          {"model", options.modelId}, {"choices", json::array({choice})}, {"usage", usageOf(*res)}};
        record(*res, 200);
        lock.unlock();
        r.send(200, "application/json", dumpJson(out), {});
        return;
    }

    // Streaming: SSE events as tokens arrive. Text is sent on UTF-8 boundaries and held back by
    // (longest stop string - 1) bytes, so a stop string is never partly sent.
    size_t holdback = 0;
    for (const auto& s : parsed->cfg.stopStrings) holdback = std::max(holdback, s.empty() ? 0 : s.size() - 1);
    const std::string chunkObject = chat ? "chat.completion.chunk" : "text_completion";
    auto event = [&](const json& choice, const json* usage) {
        json j = {{"id", cid}, {"object", chunkObject}, {"created", created}, {"model", options.modelId},
                  {"choices", choice.is_null() ? json::array() : json::array({choice})}};
        if (usage) j["usage"] = *usage;
        return "data: " + dumpJson(j) + "\n\n";
    };
    auto textChoice = [&](const std::string& text, const char* finish) {
        json c = {{"index", 0}, {"finish_reason", finish ? json(finish) : json(nullptr)}};
        if (chat) c["delta"] = json{{"content", text}};
        else {
            c["text"] = text;
            c["logprobs"] = nullptr;
        }
        return c;
    };
    bool alive = r.startStream(200, "text/event-stream", {{"Cache-Control", "no-cache"}});
    if (alive && chat) {
        json c = {{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr}};
        alive = r.write(event(c, nullptr));
    }
    std::string text;     // everything generated so far
    size_t sentBytes = 0; // how much of it went out
    for (;;) {
        std::deque<std::string> pieces;
        bool done = false;
        {
            std::unique_lock lock(stream->mu);
            // Until a token arrives (a long prefill, text held back for a stop string), watch
            // whether the client is still there.
            while (!stream->cv.wait_for(lock, std::chrono::milliseconds(100),
                                        [&] { return stream->done || !stream->pieces.empty(); }))
                if (alive && r.clientGone()) {
                    alive = false;
                    lock.unlock();
                    scheduler->cancel(*id);
                    lock.lock();
                }
            pieces.swap(stream->pieces);
            done = stream->done;
        }
        // One event per token even when several arrived together, so that clients count tokens
        // and gaps as they were generated (the last token's text goes out with finish_reason).
        for (size_t i = 0; i < pieces.size() && !(done && i + 1 == pieces.size()); ++i) {
            text += pieces[i];
            const size_t safe = completeUtf8Prefix(
                std::string_view(text).substr(0, text.size() > holdback ? text.size() - holdback : 0));
            if (alive && safe > sentBytes) {
                alive = r.write(event(textChoice(text.substr(sentBytes, safe - sentBytes), nullptr), nullptr));
                sentBytes = safe;
            }
        }
        if (done) break;
        if (!alive) scheduler->cancel(*id);  // the client left: stop generating for it
    }
    const Result<GenerateResult>& res = *stream->result;
    if (!res) {
        count(endpoint, 500);
        if (alive) r.write("data: " + dumpJson(json{{"error", {{"message", res.error().message}, {"type", "server_error"}}}}) + "\n\n");
        return;
    }
    record(*res, 200);
    if (!alive) return;
    const std::string rest = res->text.size() > sentBytes ? res->text.substr(sentBytes) : std::string();
    r.write(event(textChoice(rest, finishReason(res->stopReason)), nullptr));
    if (parsed->includeUsage) {
        const json u = usageOf(*res);
        r.write(event(json(nullptr), &u));
    }
    r.write("data: [DONE]\n\n");
}

OpenAiServer::OpenAiServer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
OpenAiServer::~OpenAiServer() = default;

Result<std::unique_ptr<OpenAiServer>> OpenAiServer::create(std::shared_ptr<const Model> model, const ServeOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->model = model;
    impl->options = options;
    if (impl->options.modelId.empty()) impl->options.modelId = std::filesystem::path(model->path()).filename().string();
    auto renderer = PromptTokenizer::create(model);
    if (!renderer) return renderer.error();
    impl->renderer = std::move(*renderer);
    BatchSchedulerOptions bo;
    bo.maxSequences = options.maxSequences;
    bo.nCtx = options.nCtx;
    bo.maxWaiting = options.maxQueue;
    auto sched = BatchScheduler::create(model, bo);
    if (!sched) return sched.error();
    impl->scheduler = std::move(*sched);
    return std::unique_ptr<OpenAiServer>(new OpenAiServer(std::move(impl)));
}

void OpenAiServer::handle(const net::HttpRequest& req, net::HttpResponder& r) {
    Impl& d = *m_impl;
    if (!d.options.apiKey.empty() && req.path != "/health") {
        if (req.header("authorization") != "Bearer " + d.options.apiKey) {
            d.count(req.path, 401);
            return sendError(r, {401, "a valid API key is required (Authorization: Bearer KEY)", ""});
        }
    }
    auto only = [&](const char* method) {
        if (req.method == method) return true;
        d.count(req.path, 405);
        sendError(r, {405, "use " + std::string(method) + " for " + req.path, ""});
        return false;
    };
    if (req.path == "/health") {
        if (!only("GET")) return;
        d.count(req.path, 200);
        return r.send(200, "application/json", "{\"status\":\"ok\"}", {});
    }
    if (req.path == "/metrics") {
        if (!only("GET")) return;
        d.count(req.path, 200);
        return r.send(200, "text/plain; version=0.0.4", metricsText(), {});
    }
    if (req.path == "/v1/models") {
        if (!only("GET")) return;
        d.count(req.path, 200);
        const json j = {{"object", "list"},
                        {"data", json::array({{{"id", d.options.modelId},
                                               {"object", "model"},
                                               {"created", d.started},
                                               {"owned_by", "verdict"},
                                               {"max_model_len", d.scheduler->nCtx()}}})}};
        return r.send(200, "application/json", dumpJson(j), {});
    }
    if (req.path == "/v1/completions" || req.path == "/v1/chat/completions") {
        if (!only("POST")) return;
        return d.completion(req, r, req.path == "/v1/chat/completions");
    }
    d.count("other", 404);
    sendError(r, {404, "no route " + req.method + " " + req.path, ""});
}

std::string OpenAiServer::metricsText() const {
    const Impl& d = *m_impl;
    const BatchSchedulerStats s = d.scheduler->stats();
    std::lock_guard lock(d.metricsMu);
    std::string out;
    out += "# HELP verdict_requests_total HTTP requests by endpoint and status.\n# TYPE verdict_requests_total counter\n";
    for (const auto& [k, n] : d.requests) {
        const size_t bar = k.find('|');
        out += "verdict_requests_total{endpoint=\"" + k.substr(0, bar) + "\",status=\"" + k.substr(bar + 1) + "\"} " +
               std::to_string(n) + "\n";
    }
    auto counter = [&](const char* name, const char* help, uint64_t v) {
        out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " + std::to_string(v) + "\n";
    };
    auto gauge = [&](const char* name, const char* help, uint64_t v) {
        out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + " " + std::to_string(v) + "\n";
    };
    counter("verdict_prompt_tokens_total", "Prompt tokens of completed requests.", d.promptTokens);
    counter("verdict_generation_tokens_total", "Generated tokens of completed requests.", d.generatedTokens);
    counter("verdict_decode_steps_total", "Batched decode passes.", s.steps);
    gauge("verdict_running_sequences", "Sequences being decoded now.", static_cast<uint64_t>(s.running));
    gauge("verdict_waiting_requests", "Requests waiting for a free sequence slot.", static_cast<uint64_t>(s.waiting));
    gauge("verdict_kv_cache_bytes", "KV cache bytes allocated for all sequence slots.", s.kvBytes);
    gauge("verdict_weights_bytes", "Model weight bytes in use.", d.model->weightsBytes());
    // The Prometheus client libraries' standard name (what vLLM, SGLang and TGI export): soak tests
    // read the server's memory from it (core/services/soak.h).
    gauge("process_resident_memory_bytes", "Resident memory size in bytes.", residentBytes());
    d.ttft.render(out, "verdict_time_to_first_token_seconds", "Time to first token.");
    d.tpot.render(out, "verdict_time_per_output_token_seconds", "Time per output token after the first.");
    d.latency.render(out, "verdict_e2e_request_latency_seconds", "End-to-end request latency.");
    return out;
}

}  // namespace verdict::core
