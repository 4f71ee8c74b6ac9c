// Building blocks shared by the llama-family decoders (llama, mistral, mixtral, qwen2, qwen3, qwen3moe): their
// weights, their activation buffers and the steps of their forward pass. An architecture file
// declares which tensors exist; decoderForward strings these steps together for all of them.
//
// Shapes use ggml order for weights ([in, out] = ne0, ne1) and row-major [rows][cols] for
// activations, rows = tokens of the batch.
#pragma once

#include "arch/architecture.h"
#include "arch/weight.h"
#include "backend/ops/backend.h"

#include <cstdint>
#include <algorithm>
#include <functional>
#include <memory>
#include <new>
#include <vector>

namespace verdict::arch {

struct DecoderLayerWeights {
    VecWeight attnNorm;    // [n_embd]                          blk.N.attn_norm.weight
    Weight wq;             // [n_embd, n_head*head_dim_k]       blk.N.attn_q.weight
    Weight wk;             // [n_embd, n_head_kv*head_dim_k]    blk.N.attn_k.weight
    Weight wv;             // [n_embd, n_head_kv*head_dim_v]    blk.N.attn_v.weight
    Weight wo;             // [n_head*head_dim_v, n_embd]       blk.N.attn_output.weight
    VecWeight bq, bk, bv;  // [rows of wq / wk / wv]            optional biases (qwen2: required)
    VecWeight bo;          // [n_embd]                          optional
    VecWeight qNorm, kNorm;  // [head_dim_k]  attn_q_norm / attn_k_norm: per-head RMSNorm of Q and K before RoPE (qwen3)
    VecWeight sinks;       // [n_head]  attn_sinks: per-head softmax sink logits (gpt-oss), optional
    VecWeight ffnNorm;     // [n_embd]                          blk.N.ffn_norm.weight
    // dense SwiGLU (n_expert == 0)
    Weight ffnGate;        // [n_embd, n_ff]
    Weight ffnUp;          // [n_embd, n_ff]
    Weight ffnDown;        // [n_ff, n_embd]
    // mixture of experts (n_expert > 0)
    Weight ffnGateInp;     // [n_embd, n_expert]                router
    Weight ffnGateExps;    // [n_embd, n_ff_exp, n_expert]
    Weight ffnUpExps;      // [n_embd, n_ff_exp, n_expert]
    Weight ffnDownExps;    // [n_ff_exp, n_embd, n_expert]
};

struct DecoderWeights : ArchWeights {
    Weight tokEmbd;        // [n_embd, n_vocab]                 token_embd.weight
    VecWeight outputNorm;  // [n_embd]                          output_norm.weight
    Weight output;         // [n_embd, n_vocab]                 output.weight, or token_embd when tied
    bool tiedOutput = false;
    VecWeight ropeFreqs;   // [n_rot/2] optional per-pair frequency divisors (Llama 3.1)
    std::vector<DecoderLayerWeights> layers;
};

// What a llama-family file must provide beyond the common tensors.
struct DecoderTensorRules {
    Need qkvBias = Need::Optional;  // qwen2, gpt-oss, glm4moe: required
    Need outputBias = Need::Optional;  // gpt-oss: required
    bool qkNorm = false;            // attn_q_norm / attn_k_norm read at all (qwen3, gemma3, glm4moe)
    Need qkNormNeed = Need::Required;  // ... and whether a file must have them (glm4moe: optional)
};

// The parts every llama-family file has, for architectures that bind the rest themselves
// (gpt-oss, glm4moe): token_embd, output_norm, output (token_embd when absent: tied), rope_freqs;
// and one layer's attention (attn_norm, attn_q/k/v/output, their biases and Q/K norms per rules).
void bindDecoderEnds(const ArchConfig& c, TensorBinder& b, DecoderWeights& w);
void bindDecoderAttention(const ArchConfig& c, TensorBinder& b, int64_t layer, DecoderLayerWeights& L,
                          const DecoderTensorRules& rules);

// Declares every tensor of a llama-family decoder (dense or MoE from cfg.nExpert).
Result<std::unique_ptr<ArchWeights>> bindDecoderWeights(const ArchConfig& cfg, TensorBinder& b,
                                                        const DecoderTensorRules& rules);

// An uninitialised array in the backend's memory, released with the scratch. On the CPU pages are
// touched only when a forward pass writes them, so a session made for 512-token batches costs
// resident memory only for the batch sizes it actually runs.
template <class T>
class ScratchBuffer {
public:
    ScratchBuffer() = default;
    ScratchBuffer(const ScratchBuffer&) = delete;
    ScratchBuffer& operator=(const ScratchBuffer&) = delete;
    ~ScratchBuffer() { reset(); }
    void allocate(backend::Backend& be, size_t n) {  // throws std::bad_alloc (caught by createScratch)
        reset();
        auto p = be.allocate(std::max<size_t>(n, 1) * sizeof(T), "activations");
        if (!p) throw std::bad_alloc();
        m_be = &be;
        m_data = static_cast<T*>(p.value());
        m_size = n;
    }
    T* data() { return m_data; }
    const T* data() const { return m_data; }
    size_t size() const { return m_size; }

private:
    void reset() {
        if (m_be && m_data) m_be->release(m_data);
        m_data = nullptr;
        m_size = 0;
    }
    backend::Backend* m_be = nullptr;
    T* m_data = nullptr;
    size_t m_size = 0;
};

// A pass's inputs and outputs on their way between the caller's host memory and the backend's:
// token ids and RoPE tables go up, logits come down (on a backend whose memory is the host's the
// logits are written straight into the caller's buffer).
struct PassIo {
    ScratchBuffer<int32_t> tokens;  // [nBatch] token ids
    std::vector<float> ropeHost;    // [nBatch][n_rot] RoPE tables, computed on the host
    ScratchBuffer<float> logits;    // [nBatch][n_vocab], only for a backend with memory of its own

    void allocate(backend::Backend& be, const ArchConfig& cfg, int64_t nBatch);  // throws bad_alloc
    uint64_t bytes() const;
};

// Activation buffers, [nBatch][...] each; names follow llama.cpp's graph.
struct DecoderScratch : ArchScratch {
    int64_t nBatch = 0;
    ScratchBuffer<float> inpL;      // [nBatch][n_embd]   residual stream (layer input / l_out)
    ScratchBuffer<float> cur;       // [nBatch][n_embd]   attn_norm / ffn_norm output
    ScratchBuffer<float> q;         // [nBatch][n_head*head_dim_k]     Qcur (after rope)
    ScratchBuffer<float> k;         // [nBatch][n_head_kv*head_dim_k]  Kcur (after rope)
    ScratchBuffer<float> v;         // [nBatch][n_head_kv*head_dim_v]  Vcur
    ScratchBuffer<float> kqv;       // [nBatch][n_head*head_dim_v]     kqv_out (attention, per head)
    ScratchBuffer<float> attnOut;   // [nBatch][n_embd]   attn_output projection
    ScratchBuffer<float> ffnInp;    // [nBatch][n_embd]   attention residual
    ScratchBuffer<float> ffnGate;   // [nBatch][max(n_ff, n_expert_used*n_ff_exp)]
    ScratchBuffer<float> ffnUp;     // [nBatch][max(n_ff, n_expert_used*n_ff_exp)]
    ScratchBuffer<float> ffnOut;    // [nBatch][n_embd]
    ScratchBuffer<float> ropeTable; // [nBatch][n_rot]    (cos, sin) per position
    // MoE routing and the experts' outputs
    ScratchBuffer<float> routerLogits;    // [nBatch][n_expert]   ffn_moe_logits -> probs
    ScratchBuffer<int32_t> selected;      // [nBatch][n_expert_used] expert ids, best first
    ScratchBuffer<float> expertWeights;   // [nBatch][n_expert_used] renormalised gate weights
    ScratchBuffer<float> moeX;            // [nBatch*n_expert_used][n_embd]  the routed experts' outputs by (token, slot)
    ScratchBuffer<float> outNorm;         // [nBatch][n_embd]  result_norm
    PassIo io;                            // token ids, RoPE tables, logits on their way

    uint64_t bytes() const override;
};

Result<std::unique_ptr<ArchScratch>> createDecoderScratch(const ArchConfig& cfg, int64_t nBatch,
                                                          backend::Backend& be);

// --- steps of the forward pass -------------------------------------------------------------------

// Calls the debug hook if one is set.
void dump(const ForwardContext& ctx, std::string_view name, int layer, const float* data, int64_t rows,
          int64_t cols);

// A weight as the backend ops take it: its data where the backend keeps it (ctx.weights; the
// mapping itself on the CPU).
backend::Matrix matrixOf(const ForwardContext& ctx, const Weight& w);
// The backend's copy of a vector weight (norm gain, bias, sinks), or null when it is absent.
const float* vecOf(const ForwardContext& ctx, const VecWeight& v);

// out[t] = row b.tokens[t] of the embedding matrix, dequantized to f32 (the ids go up through io).
// It and loadHidden begin every pass (Backend::beginPass).
void embedTokens(const ForwardContext& ctx, const Weight& tokEmbd, const ForwardBatch& b, PassIo& io, float* out);
// A split pass (ForwardBatch::hidden / firstLayer / layerEnd): the blocks it runs, [first, end);
// the residual stream b.hidden (host) into out when it starts later; when it stops early, its
// residual stream down to b.hiddenOut — true then: no output head.
struct LayerRange {
    int first, end;
};
LayerRange layerRange(const ArchConfig& cfg, const ForwardBatch& b);
void loadHidden(const ForwardContext& ctx, const ForwardBatch& b, float* out);
bool handOver(const ForwardContext& ctx, const ForwardBatch& b, const float* inpL);

// Where the output head writes rows logit rows: b.logits itself on a backend whose memory is the
// host's, else io.logits; finishLogits then brings them to b.logits.
float* logitsRows(const ForwardContext& ctx, PassIo& io, const ForwardBatch& b);
void finishLogits(const ForwardContext& ctx, const PassIo& io, const ForwardBatch& b, int64_t rows);

// y[t] = W x[t] (+ bias): y is [nTok][w.rows()], x is [nTok][w.cols()].
void project(const ForwardContext& ctx, const Weight& w, const VecWeight* bias, const float* x, int64_t nTok, float* y);

// (cos, sin) tables for positions pos0 .. pos0+nTok-1 into table [nTok][n_rot] (host memory).
void ropeTables(const ArchConfig& cfg, const VecWeight& freqFactors, int64_t pos0, int64_t nTok, float* table);
// The same for the rows of a batch: b.positions[t] per row when set, else b.pos0 + t.
void ropeTables(const ArchConfig& cfg, const VecWeight& freqFactors, const ForwardBatch& b, float* table);
// The tables the host computed into io.ropeHost ([nTok][nRot]) up into table (the backend's).
void uploadRope(const ForwardContext& ctx, const PassIo& io, float* table, int64_t nTok, int64_t nRot);

// Rotates x [nTok][nHead*headDim] in place with the tables (cfg's RoPE layout and n_rot).
void ropeRows(const ForwardContext& ctx, float* x, int64_t nTok, int64_t nHead, int64_t headDim, const float* table);


// Row t's place in its sequence's cache at `layer` (b.caches[t] at b.positions[t], else ctx.kv
// at b.pos0 + t) for rows [from, b.nTok), and whether that cache is f16: the rows a KV store or
// attention op takes. Valid until the next call on the same thread.
struct RowCaches {
    std::vector<backend::RowCache> rows;
    std::vector<uint8_t> f16;
};
RowCaches& rowCaches(const ForwardContext& ctx, const ForwardBatch& b, int layer, int64_t from);
// fn(i0, i1, f16) over the spans of consecutive rows whose caches share an element type (one span,
// unless a batch mixes f32 and f16 caches): a backend op takes one type per call.
void byCacheType(const RowCaches& rc, const std::function<void(int64_t i0, int64_t i1, bool f16)>& fn);

// Self-attention of rows [rowBegin, nTok) of the batch against the cache (which already holds the
// batch's keys and values): s.q -> s.kqv rows rowBegin .. Row t reads the cache and position of its
// sequence (b.caches / b.positions when set, else ctx.kv at b.pos0 + t): one backend attention op.
void selfAttention(const ForwardContext& ctx, DecoderScratch& s, int layer, const ForwardBatch& b, int64_t rowBegin,
                   const float* sinks = nullptr);

// Dense SwiGLU: out = down(silu(gate x) * up x).   x, out: [nTok][n_embd]
void denseSwiGlu(const ForwardContext& ctx, const DecoderLayerWeights& L, DecoderScratch& s, const float* x,
                 int64_t nTok, float* out, int layer);

// The buffers of runExperts for nTok rows routed to U experts each, expert width F, shared width S.
struct ExpertBuffers {
    float* moeX;  // [nTok*U][E]            the routed experts' outputs by pair (t*U + slot)
    float* up;    // [nTok*U*F + nTok*S]    routed hidden rows by pair, then the shared experts'
    float* gate;  // [nTok*U*F + nTok*S]
};

// The llama family's pre-norm loop (decoderForward), with the FFN step given: per layer
//   x += attention(n1(x)); h = rmsnorm(x) * ffnNorm -> s.cur; ffn -> s.ffnOut; x += s.ffnOut
// for rows [r0, r0 + rows) of the batch (ffn(layer, r0, rows) reads s.cur and writes s.ffnOut at
// row r0; s.attnOut is free to use by then). Embedding (or ForwardBatch::hidden), RoPE tables and
// the output head as decoderForward. gpt-oss and glm4moe give their MoE here.
using FfnStep = std::function<void(int layer, int64_t r0, int64_t rows)>;
void preNormForward(const DecoderWeights& w, DecoderScratch& s, const ForwardContext& ctx, const ForwardBatch& b,
                    const FfnStep& ffn);

// The SwiGLU experts of a MoE FFN once routed: out[t] = sum over slots in rank order of
// weights[t][slot] * down_e(silu(gate_e x_t) * up_e x_t), e = selected[t][slot], experts stacked
// [E, F, X] (gate, up) and [F, E, X] (down). When shGate is present, sharedOut[t] =
// shDown(silu(shGate x_t) * shUp x_t) too. All products of a stage are one expertMatmuls op (one
// matmulGroup on the CPU): the gate and up projections of every expert (x gathered and quantized once
// per token), then every down; then the weighted sum (combineExperts).
//
// What some MoE FFNs add (gpt-oss): per-expert biases of the gate, up ([F, X]) and down ([E, X])
// projections, each added to its expert's output before the activation (gate, up) or the
// routing weight (down), and the clamped swiglu_oai activation (cpu::swigluOaiInPlace).
struct ExpertExtras {
    const float* gateBias = nullptr;
    const float* upBias = nullptr;
    const float* downBias = nullptr;
    bool swigluOai = false;
    float oaiAlpha = 1.702f, oaiLimit = 7.0f;
};
void runExperts(const ForwardContext& ctx, const Weight& gateExps, const Weight& upExps, const Weight& downExps,
                const int32_t* selected, const float* weights, int64_t U, const float* x, int64_t nTok,
                const ExpertBuffers& buf, float* out, const Weight& shGate, const Weight& shUp, const Weight& shDown,
                float* sharedOut, const ExpertExtras& extras = {});

// Mixtral-style MoE (llama.cpp build_moe_ffn, softmax gating, weights renormalised over the top-k):
// probs = softmax(router x); experts = top-k(probs), lowest id first on ties; w = probs[experts] /
// sum; out = sum over slots in rank order of w_slot * down_e(silu(gate_e x) * up_e x).
void moeSwiGlu(const ForwardContext& ctx, const DecoderLayerWeights& L, DecoderScratch& s, const float* x,
               int64_t nTok, float* out, int layer);

// Final RMSNorm and output projection of rows [rowBegin, nTok) of the residual stream into logits.
void outputHead(const ForwardContext& ctx, const DecoderWeights& w, DecoderScratch& s, int64_t rowBegin,
                int64_t nTok, float* logits);

// The attention half of a pre-norm block, llama.cpp's names in brackets:
//   cur = rmsnorm(inpL) * attn_norm                 [attn_norm]
//   q, k, v = wq cur (+bq), wk cur (+bk), wv cur (+bv)   [Qcur, Kcur, Vcur]
//   q, k = rmsnorm per head * q_norm / k_norm      (when present: qwen3)  [Qcur_normed, Kcur_normed]
//   q, k = rope(q), rope(k); cache <- k, v       (each row's own cache and position when b.caches)
//   kqv = attention(q, cache)                      [kqv_out]
//   attnOut = wo kqv (+bo)                         [attn_out]
// Keys and values are computed for every row; queries and everything after only for rows
// [rowBegin, nTok) (the last layer needs only the rows whose logits are wanted).
void attentionBlock(const ForwardContext& ctx, const DecoderLayerWeights& L, DecoderScratch& s, int layer,
                    const ForwardBatch& b, int64_t rowBegin);

// Which rows the last layer must finish: all for allLogits, the last one when logits are wanted,
// none (returns nTok) when the batch only fills the cache.
int64_t lastLayerRowBegin(const ForwardBatch& b);

// The whole pre-norm llama-family forward pass (llama, mistral, mixtral, qwen2): embeddings,
// per layer attentionBlock + residual + ffn_norm + SwiGLU (experts when cfg.nExpert > 0) +
// residual, then outputHead. The architectures differ only in config and tensors (RoPE layout,
// Q/K/V biases), which readConfig and bindWeights settle before this runs.
void decoderForward(const ArchWeights& weights, ArchScratch& scratch, const ForwardContext& ctx, const ForwardBatch& b);

}  // namespace verdict::arch
