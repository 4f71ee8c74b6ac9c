// A scripted judge for tests: an OpenAI-compatible server (core::net::HttpServer, streaming chat
// completions) whose verdicts on Verdict's built-in pairwise judge prompt follow a rule, so that
// the tests can predict every verdict:
//   a question containing "Transformer" or "unreadable"  no marker at all (unreadable)
//   a question containing "数据库" or "biased"           always "[[A]]": the answer shown first
//                                                         wins (a flip: a tie, position bias)
//   otherwise                                            the longer answer wins, equal = [[C]]
// GET /v1/models lists one model, "scripted-judge".
#pragma once

#include "core/net/http.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <string>

namespace verdict::test {

inline std::string between(const std::string& s, const std::string& open, const std::string& close) {
    const size_t a = s.find(open);
    if (a == std::string::npos) return "";
    const size_t b = s.find(close, a + open.size());
    return b == std::string::npos ? "" : s.substr(a + open.size(), b - a - open.size());
}

inline std::string scriptedVerdict(const std::string& prompt) {
    const std::string q = between(prompt, "<|The Start of the Question|>\n", "\n<|The End of the Question|>");
    if (q.find("Transformer") != std::string::npos || q.find("unreadable") != std::string::npos)
        return "Both answers are interesting.";
    if (q.find("数据库") != std::string::npos || q.find("biased") != std::string::npos)
        return "The first answer is better.\n[[A]]";
    const size_t a = between(prompt, "Assistant A's Answer|>\n", "\n<|The End of Assistant A").size();
    const size_t b = between(prompt, "Assistant B's Answer|>\n", "\n<|The End of Assistant B").size();
    return a > b ? "A says more. [[A]]" : a < b ? "B says more. [[B]]" : "Equal. [[C]]";
}

// Starts the server on a free port; `requests` counts chat completions. Null when it cannot bind.
inline std::unique_ptr<core::net::HttpServer> startScriptedJudge(std::atomic<int>& requests) {
    using nlohmann::json;
    core::net::HttpServerOptions so;
    so.port = 0;
    auto server = core::net::HttpServer::start(so, [&requests](const core::net::HttpRequest& req, core::net::HttpResponder& res) {
        if (req.path == "/v1/models") {
            res.send(200, "application/json", R"({"object": "list", "data": [{"id": "scripted-judge", "object": "model"}]})");
            return;
        }
        const json body = json::parse(req.body, nullptr, false);
        if (req.path != "/v1/chat/completions" || body.is_discarded() || !body.contains("messages")) {
            res.send(404, "application/json", R"({"error": {"message": "not here"}})");
            return;
        }
        ++requests;
        const std::string text = scriptedVerdict(body["messages"].back().value("content", std::string()));
        res.startStream(200, "text/event-stream");
        res.write("data: " + json({{"choices", {{{"index", 0}, {"delta", {{"content", text}}}, {"finish_reason", nullptr}}}}}).dump() + "\n\n");
        res.write("data: " + json({{"choices", {{{"index", 0}, {"delta", json::object()}, {"finish_reason", "stop"}}}},
                                   {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 7}}}}).dump() + "\n\n");
        res.write("data: [DONE]\n\n");
    });
    return server ? std::move(*server) : nullptr;
}

}  // namespace verdict::test
