// Continuous batching over one Model: requests join and leave between decode steps, and all
// running sequences advance together, one batched forward pass per step (decodeBatch, batch.h).
// This is what an OpenAI-compatible server (`verdict serve`) runs on.
//
// One scheduler thread owns maxSequences sessions. Each loop iteration: admit waiting requests
// into free sessions (prefill each prompt, sample its first token: TTFT is measured from
// submit()), then one decodeBatch over every running sequence, sample, apply each request's stop
// rules (Session::generate's: maxTokens, EOG when stopAtEos, stop strings, context full,
// onToken returning false, cancel()), and finish the ones that stopped.
//
// Callbacks (GenerateConfig::onToken and onDone) run on the scheduler thread: keep them short.
#pragma once

#include "verdict/engine/generate.h"
#include "verdict/engine/model.h"
#include "verdict/engine/result.h"
#include "verdict/engine/session.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace verdict {

struct BatchRequest {
    std::vector<int32_t> prompt;
    GenerateConfig cfg;  // cfg.onToken streams the tokens; returning false stops this request
    // Called exactly once: the result (stopReason, tokens, text, timings) or the error.
    std::function<void(Result<GenerateResult>)> onDone;
};

struct BatchSchedulerOptions {
    int maxSequences = 8;  // sessions, i.e. the largest batch; 1..kMaxBatchRows
    int64_t nCtx = 0;      // context per sequence; <= 0: min(training context, 4096)
    int maxWaiting = 256;  // submit() fails beyond this many queued requests
};

struct BatchSchedulerStats {
    int running = 0;
    int waiting = 0;
    uint64_t completed = 0;
    uint64_t failed = 0;
    uint64_t steps = 0;          // batched decode passes
    uint64_t promptTokens = 0;   // prefilled
    uint64_t generatedTokens = 0;
    uint64_t kvBytes = 0;        // allocated KV caches of all sessions
};

class BatchScheduler {
public:
    static Result<std::unique_ptr<BatchScheduler>> create(std::shared_ptr<const Model> model,
                                                          const BatchSchedulerOptions& options = {});
    // Stops the thread; requests still queued or running finish with an error.
    ~BatchScheduler();
    BatchScheduler(const BatchScheduler&) = delete;
    BatchScheduler& operator=(const BatchScheduler&) = delete;

    // Queues a request and returns its id. Fails at once (onDone not called) for an empty prompt,
    // one longer than the context, an id outside the vocabulary, or a full queue.
    Result<uint64_t> submit(BatchRequest request);
    // Stops a queued or running request at the next step (StopReason::Callback). Unknown ids
    // (already finished) are ignored.
    void cancel(uint64_t id);

    BatchSchedulerStats stats() const;
    int64_t nCtx() const;
    const Model& model() const;

private:
    struct Impl;
    explicit BatchScheduler(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace verdict
