// SweepTarget over Verdict's own engine: one loaded Model and up to maxBatch Sessions. A batch
// of B requests is decoded in lockstep with the engine's batched decode (verdict/engine/batch.h:
// one forward pass per step for all B sequences), prompts prefilled one after another, as a
// server with continuous batching would.
#pragma once

#include "core/perf/sweep_target.h"

#include <atomic>
#include <memory>
#include <string>

namespace verdict::core {

struct EngineSweepTargetOptions {
    int threads = 0;                 // <= 0: physical cores
    int maxBatch = 32;
    const std::atomic<bool>* cancelLoad = nullptr;
    std::string device = "cpu";      // "cpu", "cuda", "cuda:N" (ModelOptions::device)
    int gpuLayers = -1;              // blocks on that GPU, the rest on the CPU; < 0: all (ModelOptions::gpuLayers)
};

class EngineSweepTarget final : public SweepTarget {
public:
    static Result<std::unique_ptr<EngineSweepTarget>> open(const std::string& modelPath,
                                                           const EngineSweepTargetOptions& options);
    ~EngineSweepTarget() override;

    SweepTargetInfo info() const override;
    Result<std::vector<RequestTiming>> runBatch(const std::vector<std::vector<int32_t>>& prompts,
                                                int64_t genTokens) override;
    TargetMemory memory() const override;

private:
    struct Impl;
    explicit EngineSweepTarget(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace verdict::core
