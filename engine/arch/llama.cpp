// Architecture "llama": Llama 1/2/3, Mistral (GQA), Mixtral (MoE), and files converted from
// llama2.c. Reference: llama.cpp's llm_build_llama at commit c392e509 (the fixtures' generator).
//
//   x = token_embd[tokens]
//   per layer:  x += attn_output(attention(rope_norm(Q n1(x)), rope_norm(K n1(x)), V n1(x)))
//               x += ffn(n2(x))      ffn = SwiGLU, or top-k softmax-gated SwiGLU experts
//   logits = output(rmsnorm(x) * output_norm)        output = token_embd when output.weight is absent
#include "arch/architecture.h"
#include "arch/decoder.h"
#include "arch/hparams.h"
#include "backend/cpu/ops_norm.h"

namespace verdict::arch {
namespace {

// Step 1: hyper-parameters.
Result<ArchConfig> readConfig(const gguf::GgufFile& file) {
    ArchConfig cfg;
    HParams hp(file, "llama");
    if (auto r = hp.readCommon(cfg); !r) return r.error();
    cfg.ropeMode = cpu::RopeMode::Norm;  // adjacent pairs (LLAMA_ROPE_TYPE_NORM)
    if (auto r = validateConfig(cfg); !r) return r.error();
    return cfg;
}

// Step 2: tensors. Q/K/V/O biases are optional (some fine-tunes add them).
Result<std::unique_ptr<ArchWeights>> bindWeights(const ArchConfig& cfg, TensorBinder& b) {
    return bindDecoderWeights(cfg, b, DecoderTensorRules{Need::Optional});
}

// Step 3: forward pass.
void forward(const ArchWeights& weights, ArchScratch& scratch, const ForwardContext& ctx, const ForwardBatch& b) {
    const auto& w = static_cast<const DecoderWeights&>(weights);
    auto& s = static_cast<DecoderScratch&>(scratch);
    const ArchConfig& c = ctx.cfg;
    const int64_t n = b.nTok, E = c.nEmbd;

    embedTokens(w.tokEmbd, b.tokens, n, s.inpL.data());
    dump(ctx, "inp_embd", -1, s.inpL.data(), n, E);
    ropeTables(c, w.ropeFreqs, b, s.ropeTable.data());

    int64_t r0 = 0;  // first row still needed (the last layer finishes only the output rows)
    for (int il = 0; il < static_cast<int>(c.nLayer); ++il) {
        const DecoderLayerWeights& L = w.layers[static_cast<size_t>(il)];
        if (il == c.nLayer - 1) r0 = lastLayerRowBegin(b);
        attentionBlock(ctx, L, s, il, b, r0);
        if (r0 >= n) break;  // nothing left to compute: this batch only fills the cache

        const int64_t rows = n - r0, off = r0 * E;
        float* ffnInp = s.ffnInp.data() + off;
        addRows(s.attnOut.data() + off, s.inpL.data() + off, ffnInp, rows * E);
        dump(ctx, "ffn_inp", il, ffnInp, rows, E);
        cpu::rmsNormRows(ffnInp, L.ffnNorm.data, s.cur.data() + off, rows, E, c.rmsEps);
        dump(ctx, "ffn_norm", il, s.cur.data() + off, rows, E);
        if (c.nExpert > 0)
            moeSwiGlu(ctx, L, s, s.cur.data() + off, rows, s.ffnOut.data() + off, il);
        else
            denseSwiGlu(ctx, L, s, s.cur.data() + off, rows, s.ffnOut.data() + off, il);
        dump(ctx, "ffn_out", il, s.ffnOut.data() + off, rows, E);
        addRows(s.ffnOut.data() + off, ffnInp, s.inpL.data() + off, rows * E);
        dump(ctx, "l_out", il, s.inpL.data() + off, rows, E);
    }
    if (b.logits) outputHead(ctx, w, s, r0, n, b.logits);
}

}  // namespace

const Architecture& llamaArchitecture() {
    static const Architecture kArch{"llama", readConfig, bindWeights, createDecoderScratch, forward, true};
    return kArch;
}

}  // namespace verdict::arch
