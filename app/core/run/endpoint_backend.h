// ModelBackend over an OpenAI-compatible endpoint (vLLM, TGI, SGLang, llama-server, Ollama,
// `verdict serve`): a served model is one side of a comparison like a local file.
//
// generate: /v1/chat/completions with the messages (the server applies its own chat template;
// templateUsed "endpoint") or /v1/completions with the plain text, streamed so that TTFT and the
// decode rate are measured as the client sees them; token counts from `usage`.
// logprobs: /v1/completions with echo + logprobs + max_tokens 1 (as lm-evaluation-harness's
// local-completions model does): the prompt tokens' log-probabilities, summed over the tokens
// that start at or after the continuation's first byte. Servers without prompt logprobs fail
// with a clear message (use --mc-mode generate then).
// The API key is held in memory only; runs record the URL and the model name.
#pragma once

#include "core/perf/load_runner.h"
#include "core/run/model_backend.h"

#include <algorithm>
#include <memory>

namespace verdict::core {

class EndpointBackend final : public ModelBackend {
public:
    // Checks the endpoint (GET /v1/models) and resolves the model name when empty. `parallel`:
    // requests sent at once (each call is its own HTTP request); 0 (choose) is 1, since a
    // server's limits are unknown; never more than the endpoint's cap (api.maxConcurrency).
    static Result<std::unique_ptr<EndpointBackend>> open(const EndpointConfig& endpoint, const std::string& engineVersion,
                                                         int parallel = 1);

    BackendInfo info() const override;
    Result<Generation> generate(const Prompt& prompt, const GenerationParams& params, const TokenCallback& onToken) override;
    Result<ContinuationScore> logprobs(const Prompt& context, const std::string& continuation) override;
    int maxConcurrentCalls() const override { return m_parallel; }

private:
    // The endpoint's cap (api.maxConcurrency) bounds the calls at once whatever was asked.
    EndpointBackend(EndpointConfig endpoint, std::string engineVersion, int parallel)
        : m_endpoint(std::move(endpoint)), m_engineVersion(std::move(engineVersion)), m_parallel(std::max(1, parallel)) {
        if (m_endpoint.api.maxConcurrency > 0)
            m_parallel = static_cast<int>(std::min<int64_t>(m_parallel, m_endpoint.api.maxConcurrency));
    }
    EndpointConfig m_endpoint;
    std::string m_engineVersion;
    int m_parallel = 1;
};

}  // namespace verdict::core
