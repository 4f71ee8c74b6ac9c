// Random-weight models of a given shape (`verdict make-model`), so benchmarks and tests need no
// downloads. The files are ordinary GGUF: llama.cpp loads them too.
#pragma once

#include "verdict/engine/result.h"

#include <cstdint>
#include <functional>
#include <string>

namespace verdict {

struct SyntheticModelSpec {
    std::string arch = "llama";      // "llama" (dense or MoE) | "qwen2" (q/k/v biases)
    std::string name;                // general.name; default "synthetic-<arch>"
    uint32_t nEmbd = 256;
    uint32_t nLayer = 4;
    uint32_t nHead = 8;
    uint32_t nHeadKv = 4;
    uint32_t nFf = 768;              // FFN width (per expert for MoE)
    uint32_t nVocab = 512;
    uint32_t nCtx = 512;             // trained context written to metadata
    uint32_t nExpert = 0;            // 0: dense
    uint32_t nExpertUsed = 0;
    float ropeFreqBase = 10000.0f;
    float rmsEps = 1e-5f;
    std::string type = "f16";        // type of every 2-D/3-D weight (norms, biases, router stay f32)
    uint64_t seed = 1;
    float weightStd = 0.02f;         // matrices ~ N(0, weightStd); norms 1 + 0.02 N(0,1)
    std::string vocabFrom;           // copy tokenizer.* keys from this GGUF (else a generated vocab)
    bool tiedOutput = false;         // omit output.weight (the model uses token_embd)
};

// Writes the model to `path` (atomically). Progress: called with (tensors written, total).
// Fails on an impossible spec (heads not dividing n_embd, unknown type, ...) naming the field.
Result<void> writeSyntheticModel(const SyntheticModelSpec& spec, const std::string& path,
                                 const std::function<void(size_t, size_t)>& progress = {});

}  // namespace verdict
