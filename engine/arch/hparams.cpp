#include "arch/hparams.h"
#include "util/quote.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace verdict::arch {

float ArchConfig::kqScale() const {
    return attnScale != 0.0f ? attnScale : 1.0f / std::sqrt(static_cast<float>(headDimK));
}

cpu::RopeParams ArchConfig::ropeParams(const float* freqFactors) const {
    cpu::RopeParams p;
    p.nRot = nRot;
    p.freqBase = ropeFreqBase;
    p.freqScale = ropeFreqScale;
    p.extFactor = yarnExtFactor;
    p.attnFactor = yarnAttnFactor;
    p.betaFast = yarnBetaFast;
    p.betaSlow = yarnBetaSlow;
    p.nCtxOrig = static_cast<int>(nCtxOrig);
    p.freqFactors = freqFactors;
    return p;
}

int64_t ArchConfig::windowOf(int64_t layer) const {
    // llama.cpp's swa pattern (hparams set_swa_pattern): n == 0 slides every layer, else the first
    // n - 1 of every n layers slide (gemma2: n = 2, the even layers).
    if (slidingWindow <= 0) return 0;
    const bool slides = swaPattern <= 0 || layer % swaPattern < swaPattern - 1;
    return slides ? slidingWindow : 0;
}

ArchConfig::CacheShape ArchConfig::cacheShape() const {
    if (kvLoraRank > 0) return {1, kvLoraRank, nRot};  // deepseek2 MLA: latent + shared rope key
    return {nHeadKv, headDimK, headDimV};
}

namespace {
std::string where(const gguf::GgufFile& f, const std::string& key) { return f.path() + ": metadata key " + util::quoteFileText(key); }
}  // namespace

Result<int64_t> HParams::optionalUInt(std::string_view suffix, int64_t fallback) const {
    const std::string k = key(suffix);
    const gguf::Value* v = m_file.find(k);
    if (!v) return fallback;
    if (v->type == gguf::ValueType::Array)
        return Error{where(m_file, k) + " is a per-layer array; only one value for all layers is supported"};
    auto u = v->asUInt();
    if (!u) return Error{where(m_file, k) + " is not a non-negative integer"};
    if (*u > (uint64_t{1} << 40)) return Error{where(m_file, k) + " = " + std::to_string(*u) + " is implausibly large"};
    return static_cast<int64_t>(*u);
}

Result<int64_t> HParams::requireUInt(std::string_view suffix) const {
    const std::string k = key(suffix);
    if (!m_file.find(k)) return Error{where(m_file, k) + " is missing (required for architecture " + util::quoteFileText(m_arch) + ")"};
    return optionalUInt(suffix, 0);
}

Result<float> HParams::optionalFloat(std::string_view suffix, float fallback) const {
    const std::string k = key(suffix);
    const gguf::Value* v = m_file.find(k);
    if (!v) return fallback;
    auto d = v->asFloat();
    if (!d || !std::isfinite(*d)) return Error{where(m_file, k) + " is not a finite number"};
    return static_cast<float>(*d);
}

std::optional<std::string> HParams::optionalString(std::string_view suffix) const {
    return m_file.getString(key(suffix));
}

Result<void> HParams::readRope(ArchConfig& cfg) const {
    auto rot = optionalUInt("rope.dimension_count", cfg.headDimK);
    if (!rot) return rot.error();
    cfg.nRot = static_cast<int>(*rot);
    auto base = optionalFloat("rope.freq_base", 10000.0f);
    if (!base) return base.error();
    cfg.ropeFreqBase = *base;

    // Scaling (llama.cpp llama_model::load_hparams): factor from rope.scaling.factor, else the
    // older rope.scale_linear; type defaults to linear when a factor is given.
    auto factor = optionalFloat("rope.scaling.factor", 0.0f);
    if (!factor) return factor.error();
    float f = *factor;
    if (f == 0.0f) {
        auto lin = optionalFloat("rope.scale_linear", 0.0f);
        if (!lin) return lin.error();
        f = *lin;
    }
    cfg.ropeFreqScale = f == 0.0f ? 1.0f : 1.0f / f;
    const std::string type = optionalString("rope.scaling.type").value_or(f == 0.0f ? "none" : "linear");
    if (type == "none") {
        cfg.ropeScaling = RopeScaling::None;
    } else if (type == "linear") {
        cfg.ropeScaling = RopeScaling::Linear;
    } else if (type == "yarn") {
        cfg.ropeScaling = RopeScaling::Yarn;
        cfg.yarnExtFactor = 1.0f;
    } else {
        return Error{where(m_file, key("rope.scaling.type")) + " = " + util::quoteFileText(type)
                     + " is not supported (supported: none, linear, yarn)"};
    }
    auto orig = optionalUInt("rope.scaling.original_context_length", cfg.nCtxTrain);
    if (!orig) return orig.error();
    cfg.nCtxOrig = *orig;
    return {};
}

namespace {
// 1 + the largest N of the tensors named "blk.N.<...>" (0 when there are none). Each such
// tensor is in the file, so the result is bounded by the tensor count.
int64_t blocksPresent(const gguf::GgufFile& f) {
    int64_t best = -1;
    for (const auto& t : f.tensors()) {
        const std::string_view n = t.name;
        if (n.size() < 6 || n.substr(0, 4) != "blk.") continue;
        int64_t v = 0;
        size_t i = 4;
        for (; i < n.size() && n[i] >= '0' && n[i] <= '9' && i < 4 + 12; ++i) v = v * 10 + (n[i] - '0');
        if (i == 4 || i >= n.size() || n[i] != '.') continue;
        best = std::max(best, v);
    }
    return best + 1;
}
}  // namespace

Result<void> HParams::readCommon(ArchConfig& cfg) const {
    cfg.arch = m_arch;
    cfg.fileName = m_file.path();
    struct Req { const char* suffix; int64_t* field; };
    for (const Req& r : {Req{"context_length", &cfg.nCtxTrain}, Req{"embedding_length", &cfg.nEmbd},
                         Req{"block_count", &cfg.nLayer}, Req{"attention.head_count", &cfg.nHead}}) {
        auto v = requireUInt(r.suffix);
        if (!v) return v.error();
        *r.field = *v;
    }
    // Every count that sizes an allocation is checked against what the file holds: block_count
    // larger than the blocks whose tensors exist is an error here, before anything per block is
    // allocated (a mutated 2^24 would otherwise allocate gigabytes of per-layer state).
    if (cfg.nLayer > 0) {
        const int64_t present = blocksPresent(m_file);
        if (cfg.nLayer > present)
            return Error{where(m_file, key("block_count")) + " = " + std::to_string(cfg.nLayer) + " but the file holds tensors for " +
                         (present == 0 ? std::string("no block (no blk.N.* tensor)")
                                       : std::to_string(present) + " block" + (present == 1 ? "" : "s") + " (blk.0 to blk." +
                                             std::to_string(present - 1) + ")")};
    }
    auto ff = optionalUInt("feed_forward_length", 0);
    if (!ff) return ff.error();
    cfg.nFf = *ff;
    auto kv = optionalUInt("attention.head_count_kv", cfg.nHead);
    if (!kv) return kv.error();
    cfg.nHeadKv = *kv;
    if (cfg.nHead == 0) return Error{where(m_file, key("attention.head_count")) + " is 0"};
    auto hk = optionalUInt("attention.key_length", cfg.nEmbd / cfg.nHead);
    if (!hk) return hk.error();
    cfg.headDimK = *hk;
    auto hv = optionalUInt("attention.value_length", cfg.nEmbd / cfg.nHead);
    if (!hv) return hv.error();
    cfg.headDimV = *hv;
    // Without explicit head sizes the head size is n_embd / n_head, which must divide exactly.
    if (!m_file.find(key("attention.key_length")) && cfg.nEmbd % cfg.nHead != 0)
        return Error{m_file.path() + ": " + key("attention.head_count") + " = " + std::to_string(cfg.nHead)
                     + " does not divide " + key("embedding_length") + " = " + std::to_string(cfg.nEmbd)};

    auto eps = optionalFloat("attention.layer_norm_rms_epsilon", -1.0f);
    if (!eps) return eps.error();
    if (*eps < 0.0f) return Error{where(m_file, key("attention.layer_norm_rms_epsilon")) + " is missing"};
    cfg.rmsEps = *eps;
    auto scale = optionalFloat("attention.scale", 0.0f);
    if (!scale) return scale.error();
    cfg.attnScale = *scale;

    auto ne = optionalUInt("expert_count", 0);
    if (!ne) return ne.error();
    cfg.nExpert = *ne;
    auto nu = optionalUInt("expert_used_count", 0);
    if (!nu) return nu.error();
    cfg.nExpertUsed = *nu;
    auto ffe = optionalUInt("expert_feed_forward_length", cfg.nFf);
    if (!ffe) return ffe.error();
    cfg.nFfExp = *ffe;

    // Vocabulary size: explicit key, else the tokenizer's token list, else the embedding rows.
    auto nv = optionalUInt("vocab_size", 0);
    if (!nv) return nv.error();
    cfg.nVocab = *nv;
    if (cfg.nVocab == 0) {
        if (const auto* toks = m_file.getArray("tokenizer.ggml.tokens")) cfg.nVocab = static_cast<int64_t>(toks->size());
    }
    if (cfg.nVocab == 0) {
        if (const auto* t = m_file.tensor("token_embd.weight"); t && t->nDims >= 2)
            cfg.nVocab = static_cast<int64_t>(t->ne[1]);
    }
    return readRope(cfg);
}

Result<void> validateConfig(const ArchConfig& c) {
    const std::string f = c.fileName + ": ";
    auto bad = [&](const std::string& what) { return Error{f + what}; };
    if (c.nEmbd <= 0) return bad("embedding_length must be > 0");
    if (c.nLayer <= 0) return bad("block_count must be > 0");
    if (c.nVocab <= 0) return bad("vocabulary size is unknown (no vocab_size, token list or token_embd)");
    if (c.nHead <= 0) return bad("attention.head_count must be > 0");
    if (c.nHeadKv <= 0) return bad("attention.head_count_kv must be > 0");
    if (c.nHead % c.nHeadKv != 0)
        return bad("attention.head_count = " + std::to_string(c.nHead) + " is not a multiple of head_count_kv = "
                   + std::to_string(c.nHeadKv));
    if (c.headDimK <= 0 || c.headDimV <= 0) return bad("attention key/value head size must be > 0");
    if (c.nRot < 0 || c.nRot % 2 != 0 || c.nRot > c.headDimK)
        return bad("rope.dimension_count = " + std::to_string(c.nRot) + " must be even and <= the head size "
                   + std::to_string(c.headDimK));
    if (!(c.ropeFreqBase > 0.0f)) return bad("rope.freq_base must be > 0");
    if (!(c.ropeFreqScale > 0.0f)) return bad("rope scaling factor must be > 0");
    if (!(c.rmsEps > 0.0f)) return bad("attention.layer_norm_rms_epsilon must be > 0");
    if (c.nExpertUsed > c.nExpert)
        return bad("expert_used_count = " + std::to_string(c.nExpertUsed) + " exceeds expert_count = "
                   + std::to_string(c.nExpert));
    if (c.nExpert > 0 && c.nExpertUsed == 0) return bad("expert_count > 0 but expert_used_count is 0");
    if (c.nExpert > 0 && c.nFfExp <= 0) return bad("expert feed-forward width is 0");
    if (c.nExpert == 0 && c.nFf <= 0) return bad("feed_forward_length must be > 0");
    if (c.nCtxTrain <= 0) return bad("context_length must be > 0");
    return {};
}

}  // namespace verdict::arch
