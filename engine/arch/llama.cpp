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

// Step 3: the forward pass is the shared pre-norm block, decoderForward (decoder.h).

}  // namespace

const Architecture& llamaArchitecture() {
    static const Architecture kArch{"llama",          readConfig, bindWeights, createDecoderScratch, decoderForward, true};
    return kArch;
}

}  // namespace verdict::arch
