// Architectures "gemma2" (Google Gemma 2: 2B / 9B / 27B) and "gemma3" (Gemma 3 text: 1B .. 27B).
// References: llama.cpp's build_gemma2 at commit c392e509 and build_gemma3 at v0.5.0 (the
// fixtures' generators), Gemma Team 2024, "Gemma 2: Improving Open Language Models at a Practical
// Size", and Gemma Team 2025, "Gemma 3 Technical Report".
//
//   x = token_embd[tokens] * sqrt(n_embd)
//   per layer:  a = attention(rope_neox(Q n1(x)), rope_neox(K n1(x)), V n1(x))
//                   scores = cap_a * tanh(scale * q.k / cap_a); even layers see only the last
//                   sliding_window positions, odd layers everything (llama.cpp: il % 2 == 0 slides)
//               x += rmsnorm(attn_output(a)) * post_attention_norm
//               x += rmsnorm(down(gelu_tanh(gate n2(x)) * up n2(x))) * post_ffw_norm
//   logits = cap_f * tanh(token_embd(rmsnorm(x) * output_norm) / cap_f)        (tied output)
//
// gemma3 differs: each head's Q and K are RMS-normalised (attn_q_norm / attn_k_norm) before RoPE;
// five of every six layers slide (sliding_window_pattern, default 6: il % 6 < 5) and rotate with
// rope.freq_base_swa (default 10000) without the rope scaling, which only the global layers get;
// no soft-capping; the 27B (62 layers) scales queries by 1/sqrt(n_embd / n_head) (HF's
// query_pre_attn_scalar = 168), the others by 1/sqrt(key_length).
//
// Norm weights are used as stored: the GGUF converter already wrote HF's (1 + w) into them (the
// fixture README; checked against the reference logits). Query scale: 1/sqrt(key_length) for 2B
// and 9B, 1/sqrt(n_embd / n_head) for 27B (HF's query_pre_attn_scalar = 144; the GGUF has no key
// for it, llama.cpp picks it by model size, i.e. 46 layers). An explicit attention.scale wins.
#include "arch/architecture.h"
#include "arch/decoder.h"
#include "arch/hparams.h"
#include "backend/cpu/ops_activation.h"
#include "backend/cpu/ops_norm.h"
#include "backend/cpu/ops_vec.h"
#include "backend/cpu/thread_pool.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace verdict::arch {
namespace {

// llama.cpp's defaults (llama_hparams / load_hparams for LLM_ARCH_GEMMA2), Gemma 2's values, used
// when the file lacks the key.
constexpr int64_t kDefaultSlidingWindow = 4096;
constexpr float kDefaultAttnSoftCap = 50.0f;
constexpr float kDefaultFinalSoftCap = 30.0f;
constexpr int64_t kLayers27B = 46;
// gemma3 (llama.cpp's LLM_ARCH_GEMMA3 defaults).
constexpr int64_t kGemma3SwaPattern = 6;
constexpr float kGemma3FreqBaseSwa = 10000.0f;
constexpr int64_t kGemma3Layers27B = 62;

struct Gemma2PostNorms {
    VecWeight attnPost;  // [n_embd]  blk.N.post_attention_norm.weight
    VecWeight ffnPost;   // [n_embd]  blk.N.post_ffw_norm.weight
};

struct Gemma2Weights : ArchWeights {
    std::unique_ptr<ArchWeights> decoder;  // DecoderWeights: embeddings, attention, GeGLU FFN, output
    std::vector<Gemma2PostNorms> post;     // [n_layer]
    const DecoderWeights& base() const { return static_cast<const DecoderWeights&>(*decoder); }
};

// Step 1: hyper-parameters.
Result<ArchConfig> readConfig(const gguf::GgufFile& file) {
    ArchConfig cfg;
    HParams hp(file, "gemma2");
    if (auto r = hp.readCommon(cfg); !r) return r.error();
    cfg.ropeMode = cpu::RopeMode::Neox;  // LLAMA_ROPE_TYPE_NEOX
    if (cfg.nExpert != 0) return Error{file.path() + ": gemma2 has no mixture-of-experts variant"};

    auto window = hp.optionalUInt("attention.sliding_window", kDefaultSlidingWindow);
    if (!window) return window.error();
    cfg.slidingWindow = *window;
    cfg.swaPattern = 2;  // even layers slide, odd layers are global
    auto attnCap = hp.optionalFloat("attn_logit_softcapping", kDefaultAttnSoftCap);
    if (!attnCap) return attnCap.error();
    auto finalCap = hp.optionalFloat("final_logit_softcapping", kDefaultFinalSoftCap);
    if (!finalCap) return finalCap.error();
    if (*attnCap < 0.0f || *finalCap < 0.0f)
        return Error{file.path() + ": gemma2 soft-capping values must be >= 0 (0 = off)"};
    cfg.attnSoftCap = *attnCap;
    cfg.finalSoftCap = *finalCap;
    if (cfg.attnScale == 0.0f && cfg.nLayer == kLayers27B)
        cfg.attnScale = 1.0f / std::sqrt(static_cast<float>(cfg.nEmbd / cfg.nHead));
    if (auto r = validateConfig(cfg); !r) return r.error();
    return cfg;
}

Result<ArchConfig> readGemma3Config(const gguf::GgufFile& file) {
    ArchConfig cfg;
    HParams hp(file, "gemma3");
    if (auto r = hp.readCommon(cfg); !r) return r.error();
    cfg.ropeMode = cpu::RopeMode::Neox;
    if (cfg.nExpert != 0) return Error{file.path() + ": gemma3 has no mixture-of-experts variant"};
    auto window = hp.optionalUInt("attention.sliding_window", kDefaultSlidingWindow);
    if (!window) return window.error();
    cfg.slidingWindow = *window;
    auto pattern = hp.optionalUInt("attention.sliding_window_pattern", kGemma3SwaPattern);
    if (!pattern) return pattern.error();
    if (*pattern < 1 || *pattern > cfg.nLayer + 1)
        return Error{file.path() + ": " + hp.key("attention.sliding_window_pattern") + " = " + std::to_string(*pattern) +
                     " must be between 1 and block_count + 1"};
    cfg.swaPattern = static_cast<int>(*pattern);
    auto baseSwa = hp.optionalFloat("rope.freq_base_swa", kGemma3FreqBaseSwa);
    if (!baseSwa) return baseSwa.error();
    if (!(*baseSwa > 0.0f)) return Error{file.path() + ": " + hp.key("rope.freq_base_swa") + " must be > 0"};
    cfg.ropeFreqBaseSwa = *baseSwa;
    if (cfg.attnScale == 0.0f && cfg.nLayer == kGemma3Layers27B)
        cfg.attnScale = 1.0f / std::sqrt(static_cast<float>(cfg.nEmbd / cfg.nHead));
    if (auto r = validateConfig(cfg); !r) return r.error();
    return cfg;
}

// Step 2: tensors: the llama-family set (GeGLU uses the same gate/up/down names) plus two
// post-norms per layer. Output is tied to token_embd unless the file has output.weight.
Result<std::unique_ptr<ArchWeights>> bindWeights(const ArchConfig& cfg, TensorBinder& b) {
    auto w = std::make_unique<Gemma2Weights>();
    w->post.resize(static_cast<size_t>(cfg.nLayer));
    for (int64_t il = 0; il < cfg.nLayer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        b.vector(w->post[static_cast<size_t>(il)].attnPost, p + "post_attention_norm.weight", cfg.nEmbd);
        b.vector(w->post[static_cast<size_t>(il)].ffnPost, p + "post_ffw_norm.weight", cfg.nEmbd);
    }
    DecoderTensorRules rules{Need::Optional};
    rules.qkNorm = cfg.arch == "gemma3";
    auto base = bindDecoderWeights(cfg, b, rules);  // reports every error
    if (!base) return base.error();
    w->decoder = std::move(*base);
    return std::unique_ptr<ArchWeights>(std::move(w));
}

// Step 3: the forward pass.
void forward(const ArchWeights& weights, ArchScratch& scratch, const ForwardContext& ctx, const ForwardBatch& b) {
    const auto& g = static_cast<const Gemma2Weights&>(weights);
    const DecoderWeights& w = g.base();
    auto& s = static_cast<DecoderScratch&>(scratch);
    const ArchConfig& c = ctx.cfg;
    const int64_t n = b.nTok, E = c.nEmbd, F = c.nFf;

    if (b.hidden) {  // partial offload: the GPU ran the blocks before firstLayer
        loadHidden(ctx, b, s.inpL.data());
    } else {
        embedTokens(ctx, w.tokEmbd, b, s.io, s.inpL.data());
        ctx.be.scale(s.inpL.data(), std::sqrt(static_cast<float>(E)), n * E);  // ggml_scale(inpL, sqrtf(n_embd))
        dump(ctx, "inp_scaled", -1, s.inpL.data(), n, E);
    }
    // gemma3: the sliding layers rotate with their own base and no scaling. The table in
    // s.ropeTable is rebuilt when the layer kind changes (twice per six layers).
    ArchConfig swaRope = c;
    swaRope.ropeFreqBase = c.ropeFreqBaseSwa;
    swaRope.ropeScaling = RopeScaling::None;
    swaRope.ropeFreqScale = 1.0f;
    int tableKind = -1;  // 0: global, 1: sliding

    int64_t r0 = 0;  // first row still needed (the last layer finishes only the output rows)
    const LayerRange range = layerRange(c, b);
    for (int il = range.first; il < range.end; ++il) {
        const DecoderLayerWeights& L = w.layers[static_cast<size_t>(il)];
        const Gemma2PostNorms& P = g.post[static_cast<size_t>(il)];
        const int kind = c.ropeFreqBaseSwa > 0.0f && c.windowOf(il) > 0 ? 1 : 0;
        if (kind != tableKind) {
            ropeTables(kind ? swaRope : c, w.ropeFreqs, b, s.io.ropeHost.data());
            uploadRope(ctx, s.io, s.ropeTable.data(), n, c.nRot);
            tableKind = kind;
        }
        if (il == c.nLayer - 1) r0 = lastLayerRowBegin(b);
        attentionBlock(ctx, L, s, il, b, r0);  // window and soft-cap from cfg (selfAttention)
        if (r0 >= n) break;

        const int64_t rows = n - r0, off = r0 * E;
        float* attnOut = s.attnOut.data() + off;
        ctx.be.rmsNorm(attnOut, vecOf(ctx, P.attnPost), attnOut, rows, E, c.rmsEps);
        dump(ctx, "attn_post_norm", il, attnOut, rows, E);
        float* saOut = s.ffnInp.data() + off;
        ctx.be.add(attnOut, s.inpL.data() + off, saOut, rows * E);
        dump(ctx, "sa_out", il, saOut, rows, E);

        float* x = s.cur.data() + off;
        ctx.be.rmsNorm(saOut, vecOf(ctx, L.ffnNorm), x, rows, E, c.rmsEps);
        dump(ctx, "ffn_norm", il, x, rows, E);
        project(ctx, L.ffnUp, nullptr, x, rows, s.ffnUp.data());
        project(ctx, L.ffnGate, nullptr, x, rows, s.ffnGate.data());
        ctx.be.geglu(s.ffnGate.data(), s.ffnUp.data(), rows * F);
        dump(ctx, "ffn_gate_par", il, s.ffnGate.data(), rows, F);
        float* ffnOut = s.ffnOut.data() + off;
        project(ctx, L.ffnDown, nullptr, s.ffnGate.data(), rows, ffnOut);
        dump(ctx, "ffn_out", il, ffnOut, rows, E);
        ctx.be.rmsNorm(ffnOut, vecOf(ctx, P.ffnPost), ffnOut, rows, E, c.rmsEps);
        dump(ctx, "ffn_post_norm", il, ffnOut, rows, E);
        ctx.be.add(ffnOut, saOut, s.inpL.data() + off, rows * E);
        dump(ctx, "l_out", il, s.inpL.data() + off, rows, E);
    }
    if (handOver(ctx, b, s.inpL.data()) || !b.logits || r0 >= n) return;
    float* logits = logitsRows(ctx, s.io, b);
    outputHead(ctx, w, s, r0, n, logits);
    if (c.finalSoftCap > 0.0f) {
        ctx.be.softCap(logits, (n - r0) * c.nVocab, c.finalSoftCap);
        dump(ctx, "result_output_capped", -1, logits, n - r0, c.nVocab);
    }
    finishLogits(ctx, s.io, b, n - r0);
}

}  // namespace

const Architecture& gemma2Architecture() {
    static const Architecture kArch{"gemma2", readConfig, bindWeights, createDecoderScratch, forward, true};
    return kArch;
}

const Architecture& gemma3Architecture() {
    static const Architecture kArch{"gemma3", readGemma3Config, bindWeights, createDecoderScratch, forward, true};
    return kArch;
}

}  // namespace verdict::arch
