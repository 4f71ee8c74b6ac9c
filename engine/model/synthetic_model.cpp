#include "verdict/engine/synthetic_model.h"

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tensor/quantize.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

namespace verdict {
namespace {

using gguf::Value;
using tensor::TensorType;

enum class Init { Matrix, Norm, Bias };

struct Plan {
    std::string name;
    TensorType type;
    std::vector<uint64_t> ne;
    Init init;
};

// llama_ftype values (llama.h) for general.file_type, so llama.cpp labels the file correctly.
uint32_t fileTypeOf(TensorType t) {
    switch (t) {
        case TensorType::F32: return 0;
        case TensorType::F16: return 1;
        case TensorType::Q4_0: return 2;
        case TensorType::Q4_1: return 3;
        case TensorType::Q8_0: return 7;
        case TensorType::Q5_0: return 8;
        case TensorType::Q5_1: return 9;
        case TensorType::Q2_K: return 10;
        case TensorType::Q3_K: return 12;   // Q3_K_M
        case TensorType::Q4_K: return 15;   // Q4_K_M
        case TensorType::Q5_K: return 17;   // Q5_K_M
        case TensorType::Q6_K: return 18;
        case TensorType::IQ4_NL: return 25;
        case TensorType::IQ4_XS: return 30;
        case TensorType::BF16: return 32;
        case TensorType::MXFP4: return 38;  // MXFP4_MOE, what llama-quantize writes for MXFP4
        default: return 0;
    }
}

constexpr const char* kWritableTypes =
    "f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs, mxfp4, q4_k_m, q5_k_m";

// What --type asks for: one type for every weight matrix, or one of llama.cpp's K-quant mixes.
struct WeightTypes {
    TensorType base;        // the matrices' type (a mix's base type)
    uint32_t fileType;      // llama_ftype for general.file_type
    bool kQuantMix = false; // q4_k_m / q5_k_m: some tensors get more bits (applyKQuantMix)
};

std::optional<WeightTypes> weightTypesOf(std::string name) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name == "q4_k_m") return WeightTypes{TensorType::Q4_K, 15, true};  // LLAMA_FTYPE_MOSTLY_Q4_K_M
    if (name == "q5_k_m") return WeightTypes{TensorType::Q5_K, 17, true};  // LLAMA_FTYPE_MOSTLY_Q5_K_M
    const auto t = tensor::typeFromName(name);
    if (!t || !tensor::canQuantize(*t)) return std::nullopt;
    return WeightTypes{*t, fileTypeOf(*t)};
}

// llama-quant.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool useMoreBits(uint32_t i, uint32_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// llama.cpp's Q4_K_M / Q5_K_M choices for a dense model (llama-quant.cpp, llama_tensor_get_type,
// without an importance matrix): Q6_K for the output projection (token_embd when it is tied) and for
// attn_v and ffn_down on use_more_bits layers; on the shape llama.cpp calls 70B (80 layers, with GQA
// for llama) attn_v gets Q5_K where it would get Q4_K. Every other matrix keeps the base type.
void applyKQuantMix(const SyntheticModelSpec& s, std::vector<Plan>& plans) {
    const bool is70B = s.nLayer == 80 && (s.arch != "llama" || s.nHead != s.nHeadKv);
    for (auto& plan : plans) {
        if (plan.type == TensorType::F32) continue;
        unsigned layer = 0;
        const bool inBlock = std::sscanf(plan.name.c_str(), "blk.%u.", &layer) == 1;
        if (plan.name == "output.weight" || (s.tiedOutput && plan.name == "token_embd.weight")) {
            plan.type = TensorType::Q6_K;
        } else if (inBlock && plan.name.ends_with(".attn_v.weight")) {
            if (useMoreBits(layer, s.nLayer)) plan.type = TensorType::Q6_K;
            else if (is70B && plan.type == TensorType::Q4_K) plan.type = TensorType::Q5_K;
        } else if (inBlock && plan.name.ends_with(".ffn_down.weight") && useMoreBits(layer, s.nLayer)) {
            plan.type = TensorType::Q6_K;
        }
    }
}

// Every row must be whole blocks of its tensor's type; names the first tensor that is not.
Result<void> checkRowBlocks(const SyntheticModelSpec& s, const std::vector<Plan>& plans) {
    for (const auto& plan : plans) {
        const uint32_t block = tensor::traits(plan.type).blockElems;
        if (plan.ne[0] % block != 0)
            return Error{"make-model: tensor " + plan.name + " has rows of " + std::to_string(plan.ne[0]) +
                         " elements, not a multiple of " + std::to_string(block) + " as " +
                         std::string(tensor::typeName(plan.type)) + " needs (--n-embd, --n-ff and the other widths "
                         "must be multiples of " + std::to_string(block) + " for --type " + s.type + ")"};
    }
    return okResult();
}

// splitmix64: a seed per tensor name, so a tensor's values do not depend on the others.
uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t seedFor(uint64_t seed, const std::string& name) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the name
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
    return mix(seed ^ mix(h));
}

// Standard normal samples: xorshift128+ uniforms through Box-Muller (fast enough for 10^9 values).
class Normal {
public:
    explicit Normal(uint64_t seed) : m_a(mix(seed) | 1), m_b(mix(seed + 1) | 2) {}
    float next() {
        if (m_have) { m_have = false; return m_spare; }
        double u1 = uniform(), u2 = uniform();
        double r = std::sqrt(-2.0 * std::log(u1));
        m_spare = float(r * std::sin(6.283185307179586 * u2));
        m_have = true;
        return float(r * std::cos(6.283185307179586 * u2));
    }

private:
    double uniform() {  // (0, 1]
        uint64_t s1 = m_a;
        const uint64_t s0 = m_b;
        m_a = s0;
        s1 ^= s1 << 23;
        m_b = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
        return double(((m_b + s0) >> 11) + 1) * (1.0 / 9007199254740992.0);
    }
    uint64_t m_a, m_b;
    float m_spare = 0;
    bool m_have = false;
};


// A small SentencePiece-style vocabulary of the project's own: <unk>, <s>, </s>, the 256 byte
// tokens, then letters, digits, punctuation and letter bigrams/trigrams with and without the
// word-start marker U+2581, scored so shorter pieces merge first.
void addGeneratedVocab(gguf::GgufWriter& w, uint32_t nVocab) {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};  // UNKNOWN, CONTROL, CONTROL (llama_token_type)
    for (int b = 0; b < 256; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        tokens.push_back(buf);
        types.push_back(6);  // BYTE
    }
    const std::string marker = "\xE2\x96\x81";  // U+2581
    std::vector<std::string> pieces = {marker};
    const std::string alphabet = "etaoinshrdlcumwfgypbvkjxqz";
    for (char c : alphabet) pieces.push_back(std::string(1, c));
    for (char c : alphabet) pieces.push_back(marker + c);
    for (char c : std::string("ETAOINSHRDLCUMWFGYPBVKJXQZ0123456789.,!?'\"-:;()")) pieces.push_back(std::string(1, c));
    for (char c : std::string("ETAOINSHRDLCUMWFGYPBVKJXQZ0123456789")) pieces.push_back(marker + c);
    for (char a : alphabet)
        for (char b : alphabet) pieces.push_back(std::string{a, b});
    for (char a : alphabet)
        for (char b : alphabet) pieces.push_back(marker + a + b);
    for (char a : alphabet)
        for (char b : alphabet)
            for (char c : alphabet) {
                pieces.push_back(std::string{a, b, c});
                pieces.push_back(marker + a + b + c);
            }
    for (size_t i = 0; tokens.size() < nVocab; ++i) {
        tokens.push_back(i < pieces.size() ? pieces[i] : "<extra_" + std::to_string(i - pieces.size()) + ">");
        types.push_back(i < pieces.size() ? 1 : 4);  // NORMAL, or USER_DEFINED filler
    }
    tokens.resize(nVocab);
    types.resize(nVocab);
    std::vector<float> scores(nVocab, 0.0f);
    for (uint32_t i = 259; i < nVocab; ++i) scores[i] = -float(i - 259);
    w.set("tokenizer.ggml.model", Value::str("llama"));
    w.set("tokenizer.ggml.tokens", Value::stringArray(tokens));
    w.set("tokenizer.ggml.scores", Value::f32Array(scores));
    w.set("tokenizer.ggml.token_type", Value::i32Array(types));
    w.set("tokenizer.ggml.bos_token_id", Value::u32(1));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(2));
    w.set("tokenizer.ggml.unknown_token_id", Value::u32(0));
    w.set("tokenizer.ggml.add_bos_token", Value::boolean(true));
    w.set("tokenizer.ggml.add_eos_token", Value::boolean(false));
}

// deepseek2 (DeepSeek-V3 style): sizes derived from the spec (see synthetic_model.h).
struct Deepseek2Shape {
    uint32_t qLora, kvLora, nope, rope, v, ffExp;
};

Deepseek2Shape deepseek2Shape(const SyntheticModelSpec& s) {
    const uint32_t d = s.nEmbd / s.nHead;
    return {s.qLoraRank ? s.qLoraRank : s.nEmbd / 2, s.kvLoraRank ? s.kvLoraRank : s.nEmbd / 4, d, d / 2, d,
            s.nFfExp ? s.nFfExp : s.nFf / 4};
}

// Checks the deepseek2 sizes, writes its metadata (over the llama-style keys already set) and
// plans its blocks, in the tensor order of llama.cpp's deepseek2 loader.
Result<void> planDeepseek2(const SyntheticModelSpec& s, TensorType t, gguf::GgufWriter& w, std::vector<Plan>& plans) {
    const Deepseek2Shape d = deepseek2Shape(s);
    const uint32_t block = tensor::traits(t).blockElems;
    if (s.nExpert == 0) return Error{"make-model: deepseek2 needs --n-expert (and --n-expert-used)"};
    if (d.rope == 0 || d.rope % 2 != 0)
        return Error{"make-model: deepseek2 head size n_embd / n_head = " + std::to_string(d.nope) + " must be a positive multiple of 4"};
    if (s.nLayerDenseLead > s.nLayer) return Error{"make-model: --n-dense-lead exceeds --n-layer"};
    for (auto [what, n] : {std::pair<const char*, uint32_t>{"--q-lora-rank", d.qLora}, {"--kv-lora-rank", d.kvLora},
                           {"--n-ff-exp", d.ffExp}, {"n_head * head size", s.nHead * d.v}})
        if (n == 0 || n % block)
            return Error{"make-model: " + std::string(what) + " = " + std::to_string(n) + " must be a positive multiple of "
                         + std::to_string(block) + " for type " + s.type};
    const std::string a = "deepseek2.";
    w.set(a + "attention.head_count_kv", Value::u32(s.nHead));
    w.set(a + "leading_dense_block_count", Value::u32(s.nLayerDenseLead));
    w.set(a + "attention.q_lora_rank", Value::u32(d.qLora));
    w.set(a + "attention.kv_lora_rank", Value::u32(d.kvLora));
    w.set(a + "attention.key_length", Value::u32(d.nope + d.rope));
    w.set(a + "attention.value_length", Value::u32(d.v));
    w.set(a + "rope.dimension_count", Value::u32(d.rope));
    w.set(a + "expert_feed_forward_length", Value::u32(d.ffExp));
    w.set(a + "expert_shared_count", Value::u32(s.nExpertShared));
    w.set(a + "expert_weights_scale", Value::f32(2.5f));
    w.set(a + "expert_weights_norm", Value::boolean(true));
    w.set(a + "expert_gating_func", Value::u32(2));  // sigmoid
    w.set(a + "rope.scaling.yarn_log_multiplier", Value::f32(0.1f));  // llama.cpp requires the key

    const TensorType f32 = TensorType::F32;
    const uint32_t E = s.nEmbd, H = s.nHead, X = s.nExpert, S = d.ffExp * s.nExpertShared;
    for (uint32_t i = 0; i < s.nLayer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        plans.push_back({p + "attn_norm.weight", f32, {E}, Init::Norm});
        plans.push_back({p + "attn_q_a.weight", t, {E, d.qLora}, Init::Matrix});
        plans.push_back({p + "attn_q_a_norm.weight", f32, {d.qLora}, Init::Norm});
        plans.push_back({p + "attn_q_b.weight", t, {d.qLora, H * (d.nope + d.rope)}, Init::Matrix});
        plans.push_back({p + "attn_kv_a_mqa.weight", t, {E, d.kvLora + d.rope}, Init::Matrix});
        plans.push_back({p + "attn_kv_a_norm.weight", f32, {d.kvLora}, Init::Norm});
        plans.push_back({p + "attn_kv_b.weight", t, {d.kvLora, H * (d.nope + d.v)}, Init::Matrix});
        plans.push_back({p + "attn_output.weight", t, {H * d.v, E}, Init::Matrix});
        plans.push_back({p + "ffn_norm.weight", f32, {E}, Init::Norm});
        if (i < s.nLayerDenseLead) {
            plans.push_back({p + "ffn_gate.weight", t, {E, s.nFf}, Init::Matrix});
            plans.push_back({p + "ffn_down.weight", t, {s.nFf, E}, Init::Matrix});
            plans.push_back({p + "ffn_up.weight", t, {E, s.nFf}, Init::Matrix});
            continue;
        }
        plans.push_back({p + "ffn_gate_inp.weight", f32, {E, X}, Init::Matrix});
        plans.push_back({p + "exp_probs_b.bias", f32, {X}, Init::Bias});
        plans.push_back({p + "ffn_gate_exps.weight", t, {E, d.ffExp, X}, Init::Matrix});
        plans.push_back({p + "ffn_down_exps.weight", t, {d.ffExp, E, X}, Init::Matrix});
        plans.push_back({p + "ffn_up_exps.weight", t, {E, d.ffExp, X}, Init::Matrix});
        if (s.nExpertShared > 0) {
            plans.push_back({p + "ffn_gate_shexp.weight", t, {E, S}, Init::Matrix});
            plans.push_back({p + "ffn_down_shexp.weight", t, {S, E}, Init::Matrix});
            plans.push_back({p + "ffn_up_shexp.weight", t, {E, S}, Init::Matrix});
        }
    }
    return okResult();
}

}  // namespace

Result<void> writeSyntheticModel(const SyntheticModelSpec& s, const std::string& path,
                                 const std::function<void(size_t, size_t)>& progress) {
    if (s.arch != "llama" && s.arch != "qwen2" && s.arch != "deepseek2")
        return Error{"make-model: --arch '" + s.arch + "' is not supported (supported: llama, qwen2, deepseek2)"};
    const auto types = weightTypesOf(s.type);
    if (!types)
        return Error{"make-model: --type '" + s.type + "' cannot be written (supported: " + kWritableTypes + ")"};
    if (types->kQuantMix && (s.arch == "deepseek2" || s.nExpert > 0))
        return Error{"make-model: --type " + s.type + " reproduces llama.cpp's mix for dense models only (use a single "
                     "type such as q4_k with --n-expert or deepseek2)"};
    if (s.nEmbd == 0 || s.nLayer == 0 || s.nHead == 0 || s.nHeadKv == 0 || s.nFf == 0 || s.nVocab == 0 || s.nCtx == 0)
        return Error{"make-model: every size must be positive"};
    if (s.nEmbd % s.nHead != 0) return Error{"make-model: --n-head " + std::to_string(s.nHead) + " does not divide --n-embd " + std::to_string(s.nEmbd)};
    if (s.nHead % s.nHeadKv != 0) return Error{"make-model: --n-head-kv " + std::to_string(s.nHeadKv) + " does not divide --n-head " + std::to_string(s.nHead)};
    if (s.nExpertUsed > s.nExpert) return Error{"make-model: --n-expert-used exceeds --n-expert"};
    if (s.nExpert > 0 && s.nExpertUsed == 0) return Error{"make-model: --n-expert-used must be at least 1 with experts"};
    if (s.vocabFrom.empty() && s.nVocab < 259) return Error{"make-model: --n-vocab must be at least 259 (3 special + 256 byte tokens)"};

    const uint32_t headDim = s.nEmbd / s.nHead;
    const uint32_t kvDim = headDim * s.nHeadKv;
    gguf::GgufWriter w;
    const std::string a = s.arch;
    w.set("general.architecture", Value::str(a));
    w.set("general.name", Value::str(s.name.empty() ? "synthetic-" + a : s.name));
    w.set("general.file_type", Value::u32(types->fileType));
    if (tensor::traits(types->base).quantized) w.set("general.quantization_version", Value::u32(2));
    w.set(a + ".vocab_size", Value::u32(s.nVocab));
    w.set(a + ".context_length", Value::u32(s.nCtx));
    w.set(a + ".embedding_length", Value::u32(s.nEmbd));
    w.set(a + ".block_count", Value::u32(s.nLayer));
    w.set(a + ".feed_forward_length", Value::u32(s.nFf));
    w.set(a + ".attention.head_count", Value::u32(s.nHead));
    w.set(a + ".attention.head_count_kv", Value::u32(s.nHeadKv));
    w.set(a + ".rope.dimension_count", Value::u32(headDim));
    w.set(a + ".rope.freq_base", Value::f32(s.ropeFreqBase));
    w.set(a + ".attention.layer_norm_rms_epsilon", Value::f32(s.rmsEps));
    if (s.nExpert > 0) {
        w.set(a + ".expert_count", Value::u32(s.nExpert));
        w.set(a + ".expert_used_count", Value::u32(s.nExpertUsed));
    }

    std::unique_ptr<gguf::GgufFile> vocabSource;
    uint32_t nVocab = s.nVocab;
    if (!s.vocabFrom.empty()) {
        auto src = gguf::GgufFile::open(s.vocabFrom);
        if (!src) return src.error();
        vocabSource = std::move(*src);
        for (const auto& [k, v] : vocabSource->metadata())
            if (k.rfind("tokenizer.", 0) == 0) w.set(k, v);
        const auto* tokens = vocabSource->getArray("tokenizer.ggml.tokens");
        if (!tokens) return Error{s.vocabFrom + ": no tokenizer.ggml.tokens to copy"};
        nVocab = static_cast<uint32_t>(tokens->size());
        w.set(a + ".vocab_size", Value::u32(nVocab));
    } else {
        addGeneratedVocab(w, nVocab);
    }

    const TensorType t = types->base, f32 = TensorType::F32;
    std::vector<Plan> plans;
    plans.push_back({"token_embd.weight", t, {s.nEmbd, nVocab}, Init::Matrix});
    if (s.arch == "deepseek2") {
        if (auto r = planDeepseek2(s, t, w, plans); !r) return r;
    }
    for (uint32_t i = 0; s.arch != "deepseek2" && i < s.nLayer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        plans.push_back({p + "attn_norm.weight", f32, {s.nEmbd}, Init::Norm});
        plans.push_back({p + "attn_q.weight", t, {s.nEmbd, s.nEmbd}, Init::Matrix});
        plans.push_back({p + "attn_k.weight", t, {s.nEmbd, kvDim}, Init::Matrix});
        plans.push_back({p + "attn_v.weight", t, {s.nEmbd, kvDim}, Init::Matrix});
        if (s.arch == "qwen2") {
            plans.push_back({p + "attn_q.bias", f32, {s.nEmbd}, Init::Bias});
            plans.push_back({p + "attn_k.bias", f32, {kvDim}, Init::Bias});
            plans.push_back({p + "attn_v.bias", f32, {kvDim}, Init::Bias});
        }
        plans.push_back({p + "attn_output.weight", t, {s.nEmbd, s.nEmbd}, Init::Matrix});
        plans.push_back({p + "ffn_norm.weight", f32, {s.nEmbd}, Init::Norm});
        if (s.nExpert == 0) {
            plans.push_back({p + "ffn_gate.weight", t, {s.nEmbd, s.nFf}, Init::Matrix});
            plans.push_back({p + "ffn_down.weight", t, {s.nFf, s.nEmbd}, Init::Matrix});
            plans.push_back({p + "ffn_up.weight", t, {s.nEmbd, s.nFf}, Init::Matrix});
        } else {
            plans.push_back({p + "ffn_gate_inp.weight", f32, {s.nEmbd, s.nExpert}, Init::Matrix});
            plans.push_back({p + "ffn_gate_exps.weight", t, {s.nEmbd, s.nFf, s.nExpert}, Init::Matrix});
            plans.push_back({p + "ffn_down_exps.weight", t, {s.nFf, s.nEmbd, s.nExpert}, Init::Matrix});
            plans.push_back({p + "ffn_up_exps.weight", t, {s.nEmbd, s.nFf, s.nExpert}, Init::Matrix});
        }
    }
    plans.push_back({"output_norm.weight", f32, {s.nEmbd}, Init::Norm});
    if (!s.tiedOutput) plans.push_back({"output.weight", t, {s.nEmbd, nVocab}, Init::Matrix});
    if (types->kQuantMix) applyKQuantMix(s, plans);
    if (auto r = checkRowBlocks(s, plans); !r) return r;

    auto written = std::make_shared<size_t>(0);
    const size_t total = plans.size();
    for (const auto& plan : plans) {
        w.addTensor(plan.name, plan.type, plan.ne,
                    [plan, &s, written, total, &progress](std::vector<uint8_t>& out) -> Result<void> {
                        uint64_t n = 1;
                        for (auto d : plan.ne) n *= d;
                        std::vector<float> values(n);
                        Normal rng(seedFor(s.seed, plan.name));
                        for (auto& v : values) {
                            const float z = rng.next();
                            v = plan.init == Init::Norm ? 1.0f + 0.02f * z : plan.init == Init::Bias ? 0.02f * z : s.weightStd * z;
                        }
                        const int64_t rowLen = int64_t(plan.ne[0]);
                        const int64_t rows = int64_t(n) / rowLen;
                        out.resize(*tensor::rowBytes(plan.type, rowLen) * rows);
                        if (auto r = tensor::quantizeRows(plan.type, values.data(), out.data(), rows, rowLen); !r) return r;
                        if (progress) progress(++*written, total);
                        return okResult();
                    });
    }
    return w.write(path);
}

}  // namespace verdict
