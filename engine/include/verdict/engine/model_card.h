// The model card: what a GGUF file is and what it needs to run, computed from its metadata and
// tensor table without loading weights (`verdict info`, the Models screen, the report).
#pragma once

#include "verdict/engine/result.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace verdict {

namespace gguf { class GgufFile; }

struct MemoryEstimate {
    uint64_t ctx = 0;                 // context length the KV figures are for (tokens)
    uint64_t weightsBytes = 0;        // sum of tensor data bytes (mapped from the file)
    uint64_t kvBytesPerToken = 0;     // K+V cache per token, all layers, f16 elements (MLA: latent + rope key)
    uint64_t kvBytesAtCtx = 0;        // kvBytesPerToken * ctx
    uint64_t computeBytes = 0;        // scratch estimate for a 512-token batch at ctx (see docs/cli.md)
    uint64_t totalBytes() const { return weightsBytes + kvBytesAtCtx + computeBytes; }
};

struct ModelCard {
    std::string path;
    std::vector<std::string> parts;   // split parts (one entry for a single file)
    uint32_t ggufVersion = 0;
    uint64_t fileBytes = 0;

    std::string arch;                 // general.architecture
    std::string name;                 // general.name (or the file stem)
    std::optional<uint32_t> fileType;  // general.file_type (llama_ftype), when present

    uint64_t nParams = 0;             // all tensor elements (llama.cpp's count)
    uint64_t nParamsActive = 0;       // per token: routed experts (*_exps) count n_expert_used / n_expert;
                                      // shared experts, dense layers, attention, embeddings fully
    uint32_t nLayer = 0;
    uint32_t nEmbd = 0;
    uint32_t nHead = 0;
    uint32_t nHeadKv = 0;
    uint32_t headDimK = 0;            // key head size (key_length or n_embd / n_head)
    uint32_t headDimV = 0;
    uint32_t nFf = 0;                 // feed-forward width (dense layers)
    uint64_t nCtxTrain = 0;
    uint32_t nVocab = 0;
    uint32_t nExpert = 0;
    uint32_t nExpertUsed = 0;
    uint32_t nExpertShared = 0;
    uint32_t kvLoraRank = 0;          // MLA latent size (deepseek2); 0 otherwise
    // MLA only: how the file stores the K/V up-projection. "merged": one attn_kv_b per layer
    // (converters before 2025); "split": attn_k_b + attn_v_b (llama.cpp's converter since 2025,
    // the DeepSeek-V3 / R1 / Kimi-K2 downloads), whose key_length / value_length describe MLA as
    // MQA; the per-head sizes are then key_length_mla / value_length_mla. "" without MLA.
    std::string mlaLayout;
    uint32_t mlaHeadDimK = 0;         // per-head query/key size of MLA (nope + rope); 0 without MLA
    uint32_t mlaHeadDimV = 0;         // per-head value size of MLA

    uint32_t ropeDims = 0;            // rope.dimension_count (defaults to the head size)
    double ropeFreqBase = 10000.0;
    std::string ropeScalingType;      // "" when none
    double ropeScalingFactor = 1.0;

    std::string tokenizerModel;       // tokenizer.ggml.model
    std::string tokenizerPre;         // tokenizer.ggml.pre
    bool hasChatTemplate = false;
    uint64_t chatTemplateBytes = 0;
    std::string chatTemplateFamily;   // "llama3", "chatml", ... or "unknown" ("" when none)

    std::map<std::string, uint64_t> tensorTypeBytes;  // type name -> data bytes
    double bitsPerWeight = 0;         // 8 * weights bytes / n_params

    std::map<std::string, std::string> provenance;  // license, author, url, ... (general.*)

    MemoryEstimate memoryTrained;     // at n_ctx_train
    std::optional<MemoryEstimate> memoryAtCtx;  // at the requested context
};

// The activation scratch estimate for one 512-token batch at a context of `ctx` tokens (the
// MemoryEstimate::computeBytes of a card), from the card's shape. Documented with `verdict info`.
uint64_t computeBytesEstimate(const ModelCard& card, uint64_t ctx);

// Computes the card. `ctx` (optional) adds an estimate at that context length.
// Fails when the metadata a card needs is missing or contradicts itself (names the key).
Result<ModelCard> describeModel(const gguf::GgufFile& file, std::optional<uint64_t> ctx = std::nullopt);

// Opens the file (split parts too) and describes it; errors name the file.
Result<ModelCard> describeModelFile(const std::string& path, std::optional<uint64_t> ctx = std::nullopt);

}  // namespace verdict
