// Causal multi-head attention over a KV cache (GQA / MQA included), and the softmax it uses.
//
// KV cache layout for one layer (what Session allocates):
//   K: [nHeadKv][kvCapacity][headDimK]    V: [nHeadKv][kvCapacity][headDimV]
// elements f32 or f16. Head-major so that one head's keys are contiguous for the dot products.
//
// Arithmetic follows llama.cpp without flash attention (llm_build_kqv): scores = (k . q) * scale,
// causal mask, softmax (max subtracted, exp summed in double, rows multiplied by 1/sum; exp by
// softmaxRowFast's polynomial, as ggml's softmax uses a SIMD exp of its own), then the
// probability-weighted sum of V rows. With an f16 cache ggml converts q and the probabilities to
// f16 before the products (the vec_dot type of f16 is f16); we round them the same way.
#pragma once

#include <cstdint>

namespace verdict::cpu {

class ThreadPool;

// In place: x[i] = exp(x[i]*scale - max) / sum   over n elements. Returns nothing; the sum of exps
// is accumulated in double as ggml_vec_soft_max_f32 does.
void softmaxRow(float* x, int64_t n, float scale);
// The same with one more logit, *sink (unscaled), in the maximum and the sum but not in x: the
// probabilities then sum to 1 - p(sink). sink null: softmaxRow.
void softmaxRowWithSink(float* x, int64_t n, float scale, const float* sink);
// Attention's softmax: softmaxRowWithSink with exp computed 8 lanes at a time by a polynomial
// (within 2 ulp of std::exp; llama.cpp's softmax uses a SIMD exp of its own too) and the sum in
// double lanes. Same result on every path that calls it (single, batched, any thread count); the
// MoE routers keep softmaxRow's std::exp, so their expert choice is unchanged.
void softmaxRowFast(float* x, int64_t n, float scale, const float* sink);

struct AttentionShape {
    int64_t nHead = 0;       // query heads
    int64_t nHeadKv = 0;     // key/value heads (nHead % nHeadKv == 0)
    int64_t headDimK = 0;    // elements per query/key head
    int64_t headDimV = 0;    // elements per value head
    int64_t kvCapacity = 0;  // positions allocated per head in the cache (row stride of a head)
    float scale = 1.0f;      // multiplier of q.k before softmax (usually 1/sqrt(headDimK))
    bool f16 = false;        // cache elements are IEEE half
    // gemma2 / phi3 (defaults leave plain causal attention unchanged):
    float softCap = 0.0f;    // > 0: score = softCap * tanh(score / softCap) on the scaled score, then
                             // softmax (gemma2's attn_logit_softcapping; llama.cpp caps kq before soft_max)
    int64_t window = 0;      // > 0: sliding window, a query at position p sees keys p-window+1 .. p only
                             // (llama.cpp masks p - k >= n_swa); 0 = every earlier position
    // gpt-oss: one learned logit per query head that joins each softmax (its maximum and its sum,
    // unscaled, as ggml_soft_max_ext's sinks) without a value row: attention may go "nowhere".
    const float* sinks = nullptr;  // [nHead], or null
};

// Per-thread scratch floats attention() needs: scores of every position for the heads of one KV
// group, plus their f16-rounded queries.
int64_t attentionScratchFloats(const AttentionShape& s);

// out[t][h*headDimV ..] = softmax_j(q[t,h] . K[g, j] * scale) . V[g, j]   for j = 0 .. pos0 + t,
// where g = h / (nHead / nHeadKv). q: [nTok][nHead*headDimK], out: [nTok][nHead*headDimV].
// The cache must already hold positions 0 .. pos0 + nTok - 1. scratch: pool.size() blocks of
// attentionScratchFloats(s) floats. Heads and tokens are spread over the pool's threads.
void attention(const AttentionShape& s, const float* q, const void* kCache, const void* vCache,
               int64_t nTok, int64_t pos0, float* out, float* scratch, ThreadPool& pool);

}  // namespace verdict::cpu
