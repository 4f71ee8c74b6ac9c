#include "arch/decoder.h"

#include "backend/cpu/ops_rope.h"
#include "arch/kv_cache.h"
#include "arch/weight_placement.h"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

namespace verdict::arch {

namespace {
std::string blk(int64_t layer, const char* what) { return "blk." + std::to_string(layer) + "." + what; }
}  // namespace

void bindDecoderEnds(const ArchConfig& c, TensorBinder& b, DecoderWeights& w) {
    const int64_t E = c.nEmbd, V = c.nVocab;
    b.matrix(w.tokEmbd, "token_embd.weight", {E, V});
    b.vector(w.outputNorm, "output_norm.weight", E);
    // Untied models have output.weight; without it the embedding matrix is reused (tied).
    if (b.has("output.weight")) {
        b.matrix(w.output, "output.weight", {E, V});
    } else {
        w.output = w.tokEmbd;
        w.tiedOutput = true;
    }
    b.vector(w.ropeFreqs, "rope_freqs.weight", c.nRot / 2, Need::Optional);
}

void bindDecoderAttention(const ArchConfig& c, TensorBinder& b, int64_t il, DecoderLayerWeights& L,
                          const DecoderTensorRules& rules) {
    const int64_t E = c.nEmbd;
    const int64_t qDim = c.nHead * c.headDimK, kDim = c.nHeadKv * c.headDimK;
    const int64_t vDim = c.nHeadKv * c.headDimV, oDim = c.nHead * c.headDimV;
    b.vector(L.attnNorm, blk(il, "attn_norm.weight"), E);
    b.matrix(L.wq, blk(il, "attn_q.weight"), {E, qDim});
    b.matrix(L.wk, blk(il, "attn_k.weight"), {E, kDim});
    b.matrix(L.wv, blk(il, "attn_v.weight"), {E, vDim});
    b.matrix(L.wo, blk(il, "attn_output.weight"), {oDim, E});
    b.vector(L.bq, blk(il, "attn_q.bias"), qDim, rules.qkvBias);
    b.vector(L.bk, blk(il, "attn_k.bias"), kDim, rules.qkvBias);
    b.vector(L.bv, blk(il, "attn_v.bias"), vDim, rules.qkvBias);
    b.vector(L.bo, blk(il, "attn_output.bias"), E, rules.outputBias);
    if (rules.qkNorm) {
        b.vector(L.qNorm, blk(il, "attn_q_norm.weight"), c.headDimK, rules.qkNormNeed);
        b.vector(L.kNorm, blk(il, "attn_k_norm.weight"), c.headDimK, rules.qkNormNeed);
    }
}

Result<std::unique_ptr<ArchWeights>> bindDecoderWeights(const ArchConfig& c, TensorBinder& b,
                                                        const DecoderTensorRules& rules) {
    auto w = std::make_unique<DecoderWeights>();
    const int64_t E = c.nEmbd;
    bindDecoderEnds(c, b, *w);
    w->layers.resize(static_cast<size_t>(c.nLayer));
    for (int64_t il = 0; il < c.nLayer; ++il) {
        DecoderLayerWeights& L = w->layers[static_cast<size_t>(il)];
        bindDecoderAttention(c, b, il, L, rules);
        b.vector(L.ffnNorm, blk(il, "ffn_norm.weight"), E);
        if (c.nExpert == 0) {
            b.matrix(L.ffnGate, blk(il, "ffn_gate.weight"), {E, c.nFf});
            b.matrix(L.ffnUp, blk(il, "ffn_up.weight"), {E, c.nFf});
            b.matrix(L.ffnDown, blk(il, "ffn_down.weight"), {c.nFf, E});
            continue;
        }
        if (!b.has(blk(il, "ffn_gate_exps.weight")) && b.has(blk(il, "ffn_gate.0.weight"))) {
            b.fail("layer " + std::to_string(il)
                   + " stores one tensor per expert (blk.N.ffn_gate.E.weight, an old Mixtral GGUF layout); "
                     "re-convert the model with a current converter (merged ffn_*_exps tensors)");
            break;
        }
        const int64_t F = c.nFfExp, X = c.nExpert;
        b.matrix(L.ffnGateInp, blk(il, "ffn_gate_inp.weight"), {E, X});
        b.matrix(L.ffnGateExps, blk(il, "ffn_gate_exps.weight"), {E, F, X});
        b.matrix(L.ffnUpExps, blk(il, "ffn_up_exps.weight"), {E, F, X});
        b.matrix(L.ffnDownExps, blk(il, "ffn_down_exps.weight"), {F, E, X});
    }
    if (auto r = b.finish(); !r) return r.error();
    return std::unique_ptr<ArchWeights>(std::move(w));
}

uint64_t DecoderScratch::bytes() const {
    uint64_t n = 0;
    for (const auto* v : {&inpL, &cur, &q, &k, &v, &kqv, &attnOut, &ffnInp, &ffnGate, &ffnUp, &ffnOut, &ropeTable,
                          &routerLogits, &expertWeights, &moeX, &outNorm})
        n += v->size() * sizeof(float);
    n += selected.size() * sizeof(int32_t);
    return n + io.bytes();
}

void PassIo::allocate(backend::Backend& be, const ArchConfig& c, int64_t nBatch) {
    const auto B = static_cast<size_t>(nBatch);
    tokens.allocate(be, B);
    ropeHost.resize(B * static_cast<size_t>(std::max<int64_t>(c.nRot, 2)));
    if (!be.hostMemory()) logits.allocate(be, B * static_cast<size_t>(c.nVocab));
}

uint64_t PassIo::bytes() const {
    return tokens.size() * sizeof(int32_t) + ropeHost.size() * sizeof(float) + logits.size() * sizeof(float);
}

// The context length sizes nothing here: the attention's scratch is the backend's
// (cpu::CpuBackend keeps a per-thread block that grows to the longest context it serves).
Result<std::unique_ptr<ArchScratch>> createDecoderScratch(const ArchConfig& c, int64_t nBatch, backend::Backend& be) {
    auto s = std::make_unique<DecoderScratch>();
    const auto B = static_cast<size_t>(nBatch);
    const auto E = static_cast<size_t>(c.nEmbd);
    const auto ff = static_cast<size_t>(std::max(c.nFf, c.nExpert > 0 ? c.nExpertUsed * c.nFfExp : 0));
    try {
        s->nBatch = nBatch;
        s->inpL.allocate(be, B * E);
        s->cur.allocate(be, B * E);
        s->q.allocate(be, B * static_cast<size_t>(c.nHead * c.headDimK));
        s->k.allocate(be, B * static_cast<size_t>(c.nHeadKv * c.headDimK));
        s->v.allocate(be, B * static_cast<size_t>(c.nHeadKv * c.headDimV));
        s->kqv.allocate(be, B * static_cast<size_t>(c.nHead * c.headDimV));
        s->attnOut.allocate(be, B * E);
        s->ffnInp.allocate(be, B * E);
        s->ffnGate.allocate(be, B * ff);
        s->ffnUp.allocate(be, B * ff);
        s->ffnOut.allocate(be, B * E);
        s->ropeTable.allocate(be, B * static_cast<size_t>(std::max(c.nRot, 2)));
        if (c.nExpert > 0) {
            const auto X = static_cast<size_t>(c.nExpert), U = static_cast<size_t>(c.nExpertUsed);
            s->routerLogits.allocate(be, B * X);
            s->selected.allocate(be, B * U);
            s->expertWeights.allocate(be, B * U);
            s->moeX.allocate(be, B * U * E);
        }
        s->outNorm.allocate(be, B * E);
        s->io.allocate(be, c, nBatch);
    } catch (const std::bad_alloc&) {
        return Error{"cannot allocate activation buffers for a batch of " + std::to_string(nBatch) + " tokens"};
    }
    return std::unique_ptr<ArchScratch>(std::move(s));
}

void dump(const ForwardContext& ctx, std::string_view name, int layer, const float* data, int64_t rows, int64_t cols) {
    if (!ctx.debug || !*ctx.debug) return;
    if (ctx.be.hostMemory()) {
        (*ctx.debug)(name, layer, data, rows, cols);
        return;
    }
    thread_local std::vector<float> host;  // the backend's rows brought down for the hook
    host.resize(static_cast<size_t>(rows * cols));
    ctx.be.download(host.data(), data, host.size() * sizeof(float));
    (*ctx.debug)(name, layer, host.data(), rows, cols);
}

namespace {
const void* placed(const ForwardContext& ctx, const void* host) {
    return ctx.weights && host ? ctx.weights->find(host) : host;
}
}  // namespace

backend::Matrix matrixOf(const ForwardContext& ctx, const Weight& w) {
    return backend::Matrix{w.type, placed(ctx, w.data), w.cols(), w.rows(), w.ne[2] > 0 ? w.ne[2] : 1, w.rowBytes};
}

const float* vecOf(const ForwardContext& ctx, const VecWeight& v) {
    return static_cast<const float*>(placed(ctx, v.data));
}

void embedTokens(const ForwardContext& ctx, const Weight& tokEmbd, const ForwardBatch& b, PassIo& io, float* out) {
    ctx.be.beginPass(b.nTok);
    ctx.be.upload(io.tokens.data(), b.tokens, static_cast<uint64_t>(b.nTok) * sizeof(int32_t));
    ctx.be.embedRows(matrixOf(ctx, tokEmbd), io.tokens.data(), b.nTok, out);
}

LayerRange layerRange(const ArchConfig& cfg, const ForwardBatch& b) {
    const int first = b.hidden ? static_cast<int>(b.firstLayer) : 0;
    const int end = b.layerEnd > 0 && b.layerEnd < cfg.nLayer ? static_cast<int>(b.layerEnd) : static_cast<int>(cfg.nLayer);
    return {first, end};
}

void loadHidden(const ForwardContext& ctx, const ForwardBatch& b, float* out) {
    ctx.be.beginPass(b.nTok);
    ctx.be.upload(out, b.hidden, static_cast<uint64_t>(b.nTok * ctx.cfg.nEmbd) * sizeof(float));
}

bool handOver(const ForwardContext& ctx, const ForwardBatch& b, const float* inpL) {
    if (layerRange(ctx.cfg, b).end >= ctx.cfg.nLayer) return false;
    if (b.hiddenOut) ctx.be.download(b.hiddenOut, inpL, static_cast<uint64_t>(b.nTok * ctx.cfg.nEmbd) * sizeof(float));
    return true;
}

float* logitsRows(const ForwardContext& ctx, PassIo& io, const ForwardBatch& b) {
    return ctx.be.hostMemory() ? b.logits : io.logits.data();
}

void finishLogits(const ForwardContext& ctx, const PassIo& io, const ForwardBatch& b, int64_t rows) {
    if (ctx.be.hostMemory() || rows <= 0) return;
    ctx.be.download(b.logits, io.logits.data(), static_cast<uint64_t>(rows * ctx.cfg.nVocab) * sizeof(float));
}

void project(const ForwardContext& ctx, const Weight& w, const VecWeight* bias, const float* x, int64_t nTok, float* y) {
    if (nTok <= 0) return;
    ctx.be.matmul(matrixOf(ctx, w), x, nTok, y, w.rows());
    if (bias && bias->present()) ctx.be.addBias(y, vecOf(ctx, *bias), nTok, w.rows());
}

void ropeTables(const ArchConfig& cfg, const VecWeight& freqFactors, int64_t pos0, int64_t nTok, float* table) {
    if (cfg.nRot == 0) return;
    const cpu::RopeParams p = cfg.ropeParams(freqFactors.present() ? freqFactors.data : nullptr);
    for (int64_t t = 0; t < nTok; ++t) cpu::ropeTable(p, static_cast<int32_t>(pos0 + t), table + t * cfg.nRot);
}

void ropeTables(const ArchConfig& cfg, const VecWeight& freqFactors, const ForwardBatch& b, float* table) {
    if (!b.positions) {
        ropeTables(cfg, freqFactors, b.pos0, b.nTok, table);
        return;
    }
    if (cfg.nRot == 0) return;
    const cpu::RopeParams p = cfg.ropeParams(freqFactors.present() ? freqFactors.data : nullptr);
    for (int64_t t = 0; t < b.nTok; ++t)
        cpu::ropeTable(p, static_cast<int32_t>(b.positions[t]), table + t * cfg.nRot);
}

void uploadRope(const ForwardContext& ctx, const PassIo& io, float* table, int64_t nTok, int64_t nRot) {
    if (nRot > 0 && nTok > 0) ctx.be.upload(table, io.ropeHost.data(), static_cast<uint64_t>(nTok * nRot) * sizeof(float));
}

void ropeRows(const ForwardContext& ctx, float* x, int64_t nTok, int64_t nHead, int64_t headDim, const float* table) {
    const ArchConfig& cfg = ctx.cfg;
    if (cfg.nRot == 0) return;
    ctx.be.rope(x, nTok, nHead, headDim, cfg.nRot, cfg.ropeMode == cpu::RopeMode::Neox, table);
}

int64_t lastLayerRowBegin(const ForwardBatch& b) {
    if (!b.logits) return b.nTok;
    return b.allLogits ? 0 : b.nTok - 1;
}

namespace {

// The backend's view of the attention of `layer`, for rows whose caches are f16 or not.
backend::Attention attentionOf(const ForwardContext& ctx, int layer, bool f16, const float* sinks) {
    const ArchConfig& c = ctx.cfg;
    backend::Attention a;
    a.nHead = static_cast<int>(c.nHead);
    a.nHeadKv = static_cast<int>(c.nHeadKv);
    a.dimK = static_cast<int>(c.headDimK);
    a.dimV = static_cast<int>(c.headDimV);
    a.f16 = f16;
    a.scale = c.kqScale();
    a.softCap = c.attnSoftCap;
    a.window = static_cast<int>(c.windowOf(layer));
    a.sinks = sinks;
    return a;
}

}  // namespace

RowCaches& rowCaches(const ForwardContext& ctx, const ForwardBatch& b, int layer, int64_t from) {
    thread_local RowCaches rc;
    rc.rows.clear();
    rc.f16.clear();
    for (int64_t t = from; t < b.nTok; ++t) {
        session::KvCache& kv = b.caches ? *b.caches[t] : ctx.kv;
        const int64_t pos = b.caches ? b.positions[t] : b.pos0 + t;
        rc.rows.push_back({kv.layerBase(layer), static_cast<int32_t>(kv.capacity()), static_cast<int32_t>(pos)});
        rc.f16.push_back(kv.f16() ? 1 : 0);
    }
    return rc;
}

void byCacheType(const RowCaches& rc, const std::function<void(int64_t i0, int64_t i1, bool f16)>& fn) {
    for (size_t i0 = 0; i0 < rc.rows.size();) {
        size_t i1 = i0 + 1;
        while (i1 < rc.rows.size() && rc.f16[i1] == rc.f16[i0]) ++i1;
        fn(static_cast<int64_t>(i0), static_cast<int64_t>(i1), rc.f16[i0] != 0);
        i0 = i1;
    }
}

void selfAttention(const ForwardContext& ctx, DecoderScratch& s, int layer, const ForwardBatch& b, int64_t rowBegin,
                   const float* sinks) {
    const ArchConfig& c = ctx.cfg;
    const int64_t qDim = c.nHead * c.headDimK, oDim = c.nHead * c.headDimV;
    const RowCaches& rc = rowCaches(ctx, b, layer, rowBegin);
    byCacheType(rc, [&](int64_t i0, int64_t i1, bool f16) {
        ctx.be.attention(attentionOf(ctx, layer, f16, sinks), rc.rows.data() + i0, i1 - i0,
                         s.q.data() + (rowBegin + i0) * qDim, s.kqv.data() + (rowBegin + i0) * oDim);
    });
}

void attentionBlock(const ForwardContext& ctx, const DecoderLayerWeights& L, DecoderScratch& s, int layer,
                    const ForwardBatch& b, int64_t rowBegin) {
    const ArchConfig& c = ctx.cfg;
    const int64_t n = b.nTok, E = c.nEmbd;
    const int64_t qDim = c.nHead * c.headDimK, kDim = c.nHeadKv * c.headDimK, vDim = c.nHeadKv * c.headDimV;
    const int64_t oDim = c.nHead * c.headDimV;
    ctx.be.rmsNorm(s.inpL.data(), vecOf(ctx, L.attnNorm), s.cur.data(), n, E, c.rmsEps);
    dump(ctx, "attn_norm", layer, s.cur.data(), n, E);

    project(ctx, L.wk, &L.bk, s.cur.data(), n, s.k.data());
    project(ctx, L.wv, &L.bv, s.cur.data(), n, s.v.data());
    if (L.kNorm.present()) {  // qwen3: each head's key RMS-normalised before RoPE [Kcur_normed]
        ctx.be.rmsNorm(s.k.data(), vecOf(ctx, L.kNorm), s.k.data(), n * c.nHeadKv, c.headDimK, c.rmsEps);
        dump(ctx, "Kcur_normed", layer, s.k.data(), n, kDim);
    }
    ropeRows(ctx, s.k.data(), n, c.nHeadKv, c.headDimK, s.ropeTable.data());
    dump(ctx, "Kcur", layer, s.k.data(), n, kDim);
    dump(ctx, "Vcur", layer, s.v.data(), n, vDim);
    const RowCaches& all = rowCaches(ctx, b, layer, 0);
    byCacheType(all, [&](int64_t t0, int64_t t1, bool f16) {
        ctx.be.storeKv(attentionOf(ctx, layer, f16, nullptr), all.rows.data() + t0, t1 - t0, s.k.data() + t0 * kDim,
                       s.v.data() + t0 * vDim);
    });
    if (rowBegin >= n) return;

    const int64_t rows = n - rowBegin;
    float* q = s.q.data() + rowBegin * qDim;
    project(ctx, L.wq, &L.bq, s.cur.data() + rowBegin * E, rows, q);
    if (L.qNorm.present()) {  // qwen3 [Qcur_normed]
        ctx.be.rmsNorm(q, vecOf(ctx, L.qNorm), q, rows * c.nHead, c.headDimK, c.rmsEps);
        dump(ctx, "Qcur_normed", layer, q, rows, qDim);
    }
    ropeRows(ctx, q, rows, c.nHead, c.headDimK, s.ropeTable.data() + rowBegin * c.nRot);
    dump(ctx, "Qcur", layer, q, rows, qDim);

    selfAttention(ctx, s, layer, b, rowBegin, vecOf(ctx, L.sinks));
    dump(ctx, "kqv_out", layer, s.kqv.data() + rowBegin * oDim, rows, oDim);
    project(ctx, L.wo, &L.bo, s.kqv.data() + rowBegin * oDim, rows, s.attnOut.data() + rowBegin * E);
    dump(ctx, "attn_out", layer, s.attnOut.data() + rowBegin * E, rows, E);
}


void denseSwiGlu(const ForwardContext& ctx, const DecoderLayerWeights& L, DecoderScratch& s, const float* x,
                 int64_t nTok, float* out, int layer) {
    const int64_t F = ctx.cfg.nFf;
    project(ctx, L.ffnUp, nullptr, x, nTok, s.ffnUp.data());
    project(ctx, L.ffnGate, nullptr, x, nTok, s.ffnGate.data());
    ctx.be.swiglu(s.ffnGate.data(), s.ffnUp.data(), nTok * F);
    dump(ctx, "ffn_gate_par", layer, s.ffnGate.data(), nTok, F);
    project(ctx, L.ffnDown, nullptr, s.ffnGate.data(), nTok, out);
}

void moeSwiGlu(const ForwardContext& ctx, const DecoderLayerWeights& L, DecoderScratch& s, const float* x,
               int64_t nTok, float* out, int layer) {
    const ArchConfig& c = ctx.cfg;
    const int64_t X = c.nExpert, U = c.nExpertUsed;

    // Routing: softmax over the router logits, top-k, weights renormalised over the chosen k.
    project(ctx, L.ffnGateInp, nullptr, x, nTok, s.routerLogits.data());
    dump(ctx, "ffn_moe_logits", layer, s.routerLogits.data(), nTok, X);
    ctx.be.routeSoftmaxTopK(s.routerLogits.data(), nTok, static_cast<int>(X), static_cast<int>(U), s.selected.data(),
                            s.expertWeights.data());

    static const Weight kNone;
    runExperts(ctx, L.ffnGateExps, L.ffnUpExps, L.ffnDownExps, s.selected.data(), s.expertWeights.data(), U, x, nTok,
               ExpertBuffers{s.moeX.data(), s.ffnUp.data(), s.ffnGate.data()},
               out, kNone, kNone, kNone, nullptr);
}

void runExperts(const ForwardContext& ctx, const Weight& gateExps, const Weight& upExps, const Weight& downExps,
                const int32_t* selected, const float* weights, int64_t U, const float* x, int64_t nTok,
                const ExpertBuffers& buf, float* out, const Weight& shGate, const Weight& shUp, const Weight& shDown,
                float* sharedOut, const ExpertExtras& extras) {
    const int64_t E = upExps.cols(), F = upExps.rows();
    const int64_t S = shGate.present() ? shGate.rows() : 0;
    const int64_t nPairs = nTok * U;  // pair p = token p / U, slot p % U
    float* shUpOut = buf.up + nPairs * F;
    float* shGateOut = buf.gate + nPairs * F;

    // Stage 1: up and gate of every routed pair and of the shared experts, one group.
    backend::ExpertProduct stage1[4] = {{matrixOf(ctx, upExps), selected, nPairs, x, U, buf.up},
                                        {matrixOf(ctx, gateExps), selected, nPairs, x, U, buf.gate}};
    int n1 = 2;
    if (S > 0) {
        stage1[n1++] = {matrixOf(ctx, shUp), nullptr, nTok, x, 1, shUpOut};
        stage1[n1++] = {matrixOf(ctx, shGate), nullptr, nTok, x, 1, shGateOut};
    }
    ctx.be.expertMatmuls(stage1, n1);
    if (extras.upBias) ctx.be.addExpertBias(buf.up, extras.upBias, selected, nPairs, F);
    if (extras.gateBias) ctx.be.addExpertBias(buf.gate, extras.gateBias, selected, nPairs, F);
    const int64_t hidden = nPairs * F + nTok * S;  // the routed rows, then the shared ones, contiguous
    if (extras.swigluOai)
        ctx.be.swigluOai(buf.gate, buf.up, hidden, extras.oaiAlpha, extras.oaiLimit);
    else
        ctx.be.swiglu(buf.gate, buf.up, hidden);

    // Stage 2: every down projection, one group; the routed outputs into moeX by pair.
    backend::ExpertProduct stage2[2] = {{matrixOf(ctx, downExps), selected, nPairs, buf.gate, 1, buf.moeX}};
    int n2 = 1;
    if (S > 0) stage2[n2++] = {matrixOf(ctx, shDown), nullptr, nTok, shGateOut, 1, sharedOut};
    ctx.be.expertMatmuls(stage2, n2);
    if (extras.downBias) ctx.be.addExpertBias(buf.moeX, extras.downBias, selected, nPairs, E);
    // The weighted outputs summed in rank order (as llama.cpp adds its views).
    ctx.be.combineExperts(buf.moeX, weights, nTok, static_cast<int>(U), E, out);
}

void outputHead(const ForwardContext& ctx, const DecoderWeights& w, DecoderScratch& s, int64_t rowBegin,
                int64_t nTok, float* logits) {
    const ArchConfig& c = ctx.cfg;
    const int64_t rows = nTok - rowBegin;
    if (rows <= 0) return;
    ctx.be.rmsNorm(s.inpL.data() + rowBegin * c.nEmbd, vecOf(ctx, w.outputNorm), s.outNorm.data(), rows, c.nEmbd,
                   c.rmsEps);
    dump(ctx, "result_norm", -1, s.outNorm.data(), rows, c.nEmbd);
    project(ctx, w.output, nullptr, s.outNorm.data(), rows, logits);
    dump(ctx, "result_output", -1, logits, rows, c.nVocab);
}

void preNormForward(const DecoderWeights& w, DecoderScratch& s, const ForwardContext& ctx, const ForwardBatch& b,
                    const FfnStep& ffn) {
    const ArchConfig& c = ctx.cfg;
    const int64_t n = b.nTok, E = c.nEmbd;

    if (b.hidden) {
        loadHidden(ctx, b, s.inpL.data());
    } else {
        embedTokens(ctx, w.tokEmbd, b, s.io, s.inpL.data());
        dump(ctx, "inp_embd", -1, s.inpL.data(), n, E);
    }
    ropeTables(c, w.ropeFreqs, b, s.io.ropeHost.data());
    uploadRope(ctx, s.io, s.ropeTable.data(), n, c.nRot);

    int64_t r0 = 0;  // first row still needed (the last layer finishes only the output rows)
    const LayerRange range = layerRange(c, b);
    for (int il = range.first; il < range.end; ++il) {
        const DecoderLayerWeights& L = w.layers[static_cast<size_t>(il)];
        if (il == c.nLayer - 1) r0 = lastLayerRowBegin(b);
        attentionBlock(ctx, L, s, il, b, r0);
        if (r0 >= n) break;  // nothing left to compute: this batch only fills the cache

        const int64_t rows = n - r0, off = r0 * E;
        float* ffnInp = s.ffnInp.data() + off;
        ctx.be.add(s.attnOut.data() + off, s.inpL.data() + off, ffnInp, rows * E);
        dump(ctx, "ffn_inp", il, ffnInp, rows, E);
        ctx.be.rmsNorm(ffnInp, vecOf(ctx, L.ffnNorm), s.cur.data() + off, rows, E, c.rmsEps);
        dump(ctx, "ffn_norm", il, s.cur.data() + off, rows, E);
        ffn(il, r0, rows);
        dump(ctx, "ffn_out", il, s.ffnOut.data() + off, rows, E);
        ctx.be.add(s.ffnOut.data() + off, ffnInp, s.inpL.data() + off, rows * E);
        dump(ctx, "l_out", il, s.inpL.data() + off, rows, E);
    }
    if (handOver(ctx, b, s.inpL.data()) || !b.logits || r0 >= n) return;
    outputHead(ctx, w, s, r0, n, logitsRows(ctx, s.io, b));
    finishLogits(ctx, s.io, b, n - r0);
}

void decoderForward(const ArchWeights& weights, ArchScratch& scratch, const ForwardContext& ctx, const ForwardBatch& b) {
    const auto& w = static_cast<const DecoderWeights&>(weights);
    auto& s = static_cast<DecoderScratch&>(scratch);
    const int64_t E = ctx.cfg.nEmbd;
    preNormForward(w, s, ctx, b, [&](int il, int64_t r0, int64_t rows) {
        const DecoderLayerWeights& L = w.layers[static_cast<size_t>(il)];
        float* h = s.cur.data() + r0 * E;
        float* out = s.ffnOut.data() + r0 * E;
        if (ctx.cfg.nExpert > 0)
            moeSwiGlu(ctx, L, s, h, rows, out, il);
        else
            denseSwiGlu(ctx, L, s, h, rows, out, il);
    });
}

}  // namespace verdict::arch
