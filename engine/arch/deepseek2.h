// Architecture "deepseek2" (DeepSeek-V2 / V2-Lite / V3, Kimi-K2): its weights, activation
// buffers and the two blocks that differ from the llama family, multi-head latent attention (MLA)
// and the DeepSeek mixture of experts. deepseek2.cpp strings them together.
//
// Sizes: E = n_embd, H = n_head, dn = qk_nope (key_length - n_rot), dr = n_rot (qk_rope),
// dv = value_length, L = kv_lora_rank, Q = q_lora_rank, X = n_expert, U = n_expert_used,
// F = expert FFN width. Weights in ggml order [in, out]; activations [rows][cols], rows = tokens.
#pragma once

#include "arch/architecture.h"
#include "arch/decoder.h"
#include "arch/weight.h"

#include <cstdint>
#include <vector>

namespace verdict::arch {

struct Deepseek2LayerWeights {
    VecWeight attnNorm;    // [E]                       blk.N.attn_norm.weight
    // queries: q-LoRA (V2, V3, Kimi-K2) ...
    Weight wqA;            // [E, Q]                    attn_q_a
    VecWeight qANorm;      // [Q]                       attn_q_a_norm
    Weight wqB;            // [Q, H*(dn+dr)]            attn_q_b
    // ... or one projection (V2-Lite)
    Weight wq;             // [E, H*(dn+dr)]            attn_q
    Weight wkvA;           // [E, L+dr]                 attn_kv_a_mqa: rows 0..L-1 latent, then the rope key
    VecWeight kvANorm;     // [L]                       attn_kv_a_norm
    Weight wkvB;           // [L, H*(dn+dv)]            attn_kv_b: per head dn key rows, then dv value rows
    std::vector<uint8_t> ownedKvB;  // wkvB's storage when the file has the split attn_k_b / attn_v_b
    Weight wo;             // [H*dv, E]                 attn_output
    VecWeight ffnNorm;     // [E]                       ffn_norm
    // leading dense layers
    Weight ffnGate, ffnUp; // [E, n_ff]
    Weight ffnDown;        // [n_ff, E]
    // MoE layers
    Weight gateInp;        // [E, X]                    ffn_gate_inp (router)
    VecWeight expProbsB;   // [X]                       exp_probs_b.bias, optional selection bias (V3)
    Weight gateExps, upExps;  // [E, F, X]
    Weight downExps;       // [F, E, X]
    Weight gateShexp, upShexp;  // [E, F*n_expert_shared]   shared experts (one wide FFN)
    Weight downShexp;      // [F*n_expert_shared, E]
};

struct Deepseek2Weights : ArchWeights {
    Weight tokEmbd;        // [E, n_vocab]
    VecWeight outputNorm;  // [E]
    Weight output;         // [E, n_vocab] (token_embd when output.weight is absent)
    std::vector<Deepseek2LayerWeights> layers;
};

// Activation buffers for nBatch rows; names follow llama.cpp's graph where one exists.
struct Deepseek2Scratch : ArchScratch {
    int64_t nBatch = 0;
    ScratchBuffer<float> inpL, cur;      // [B][E]  residual stream, norm output
    ScratchBuffer<float> qA;             // [B][Q]  compressed query
    ScratchBuffer<float> q;              // [B][H*(dn+dr)]  q_nope | q_pe per head (q_pe roped)
    ScratchBuffer<float> kvA;            // [B][L+dr]  kv_pe_compresseed
    ScratchBuffer<float> latent;         // [B][L]  normalised latent as attn_kv_b sees it
    ScratchBuffer<float> kPe;            // [B][dr] roped shared key
    ScratchBuffer<float> kqv;            // [B][H*dv]  kqv_out
    ScratchBuffer<float> attnOut, ffnInp, ffnOut, shexpOut, outNorm;  // [B][E]
    ScratchBuffer<float> ffnGate, ffnUp; // [B][max(n_ff, U*F + F*shared)]
    ScratchBuffer<float> ropeTable;      // [B][dr]
    ScratchBuffer<float> probs;          // [B][X]  router probabilities (unbiased)
    ScratchBuffer<float> selScore;       // [B][X]  selection scores (probs + bias, groups masked)
    ScratchBuffer<int32_t> selected;     // [B][U]  expert ids, best first
    ScratchBuffer<float> expertWeights;  // [B][U]
    ScratchBuffer<float> moeX;           // [B*U][E]  the routed experts' outputs by (token, slot)
    PassIo io;                           // token ids, RoPE tables, logits on their way

    uint64_t bytes() const override;
};

// The attention half of a block (MLA with the latent cache), for a batch whose rows are the
// consecutive positions b.pos0.. of ctx.kv, or (b.caches set) each its own sequence's position:
//   cur = rmsnorm(inpL) * attn_norm
//   latent = rmsnorm(kv_a[0:L]) * kv_a_norm,  kPe = rope(kv_a[L:])      -> cache (every row)
//   q = q_b(rmsnorm(q_a cur) * q_a_norm)  or  q cur;  q_pe = rope(q_pe)    (rows rowBegin..)
//   score_j = kq_scale (q_nope . k_nope_j + q_pe . kPe_j), k_nope_j = W_k latent_j
//   kqv = W_v sum_j softmax(score)_j latent_j;  attnOut = wo kqv
// The key and value heads are never expanded: q_nope is taken into latent space (q_nope W_k)
// and the output up-projected from it (W_v), which is the same sum in another order.
void mlaAttentionBlock(const ForwardContext& ctx, const Deepseek2LayerWeights& L, Deepseek2Scratch& s, int layer,
                       const ForwardBatch& b, int64_t rowBegin);

class HParams;
// The DeepSeek MoE keys (also glm4moe): leading_dense_block_count, expert_shared_count,
// expert_group_count / _used_count, expert_weights_scale / _norm, expert_gating_func; checked
// against block_count, expert_count and feed_forward_length.
Result<void> readDeepseekMoeConfig(const HParams& hp, ArchConfig& cfg);

// The router of deepseekMoe (also glm4moe's) as the backend's routeGrouped op: softmax or sigmoid
// scores, top-k of score + selectionBias (null: none) within the best expert groups, weights the
// chosen scores / their sum when expertWeightsNorm, times expertWeightsScale.
backend::GroupedRouting groupedRoutingOf(const ArchConfig& c, const float* selectionBias);

// The DeepSeek MoE FFN of x [nTok][E] into out [nTok][E] (llama.cpp build_moe_ffn + the shared
// experts): router scores softmax or sigmoid; top-k of (score + exp_probs_b) within the best
// expert groups when there are groups; weights = unbiased scores of the chosen experts, divided
// by their sum when expert_weights_norm, times expert_weights_scale; out = sum of weighted
// experts in rank order + shared experts' SwiGLU.
void deepseekMoe(const ForwardContext& ctx, const Deepseek2LayerWeights& L, Deepseek2Scratch& s, const float* x,
                 int64_t nTok, float* out, int layer);

// down(silu(gate x) * up x) with the given matrices; hidden width = gate.rows().
void swiGluFfn(const ForwardContext& ctx, const Weight& gate, const Weight& up, const Weight& down,
               Deepseek2Scratch& s, const float* x, int64_t nTok, float* out);

}  // namespace verdict::arch
