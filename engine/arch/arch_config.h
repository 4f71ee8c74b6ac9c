// ArchConfig: the hyper-parameters of a decoder-only transformer, read from GGUF metadata by the
// architecture's readConfig step. One plain struct shared by all architectures; a field an
// architecture does not use keeps its neutral default.
#pragma once

#include "backend/cpu/ops_rope.h"

#include <cstdint>
#include <string>

namespace verdict::arch {

enum class RopeScaling { None, Linear, Yarn };
// deepseek2 router score (expert_gating_func: llama.cpp's 1 = softmax, 2 = sigmoid).
enum class ExpertGating { Softmax, Sigmoid };

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

    // --- gemma2 / phi3: sliding-window attention and soft-capping -----------------------------------
    int64_t slidingWindow = 0;   // attention.sliding_window: a query at p sees keys p-W+1 .. p; 0 = all
    int swaPattern = 0;          // which layers slide (llama.cpp's swa pattern n): 0 = every layer,
                                 // n > 0 = layers with il % n < n - 1 (gemma2: 2 = even layers)
    float attnSoftCap = 0.0f;    // attn_logit_softcapping: score = cap*tanh(score/cap) before softmax; 0 = off
    float finalSoftCap = 0.0f;   // final_logit_softcapping: logit = cap*tanh(logit/cap); 0 = off
    int64_t windowOf(int64_t layer) const;  // sliding window of that layer, 0 = full causal attention
    float ropeFreqBaseSwa = 0.0f;  // gemma3: RoPE base of the sliding layers, which also skip the
                                   // rope scaling (rope.freq_base_swa); 0 = every layer as above

    // --- deepseek2 (DeepSeek-V2/V3, Kimi-K2): MLA attention and DeepSeek MoE -----------------------
    // headDimK = qk_nope + qk_rope (= nRot) per query head; headDimV = value head size.
    int64_t qLoraRank = 0;          // width of the compressed query (attn_q_a); 0 = plain attn_q
    int64_t kvLoraRank = 0;         // width of the compressed K/V latent (attn_kv_a_mqa); 0 = no MLA
    int64_t nLayerDenseLead = 0;    // leading layers with a dense FFN (n_ff) before the MoE layers
    int64_t nExpertShared = 0;      // shared experts, always active (one FFN of n * nFfExp)
    int64_t nExpertGroups = 0;      // expert groups for group-limited routing (0 or 1 = none)
    int64_t nExpertGroupsUsed = 0;  // groups a token may route into
    ExpertGating expertGating = ExpertGating::Softmax;  // router score function
    bool expertWeightsNorm = false; // divide the chosen experts' weights by their sum
    float expertWeightsScale = 1.0f; // then multiply them by this
    float ropeYarnLogMul = 0.0f;    // YaRN mscale multiplier: kq scale *= (1 + m ln(1/freqScale))^2

    // Shape of one layer of the KV cache: `heads` x (dimK, dimV) per position. Plain attention:
    // {nHeadKv, headDimK, headDimV}; MLA: one row of {kvLoraRank (latent), nRot (rope key)}.
    struct CacheShape { int64_t heads, dimK, dimV; };
    CacheShape cacheShape() const;
};

}  // namespace verdict::arch
