// ModelBackend over Verdict's own engine: one loaded Model and one Session (its KV cache is
// reused between items, so a shared few-shot prefix is evaluated once).
//
// With `parallel` > 1, generate() may be called from that many threads at once: the calls become
// sequences of the engine's continuous batching (verdict/engine/batch_scheduler.h, the same as
// `verdict serve`), whose greedy output equals Session::generate's token for token.
// logprobsMany() scores up to `parallel` log-likelihood items at once, each on a session of its
// own (created on first use), their rows packed into shared forward passes (logprobsBatch in
// verdict/engine/batch.h); logprobs() is the same path for one item, so on the CPU a run's scores
// do not depend on `parallel` (on a GPU, within its kernels' tolerance). One scoring call at a time. parallel 0 chooses: as many sequences as fit in
// half the device's free memory at one KV cache each, at most 4 on the CPU and 16 on a GPU.
//
// Prompts: when the model file has a chat template (tokenizer.chat_template) and the prompt asks
// for it, the messages are rendered with it (engine template/chat_template.h); when the
// template cannot render them, the built-in renderer of its detected family is used; otherwise
// the plain text is sent. RenderedPrompt::templateUsed records which ("model",
// "builtin:<family>", "raw"), and note says why the model's own template was not used.
#pragma once

#include "core/run/model_backend.h"
#include "verdict/engine/session.h"

#include <atomic>
#include <memory>
#include <string>

namespace verdict {
class Model;
}

namespace verdict::core {

// The engine's generation settings for these parameters: the sampling, the token budget and
// the stop strings; an end-of-generation token stops it. EngineBackend::generate and
// `verdict generate` use it.
GenerateConfig toGenerateConfig(const GenerationParams& params);

struct EngineBackendOptions {
    int threads = 0;                 // compute threads; <= 0: physical cores
    int64_t nCtx = 0;                // context tokens; <= 0: min(training context, 4096)
    std::string device = "cpu";      // "cpu", "cuda", "cuda:N" (ModelOptions::device)
    int gpuLayers = -1;              // blocks on that GPU, the rest on the CPU; < 0: all (ModelOptions::gpuLayers)
    std::string engineVersion;       // recorded with the run ("verdict 0.1.0")
    const std::atomic<bool>* cancelLoad = nullptr;  // stops Model::open, and a chat-template render, when set
    int parallel = 1;                // generate() calls served at once (continuous batching); 0: chosen (above)
};

class EngineBackend final : public ModelBackend {
public:
    // Opens the model and creates its session. Fails with the engine's message (file, key,
    // tensor) for a model it cannot run, or when the context cannot be allocated.
    static Result<std::unique_ptr<EngineBackend>> open(const std::string& modelPath, const EngineBackendOptions& options);
    ~EngineBackend() override;

    BackendInfo info() const override;
    Result<Generation> generate(const Prompt& prompt, const GenerationParams& params,
                                const TokenCallback& onToken) override;
    Result<ContinuationScore> logprobs(const Prompt& context, const std::string& continuation) override;
    std::vector<std::vector<Result<ContinuationScore>>> logprobsMany(const std::vector<LoglikRequest>& requests) override;
    int maxConcurrentCalls() const override;

    // parallel 0's choice for a model whose session holds kvBytesPerSequence of KV cache.
    static int chooseParallel(const Model& model, uint64_t kvBytesPerSequence);

private:
    struct Impl;
    explicit EngineBackend(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace verdict::core
