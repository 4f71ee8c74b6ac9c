// A session: one sequence of tokens over a shared Model, with its own KV cache and buffers.
// evaluate() appends tokens; generate() and logprobs() reuse the longest cached prefix of their
// input, so scoring several continuations of one context evaluates the context once.
//
// Not thread-safe: one thread per session. Different sessions on one model may run on
// different threads (their compute is serialised on the model's thread pool).
#pragma once

#include "verdict/engine/generate.h"
#include "verdict/engine/model.h"
#include "verdict/engine/result.h"
#include "verdict/engine/timings.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace verdict {

class Session;
namespace detail {
struct SessionImpl;
SessionImpl& sessionImpl(Session& session);  // engine-internal access
}  // namespace detail

enum class KvType { F32, F16 };

struct SessionOptions {
    int64_t nCtx = 0;          // context capacity in tokens; <= 0: min(model's training context, 4096)
    KvType kvType = KvType::F32;
    int64_t nBatch = 512;      // tokens per forward pass when evaluating a long input
};

// Logits of evaluated positions, valid until the session's next call.
struct LogitsView {
    const float* data = nullptr;  // [rows][nVocab]
    int64_t rows = 0;
    int64_t nVocab = 0;
    std::span<const float> row(int64_t r) const {
        return {data + r * nVocab, static_cast<size_t>(nVocab)};
    }
    std::span<const float> last() const { return row(rows - 1); }
};

struct LogprobsResult {
    std::vector<float> tokenLogprobs;  // log p(continuation[i] | context + continuation[<i])
    double sum = 0;                    // sum of tokenLogprobs
    bool isGreedy = false;             // every continuation token was the argmax
};

struct GenerateResult {
    std::vector<int32_t> tokens;  // generated ids (an EOG or stop-string token included)
    std::string text;             // their text, cut before a stop string
    StopReason stopReason = StopReason::MaxTokens;
    Timings timings;
};

class Session {
public:
    // Allocates the KV cache and buffers. Fails when nCtx is too large to allocate.
    static Result<std::unique_ptr<Session>> create(std::shared_ptr<const Model> model,
                                                   const SessionOptions& options = {});
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    const Model& model() const;
    int64_t nCtx() const;
    int64_t nPast() const;                      // tokens in the cache
    const std::vector<int32_t>& tokens() const; // the cached sequence

    void clear();                // empty the cache
    void truncate(int64_t n);    // keep the first n cached tokens (n <= nPast)

    // Appends tokens to the sequence (teacher forcing, no sampling) and returns the logits of the
    // last token, or of every given token when allLogits. Fails (cache unchanged) on an empty
    // input, a token id outside the vocabulary, or nPast + tokens > nCtx.
    Result<LogitsView> evaluate(std::span<const int32_t> tokens, bool allLogits = false);

    // Sets the sequence to `prompt` (reusing the cached prefix), then samples up to
    // cfg.maxTokens tokens. Fails on an empty prompt, a prompt that does not fit in the context,
    // or invalid ids; running out of context while generating ends with StopReason::ContextFull.
    Result<GenerateResult> generate(std::span<const int32_t> prompt, const GenerateConfig& cfg);

    // Scores a continuation: per-token log-probabilities under the model, their sum, and whether
    // greedy decoding would have produced it. Both spans must be non-empty and fit in nCtx.
    Result<LogprobsResult> logprobs(std::span<const int32_t> context, std::span<const int32_t> continuation);

    // Timings of the last generate() (the model's load time included).
    const Timings& timings() const;
    MemoryUse memoryUse() const;

private:
    friend detail::SessionImpl& detail::sessionImpl(Session& session);
    Session();
    std::unique_ptr<detail::SessionImpl> m_impl;
};

}  // namespace verdict
