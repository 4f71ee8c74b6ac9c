// What a latency sweep measures: something that runs a batch of concurrent requests and times
// every one. The local engine implements it (engine_sweep_target.h); an OpenAI-compatible
// endpoint can implement the same interface.
#pragma once

#include "core/perf/latency_stats.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace verdict::core {

struct SweepTargetInfo {
    std::string backend;          // "engine", "endpoint"
    std::string modelPath;        // file path or endpoint URL + model name
    std::string device;           // "cpu (AMD EPYC ..., 2 threads)", "cuda:0 (NVIDIA H200)" (core/run/device_check.h)
    int64_t nVocab = 0;
    int threads = 0;
    double loadMs = 0;            // model load time (cold start), 0 when unknown
    uint64_t weightsBytes = 0;    // weight bytes read per decode step (the roofline's numerator)
    uint64_t kvBytesPerToken = 0; // KV cache bytes per token of context (all layers, K and V)
    int maxBatch = 1;             // largest batch runBatch accepts
};

struct TargetMemory {
    uint64_t weightsBytes = 0;
    uint64_t kvBytes = 0;         // KV caches allocated for the last batch (all sequences)
    uint64_t scratchBytes = 0;
    uint64_t peakRssBytes = 0;    // process peak resident set (VmHWM)
    // Where the model runs ("cpu", "cuda:0"; "" when the target does not say) and, on a GPU,
    // verdict::MemoryUse's device memory: kv summed over the sessions, the rest the model's.
    std::string device;
    uint64_t vramWeightsBytes = 0, vramKvBytes = 0, vramScratchBytes = 0, vramWorkspaceBytes = 0;
    uint64_t vramPeakBytes = 0, vramDeviceUsedBytes = 0, vramDeviceTotalBytes = 0;
};

class SweepTarget {
public:
    virtual ~SweepTarget() = default;
    virtual SweepTargetInfo info() const = 0;
    // Runs prompts.size() requests at once (1 <= size <= maxBatch), each generating exactly
    // genTokens tokens (no stop at EOS), from an empty cache. startMs of each timing is relative
    // to the call's start. A request that fails carries its error; a failure of the whole
    // batch (e.g. the context cannot be allocated) is an Error.
    virtual Result<std::vector<RequestTiming>> runBatch(const std::vector<std::vector<int32_t>>& prompts,
                                                        int64_t genTokens) = 0;
    virtual TargetMemory memory() const = 0;
};

}  // namespace verdict::core
