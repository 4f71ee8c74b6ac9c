// Engine-internal state of a Session: the KV cache, the architecture's scratch buffers, the
// logits buffer and the cached token sequence.
#pragma once

#include "arch/architecture.h"
#include "model/model_impl.h"
#include "sampling/sampler.h"
#include "arch/kv_cache.h"
#include "verdict/engine/session.h"

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::detail {

struct SessionImpl {
    std::shared_ptr<const Model> model;
    const ModelImpl* m = nullptr;
    SessionOptions options;
    int64_t nCtx = 0;
    int64_t nBatch = 0;
    std::unique_ptr<session::KvCache> kv;         // the forward's backend (a split's first blocks)
    std::unique_ptr<arch::ArchScratch> scratch;
    std::unique_ptr<session::KvCache> kvTail;     // a split forward (ModelImpl::splitLayer): the CPU's
    std::unique_ptr<arch::ArchScratch> scratchTail;  // blocks, their cache and activations
    std::vector<float> hidden;                    // a split forward: [nBatch][nEmbd] handed between stages
    std::vector<float> logits;        // [rows][nVocab]: 1 row, or every row of an allLogits call
    std::vector<int32_t> tokens;      // the sequence held in the cache
    Timings timings;
    arch::DebugHook debug;            // tests: named intermediates of every forward pass

    // Checks ids and room, then runs the forward pass over `tokens` in chunks of nBatch.
    Result<LogitsView> evaluate(std::span<const int32_t> input, bool allLogits);
    // Copies cached positions [from, to) from `src` (the same model and cache layout), every stage.
    void copyPositions(const SessionImpl& src, int64_t from, int64_t to);
    // Length of the common prefix of the cache and `seq`.
    int64_t commonPrefix(std::span<const int32_t> seq) const;
    void truncate(int64_t n);
};

// Adds log p(token | the row's context) from one row of logits to `out` (tokenLogprobs, sum, and
// isGreedy cleared when token is not the row's argmax): log-softmax in double, as
// lm-evaluation-harness sums log-probabilities. Session::logprobs and logprobsBatch share it.
void addTokenLogprob(std::span<const float> logits, int32_t token, LogprobsResult& out);

// Fails when a prompt (or other input) of n tokens is empty or longer than the context.
Result<void> checkFits(const SessionImpl& d, size_t n, const char* what);

// One sequence being generated: its sampler, stop rules, text and timings. Session::generate and
// generateBatch drive it the same way: after each forward pass sampleNext(), then accept(); when
// accept() says go on, the caller checks the context (stop(ContextFull)) and decodes the token.
class SequenceGenerator {
public:
    using Clock = std::chrono::steady_clock;

    // prompt: fed to the penalty history. The sampler uses cfg.sampling with `seed`.
    SequenceGenerator(const Model& model, const GenerateConfig& cfg, std::span<const int32_t> prompt, uint64_t seed);

    // The prompt's evaluation: tokens evaluated (after the reused prefix) and its duration.
    void setPrefill(int64_t promptTokens, double promptMs);
    bool done() const { return m_done; }
    // Samples from one row of logits and records the latency since `since`: the TTFT for the
    // first token (since = the call's start), a decode step after (since = the step's start).
    int32_t sampleNext(std::span<const float> logits, Clock::time_point since);
    // Applies the stop rules to the sampled token in Session::generate's order: EOG, text piece and
    // onPiece (false: Callback), stop strings, maxTokens. Returns true when another token is wanted.
    bool accept(int32_t tok, const std::function<bool(std::string_view piece)>& onPiece);
    void stop(StopReason reason);  // ends the sequence for a reason decided by the caller
    // The result, with the decode totals computed from the step latencies.
    GenerateResult finish();

private:
    const Model& m_model;
    const GenerateConfig& m_cfg;
    sampling::Sampler m_sampler;
    size_t m_maxStop = 0;  // longest stop string
    bool m_done = false;
    GenerateResult m_out;
};

// Set a hook that sees every named intermediate (see arch::DebugHook); empty to remove.
void setDebugHook(Session& session, arch::DebugHook hook);

}  // namespace verdict::detail
