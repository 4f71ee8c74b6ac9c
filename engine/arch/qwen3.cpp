// Architectures "qwen3" (Qwen3 dense) and "qwen3moe" (Qwen3 mixture of experts, e.g. 30B-A3B).
// Reference: llama.cpp's llm_build_qwen3 / llm_build_qwen3moe (v0.5.0, the third fixture batch's
// generator). The llama block with two differences: each head's query and key are RMS-normalised
// (gains attn_q_norm / attn_k_norm, head_dim_k wide) before RoPE, and RoPE rotates the two halves
// of each head (NEOX). No Q/K/V biases. Head sizes come from key_length / value_length (Qwen3:
// n_head * head_dim need not equal n_embd). qwen3moe's FFN is the Mixtral-style MoE of
// decoder.h (softmax over the router, top-k, weights renormalised to sum 1; expert width
// expert_feed_forward_length), as llama.cpp always does for this architecture.
//
//   x = token_embd[tokens]
//   per layer:  q, k = rmsnorm_head(Q n1(x)) * q_norm, rmsnorm_head(K n1(x)) * k_norm
//               x += attn_output(attention(rope_neox(q), rope_neox(k), V n1(x)))
//               x += qwen3: down(silu(gate n2(x)) * up n2(x));  qwen3moe: experts(n2(x))
//   logits = output(rmsnorm(x) * output_norm)        output = token_embd when output.weight is absent
#include "arch/architecture.h"
#include "arch/decoder.h"
#include "arch/hparams.h"

namespace verdict::arch {
namespace {

template <bool Moe>
Result<ArchConfig> readConfig(const gguf::GgufFile& file) {
    ArchConfig cfg;
    HParams hp(file, Moe ? "qwen3moe" : "qwen3");
    if (auto r = hp.readCommon(cfg); !r) return r.error();
    cfg.ropeMode = cpu::RopeMode::Neox;  // LLAMA_ROPE_TYPE_NEOX
    if (Moe && (cfg.nExpert == 0 || cfg.nExpertUsed == 0))
        return Error{file.path() + ": qwen3moe needs expert_count and expert_used_count"};
    if (!Moe && cfg.nExpert != 0)
        return Error{file.path() + ": qwen3 with experts is architecture qwen3moe (general.architecture)"};
    if (auto r = validateConfig(cfg); !r) return r.error();
    return cfg;
}

Result<std::unique_ptr<ArchWeights>> bindWeights(const ArchConfig& cfg, TensorBinder& b) {
    DecoderTensorRules rules;
    rules.qkNorm = true;
    return bindDecoderWeights(cfg, b, rules);
}

}  // namespace

const Architecture& qwen3Architecture() {
    static const Architecture kArch{"qwen3",          readConfig<false>, bindWeights, createDecoderScratch, decoderForward, true};
    return kArch;
}

const Architecture& qwen3moeArchitecture() {
    static const Architecture kArch{"qwen3moe",       readConfig<true>, bindWeights, createDecoderScratch, decoderForward, true};
    return kArch;
}

}  // namespace verdict::arch
