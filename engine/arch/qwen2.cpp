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

// Step 3: the forward pass is the shared pre-norm block, decoderForward (decoder.h).

}  // namespace

const Architecture& qwen2Architecture() {
    static const Architecture kArch{"qwen2",          readConfig, bindWeights, createDecoderScratch, decoderForward, true};
    return kArch;
}

}  // namespace verdict::arch
