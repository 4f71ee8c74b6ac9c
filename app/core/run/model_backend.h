// What the suite runner needs from a model: generate text for a prompt, and score a
// continuation's log-likelihood. EngineBackend (engine_backend.h) implements it over Verdict's
// own engine; the OpenAI-compatible endpoint client (a later issue) implements it over HTTP;
// tests implement it with deterministic fakes.
#pragma once

#include "core/suite/suite_item.h"
#include "verdict/engine/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

// Sampling and stopping, as stored in runs.generation (toJson keys are stable).
struct GenerationParams {
    int32_t maxTokens = 256;
    double temperature = 0.0;   // <= 0: greedy
    int32_t topK = 40;
    double topP = 0.95;
    double minP = 0.05;
    double repeatPenalty = 1.0;
    uint64_t seed = 0;          // the runner passes seed + item index (same item, same draw on resume)
    std::vector<std::string> stop;  // stop strings (text is cut before them)

    nlohmann::json toJson() const;  // {max_tokens, temperature, top_k, top_p, min_p, repeat_penalty, stop}
};

// A prompt in both forms: a backend with a chat template formats `messages`; otherwise (or when
// useChatTemplate is false) it sends `text` as is.
struct Prompt {
    std::vector<ChatTurn> messages;
    std::string text;
    bool useChatTemplate = true;
    // Functions the model may call (OpenAI `tools`; null: none). A backend with a chat template
    // shows them to the model through it; an endpoint sends them as `tools`. Calls come back in
    // Generation::toolCalls.
    nlohmann::json tools;
};

// How a prompt was actually sent (recorded per item).
struct RenderedPrompt {
    std::string text;          // exactly what the model saw ("" when the backend only takes messages)
    std::string templateUsed;  // "model", "builtin:<family>", "raw", "endpoint"
    std::string note;          // why the model's template was not used, when it was not
};

struct Generation {
    RenderedPrompt prompt;
    std::string text;                 // generated text (cut before a stop string)
    int64_t tokensIn = 0;             // prompt tokens
    int64_t tokensOut = 0;            // generated tokens
    std::optional<double> ttftMs;     // first token of any kind (reasoning included)
    std::optional<double> ttfaMs;     // first answer token, when the backend tells reasoning apart (endpoints)
    std::optional<double> decodeTps;
    std::string stopReason;           // "max_tokens", "eos", "stop_string", "callback", "context_full"
    std::string reasoning;            // reasoning the server sent apart from the answer (reasoning_content)
    std::optional<int64_t> reasoningTokens;  // the server's count of them (usage), part of tokensOut
    std::optional<int64_t> cachedTokensIn;   // the server's count of prompt tokens served from its cache (usage), part of tokensIn
    // Function calls, when the prompt offered tools: an endpoint's `tool_calls`; for a local model
    // read from its output in the format its template teaches (tool_call_parse.h), the markup
    // removed from `text`. toolCallFormat names that format ("endpoint" for a server's calls);
    // toolCallProblems lists call markup that could not be read.
    std::vector<ToolCall> toolCalls;
    std::string toolCallFormat;
    std::vector<std::string> toolCallProblems;
};

struct ContinuationScore {
    RenderedPrompt context;
    double logprob = 0;               // sum of log p(continuation token | everything before)
    int64_t contextTokens = 0;
    int64_t continuationTokens = 0;
    bool greedy = false;              // greedy decoding would produce the continuation
};

// A log-likelihood item: one context and the continuations to score after it (a multiple-choice
// question and its choices).
struct LoglikRequest {
    Prompt context;
    std::vector<std::string> continuations;
};

// Identity of what runs, for the run record.
struct BackendInfo {
    std::string backend = "engine";         // "engine" | "endpoint"
    std::string modelPath;                  // file (first part) or URL + model name
    std::vector<std::string> modelParts;    // files to hash (empty for an endpoint)
    std::string modelSha256;                // when known without hashing ("" otherwise)
    int64_t modelBytes = 0;
    std::string engineVersion;
    std::string device;
    std::string chatTemplate;               // the model's template text ("" when none)
    std::string provider;                   // endpoint: the provider preset used ("" none); runs store it
    nlohmann::json providerPrices = nlohmann::json::array();  // endpoint: that preset's prices (EndpointApi::prices)
};

// Called with each generated piece of text; return false to stop generating.
using TokenCallback = std::function<bool(std::string_view piece)>;

class ModelBackend {
public:
    virtual ~ModelBackend() = default;

    virtual BackendInfo info() const = 0;

    // Generates a completion. Fails (a value, never an exception) for a prompt that cannot be
    // sent: too long for the context, empty after tokenization, transport errors. Stopping via
    // onToken is not a failure (stopReason "callback").
    virtual Result<Generation> generate(const Prompt& prompt, const GenerationParams& params,
                                        const TokenCallback& onToken) = 0;

    // Log-likelihood of `continuation` right after `context`. Fails like generate, and for an
    // empty continuation.
    virtual Result<ContinuationScore> logprobs(const Prompt& context, const std::string& continuation) = 0;

    // Scores several log-likelihood items. Result i holds request i's scores in the order of its
    // continuations, up to and including the first that failed (the rest are not scored). The
    // default scores one continuation after the other through logprobs(); the engine overrides it
    // to score up to maxConcurrentCalls() items in shared forward passes, with scores equal to
    // scoring them one at a time.
    virtual std::vector<std::vector<Result<ContinuationScore>>> logprobsMany(const std::vector<LoglikRequest>& requests);

    // How many generate() calls this backend serves at once, each from its own thread (the suite
    // runner keeps at most this many items in flight). 1: one call at a time, from one thread.
    // logprobs() is safe from those threads too (it may run one call at a time).
    virtual int maxConcurrentCalls() const { return 1; }
};

}  // namespace verdict::core
