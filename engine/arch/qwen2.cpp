// Architecture "qwen2": Qwen2 / Qwen2.5 dense models. Same block as llama with two differences:
// Q/K/V projections carry biases, and RoPE rotates the two halves of each head (NEOX layout).
// Reference: llama.cpp's llm_build_qwen2 at commit c392e509.
//
//   x = token_embd[tokens]
//   per layer:  x += attn_output(attention(rope_neox(Q n1(x) + bq), rope_neox(K n1(x) + bk), V n1(x) + bv))
//               x += down(silu(gate n2(x)) * up n2(x))
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
    HParams hp(file, "qwen2");
    if (auto r = hp.readCommon(cfg); !r) return r.error();
    cfg.ropeMode = cpu::RopeMode::Neox;  // LLAMA_ROPE_TYPE_NEOX
    if (cfg.nExpert != 0)
        return Error{file.path() + ": qwen2 with experts is architecture qwen2moe, which is not supported yet"};
    if (auto r = validateConfig(cfg); !r) return r.error();
    return cfg;
}

// Step 2: tensors. The Q/K/V biases are required.
Result<std::unique_ptr<ArchWeights>> bindWeights(const ArchConfig& cfg, TensorBinder& b) {
    return bindDecoderWeights(cfg, b, DecoderTensorRules{Need::Required});
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

    int64_t r0 = 0;
    for (int il = 0; il < static_cast<int>(c.nLayer); ++il) {
        const DecoderLayerWeights& L = w.layers[static_cast<size_t>(il)];
        if (il == c.nLayer - 1) r0 = lastLayerRowBegin(b);
        attentionBlock(ctx, L, s, il, b, r0);  // biases are applied by the projections
        if (r0 >= n) break;

        const int64_t rows = n - r0, off = r0 * E;
        float* ffnInp = s.ffnInp.data() + off;
        addRows(s.attnOut.data() + off, s.inpL.data() + off, ffnInp, rows * E);
        dump(ctx, "ffn_inp", il, ffnInp, rows, E);
        cpu::rmsNormRows(ffnInp, L.ffnNorm.data, s.cur.data() + off, rows, E, c.rmsEps);
        dump(ctx, "ffn_norm", il, s.cur.data() + off, rows, E);
        denseSwiGlu(ctx, L, s, s.cur.data() + off, rows, s.ffnOut.data() + off, il);
        dump(ctx, "ffn_out", il, s.ffnOut.data() + off, rows, E);
        addRows(s.ffnOut.data() + off, ffnInp, s.inpL.data() + off, rows * E);
        dump(ctx, "l_out", il, s.inpL.data() + off, rows, E);
    }
    if (b.logits) outputHead(ctx, w, s, r0, n, b.logits);
}

}  // namespace

const Architecture& qwen2Architecture() {
    static const Architecture kArch{"qwen2", readConfig, bindWeights, createDecoderScratch, forward, true};
    return kArch;
}

}  // namespace verdict::arch
