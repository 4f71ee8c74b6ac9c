#include "verdict/engine/model_card.h"
#include "util/quote.h"

#include "gguf/gguf_file.h"
#include "template/chat_template.h"

#include <algorithm>
#include <filesystem>

namespace verdict {
namespace {

// Per-architecture key: "<arch>.<suffix>".
std::optional<uint64_t> archUInt(const gguf::GgufFile& f, const std::string& arch, const std::string& suffix) {
    const gguf::Value* v = f.find(arch + "." + suffix);
    if (!v) return std::nullopt;
    if (auto u = v->asUInt()) return u;
    // Some files store per-layer arrays (e.g. head_count for OpenELM); use the largest entry.
    if (auto* a = v->asArray(); a && !a->empty()) {
        uint64_t best = 0;
        for (const auto& x : *a) best = std::max<uint64_t>(best, x.asUInt().value_or(0));
        return best;
    }
    return std::nullopt;
}

MemoryEstimate estimateMemory(const ModelCard& c, uint64_t ctx) {
    MemoryEstimate m;
    m.ctx = ctx;
    m.weightsBytes = 0;
    for (const auto& [type, bytes] : c.tensorTypeBytes) m.weightsBytes += bytes;
    // KV cache in f16 (2 bytes per element). MLA (deepseek2) caches the compressed latent plus the
    // shared RoPE key per token instead of full per-head K and V.
    uint64_t perLayer = c.kvLoraRank > 0 ? uint64_t(c.kvLoraRank) + c.ropeDims
                                         : uint64_t(c.nHeadKv) * (c.headDimK + c.headDimV);
    m.kvBytesPerToken = perLayer * c.nLayer * 2;
    m.kvBytesAtCtx = m.kvBytesPerToken * ctx;
    m.computeBytes = computeBytesEstimate(c, ctx);
    return m;
}

}  // namespace

uint64_t computeBytesEstimate(const ModelCard& c, uint64_t ctx) {
    // Scratch for one 512-token batch, f32: the logits, the widest activations (residual, norm,
    // q/k/v, FFN gate/up) and one layer's attention scores over the context.
    const uint64_t ubatch = std::min<uint64_t>(512, std::max<uint64_t>(ctx, 1));
    const uint64_t ff = std::max<uint64_t>(c.nFf, c.nEmbd);
    const uint64_t logits = uint64_t(c.nVocab) * ubatch * 4;
    const uint64_t acts = (uint64_t(c.nEmbd) * 4 + ff * 3) * ubatch * 4;
    const uint64_t scores = uint64_t(c.nHead) * ubatch * ctx * 4;
    return logits + acts + scores;
}

Result<ModelCard> describeModel(const gguf::GgufFile& f, std::optional<uint64_t> ctx) {
    ModelCard c;
    c.path = f.path();
    c.parts = f.partPaths();
    c.ggufVersion = f.version();
    c.fileBytes = f.fileBytes();

    auto arch = f.getString("general.architecture");
    if (!arch) return Error{f.path() + ": metadata key 'general.architecture' is missing"};
    c.arch = *arch;
    c.name = f.getString("general.name").value_or(std::filesystem::path(f.path()).stem().string());
    if (auto ft = f.getUInt("general.file_type")) c.fileType = static_cast<uint32_t>(*ft);

    auto need = [&](const std::string& suffix) -> Result<uint64_t> {
        auto v = archUInt(f, c.arch, suffix);
        if (!v) return Error{f.path() + ": metadata key " + util::quoteFileText(c.arch + "." + suffix) + " is missing"};
        return *v;
    };
    auto nLayer = need("block_count");
    if (!nLayer) return nLayer.error();
    auto nEmbd = need("embedding_length");
    if (!nEmbd) return nEmbd.error();
    c.nLayer = static_cast<uint32_t>(*nLayer);
    c.nEmbd = static_cast<uint32_t>(*nEmbd);
    c.nHead = static_cast<uint32_t>(archUInt(f, c.arch, "attention.head_count").value_or(0));
    c.nHeadKv = static_cast<uint32_t>(archUInt(f, c.arch, "attention.head_count_kv").value_or(c.nHead));
    if (c.nHead == 0) return Error{f.path() + ": metadata key " + util::quoteFileText(c.arch + ".attention.head_count") + " is missing or 0"};
    if (c.nHeadKv == 0 || c.nHead % c.nHeadKv != 0)
        return Error{f.path() + ": " + c.arch + ".attention.head_count_kv = " + std::to_string(c.nHeadKv) +
                     " does not divide head_count = " + std::to_string(c.nHead)};
    const uint32_t defaultHead = c.nEmbd / c.nHead;
    c.headDimK = static_cast<uint32_t>(archUInt(f, c.arch, "attention.key_length").value_or(defaultHead));
    c.headDimV = static_cast<uint32_t>(archUInt(f, c.arch, "attention.value_length").value_or(defaultHead));
    c.nFf = static_cast<uint32_t>(archUInt(f, c.arch, "feed_forward_length").value_or(0));
    c.nCtxTrain = archUInt(f, c.arch, "context_length").value_or(0);
    c.nExpert = static_cast<uint32_t>(archUInt(f, c.arch, "expert_count").value_or(0));
    c.nExpertUsed = static_cast<uint32_t>(archUInt(f, c.arch, "expert_used_count").value_or(0));
    c.nExpertShared = static_cast<uint32_t>(archUInt(f, c.arch, "expert_shared_count").value_or(0));
    if (c.nExpertUsed > c.nExpert)
        return Error{f.path() + ": " + c.arch + ".expert_used_count = " + std::to_string(c.nExpertUsed) +
                     " exceeds expert_count = " + std::to_string(c.nExpert)};
    c.kvLoraRank = static_cast<uint32_t>(archUInt(f, c.arch, "attention.kv_lora_rank").value_or(0));
    if (c.kvLoraRank > 0) {
        const bool split = f.tensor("blk.0.attn_k_b.weight") && f.tensor("blk.0.attn_v_b.weight");
        c.mlaLayout = split ? "split" : f.tensor("blk.0.attn_kv_b.weight") ? "merged" : "";
        c.mlaHeadDimK = static_cast<uint32_t>(archUInt(f, c.arch, "attention.key_length_mla").value_or(c.headDimK));
        c.mlaHeadDimV = static_cast<uint32_t>(archUInt(f, c.arch, "attention.value_length_mla").value_or(c.headDimV));
    }
    c.ropeDims = static_cast<uint32_t>(archUInt(f, c.arch, "rope.dimension_count").value_or(c.headDimK));
    c.ropeFreqBase = f.getFloat(c.arch + ".rope.freq_base").value_or(10000.0);
    c.ropeScalingType = f.getString(c.arch + ".rope.scaling.type").value_or("");
    c.ropeScalingFactor = f.getFloat(c.arch + ".rope.scaling.factor").value_or(1.0);

    c.tokenizerModel = f.getString("tokenizer.ggml.model").value_or("");
    c.tokenizerPre = f.getString("tokenizer.ggml.pre").value_or("");
    if (const auto* tokens = f.getArray("tokenizer.ggml.tokens")) c.nVocab = static_cast<uint32_t>(tokens->size());
    else if (auto v = archUInt(f, c.arch, "vocab_size")) c.nVocab = static_cast<uint32_t>(*v);
    else if (const auto* emb = f.tensor("token_embd.weight")) c.nVocab = static_cast<uint32_t>(emb->ne[1]);
    if (auto tmpl = f.getString("tokenizer.chat_template")) {
        c.hasChatTemplate = true;
        c.chatTemplateBytes = tmpl->size();
        c.chatTemplateFamily = tok::detectTemplateFamily(*tmpl);
    }

    // Parameters: every tensor element (llama.cpp counts token_embd and output separately).
    // Active parameters: routed-expert tensors (*_exps) count n_expert_used of n_expert.
    uint64_t routedElements = 0;
    uint64_t bytes = 0;
    for (const auto& t : f.tensors()) {
        c.nParams += t.nElements;
        c.tensorTypeBytes[std::string(tensor::typeName(t.type))] += t.nBytes;
        bytes += t.nBytes;
        if (t.name.find("_exps.") != std::string::npos) routedElements += t.nElements;
    }
    c.nParamsActive = c.nParams;
    if (c.nExpert > 0 && routedElements > 0)
        c.nParamsActive = c.nParams - routedElements + routedElements / c.nExpert * c.nExpertUsed;
    c.bitsPerWeight = c.nParams ? 8.0 * double(bytes) / double(c.nParams) : 0.0;

    for (const char* key : {"license", "license.name", "license.link", "author", "organization", "url", "repo_url",
                            "source.url", "source.huggingface.repository", "description", "version", "finetune",
                            "basename", "size_label", "quantized_by"}) {
        const gguf::Value* v = f.find(std::string("general.") + key);
        if (!v) continue;
        if (auto* s = v->asString()) c.provenance[key] = *s;
        else c.provenance[key] = v->toDisplayString();
    }

    c.memoryTrained = estimateMemory(c, c.nCtxTrain);
    if (ctx) c.memoryAtCtx = estimateMemory(c, *ctx);
    return c;
}

Result<ModelCard> describeModelFile(const std::string& path, std::optional<uint64_t> ctx) {
    auto f = gguf::GgufFile::open(path);
    if (!f) return f.error();
    return describeModel(**f, ctx);
}

}  // namespace verdict
