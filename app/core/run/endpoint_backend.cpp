#include "core/run/endpoint_backend.h"

#include "core/net/http.h"
#include "core/net/openai_response.h"
#include "core/run/tool_call_parse.h"
#include "core/run/tool_prompt.h"
#include "core/suite/chat_turn_json.h"
#include "util/sha256.h"

#include <chrono>
#include <random>
#include <thread>

namespace verdict::core {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

std::string plainText(const Prompt& p) {
    if (!p.text.empty() || p.messages.empty()) return p.text;
    std::string t;
    for (const ChatTurn& m : p.messages) t += (t.empty() ? "" : "\n\n") + m.content;
    return t;
}

}  // namespace

Result<std::unique_ptr<EndpointBackend>> EndpointBackend::open(const EndpointConfig& endpoint,
                                                               const std::string& engineVersion, int parallel) {
    auto resolved = resolveEndpoint(endpoint);
    if (!resolved) return resolved.error();
    return std::unique_ptr<EndpointBackend>(new EndpointBackend(*resolved, engineVersion, parallel));
}

BackendInfo EndpointBackend::info() const {
    BackendInfo i;
    i.backend = "endpoint";
    i.modelPath = endpointApiRoot(m_endpoint.baseUrl) + " " + m_endpoint.model;
    // No file to hash: the identity is the URL and the model name.
    i.modelSha256 = util::sha256Hex(i.modelPath);
    i.engineVersion = m_engineVersion;
    i.device = endpointDeviceLabel(m_endpoint);
    i.provider = m_endpoint.api.provider;
    i.providerPrices = m_endpoint.api.prices;
    return i;
}

Result<Generation> EndpointBackend::generate(const Prompt& prompt, const GenerationParams& params,
                                             const TokenCallback& onToken) {
    const bool chat = prompt.useChatTemplate && !prompt.messages.empty();
    json body = {{"model", m_endpoint.model},
                 {"max_tokens", std::max(1, params.maxTokens)},
                 {"temperature", std::max(0.0, params.temperature)},
                 {"top_p", params.temperature > 0 ? params.topP : 1.0},
                 {"seed", params.seed},
                 {"stream", true},
                 {"stream_options", {{"include_usage", true}}}};
    if (!params.stop.empty()) body["stop"] = params.stop;
    Generation g;
    if (chat) {
        json msgs = json::array();
        for (const ChatTurn& m : prompt.messages) msgs.push_back(chatTurnToJson(m));
        body["messages"] = msgs;
        if (!prompt.tools.is_null()) body["tools"] = prompt.tools;
        g.prompt = {"", "endpoint", "the server applies its own chat template"};
    } else {
        // Tools over the text route: offered in the prompt, the call read back from the text.
        const std::string text = toolsPreamble(prompt.tools) + plainText(prompt);
        body["prompt"] = text;
        g.prompt = {text, "raw", ""};
    }
    const std::string url = endpointUrl(m_endpoint, chat ? EndpointRoute::Chat : EndpointRoute::Completions);
    if (url.empty())
        return Error{"provider " + m_endpoint.api.provider + " has no " + (chat ? "chat" : "text") +
                     "-completions route" + (chat ? "" : ": send chat messages (drop --no-chat-template)")};
    const net::HttpClientOptions o = endpointClientOptions(m_endpoint);
    // 429 / 5xx answers and failed connections are retried (up to kMaxRetries times, waiting as
    // retryDelayMs says, Retry-After included) while no token has reached the caller yet.
    constexpr int kMaxRetries = 3;
    std::mt19937_64 rng(std::hash<std::string>{}(body.dump()));
    Clock::time_point t0, first{}, last{}, firstAnswer{};
    int64_t chunks = 0;
    std::string finish, streamError, raw;
    std::vector<ToolCall> calls;  // by the server's index
    constexpr int64_t kMaxToolCalls = 64;
    bool stopped = false;
    for (int attempt = 0;; ++attempt) {
        t0 = Clock::now();
        chunks = 0;
        finish.clear();
        streamError.clear();
        raw.clear();
        g.text.clear();
        g.reasoning.clear();
        calls.clear();
        g.reasoningTokens.reset();
        g.cachedTokensIn.reset();
        g.tokensIn = g.tokensOut = 0;
        firstAnswer = Clock::time_point{};
        net::SseParser sse;
        auto resp = net::httpRequest("POST", url, endpointHeaders(m_endpoint), body.dump(), o, [&](std::string_view d) {
            raw.append(d.substr(0, raw.size() < 4096 ? 4096 - raw.size() : 0));
            sse.feed(d, [&](const std::string& data) {
                if (stopped) return;
                net::OpenAiStreamChunk c = net::parseOpenAiStreamChunk(data);
                if (c.error) streamError = *c.error;
                if (c.usage) {
                    g.tokensIn = c.usage->promptTokens.value_or(0);
                    g.tokensOut = c.usage->completionTokens.value_or(0);
                    if (c.usage->reasoningTokens) g.reasoningTokens = *c.usage->reasoningTokens;
                    if (c.usage->cachedPromptTokens) g.cachedTokensIn = *c.usage->cachedPromptTokens;
                }
                if (!c.hasChoice) return;
                if (c.finishReason) finish = *c.finishReason;
                if (c.piece.empty() && c.reasoningPiece.empty() && c.toolCalls.empty()) return;
                last = Clock::now();
                if (chunks++ == 0) first = last;
                g.reasoning += c.reasoningPiece;
                for (net::OpenAiToolCallPiece& t : c.toolCalls) {
                    if (t.index < 0 || t.index >= kMaxToolCalls) continue;
                    const size_t k = static_cast<size_t>(t.index);
                    if (calls.size() <= k) calls.resize(k + 1);
                    if (!t.id.empty()) calls[k].id = t.id;
                    calls[k].name += t.name;  // sent once; some servers split it too
                    calls[k].arguments += t.arguments;
                    if (firstAnswer == Clock::time_point{}) firstAnswer = last;  // a call is an answer
                }
                if (c.piece.empty()) return;
                if (firstAnswer == Clock::time_point{}) firstAnswer = last;
                g.text += c.piece;
                if (onToken && !onToken(c.piece)) stopped = true;
            });
            return !stopped;
        });
        const bool delivered = firstAnswer != Clock::time_point{};
        const bool transient = !resp || resp->status == 429 || resp->status >= 500;
        if (!transient || delivered || stopped || attempt >= kMaxRetries) {
            if (!resp) return resp.error();
            if (resp->status != 200) return Error{url + ": HTTP " + std::to_string(resp->status) + ": " + raw.substr(0, 300)};
            break;
        }
        if (!resp && resp.error().message.find("TLS with") != std::string::npos) return resp.error();  // a retry cannot fix a certificate
        const double waitMs = retryDelayMs(attempt, 500, resp ? retryAfterMsOf(*resp) : 0, rng);
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(waitMs));
    }
    if (!streamError.empty()) return Error{url + ": the server reported " + streamError.substr(0, 300)};
    if (g.tokensOut == 0) g.tokensOut = chunks;
    if (chunks > 0) {
        g.ttftMs = std::chrono::duration<double, std::milli>(first - t0).count();
        if (firstAnswer != Clock::time_point{}) g.ttfaMs = std::chrono::duration<double, std::milli>(firstAnswer - t0).count();
        const double decodeMs = std::chrono::duration<double, std::milli>(last - first).count();
        if (g.tokensOut > 1 && decodeMs > 0) g.decodeTps = 1000.0 * static_cast<double>(g.tokensOut - 1) / decodeMs;
    }
    g.stopReason = stopped ? "callback" : finish == "length" ? "max_tokens" : finish == "stop" || finish == "tool_calls" ? "eos" : finish;
    if (!prompt.tools.is_null()) {
        for (ToolCall& c : calls)
            if (!c.name.empty() || !c.arguments.empty()) g.toolCalls.push_back(std::move(c));
        if (!g.toolCalls.empty()) {
            g.toolCallFormat = "endpoint";
        } else {
            // No structured calls (a server without tool support, the text route): read the text.
            ParsedToolCalls parsed = parseToolCalls(g.text);
            g.text = std::move(parsed.content);
            g.toolCalls = std::move(parsed.calls);
            g.toolCallFormat = std::move(parsed.format);
            g.toolCallProblems = std::move(parsed.problems);
        }
    }
    return g;
}

Result<ContinuationScore> EndpointBackend::logprobs(const Prompt& context, const std::string& continuation) {
    if (continuation.empty()) return Error{"logprobs: the continuation is empty"};
    const std::string ctx = plainText(context);
    const std::string url = endpointUrl(m_endpoint, EndpointRoute::Completions);
    if (url.empty())
        return Error{"provider " + m_endpoint.api.provider +
                     " has no text-completions route, so no prompt logprobs: use --mc-mode generate"};
    const json body = {{"model", m_endpoint.model}, {"prompt", ctx + continuation}, {"max_tokens", 1},
                       {"temperature", 0},          {"echo", true},                 {"logprobs", 1}};
    const net::HttpClientOptions o = endpointClientOptions(m_endpoint);
    auto resp = net::httpRequest("POST", url, endpointHeaders(m_endpoint), body.dump(), o);
    if (!resp) return resp.error();
    if (resp->status != 200)
        return Error{url + ": HTTP " + std::to_string(resp->status) + " for a prompt-logprobs request (echo + logprobs): " +
                     resp->body.substr(0, 200) + "; use --mc-mode generate with this server"};
    auto lp = net::parseEchoLogprobs(resp->body, ctx.size());
    if (!lp) return Error{url + ": " + lp.error().message};
    ContinuationScore s;
    s.context = {ctx, "raw", ""};
    s.logprob = lp->logprob;
    s.contextTokens = lp->contextTokens;
    s.continuationTokens = lp->continuationTokens;
    s.greedy = lp->greedy;
    return s;
}

}  // namespace verdict::core
