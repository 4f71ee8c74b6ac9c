#include "core/models/model_card_json.h"

#include "util/quote.h"
#include "verdict/engine/model_support.h"

#include <cstdio>
#include <sstream>

namespace verdict::core {
namespace {

nlohmann::ordered_json memoryJson(const MemoryEstimate& m) {
    return {{"ctx", m.ctx},
            {"weights_bytes", m.weightsBytes},
            {"kv_bytes_per_token", m.kvBytesPerToken},
            {"kv_bytes_at_ctx", m.kvBytesAtCtx},
            {"compute_bytes", m.computeBytes},
            {"total_bytes", m.totalBytes()}};
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

}  // namespace

std::string formatBytes(uint64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) { v /= 1024.0; ++u; }
    return u == 0 ? std::to_string(bytes) + " B" : fixed(v, v < 10 ? 2 : 1) + " " + units[u];
}

std::string formatCount(uint64_t n) {
    if (n >= 1000000000ull) return fixed(n / 1e9, 2) + " B";
    if (n >= 1000000ull) return fixed(n / 1e6, 2) + " M";
    if (n >= 1000ull) return fixed(n / 1e3, 1) + " K";
    return std::to_string(n);
}

nlohmann::ordered_json modelCardToJson(const ModelCard& c) {
    nlohmann::ordered_json j;
    j["path"] = c.path;
    j["parts"] = c.parts;
    j["gguf_version"] = c.ggufVersion;
    j["arch"] = c.arch;
    j["name"] = c.name;
    j["file_type"] = c.fileType ? nlohmann::ordered_json(*c.fileType) : nlohmann::ordered_json(nullptr);
    j["n_params"] = c.nParams;
    j["n_params_active"] = c.nParamsActive;
    j["n_layer"] = c.nLayer;
    j["n_embd"] = c.nEmbd;
    j["n_head"] = c.nHead;
    j["n_head_kv"] = c.nHeadKv;
    j["head_dim_k"] = c.headDimK;
    j["head_dim_v"] = c.headDimV;
    j["n_ff"] = c.nFf;
    j["n_ctx_train"] = c.nCtxTrain;
    j["n_vocab"] = c.nVocab;
    j["n_expert"] = c.nExpert;
    j["n_expert_used"] = c.nExpertUsed;
    j["n_expert_shared"] = c.nExpertShared;
    j["kv_lora_rank"] = c.kvLoraRank;  // MLA latent width (deepseek2); 0 = per-head K/V cache
    if (c.kvLoraRank) {
        j["mla_layout"] = c.mlaLayout;  // "merged" (attn_kv_b) or "split" (attn_k_b / attn_v_b)
        j["mla_head_dim_k"] = c.mlaHeadDimK;
        j["mla_head_dim_v"] = c.mlaHeadDimV;
    }
    j["rope"] = {{"dims", c.ropeDims}, {"freq_base", c.ropeFreqBase},
                 {"scaling_type", c.ropeScalingType}, {"scaling_factor", c.ropeScalingFactor}};
    j["tokenizer_model"] = c.tokenizerModel;
    j["tokenizer_pre"] = c.tokenizerPre;
    j["chat_template"] = {{"present", c.hasChatTemplate}, {"bytes", c.chatTemplateBytes}, {"family", c.chatTemplateFamily}};
    j["file_bytes"] = c.fileBytes;
    nlohmann::ordered_json types = nlohmann::ordered_json::object();
    for (const auto& [t, b] : c.tensorTypeBytes) types[t] = b;
    j["tensor_types"] = types;
    j["bpw"] = c.bitsPerWeight;
    nlohmann::ordered_json prov = nlohmann::ordered_json::object();
    for (const auto& [k, v] : c.provenance) prov[k] = v;
    j["provenance"] = prov;
    j["memory"] = memoryJson(c.memoryAtCtx ? *c.memoryAtCtx : c.memoryTrained);
    j["memory_at_train_ctx"] = memoryJson(c.memoryTrained);
    const SupportReport support = checkCpuSupport(c);
    j["runs_here"] = {{"cpu", support.ok()}, {"missing", support.missing}};
    return j;
}

std::string modelCardToText(const ModelCard& c) {
    std::ostringstream o;
    // Names and metadata values come from the file: one escaped line each (no terminal escapes,
    // no flood), at most 400 bytes of a value.
    auto row = [&](const std::string& k, const std::string& v) {
        std::string key = util::oneLine(k, 80) + ":";
        key.resize(std::max<size_t>(key.size(), 22), ' ');
        o << key << util::oneLine(v, 400) << "\n";
    };
    row("file", c.path + (c.parts.size() > 1 ? " (" + std::to_string(c.parts.size()) + " parts)" : ""));
    row("name", c.name);
    row("architecture", c.arch + "  (GGUF v" + std::to_string(c.ggufVersion) + ")");
    const SupportReport support = checkCpuSupport(c);
    std::string runs = support.ok() ? "yes (the CPU engine of this build)" : "no: lacks ";
    for (size_t i = 0; i < support.missing.size(); ++i) {
        if (i) runs += "; ";
        runs += support.missing[i];
    }
    row("runs here", runs);
    row("parameters", formatCount(c.nParams) + " (" + std::to_string(c.nParams) + ")");
    if (c.nExpert > 0)
        row("active per token", formatCount(c.nParamsActive) + "  (" + std::to_string(c.nExpertUsed) + " of " +
                                    std::to_string(c.nExpert) + " experts" +
                                    (c.nExpertShared ? ", " + std::to_string(c.nExpertShared) + " shared" : "") + ")");
    row("layers / embd / ff", std::to_string(c.nLayer) + " / " + std::to_string(c.nEmbd) + " / " + std::to_string(c.nFf));
    row("heads / kv heads", std::to_string(c.nHead) + " / " + std::to_string(c.nHeadKv) + "  (head dim k " +
                                std::to_string(c.headDimK) + ", v " + std::to_string(c.headDimV) + ")");
    if (c.kvLoraRank)
        row("MLA latent", std::to_string(c.kvLoraRank) + " + rope key " + std::to_string(c.ropeDims) +
                              " cached per token and layer (not per-head K/V); per-head k " +
                              std::to_string(c.mlaHeadDimK) + ", v " + std::to_string(c.mlaHeadDimV) + "; " +
                              (c.mlaLayout == "split"    ? "split attn_k_b / attn_v_b (converters since 2025)"
                               : c.mlaLayout == "merged" ? "merged attn_kv_b (older converters)"
                                                         : "no attn_kv_b nor attn_k_b / attn_v_b"));
    row("trained context", std::to_string(c.nCtxTrain));
    row("RoPE", "dims " + std::to_string(c.ropeDims) + ", base " + fixed(c.ropeFreqBase, 0) +
                    (c.ropeScalingType.empty() ? "" : ", " + c.ropeScalingType + " x" + fixed(c.ropeScalingFactor, 2)));
    row("vocabulary", std::to_string(c.nVocab) + " (" + (c.tokenizerModel.empty() ? "?" : c.tokenizerModel) +
                          (c.tokenizerPre.empty() ? "" : ", pre " + c.tokenizerPre) + ")");
    row("chat template", c.hasChatTemplate ? c.chatTemplateFamily + " (" + std::to_string(c.chatTemplateBytes) + " bytes)" : "none");
    row("file size", formatBytes(c.fileBytes));
    std::string mix;
    for (const auto& [t, b] : c.tensorTypeBytes) mix += (mix.empty() ? "" : ", ") + t + " " + formatBytes(b);
    row("quantization", mix + "  (" + fixed(c.bitsPerWeight, 2) + " bits/weight)");
    for (const auto& [k, v] : c.provenance) row(k, v);
    auto mem = [&](const MemoryEstimate& m) {
        row("memory @ ctx " + std::to_string(m.ctx),
            formatBytes(m.totalBytes()) + " = weights " + formatBytes(m.weightsBytes) + " + KV f16 " +
                formatBytes(m.kvBytesAtCtx) + " (" + formatBytes(m.kvBytesPerToken) + "/token) + compute ~" +
                formatBytes(m.computeBytes));
    };
    mem(c.memoryTrained);
    if (c.memoryAtCtx) mem(*c.memoryAtCtx);
    return o.str();
}

}  // namespace verdict::core
