// A loaded model: weights (used in place from the file mapping), configuration, tokenizer and
// a CPU thread pool. Immutable after open; any number of Sessions share one Model.
//
//   auto model = verdict::Model::open("m.gguf", {.threads = 4});
//   if (!model) { report(model.error().message); return; }
//   verdict::Session session(*model, {.nCtx = 2048});
#pragma once

#include "verdict/engine/result.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace verdict {

namespace detail { struct ModelImpl; }

struct ModelOptions {
    int threads = 0;  // compute threads; <= 0: physical cores of this machine
    // Called during loading with the fraction done (0..1); return false to cancel.
    std::function<bool(float fraction)> progress;
    // Cancels loading when it becomes true (may be set from another thread).
    const std::atomic<bool>* cancel = nullptr;
    // Where the forward pass runs: "cpu", or "cuda" / "cuda:N" (weights uploaded to that GPU).
    // A GPU the build, driver or model cannot use is an error naming the reason (no silent
    // fall-back to the CPU: a measurement must run where it says it ran).
    std::string device = "cpu";
    // Partial offload: with a GPU device, only the first gpuLayers transformer blocks run there
    // (their weights and KV cache in device memory); the remaining blocks and the output head run
    // on the CPU. < 0 or >= the model's block count: everything on the GPU. Ignored on the CPU.
    int gpuLayers = -1;
};

// Shape of the loaded network (from the file's metadata).
struct ModelShape {
    std::string arch;          // general.architecture
    int64_t nVocab = 0;
    int64_t nCtxTrain = 0;     // context length the model was trained with
    int64_t nEmbd = 0;
    int64_t nLayer = 0;
    int64_t nHead = 0;
    int64_t nHeadKv = 0;
    int64_t nExpert = 0;       // 0 for dense models
    int64_t nExpertUsed = 0;
    bool tiedOutput = false;   // output projection reuses token_embd
};

class Model {
public:
    // Maps the file, checks metadata and every tensor the architecture needs, loads the tokenizer.
    // Fails with a message naming the file and the key/tensor for: unreadable or malformed GGUF,
    // unsupported architecture (the message lists the supported ones), missing or mis-shaped
    // tensors, tensor types the CPU engine cannot compute, contradictory hyper-parameters,
    // cancellation.
    static Result<std::shared_ptr<const Model>> open(const std::string& path, const ModelOptions& options = {});

    ~Model();
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    const std::string& path() const;
    std::vector<std::string> partPaths() const;  // the files read: path(), or every part of a split model
    const ModelShape& shape() const;
    int threads() const;
    double loadMs() const;
    uint64_t weightsBytes() const;  // data bytes of the tensors in use
    std::string device() const;     // "cpu" or "cuda:N"
    std::string deviceName() const; // CPU model name or GPU product name
    int gpuLayers() const;          // blocks on the GPU (0 on the CPU, n_layer when fully offloaded)

    // Tokenizer. When the file has no usable tokenizer, hasTokenizer() is false, tokenize()
    // fails with the reason, pieces are empty, and token ids still work everywhere else.
    bool hasTokenizer() const;
    Result<std::vector<int32_t>> tokenize(std::string_view text, bool addSpecial = true,
                                          bool parseSpecial = false) const;
    // Raw bytes of the token's text; a control token's text only when renderSpecial.
    std::string tokenToPiece(int32_t token, bool renderSpecial = false) const;
    std::string detokenize(const std::vector<int32_t>& tokens) const;  // text (SPM leading space dropped)
    bool isEog(int32_t token) const;  // end of generation (EOS, EOT, ...)
    int32_t bos() const;              // -1 when the vocabulary has none
    int32_t eos() const;              // -1 when the vocabulary has none

    // Engine-internal access (sessions, tests).
    const detail::ModelImpl& impl() const { return *m_impl; }

private:
    Model();
    std::unique_ptr<detail::ModelImpl> m_impl;
};

}  // namespace verdict
