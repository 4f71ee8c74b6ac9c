// ArchConfig: the hyper-parameters of a decoder-only transformer, read from GGUF metadata by the
// architecture's readConfig step. One plain struct shared by all architectures; a field an
// architecture does not use keeps its neutral default.
#pragma once

#include "backend/cpu/ops_rope.h"

#include <cstdint>
#include <string>

namespace verdict::arch {

enum class RopeScaling { None, Linear, Yarn };

struct ArchConfig {
    std::string arch;            // general.architecture, e.g. "llama"
    std::string fileName;        // path of the GGUF file (for error messages)

    // --- sizes -----------------------------------------------------------------------------------
    int64_t nVocab = 0;          // tokens in the vocabulary = rows of token_embd / output
    int64_t nCtxTrain = 0;       // context length the model was trained with (tokens)
    int64_t nEmbd = 0;           // width of the residual stream (elements per token)
    int64_t nLayer = 0;          // transformer blocks
    int64_t nHead = 0;           // query heads per layer
    int64_t nHeadKv = 0;         // key/value heads per layer (GQA groups; == nHead without GQA)
    int64_t headDimK = 0;        // elements per query/key head
    int64_t headDimV = 0;        // elements per value head
    int64_t nFf = 0;             // hidden width of the dense feed-forward block (SwiGLU)

    // --- mixture of experts (0 experts = dense FFN) ----------------------------------------------
    int64_t nExpert = 0;         // experts per MoE layer
    int64_t nExpertUsed = 0;     // experts each token is routed to (top-k)
    int64_t nFfExp = 0;          // hidden width of one expert's FFN

    // --- positions -------------------------------------------------------------------------------
    int nRot = 0;                // rotated dimensions per head (rope.dimension_count, even)
    cpu::RopeMode ropeMode = cpu::RopeMode::Norm;  // pair layout: adjacent (llama) or halves (neox)
    float ropeFreqBase = 10000.0f;   // base of the RoPE frequency series
    RopeScaling ropeScaling = RopeScaling::None;
    float ropeFreqScale = 1.0f;  // 1 / scaling factor (linear and YaRN); 1 without scaling
    int64_t nCtxOrig = 0;        // training context before scaling (YaRN correction dims)
    float yarnExtFactor = 0.0f;  // YaRN extrapolation mix: 1 when YaRN, else 0
    float yarnAttnFactor = 1.0f; // magnitude multiplier for cos/sin
    float yarnBetaFast = 32.0f;  // YaRN correction range, in rotations
    float yarnBetaSlow = 1.0f;

    // --- numerics --------------------------------------------------------------------------------
    float rmsEps = 1e-5f;        // epsilon inside RMSNorm's square root
    float attnScale = 0.0f;      // multiplier of q.k before softmax; 0 = 1/sqrt(headDimK)

    float kqScale() const;       // attnScale, or 1/sqrt(headDimK) when it is 0
    cpu::RopeParams ropeParams(const float* freqFactors) const;
};

}  // namespace verdict::arch
