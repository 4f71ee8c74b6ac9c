// What a loaded Model holds (engine-internal): the file mapping, the architecture with its
// config and weights, the thread pool and the tokenizer.
#pragma once

#include "arch/arch_config.h"
#include "arch/architecture.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/thread_pool.h"
#include "backend/gpu/gpu_model.h"
#include "gguf/gguf_file.h"
#include "model/model_tokenizer.h"
#include "verdict/engine/model.h"

#include <memory>
#include <string>

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
    std::unique_ptr<ModelTokenizer> tokenizer;    // null when the file has none usable
    std::string tokenizerError;                   // why `tokenizer` is null
    double loadMs = 0;
    uint64_t weightsBytes = 0;
    std::unique_ptr<gpu::GpuModel> gpu;           // set when opened on a GPU: forward passes run there
    int64_t gpuLayers = 0;                        // blocks on the GPU; < cfg.nLayer: the rest on the CPU
    bool partialOffload() const { return gpu && gpuLayers < cfg.nLayer; }
};

}  // namespace verdict::detail
