#include "core/run/endpoint_backend.h"

#include "core/net/http.h"
#include "util/sha256.h"

#include <chrono>

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
                                                               const std::string& engineVersion) {
    auto resolved = resolveEndpoint(endpoint);
    if (!resolved) return resolved.error();
    return std::unique_ptr<EndpointBackend>(new EndpointBackend(*resolved, engineVersion));
}

BackendInfo EndpointBackend::info() const {
    BackendInfo i;
    i.backend = "endpoint";
    i.modelPath = endpointApiRoot(m_endpoint.baseUrl) + " " + m_endpoint.model;
    // No file to hash: the identity is the URL and the model name.
    i.modelSha256 = util::sha256Hex(i.modelPath);
    i.engineVersion = m_engineVersion;
    i.device = "endpoint";
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
        for (const ChatTurn& m : prompt.messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
        body["messages"] = msgs;
        g.prompt = {"", "endpoint", "the server applies its own chat template"};
    } else {
        body["prompt"] = plainText(prompt);
        g.prompt = {plainText(prompt), "raw", ""};
    }
    const std::string url = endpointApiRoot(m_endpoint.baseUrl) + (chat ? "/v1/chat/completions" : "/v1/completions");
    net::HttpClientOptions o;
    o.readTimeoutMs = m_endpoint.timeoutMs;
    const auto t0 = Clock::now();
    Clock::time_point first{}, last{};
    int64_t chunks = 0;
    std::string finish, streamError;
    bool stopped = false;
    net::SseParser sse;
    std::string raw;
    auto resp = net::httpRequest("POST", url, endpointHeaders(m_endpoint), body.dump(), o, [&](std::string_view d) {
        raw.append(d.substr(0, raw.size() < 4096 ? 4096 - raw.size() : 0));
        sse.feed(d, [&](const std::string& data) {
            if (data == "[DONE]" || stopped) return;
            const json j = json::parse(data, nullptr, false);
            if (j.is_discarded()) return;
            if (j.contains("error")) streamError = j["error"].dump();
            if (j.contains("usage") && j["usage"].is_object()) {
                g.tokensIn = j["usage"].value("prompt_tokens", int64_t(0));
                g.tokensOut = j["usage"].value("completion_tokens", int64_t(0));
            }
            if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return;
            const json& c = j["choices"][0];
            std::string piece;
            if (c.contains("delta") && c["delta"].is_object() && c["delta"].contains("content") && c["delta"]["content"].is_string())
                piece = c["delta"]["content"].get<std::string>();
            else if (c.contains("text") && c["text"].is_string())
                piece = c["text"].get<std::string>();
            if (c.contains("finish_reason") && c["finish_reason"].is_string()) finish = c["finish_reason"].get<std::string>();
            if (piece.empty()) return;
            last = Clock::now();
            if (chunks++ == 0) first = last;
            g.text += piece;
            if (onToken && !onToken(piece)) stopped = true;
        });
        return !stopped;
    });
    if (!resp) return resp.error();
    if (resp->status != 200) return Error{url + ": HTTP " + std::to_string(resp->status) + ": " + raw.substr(0, 300)};
    if (!streamError.empty()) return Error{url + ": the server reported " + streamError.substr(0, 300)};
    if (g.tokensOut == 0) g.tokensOut = chunks;
    if (chunks > 0) {
        g.ttftMs = std::chrono::duration<double, std::milli>(first - t0).count();
        const double decodeMs = std::chrono::duration<double, std::milli>(last - first).count();
        if (g.tokensOut > 1 && decodeMs > 0) g.decodeTps = 1000.0 * static_cast<double>(g.tokensOut - 1) / decodeMs;
    }
    g.stopReason = stopped ? "callback" : finish == "length" ? "max_tokens" : finish == "stop" ? "eos" : finish;
    return g;
}

Result<ContinuationScore> EndpointBackend::logprobs(const Prompt& context, const std::string& continuation) {
    if (continuation.empty()) return Error{"logprobs: the continuation is empty"};
    const std::string ctx = plainText(context);
    const std::string url = endpointApiRoot(m_endpoint.baseUrl) + "/v1/completions";
    const json body = {{"model", m_endpoint.model}, {"prompt", ctx + continuation}, {"max_tokens", 1},
                       {"temperature", 0},          {"echo", true},                 {"logprobs", 1}};
    net::HttpClientOptions o;
    o.readTimeoutMs = m_endpoint.timeoutMs;
    auto resp = net::httpRequest("POST", url, endpointHeaders(m_endpoint), body.dump(), o);
    if (!resp) return resp.error();
    if (resp->status != 200)
        return Error{url + ": HTTP " + std::to_string(resp->status) + " for a prompt-logprobs request (echo + logprobs): " +
                     resp->body.substr(0, 200) + "; use --mc-mode generate with this server"};
    const json j = json::parse(resp->body, nullptr, false);
    const json* lp = nullptr;
    if (!j.is_discarded() && j.contains("choices") && j["choices"].is_array() && !j["choices"].empty() &&
        j["choices"][0].contains("logprobs") && j["choices"][0]["logprobs"].is_object())
        lp = &j["choices"][0]["logprobs"];
    if (!lp || !lp->contains("token_logprobs") || !lp->contains("text_offset") || !(*lp)["token_logprobs"].is_array())
        return Error{url + ": the server returned no prompt logprobs (echo); use --mc-mode generate with this server"};
    const json& tl = (*lp)["token_logprobs"];
    const json& off = (*lp)["text_offset"];
    const json* top = lp->contains("top_logprobs") && (*lp)["top_logprobs"].is_array() ? &(*lp)["top_logprobs"] : nullptr;
    const json* toks = lp->contains("tokens") && (*lp)["tokens"].is_array() ? &(*lp)["tokens"] : nullptr;
    ContinuationScore s;
    s.context = {ctx, "raw", ""};
    s.greedy = true;
    const size_t boundary = ctx.size();
    // The prompt's tokens are all but the one generated token (max_tokens 1) at the end.
    const size_t promptTokens = tl.size() > 0 ? tl.size() - 1 : 0;
    for (size_t i = 0; i < promptTokens && i < off.size(); ++i) {
        if (!off[i].is_number()) continue;
        if (off[i].get<size_t>() < boundary) {
            ++s.contextTokens;
            continue;
        }
        if (!tl[i].is_number()) return Error{url + ": prompt token " + std::to_string(i) + " has no logprob"};
        s.logprob += tl[i].get<double>();
        ++s.continuationTokens;
        // greedy: the token is the most likely one (top_logprobs with 1 entry)
        if (top && i < top->size() && (*top)[i].is_object() && toks && i < toks->size() && (*toks)[i].is_string()) {
            const json& t = (*top)[i];
            const std::string tok = (*toks)[i].get<std::string>();
            double best = -1e300;
            std::string bestTok;
            for (auto it = t.begin(); it != t.end(); ++it)
                if (it.value().is_number() && it.value().get<double>() > best) {
                    best = it.value().get<double>();
                    bestTok = it.key();
                }
            if (bestTok != tok) s.greedy = false;
        } else {
            s.greedy = false;
        }
    }
    if (s.continuationTokens == 0)
        return Error{url + ": no prompt token starts inside the continuation (the tokenization merged it into the context)"};
    return s;
}

}  // namespace verdict::core
