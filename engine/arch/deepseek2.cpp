// Architecture "deepseek2": DeepSeek-V2, V2-Lite, V3 and Kimi-K2. Reference: llama.cpp's
// llm_build_deepseek2 and build_moe_ffn at commit c392e509 (the fixtures' generator).
//
//   x = token_embd[tokens]
//   per layer:  x += attn_output(MLA(n1(x)))                      (deepseek2.h: mlaAttentionBlock)
//               x += layer < leading_dense_block_count ? SwiGLU(n2(x))
//                                                      : routed experts(n2(x)) + shared experts(n2(x))
//   logits = output(rmsnorm(x) * output_norm)
//
// Queries use a low-rank compression (attn_q_a -> attn_q_a_norm -> attn_q_b) when the file has
// attention.q_lora_rank (V2, V3, Kimi-K2), else one attn_q (V2-Lite). llama.cpp at this commit
// decides that by n_layer == 27 instead; the key is what the converter writes, so we use it.
// RoPE (NORM layout) covers only the last n_rot dimensions of each query head and the one key
// shared by all heads; with YaRN, llama.cpp moves the magnitude correction from the rotation into
// the kq scale: mscale = attn_factor (1 + yarn_log_multiplier ln(1/freq_scale)),
// kq_scale = mscale^2 / sqrt(key_length), and the rotation's own factor is cancelled.
#include "arch/deepseek2.h"

#include "arch/hparams.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/ops_norm.h"
#include "backend/cpu/ops_rope.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <string>

namespace verdict::arch {

Result<void> readDeepseekMoeConfig(const HParams& hp, ArchConfig& cfg) {
    const std::string f = hp.file().path() + ": ";
    struct UIntKey { const char* suffix; int64_t* field; };
    for (UIntKey k : {UIntKey{"leading_dense_block_count", &cfg.nLayerDenseLead}, {"expert_shared_count", &cfg.nExpertShared},
                      {"expert_group_count", &cfg.nExpertGroups}, {"expert_group_used_count", &cfg.nExpertGroupsUsed}}) {
        auto v = hp.optionalUInt(k.suffix, 0);
        if (!v) return v.error();
        *k.field = *v;
    }
    auto scale = hp.optionalFloat("expert_weights_scale", 1.0f);
    if (!scale) return scale.error();
    cfg.expertWeightsScale = *scale;
    if (const gguf::Value* v = hp.file().find(hp.key("expert_weights_norm"))) {
        auto b = v->asBool();
        if (!b) return Error{f + "metadata key '" + hp.key("expert_weights_norm") + "' is not a bool"};
        cfg.expertWeightsNorm = *b;
    }
    // 0 (absent: V2 / V2.5 files) and 1 mean softmax, 2 sigmoid (llama_expert_gating_func_type).
    auto gating = hp.optionalUInt("expert_gating_func", 0);
    if (!gating) return gating.error();
    if (*gating > 2)
        return Error{f + "metadata key '" + hp.key("expert_gating_func") + "' = " + std::to_string(*gating)
                     + " is not supported (1 = softmax, 2 = sigmoid)"};
    cfg.expertGating = *gating == 2 ? ExpertGating::Sigmoid : ExpertGating::Softmax;
    if (cfg.nLayerDenseLead > cfg.nLayer)
        return Error{f + "leading_dense_block_count = " + std::to_string(cfg.nLayerDenseLead) + " exceeds block_count"};
    if (cfg.nLayerDenseLead > 0 && cfg.nFf <= 0) return Error{f + "feed_forward_length must be > 0 for the dense layers"};
    if (cfg.nLayerDenseLead < cfg.nLayer && cfg.nExpert == 0)
        return Error{f + "expert_count is 0 but layers " + std::to_string(cfg.nLayerDenseLead) + ".. are MoE layers"};
    if (cfg.nExpertGroups > 1) {
        if (cfg.nExpert % cfg.nExpertGroups != 0)
            return Error{f + "expert_group_count = " + std::to_string(cfg.nExpertGroups) + " does not divide expert_count"};
        if (cfg.nExpertGroupsUsed <= 0 || cfg.nExpertGroupsUsed > cfg.nExpertGroups)
            return Error{f + "expert_group_used_count must be in 1 .. expert_group_count"};
        if (cfg.nExpertUsed > cfg.nExpertGroupsUsed * (cfg.nExpert / cfg.nExpertGroups))
            return Error{f + "expert_used_count exceeds the experts in the used groups"};
    }
    return {};
}

namespace {

std::string blk(int64_t layer, const char* what) { return "blk." + std::to_string(layer) + "." + what; }

// Step 1: hyper-parameters.
Result<ArchConfig> readConfig(const gguf::GgufFile& file) {
    ArchConfig cfg;
    HParams hp(file, "deepseek2");
    if (auto r = hp.readCommon(cfg); !r) return r.error();
    cfg.ropeMode = cpu::RopeMode::Norm;  // LLAMA_ROPE_TYPE_NORM, on the rope part only
    const std::string f = file.path() + ": ";

    auto qRank = hp.optionalUInt("attention.q_lora_rank", 0);
    if (!qRank) return qRank.error();
    cfg.qLoraRank = *qRank;
    auto kvRank = hp.requireUInt("attention.kv_lora_rank");
    if (!kvRank) return kvRank.error();
    cfg.kvLoraRank = *kvRank;
    // Files converted since 2025 describe MLA as MQA over the latent: key_length = kv_lora_rank +
    // n_rot, value_length = kv_lora_rank, head_count_kv = 1, and the per-head sizes in
    // key_length_mla / value_length_mla (with attn_k_b / attn_v_b tensors, bindWeights). The
    // per-head sizes are what the forward needs.
    for (auto [suffix, field] : {std::pair{"attention.key_length_mla", &cfg.headDimK}, {"attention.value_length_mla", &cfg.headDimV}}) {
        auto v = hp.optionalUInt(suffix, 0);
        if (!v) return v.error();
        if (*v > 0) *field = *v;
    }
    auto logMul = hp.optionalFloat("rope.scaling.yarn_log_multiplier", 0.0f);
    if (!logMul) return logMul.error();
    cfg.ropeYarnLogMul = *logMul;

    if (auto r = validateConfig(cfg); !r) return r.error();
    if (cfg.kvLoraRank <= 0) return Error{f + "attention.kv_lora_rank must be > 0"};
    if (cfg.nRot <= 0 || cfg.nRot >= cfg.headDimK)
        return Error{f + "rope.dimension_count = " + std::to_string(cfg.nRot) + " must be > 0 and < key_length = "
                     + std::to_string(cfg.headDimK) + " (key = no-rope part + rope part)"};
    if (auto r = readDeepseekMoeConfig(hp, cfg); !r) return r.error();
    // YaRN attention-scale rule of llm_build_deepseek2 (see the top of this file).
    const float mscale = cfg.yarnAttnFactor * (1.0f + cfg.ropeYarnLogMul * std::log(1.0f / cfg.ropeFreqScale));
    if (cfg.attnScale == 0.0f) cfg.attnScale = mscale * mscale / std::sqrt(static_cast<float>(cfg.headDimK));
    return cfg;
}

// attn_k_b {dn, Lr, H} (per head the key rows transposed: row (h, l) holds k[h][0..dn)[l]) and
// attn_v_b {Lr, dv, H} (per head the value rows) -> attn_kv_b {Lr, H*(dn+dv)} as older files store it
// (per head dn key rows, then dv value rows). This is the inverse of the converter's split
// (convert_hf_to_gguf.py, DeepseekV2Model: kv_b viewed [H, dn+dv, Lr], split into dn and dv rows,
// the key part transposed). F16 and BF16 pairs are moved bit for bit (the forward is then exactly
// the merged file's); other types are dequantized to F32 (the latent is then not rounded to the
// weights' activation format, which llama.cpp's absorbed path does: logits differ by rounding).
void mergeSplitKvB(const Weight& kB, const Weight& vB, int64_t H, int64_t dn, int64_t dv, int64_t Lr, Weight& out,
                   std::vector<uint8_t>& storage, const std::string& name) {
    using tensor::TensorType;
    const bool same16 = kB.type == vB.type && (kB.type == TensorType::F16 || kB.type == TensorType::BF16);
    const TensorType type = same16 ? kB.type : TensorType::F32;
    const size_t elem = same16 ? 2 : 4;
    const int64_t rows = H * (dn + dv);
    storage.assign(static_cast<size_t>(rows * Lr) * elem, 0);
    uint8_t* dst = storage.data();
    std::vector<float> rowF(static_cast<size_t>(std::max(dn, Lr)));
    for (int64_t h = 0; h < H; ++h) {
        const int64_t base = h * (dn + dv);
        for (int64_t l = 0; l < Lr; ++l) {  // key: element (d, l) of head h goes to row base + d, column l
            const uint8_t* src = kB.row(h * Lr + l);
            if (same16) {
                for (int64_t d = 0; d < dn; ++d)
                    std::memcpy(dst + static_cast<size_t>((base + d) * Lr + l) * 2, src + d * 2, 2);
            } else {
                cpu::dequantizeRow(kB.type, src, rowF.data(), dn);
                for (int64_t d = 0; d < dn; ++d)
                    std::memcpy(dst + static_cast<size_t>((base + d) * Lr + l) * 4, &rowF[static_cast<size_t>(d)], 4);
            }
        }
        for (int64_t j = 0; j < dv; ++j) {  // value rows are already rows of Lr
            const uint8_t* src = vB.row(h * dv + j);
            uint8_t* row = dst + static_cast<size_t>((base + dn + j) * Lr) * elem;
            if (same16) std::memcpy(row, src, static_cast<size_t>(Lr) * 2);
            else cpu::dequantizeRow(vB.type, src, reinterpret_cast<float*>(row), Lr);
        }
    }
    out = Weight{};
    out.name = name + " (rebuilt from attn_k_b / attn_v_b)";
    out.data = storage.data();
    out.type = type;
    out.ne = {Lr, rows, 1, 1};
    out.rowBytes = static_cast<uint64_t>(Lr) * elem;
}

// Step 2: tensors.
Result<std::unique_ptr<ArchWeights>> bindWeights(const ArchConfig& c, TensorBinder& b) {
    auto w = std::make_unique<Deepseek2Weights>();
    const int64_t E = c.nEmbd, V = c.nVocab, H = c.nHead, Lr = c.kvLoraRank, dr = c.nRot;
    const int64_t dn = c.headDimK - dr, dv = c.headDimV, F = c.nFfExp;
    b.matrix(w->tokEmbd, "token_embd.weight", {E, V});
    b.vector(w->outputNorm, "output_norm.weight", E);
    if (b.has("output.weight"))
        b.matrix(w->output, "output.weight", {E, V});
    else
        w->output = w->tokEmbd;

    w->layers.resize(static_cast<size_t>(c.nLayer));
    for (int64_t il = 0; il < c.nLayer; ++il) {
        Deepseek2LayerWeights& L = w->layers[static_cast<size_t>(il)];
        b.vector(L.attnNorm, blk(il, "attn_norm.weight"), E);
        if (c.qLoraRank > 0) {
            b.matrix(L.wqA, blk(il, "attn_q_a.weight"), {E, c.qLoraRank});
            b.vector(L.qANorm, blk(il, "attn_q_a_norm.weight"), c.qLoraRank);
            b.matrix(L.wqB, blk(il, "attn_q_b.weight"), {c.qLoraRank, H * (dn + dr)});
        } else {
            b.matrix(L.wq, blk(il, "attn_q.weight"), {E, H * (dn + dr)});
        }
        b.matrix(L.wkvA, blk(il, "attn_kv_a_mqa.weight"), {E, Lr + dr});
        b.vector(L.kvANorm, blk(il, "attn_kv_a_norm.weight"), Lr);
        if (!b.has(blk(il, "attn_kv_b.weight")) && b.has(blk(il, "attn_k_b.weight"))) {
            // The newer converter's split layout: rebuilt as the merged attn_kv_b (mergeSplitKvB).
            Weight kB, vB;
            const bool ok = b.matrix(kB, blk(il, "attn_k_b.weight"), {dn, Lr, H}) &
                            b.matrix(vB, blk(il, "attn_v_b.weight"), {Lr, dv, H});
            if (ok) {
                mergeSplitKvB(kB, vB, H, dn, dv, Lr, L.wkvB, L.ownedKvB, blk(il, "attn_kv_b.weight"));
                b.derived(L.ownedKvB.data(), L.ownedKvB.size(), L.wkvB.name, L.wkvB.type);
                b.hostOnly(kB);  // only the rebuilt matrix goes to a device
                b.hostOnly(vB);
            }
        } else {
            b.matrix(L.wkvB, blk(il, "attn_kv_b.weight"), {Lr, H * (dn + dv)});
        }
        b.matrix(L.wo, blk(il, "attn_output.weight"), {H * dv, E});
        b.vector(L.ffnNorm, blk(il, "ffn_norm.weight"), E);
        if (il < c.nLayerDenseLead) {
            b.matrix(L.ffnGate, blk(il, "ffn_gate.weight"), {E, c.nFf});
            b.matrix(L.ffnUp, blk(il, "ffn_up.weight"), {E, c.nFf});
            b.matrix(L.ffnDown, blk(il, "ffn_down.weight"), {c.nFf, E});
            continue;
        }
        const int64_t X = c.nExpert;
        b.matrix(L.gateInp, blk(il, "ffn_gate_inp.weight"), {E, X});
        b.vector(L.expProbsB, blk(il, "exp_probs_b.bias"), X, Need::Optional);
        b.matrix(L.gateExps, blk(il, "ffn_gate_exps.weight"), {E, F, X});
        b.matrix(L.upExps, blk(il, "ffn_up_exps.weight"), {E, F, X});
        b.matrix(L.downExps, blk(il, "ffn_down_exps.weight"), {F, E, X});
        if (c.nExpertShared > 0) {
            const int64_t S = F * c.nExpertShared;
            b.matrix(L.gateShexp, blk(il, "ffn_gate_shexp.weight"), {E, S});
            b.matrix(L.upShexp, blk(il, "ffn_up_shexp.weight"), {E, S});
            b.matrix(L.downShexp, blk(il, "ffn_down_shexp.weight"), {S, E});
        }
    }
    if (auto r = b.finish(); !r) return r.error();
    return std::unique_ptr<ArchWeights>(std::move(w));
}

Result<std::unique_ptr<ArchScratch>> createScratch(const ArchConfig& c, int64_t nBatch, backend::Backend& be) {
    auto s = std::make_unique<Deepseek2Scratch>();
    const auto B = static_cast<size_t>(nBatch), E = static_cast<size_t>(c.nEmbd), H = static_cast<size_t>(c.nHead);
    const auto Lr = static_cast<size_t>(c.kvLoraRank), dr = static_cast<size_t>(c.nRot);
    const auto ff = static_cast<size_t>(std::max(c.nFf, c.nFfExp * (c.nExpertUsed + c.nExpertShared)));
    try {
        s->nBatch = nBatch;
        for (auto* v : {&s->inpL, &s->cur, &s->attnOut, &s->ffnInp, &s->ffnOut, &s->shexpOut, &s->outNorm})
            v->allocate(be, B * E);
        s->qA.allocate(be, B * static_cast<size_t>(std::max<int64_t>(c.qLoraRank, 1)));
        s->q.allocate(be, B * H * static_cast<size_t>(c.headDimK));
        s->kvA.allocate(be, B * (Lr + dr));
        s->latent.allocate(be, B * Lr);
        s->kPe.allocate(be, B * dr);
        s->kqv.allocate(be, B * H * static_cast<size_t>(c.headDimV));
        s->ffnGate.allocate(be, B * ff);
        s->ffnUp.allocate(be, B * ff);
        s->ropeTable.allocate(be, B * dr);
        if (c.nExpert > 0) {
            const auto X = static_cast<size_t>(c.nExpert), U = static_cast<size_t>(c.nExpertUsed);
            s->probs.allocate(be, B * X);
            s->selScore.allocate(be, B * X);
            s->selected.allocate(be, B * U);
            s->expertWeights.allocate(be, B * U);
            s->moeX.allocate(be, B * U * E);
        }
        s->io.allocate(be, c, nBatch);
    } catch (const std::bad_alloc&) {
        return Error{"cannot allocate activation buffers for a batch of " + std::to_string(nBatch) + " tokens"};
    }
    return std::unique_ptr<ArchScratch>(std::move(s));
}

// Step 3: the forward pass.
void forward(const ArchWeights& weights, ArchScratch& scratch, const ForwardContext& ctx, const ForwardBatch& b) {
    const auto& w = static_cast<const Deepseek2Weights&>(weights);
    auto& s = static_cast<Deepseek2Scratch&>(scratch);
    const ArchConfig& c = ctx.cfg;
    const int64_t n = b.nTok, E = c.nEmbd;

    if (b.hidden) {  // a split pass: blocks before firstLayer ran elsewhere
        loadHidden(ctx, b, s.inpL.data());
    } else {
        embedTokens(ctx, w.tokEmbd, b, s.io, s.inpL.data());
        dump(ctx, "inp_embd", -1, s.inpL.data(), n, E);
    }
    // (cos, sin) of the rope part. The rotation's YaRN magnitude is cancelled (attn_factor_scaled
    // in llm_build_deepseek2); the kq scale carries it instead (readConfig).
    cpu::RopeParams rp = c.ropeParams(nullptr);
    rp.attnFactor = 1.0f / (1.0f + 0.1f * std::log(1.0f / c.ropeFreqScale));
    for (int64_t t = 0; t < n; ++t)
        cpu::ropeTable(rp, static_cast<int32_t>(b.positions ? b.positions[t] : b.pos0 + t), s.io.ropeHost.data() + t * c.nRot);
    uploadRope(ctx, s.io, s.ropeTable.data(), n, c.nRot);

    int64_t r0 = 0;
    const LayerRange range = layerRange(c, b);
    for (int il = range.first; il < range.end; ++il) {
        const Deepseek2LayerWeights& L = w.layers[static_cast<size_t>(il)];
        if (il == c.nLayer - 1) r0 = lastLayerRowBegin(b);
        mlaAttentionBlock(ctx, L, s, il, b, r0);
        if (r0 >= n) break;  // this batch only fills the cache

        const int64_t rows = n - r0, off = r0 * E;
        float* ffnInp = s.ffnInp.data() + off;
        ctx.be.add(s.attnOut.data() + off, s.inpL.data() + off, ffnInp, rows * E);
        dump(ctx, "ffn_inp", il, ffnInp, rows, E);
        ctx.be.rmsNorm(ffnInp, vecOf(ctx, L.ffnNorm), s.cur.data() + off, rows, E, c.rmsEps);
        dump(ctx, "ffn_norm", il, s.cur.data() + off, rows, E);
        if (il < c.nLayerDenseLead)
            swiGluFfn(ctx, L.ffnGate, L.ffnUp, L.ffnDown, s, s.cur.data() + off, rows, s.ffnOut.data() + off);
        else
            deepseekMoe(ctx, L, s, s.cur.data() + off, rows, s.ffnOut.data() + off, il);
        dump(ctx, "ffn_out", il, s.ffnOut.data() + off, rows, E);
        ctx.be.add(s.ffnOut.data() + off, ffnInp, s.inpL.data() + off, rows * E);
        dump(ctx, "l_out", il, s.inpL.data() + off, rows, E);
    }
    if (handOver(ctx, b, s.inpL.data()) || !b.logits || r0 >= n) return;
    const int64_t rows = n - r0;
    ctx.be.rmsNorm(s.inpL.data() + r0 * E, vecOf(ctx, w.outputNorm), s.outNorm.data(), rows, E, c.rmsEps);
    dump(ctx, "result_norm", -1, s.outNorm.data(), rows, E);
    float* logits = logitsRows(ctx, s.io, b);
    project(ctx, w.output, nullptr, s.outNorm.data(), rows, logits);
    dump(ctx, "result_output", -1, logits, rows, c.nVocab);
    finishLogits(ctx, s.io, b, rows);
}

}  // namespace

uint64_t Deepseek2Scratch::bytes() const {
    uint64_t n = 0;
    for (const auto* v : {&inpL, &cur, &qA, &q, &kvA, &latent, &kPe, &kqv, &attnOut, &ffnInp, &ffnOut,
                          &shexpOut, &outNorm, &ffnGate, &ffnUp, &ropeTable, &probs, &selScore, &expertWeights,
                          &moeX})
        n += v->size() * sizeof(float);
    n += selected.size() * sizeof(int32_t);
    return n + io.bytes();
}

const Architecture& deepseek2Architecture() {
    static const Architecture kArch{"deepseek2", readConfig, bindWeights, createScratch, forward, true};
    return kArch;
}

}  // namespace verdict::arch
