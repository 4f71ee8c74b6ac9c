// A local OpenAI-compatible fake server for tests and benchmarks, on cpp-httplib (Debian
// libcpp-httplib-dev, built with OpenSSL): plain http or TLS with a self-signed certificate made
// in the test (test_certificate.h, written as PEM for --ca-file). It speaks the quirks real
// providers have: a role-only first chunk, `usage` only in a last chunk without choices,
// `reasoning_content` deltas before the answer (DeepSeek, vLLM reasoning parsers), 429 with
// Retry-After, a slow first byte, a connection dropped mid-stream, keep-alive; it requires a
// Bearer key when given one and counts what it received.
#pragma once

#include "test_certificate.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace verdict::test {

struct FakeOpenAiOptions {
    bool tls = false;
    std::string apiKey;                // non-empty: requests without "Authorization: Bearer KEY" get 401
    std::string model = "fake-model";
    std::string answer = "A";          // the answer, streamed in pieces of up to 4 bytes
    // Non-empty: the answer is the value of the first key found in the last message's content
    // (else `answer`), e.g. {{"lottery", "Spam."}} for a classification suite.
    std::map<std::string, std::string> answerFor;
    // An answer "CALL [{"name": "f", "arguments": {...}}, ...]" is sent as tool_calls (streamed: the
    // name and id first, the arguments text in 5-byte pieces; finish_reason "tool_calls").
    std::string reasoning;             // streamed as reasoning_content before the answer
    bool exactTokens = false;          // stream max_tokens pieces " t" instead of the answer (load tests)
    int rejectFirst = 0;               // the first N completion requests: 429 with Retry-After
    int retryAfterS = 1;
    int firstByteDelayMs = 0;
    // Soak tests: the first-byte delay grows by this much with each completion (latency creep), and
    // each completion keeps this many bytes of touched memory until the server goes (a leak).
    int firstByteDelayGrowthMs = 0;
    size_t leakBytesPerCompletion = 0;
    int interTokenDelayMs = 0;
    int dropFirstAfterChunks = -1;     // >= 0: the first completion stream is cut after this many chunks
    // Token-accounting quirks: usage.completion_tokens off by this many (a server whose counts
    // drift from the model's tokenizer), pieces beyond max_tokens (a server that ignores it, with
    // exactTokens), and no usage at all (servers that never send it, even when asked).
    int usageOutputOffset = 0;
    int ignoreMaxTokensBy = 0;
    bool sendUsage = true;
    size_t threads = 16;               // concurrent connections served
};

class FakeOpenAiServer {
public:
    explicit FakeOpenAiServer(FakeOpenAiOptions o) : m_o(std::move(o)) {
        if (m_o.tls) {
            m_certificate = std::make_unique<TestCertificate>();
            if (!m_certificate->ok()) {
                m_error = m_certificate->error();
                return;
            }
            m_server = std::make_unique<httplib::SSLServer>(m_certificate->cert(), m_certificate->key());
        } else {
            m_server = std::make_unique<httplib::Server>();
        }
        if (!m_server->is_valid()) {
            m_error = "the server could not be created";
            return;
        }
        const size_t threads = m_o.threads;
        m_server->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
        m_server->set_keep_alive_max_count(1000);
        m_server->set_keep_alive_timeout(2);  // seconds; stop() waits for idle kept-alive connections this long
        routes();
        m_port = m_server->bind_to_any_port("127.0.0.1");
        if (m_port <= 0) {
            m_error = "cannot bind 127.0.0.1";
            return;
        }
        m_thread = std::thread([this] { m_server->listen_after_bind(); });
        for (int i = 0; i < 500 && !m_server->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ~FakeOpenAiServer() {
        if (m_server) m_server->stop();
        if (m_thread.joinable()) m_thread.join();
    }
    FakeOpenAiServer(const FakeOpenAiServer&) = delete;
    FakeOpenAiServer& operator=(const FakeOpenAiServer&) = delete;

    bool ok() const { return m_error.empty() && m_port > 0; }
    const std::string& error() const { return m_error; }
    int port() const { return m_port; }
    std::string root() const { return std::string(m_o.tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(m_port); }
    std::string baseUrl() const { return root() + "/v1"; }
    const std::string& certFile() const { return m_certificate ? m_certificate->certFile() : m_noFile; }  // the PEM certificate (tls)

    int64_t requests() const { return m_requests.load(); }          // every request, any route
    int64_t completions() const { return m_completions.load(); }    // completion requests answered 200
    int64_t rejected() const { return m_rejected.load(); }          // 429s sent
    int64_t unauthorized() const { return m_unauthorized.load(); }  // 401s sent
    int64_t connections() const {                                   // distinct client connections seen
        std::lock_guard lock(m_mu);
        return static_cast<int64_t>(m_peers.size());
    }
    // Every header value and body received, for tests that look for a planted secret.
    std::string received() const {
        std::lock_guard lock(m_mu);
        return m_received;
    }

private:
    bool authorized(const httplib::Request& req, httplib::Response& res) {
        ++m_requests;
        {
            std::lock_guard lock(m_mu);
            m_peers.insert(req.remote_addr + ":" + std::to_string(req.remote_port));
            for (const auto& [k, v] : req.headers) m_received += k + ": " + v + "\n";
            m_received += req.body + "\n";
        }
        if (m_o.apiKey.empty() || req.get_header_value("Authorization") == "Bearer " + m_o.apiKey) return true;
        ++m_unauthorized;
        res.status = 401;
        res.set_content(R"({"error":{"message":"invalid api key","type":"invalid_request_error"}})", "application/json");
        return false;
    }

    void routes() {
        m_server->Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
            if (!authorized(req, res)) return;
            res.set_content(nlohmann::json{{"object", "list"}, {"data", {{{"id", m_o.model}, {"object", "model"}}}}}.dump(),
                            "application/json");
        });
        auto completion = [this](const httplib::Request& req, httplib::Response& res, bool chat) {
            if (!authorized(req, res)) return;
            if (m_rejectedSoFar.fetch_add(1) < m_o.rejectFirst) {
                ++m_rejected;
                res.status = 429;
                res.set_header("Retry-After", std::to_string(m_o.retryAfterS));
                res.set_content(R"({"error":{"message":"rate limited","type":"rate_limit_error"}})", "application/json");
                return;
            }
            const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
            if (!body.is_object()) {
                res.status = 400;
                res.set_content(R"({"error":{"message":"the body is not JSON"}})", "application/json");
                return;
            }
            const int maxTokens = body.value("max_tokens", 16);
            std::vector<std::pair<std::string, std::string>> pieces;  // (field, text)
            nlohmann::json calls = nlohmann::json::array();           // tool calls to send instead of text
            for (size_t i = 0; i < m_o.reasoning.size(); i += 4) pieces.emplace_back("reasoning_content", m_o.reasoning.substr(i, 4));
            if (m_o.exactTokens) {
                for (int i = 0; i < maxTokens + m_o.ignoreMaxTokensBy; ++i) pieces.emplace_back("content", " t");
            } else {
                std::string answer = m_o.answer;
                const auto& msgs = body.value("messages", nlohmann::json::array());
                const std::string last = msgs.is_array() && !msgs.empty() && msgs.back().contains("content") &&
                                                 msgs.back()["content"].is_string()
                                             ? msgs.back()["content"].get<std::string>()
                                             : std::string();
                for (const auto& [key, reply] : m_o.answerFor)
                    if (last.find(key) != std::string::npos) {
                        answer = reply;
                        break;
                    }
                if (answer.rfind("CALL ", 0) == 0) {
                    calls = nlohmann::json::parse(answer.substr(5), nullptr, false);
                    if (!calls.is_array()) calls = nlohmann::json::array();
                    answer.clear();
                }
                for (size_t i = 0; i < answer.size(); i += 4) pieces.emplace_back("content", answer.substr(i, 4));
            }
            const int64_t promptTokens = static_cast<int64_t>(req.body.size() / 4);
            const int64_t completionTokens = static_cast<int64_t>(pieces.size()) + m_o.usageOutputOffset;
            const nlohmann::json usage = {{"prompt_tokens", promptTokens},
                                          {"completion_tokens", completionTokens},
                                          {"total_tokens", promptTokens + completionTokens}};
            const int64_t nth = m_completions++;
            if (m_o.leakBytesPerCompletion > 0) {
                std::lock_guard lock(m_mu);
                m_leaked.emplace_back(m_o.leakBytesPerCompletion, '\x5a');  // written, so resident
            }
            const int firstDelay = m_o.firstByteDelayMs + static_cast<int>(nth * m_o.firstByteDelayGrowthMs);
            if (!body.value("stream", false)) {
                std::string content, reasoning;
                for (const auto& [field, text] : pieces) (field == "content" ? content : reasoning) += text;
                nlohmann::json choice = {{"index", 0}, {"finish_reason", calls.empty() ? "length" : "tool_calls"}};
                if (chat) {
                    choice["message"] = {{"role", "assistant"}, {"content", content}};
                    for (size_t k = 0; k < calls.size(); ++k)
                        choice["message"]["tool_calls"].push_back(
                            {{"id", "call_" + std::to_string(k)}, {"type", "function"},
                             {"function", {{"name", calls[k].value("name", "")}, {"arguments", calls[k].value("arguments", nlohmann::json::object()).dump()}}}});
                    if (!reasoning.empty()) choice["message"]["reasoning_content"] = reasoning;
                } else {
                    choice["text"] = content;
                }
                if (firstDelay > 0) std::this_thread::sleep_for(std::chrono::milliseconds(firstDelay));
                nlohmann::json answer = {{"id", "cmpl-1"}, {"model", m_o.model}, {"choices", {choice}}};
                if (m_o.sendUsage) answer["usage"] = usage;
                res.set_content(answer.dump(), "application/json");
                return;
            }
            const bool drop = m_o.dropFirstAfterChunks >= 0 && m_dropped.fetch_add(1) == 0;
            const bool withUsage =
                m_o.sendUsage && body.contains("stream_options") && body["stream_options"].value("include_usage", false);
            auto events = std::make_shared<std::vector<std::string>>();
            auto event = [](const nlohmann::json& j) { return "data: " + j.dump() + "\n\n"; };
            if (chat) events->push_back(event({{"choices", {{{"index", 0}, {"delta", {{"role", "assistant"}}}}}}}));
            for (const auto& [field, text] : pieces) {
                nlohmann::json choice = {{"index", 0}};
                if (chat) choice["delta"] = {{field, text}};
                else choice["text"] = field == "content" ? text : "";
                events->push_back(event({{"choices", {choice}}}));
            }
            for (size_t k = 0; k < calls.size() && chat; ++k) {
                const std::string args = calls[k].value("arguments", nlohmann::json::object()).dump();
                const nlohmann::json head = {{"index", k}, {"id", "call_" + std::to_string(k)}, {"type", "function"},
                                             {"function", {{"name", calls[k].value("name", "")}, {"arguments", ""}}}};
                events->push_back(event({{"choices", {{{"index", 0}, {"delta", {{"tool_calls", {head}}}}}}}}));
                for (size_t i = 0; i < args.size(); i += 5)
                    events->push_back(event({{"choices", {{{"index", 0}, {"delta", {{"tool_calls", {{{"index", k}, {"function", {{"arguments", args.substr(i, 5)}}}}}}}}}}}}));
            }
            events->push_back(event({{"choices", {{{"index", 0}, {"delta", nlohmann::json::object()}, {"finish_reason", calls.empty() ? "length" : "tool_calls"}}}}}));
            if (withUsage) events->push_back(event({{"choices", nlohmann::json::array()}, {"usage", usage}}));
            events->push_back("data: [DONE]\n\n");
            const int dropAt = drop ? m_o.dropFirstAfterChunks : -1;
            const int gap = m_o.interTokenDelayMs;
            res.set_chunked_content_provider("text/event-stream", [events, dropAt, firstDelay, gap](size_t, httplib::DataSink& sink) {
                if (firstDelay > 0) std::this_thread::sleep_for(std::chrono::milliseconds(firstDelay));
                for (size_t i = 0; i < events->size(); ++i) {
                    if (static_cast<int>(i) == dropAt) return false;  // closes the connection mid-stream
                    if (i > 0 && gap > 0) std::this_thread::sleep_for(std::chrono::milliseconds(gap));
                    if (!sink.write((*events)[i].data(), (*events)[i].size())) return false;
                }
                sink.done();
                return true;
            });
        };
        m_server->Post("/v1/chat/completions", [completion](const httplib::Request& req, httplib::Response& res) { completion(req, res, true); });
        m_server->Post("/v1/completions", [completion](const httplib::Request& req, httplib::Response& res) { completion(req, res, false); });
    }

    FakeOpenAiOptions m_o;
    std::unique_ptr<httplib::Server> m_server;
    std::thread m_thread;
    int m_port = 0;
    std::string m_error;
    std::unique_ptr<TestCertificate> m_certificate;  // tls
    std::string m_noFile;
    std::atomic<int64_t> m_requests{0}, m_completions{0}, m_rejected{0}, m_unauthorized{0};
    std::atomic<int> m_rejectedSoFar{0}, m_dropped{0};
    mutable std::mutex m_mu;
    std::set<std::string> m_peers;
    std::string m_received;
    std::vector<std::string> m_leaked;  // leakBytesPerCompletion
};

}  // namespace verdict::test
