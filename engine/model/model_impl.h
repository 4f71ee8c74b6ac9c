// What a loaded Model holds (engine-internal): the file mapping, the architecture with its
// config and weights, the thread pool and the tokenizer.
#pragma once

#include "arch/arch_config.h"
#include "arch/architecture.h"
#include "arch/weight_placement.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/thread_pool.h"
#include "backend/gpu/gpu_backend.h"
#include "gguf/gguf_file.h"
#include "model/model_tokenizer.h"
#include "verdict/engine/model.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace verdict::detail {

struct ModelImpl {
    std::string path;
    std::unique_ptr<gguf::GgufFile> file;         // owns the mapping the weights point into
    const arch::Architecture* arch = nullptr;
    arch::ArchConfig cfg;
    std::unique_ptr<arch::ArchWeights> weights;   // views into `file`
    ModelShape shape;
    std::unique_ptr<cpu::ThreadPool> pool;        // shared by every session of this model
    std::unique_ptr<cpu::CpuBackend> cpu;         // the ops of the CPU forward passes, over `pool`
    // A GPU's op backend, when the model runs its one forward there; deviceId "cuda:N" then.
    std::unique_ptr<backend::Backend> device;
    std::string deviceId;
    // The backend the architecture's forward passes run on (`cpu` unless runForwardOn chose
    // another), and its copy of the weights (null: it reads them where they were bound).
    backend::Backend* be = nullptr;
    std::unique_ptr<arch::WeightPlacement> placement;
    // > 0: the forward is split (partial offload of the one forward): blocks [0, splitLayer) run on
    // `be`, the rest and the output head on `cpu`, the residual stream handed over between them.
    int64_t splitLayer = 0;
    std::vector<arch::WeightRegion> weightRegions;  // every host range the weights point into
    std::unique_ptr<ModelTokenizer> tokenizer;    // null when the file has none usable
    std::string tokenizerError;                   // why `tokenizer` is null
    double loadMs = 0;
    uint64_t weightsBytes = 0;
    uint64_t packedBytes = 0;  // of the weights, the bytes the CPU kernels read repacked (packForCpu)
    int64_t gpuLayers = 0;                        // blocks on the GPU; < cfg.nLayer: the rest on the CPU

    // Activations of batched passes (session/batch_decode.cpp) on `be`, kept between calls so that
    // a decode loop allocates nothing per step: one per thread running a batch at the same time.
    // Declared last: released before the backend they live on.
    mutable std::mutex batchScratchMutex;
    mutable std::vector<std::unique_ptr<arch::ArchScratch>> batchScratch;
    mutable std::vector<std::unique_ptr<arch::ArchScratch>> batchScratchTail;  // a split's CPU blocks

    // Passes on a backend with memory of its own (a GPU's op backend keeps per-pass state: its
    // stream, staging, row tables) run one at a time; the CPU's run side by side (no lock).
    mutable std::mutex passMutex;
    std::unique_lock<std::mutex> lockPasses() const {
        return be && !be->hostMemory() ? std::unique_lock<std::mutex>(passMutex) : std::unique_lock<std::mutex>();
    }

    // What a forward pass over `kv` runs on (with a split: its first blocks).
    arch::ForwardContext forwardContext(session::KvCache& kv, const arch::DebugHook* debug) const {
        return arch::ForwardContext{cfg, kv, debug, *be, placement.get()};
    }
    // A split's remaining blocks and output head, on the CPU over the tail cache.
    arch::ForwardContext tailContext(session::KvCache& kv, const arch::DebugHook* debug) const {
        return arch::ForwardContext{cfg, kv, debug, *cpu, nullptr};
    }
};

// Makes `be` run this model's forward passes from now on (sessions, KV caches and scratch are
// created on it): the weights are uploaded into its memory unless it is the host's. With
// 0 < layers < n_layer only blocks [0, layers) run there (and only their weights and the
// embeddings go up), the rest and the output head on the model's CPU backend: a partial offload.
// Sessions created before keep their buffers on the old backend: call it before creating any.
// Tests run the one forward on a backend with memory of its own this way (checked_backend.h).
Result<void> runForwardOn(ModelImpl& m, backend::Backend& be, int64_t layers = -1);

// After a split (runForwardOn with 0 < layers < n_layer): the CPU stages' matrices (blocks from
// splitLayer on, the output head) repacked for the CPU kernels as a CPU-only model's are
// (packForCpu; VERDICT_CPU_REPACK=0 skips it). Model::open calls it for --gpu-layers; call it
// before any session.
Result<void> packCpuStages(ModelImpl& m, const ModelOptions& o);

}  // namespace verdict::detail
