// The engine's side of a GPU backend, free of CUDA headers: what a Model holds when it was opened
// on a GPU (weights uploaded to device memory), what a Session holds there (its KV cache in device
// memory), and one forward pass over rows that may belong to several sequences.
//
// The CUDA implementation lives in backend/cuda/ (compiled only when nvcc is found); builds
// without it answer every GPU request with a clear error (see openGpuModel).
#pragma once

#include "backend/ops/backend.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace verdict::arch {
struct Architecture;
struct ArchConfig;
struct ArchWeights;
}  // namespace verdict::arch

namespace verdict::gpu {

// Device memory of one model and its sessions, from the backend's own allocator.
struct VramUse {
    uint64_t weights = 0;    // uploaded tensors
    uint64_t kv = 0;         // KV caches of every live session of the model
    uint64_t scratch = 0;    // activations, dequantisation tiles, logits staging
    uint64_t workspace = 0;  // library workspaces (cuBLAS)
    uint64_t peak = 0;       // high-water mark of the sum of the above since the model was opened
    uint64_t deviceUsed = 0; // cudaMemGetInfo: total - free on the device (all processes)
    uint64_t deviceTotal = 0;
};

// One session's KV cache on the device.
class GpuKv {
public:
    virtual ~GpuKv() = default;
    virtual uint64_t bytes() const = 0;
    virtual int64_t capacity() const = 0;
};

// One forward pass: row t is token tokens[t] of the sequence whose cache is caches[t], at
// position positions[t] (the cache holds that sequence's positions < positions[t]; rows of one
// sequence are consecutive positions in order). logits (host memory) receives, when non-null,
// the rows [logitsFrom, nTok) of [nTok][nVocab] packed from its start. A partially offloaded model
// (gpuLayers < n_layer) writes instead, into `hidden` (host, [nTok][nEmbd]), the residual stream
// after its last GPU block, for the CPU to go on from.
struct GpuBatch {
    const int32_t* tokens = nullptr;
    const int64_t* positions = nullptr;
    GpuKv* const* caches = nullptr;
    int64_t nTok = 0;
    int64_t logitsFrom = 0;
    float* logits = nullptr;
    float* hidden = nullptr;
};

class GpuModel {
public:
    virtual ~GpuModel() = default;
    virtual std::string deviceId() const = 0;    // "cuda:0"
    virtual std::string deviceName() const = 0;  // "NVIDIA H200"
    // Fails (out of device memory included) with a message naming the device and the sizes.
    virtual Result<std::unique_ptr<GpuKv>> createKv(int64_t capacity, bool f16) = 0;
    // Passes of one model are serialised (sessions on several threads may call this).
    virtual Result<void> forward(const GpuBatch& batch) = 0;
    virtual VramUse vram() const = 0;
};

// What a GPU backend uploads and runs: a loaded architecture, its config and its weights (views
// into the model's file mapping, which must outlive the GpuModel).
struct GpuModelSource {
    const arch::Architecture& arch;
    const arch::ArchConfig& cfg;
    const arch::ArchWeights& weights;
};

// Uploads the model's weights to CUDA device `device`: the first `layers` blocks, with the output
// head only when layers covers every block. Fails with a clear message when the build has no CUDA
// backend, there is no driver or no such device, the architecture or a tensor type has no GPU
// kernels yet, or the weights do not fit in device memory.
Result<std::unique_ptr<GpuModel>> openGpuModel(const GpuModelSource& model, int device, int64_t layers);

// Whether openGpuModel has a CUDA pass of its own for this architecture (the llama-family block
// without per-head Q/K norms, gemma2's variant), or why not. The others run the architecture's
// one forward (arch/) on the device's op backend, openGpuBackend.
Result<void> checkGpuModelPass(const GpuModelSource& model);

// The op backend (backend/ops/backend.h) of CUDA device `device`, or why there is none (no CUDA in
// this build, no driver, no such device).
Result<std::unique_ptr<backend::Backend>> openGpuBackend(int device);

}  // namespace verdict::gpu
