// Random-weight models of a given shape (`verdict make-model`), so benchmarks and tests need no
// downloads. The files are ordinary GGUF: llama.cpp loads them too.
#pragma once

#include "verdict/engine/result.h"

#include <cstdint>
#include <functional>
#include <string>

namespace verdict {

struct SyntheticModelSpec {
    std::string arch = "llama";      // "llama" (dense or MoE) | "qwen2" (q/k/v biases) | "deepseek2"
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

    // deepseek2 only: a DeepSeek-V3-style model (q-LoRA MLA, sigmoid routing with a selection
    // bias, weights normalised and scaled by 2.5, shared experts, leading dense layers). Head sizes
    // follow n_embd / n_head = d: key = d (no-rope) + d/2 (rope), value = d. nFf is the dense
    // layers' FFN width; n_head_kv is written equal to n_head (as the converter does).
    uint32_t qLoraRank = 0;          // 0: n_embd / 2
    uint32_t kvLoraRank = 0;         // 0: n_embd / 4
    uint32_t nFfExp = 0;             // expert FFN width; 0: nFf / 4
    uint32_t nExpertShared = 1;
    uint32_t nLayerDenseLead = 1;
};

// Writes the model to `path` (atomically). Progress: called with (tensors written, total).
// Fails on an impossible spec (heads not dividing n_embd, unknown type, ...) naming the field.
Result<void> writeSyntheticModel(const SyntheticModelSpec& spec, const std::string& path,
                                 const std::function<void(size_t, size_t)>& progress = {});

}  // namespace verdict
