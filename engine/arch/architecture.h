// The contract of one architecture: three steps, each a plain function, in one file per
// architecture (arch/llama.cpp, arch/qwen2.cpp, ...), listed once in arch_registry.cpp.
//
//   1. readConfig   GGUF metadata -> ArchConfig (validated: a bad file is an Error, not a crash)
//   2. bindWeights  declare every tensor (name, shape, required/optional) -> the arch's weights
//   3. forward      one batch of tokens -> KV cache updated, logits of the requested rows
//
// createScratch sizes the activation buffers once per session, in the memory of the backend that
// will run the forward (ForwardContext::be), so the forward pass allocates nothing per token.
#pragma once

#include "arch/arch_config.h"
#include "arch/tensor_binder.h"
#include "gguf/gguf_file.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace verdict::backend { class Backend; }
namespace verdict::session { class KvCache; }

namespace verdict::arch {

class WeightPlacement;

// The weights of a loaded model, as the architecture's forward pass wants them.
struct ArchWeights {
    virtual ~ArchWeights() = default;
};

// Per-session activation buffers, sized for nBatch tokens.
struct ArchScratch {
    virtual ~ArchScratch() = default;
    virtual uint64_t bytes() const = 0;
};

// Called with every named intermediate when set (llama.cpp's tensor names: "attn_norm", "Qcur",
// "kqv_out", "ffn_out", "l_out", "result_output" ...): rows x cols f32, row-major. layer is -1
// for tensors outside the blocks. For comparing with a reference layer by layer.
using DebugHook = std::function<void(std::string_view name, int layer, const float* data, int64_t rows, int64_t cols)>;

// One forward pass. By default its rows are consecutive positions pos0 .. pos0+nTok-1 of one
// sequence whose cache is ForwardContext::kv. With `caches` and `positions` set (architectures
// with sequenceRows only), row t belongs to the sequence of caches[t] at position positions[t]:
// several sequences share one pass, so each weight matrix is read once for all of them. That
// cache must hold positions < positions[t] of its sequence; rows of one sequence, if several,
// are consecutive positions in order. ctx.kv and pos0 are then ignored.
struct ForwardBatch {
    const int32_t* tokens = nullptr;  // [nTok] token ids, already checked to be < nVocab
    int64_t nTok = 0;                 // <= the nBatch the scratch was created for
    int64_t pos0 = 0;                 // position of tokens[0]; the cache holds positions < pos0
    bool allLogits = false;           // logits for every token, else for the last one only
    float* logits = nullptr;          // [allLogits ? nTok : 1][nVocab]; null: no output needed
    const int64_t* positions = nullptr;         // [nTok] per-row position, or null (see above)
    session::KvCache* const* caches = nullptr;  // [nTok] per-row cache (capacity <= the scratch's nCtx)
    // A pass split over backends (partial offload), every architecture: the pass starts at block
    // firstLayer from `hidden` (host, [nTok][n_embd], the residual stream after block firstLayer - 1,
    // computed elsewhere) instead of the embeddings (tokens unused); and/or it stops after block
    // layerEnd - 1 (0 < layerEnd < n_layer) and writes its residual stream to hiddenOut (host,
    // [nTok][n_embd]) instead of logits. The cache needs only the blocks the pass runs.
    const float* hidden = nullptr;
    int64_t firstLayer = 0;
    int64_t layerEnd = 0;  // 0: through the last block and the output head
    float* hiddenOut = nullptr;
};

// What a forward pass runs on: every step issues its work as ops of `be` (backend/ops/backend.h;
// the model's CPU backend today, which owns the thread pool).
struct ForwardContext {
    const ArchConfig& cfg;
    session::KvCache& kv;
    const DebugHook* debug;  // optional (null)
    backend::Backend& be;
    // Where `be` keeps the weights: null when it reads them where they were bound (host memory).
    const WeightPlacement* weights = nullptr;
};

struct Architecture {
    std::string_view name;  // general.architecture
    Result<ArchConfig> (*readConfig)(const gguf::GgufFile& file);
    Result<std::unique_ptr<ArchWeights>> (*bindWeights)(const ArchConfig& cfg, TensorBinder& binder);
    Result<std::unique_ptr<ArchScratch>> (*createScratch)(const ArchConfig& cfg, int64_t nBatch,
                                                          backend::Backend& be);
    void (*forward)(const ArchWeights& weights, ArchScratch& scratch, const ForwardContext& ctx,
                    const ForwardBatch& batch);
    bool sequenceRows = false;  // forward honours ForwardBatch::caches / positions (batched decode)
};

}  // namespace verdict::arch
