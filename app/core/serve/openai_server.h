// `verdict serve`: an OpenAI-compatible HTTP API over the built-in engine, with continuous
// batching (verdict/engine/batch_scheduler.h) of concurrent requests.
//
//   GET  /health               {"status":"ok"}
//   GET  /v1/models            the one loaded model
//   POST /v1/completions       {prompt, max_tokens, temperature, top_p, top_k, min_p, seed, stop,
//                               presence_penalty, frequency_penalty, repetition_penalty,
//                               ignore_eos, stream, stream_options.include_usage}
//   POST /v1/chat/completions  {messages, ...the same}; rendered with the model's chat template
//   GET  /metrics              Prometheus text format
//
// Errors are JSON {"error": {"message", "type", "param"}} with 400 (malformed JSON, bad field),
// 401 (API key), 404, 405, 413 (body too large), 503 (queue full). Shapes: docs/serve.md.
#pragma once

#include "core/net/http.h"
#include "verdict/engine/model.h"

#include <memory>
#include <string>

namespace verdict::core {

struct ServeOptions {
    std::string modelId;            // the name clients pass as "model"; defaults to the file name
    std::string apiKey;             // non-empty: "Authorization: Bearer KEY" required
    int maxSequences = 8;           // concurrent sequences decoded together
    int64_t nCtx = 0;               // context per sequence; <= 0: min(training context, 4096)
    int maxTokensLimit = 4096;      // max_tokens above this: 400
    int defaultMaxTokens = 256;     // when the request gives none
    int maxQueue = 256;             // waiting requests beyond this: 503
};

class OpenAiServer {
public:
    static Result<std::unique_ptr<OpenAiServer>> create(std::shared_ptr<const Model> model, const ServeOptions& options);
    ~OpenAiServer();

    // The HTTP handler; safe to call from many connection threads at once.
    void handle(const net::HttpRequest& request, net::HttpResponder& responder);
    // The Prometheus text of /metrics.
    std::string metricsText() const;

private:
    struct Impl;
    explicit OpenAiServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// Length of the longest prefix of `s` that ends on a UTF-8 character boundary (a truncated
// multi-byte sequence at the end is held back; invalid bytes are not).
size_t completeUtf8Prefix(std::string_view s);

}  // namespace verdict::core
