#include "core/endpoints/token_count.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace verdict::core {

TokenCounter::TokenCounter(std::unique_ptr<TextTokenizer> tok) : m_tok(std::move(tok)) {
    m_templated = static_cast<bool>(m_tok->renderChat({{"user", "x"}}));
}

Result<std::shared_ptr<const TokenCounter>> TokenCounter::open(const std::string& path) {
    auto tok = TextTokenizer::open(path);
    if (!tok) return Error{"--tokenizer " + path + ": " + tok.error().message};
    return std::shared_ptr<const TokenCounter>(new TokenCounter(std::move(*tok)));
}

int64_t TokenCounter::promptTokens(const std::string& prompt, bool chat) const {
    if (chat && m_templated) {
        if (auto r = m_tok->renderChat({{"user", prompt}}))
            return static_cast<int64_t>(m_tok->encode(r->text, !m_tok->startsWithBos(r->text), true).size());
    }
    return static_cast<int64_t>(m_tok->encode(prompt, !chat || !m_templated, false).size());
}

int64_t TokenCounter::outputTokens(const std::string& text) const {
    return static_cast<int64_t>(m_tok->encode(text, false, false).size());
}

std::optional<double> usageDiffPct(int64_t usage, int64_t counted) {
    if (usage < 0 || counted <= 0) return std::nullopt;
    return 100.0 * static_cast<double>(usage - counted) / static_cast<double>(counted);
}

bool exceededMaxTokens(const RequestTokens& t) {
    if (t.maxTokens <= 0) return false;
    if (t.usageOutput >= 0) return t.usageOutput > t.maxTokens;
    return t.chunks > t.maxTokens;
}

TokenAccounting accountTokens(const std::vector<RequestTokens>& requests, const TokenCounter* counter) {
    TokenAccounting a;
    if (counter) {
        a.tokenizer = counter->path();
        a.promptTemplated = counter->templated();
    }
    for (const RequestTokens& t : requests) {
        ++a.requests;
        if (t.usageOutput >= 0) ++a.withUsage;
        if (t.countedOutput >= 0) ++a.counted;
        if (exceededMaxTokens(t)) ++a.exceededMaxTokens;
        if (t.usageOutput < 0 || t.countedOutput < 0) continue;
        a.usageOutput += t.usageOutput;
        a.countedOutput += t.countedOutput;
        if (t.usagePrompt >= 0 && t.countedPrompt >= 0) {
            a.usagePrompt += t.usagePrompt;
            a.countedPrompt += t.countedPrompt;
        }
        if (const auto d = usageDiffPct(t.usageOutput, t.countedOutput)) {
            a.outputDiffPctMaxAbs = std::max(a.outputDiffPctMaxAbs.value_or(0), std::fabs(*d));
            if (std::fabs(*d) > kDiscrepantPct) ++a.discrepant;
        } else if (t.usageOutput != t.countedOutput) {
            ++a.discrepant;  // the client counted nothing where the server counted tokens
        }
    }
    a.outputDiffPct = usageDiffPct(a.usageOutput, a.countedOutput);
    a.promptDiffPct = usageDiffPct(a.usagePrompt, a.countedPrompt);
    return a;
}

nlohmann::json toJson(const TokenAccounting& a) {
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    return {{"requests", a.requests},
            {"with_usage", a.withUsage},
            {"counted", a.counted},
            {"usage", {{"prompt", a.usagePrompt}, {"output", a.usageOutput}}},
            {"client", {{"prompt", a.countedPrompt}, {"output", a.countedOutput}}},
            {"prompt_diff_pct", opt(a.promptDiffPct)},
            {"output_diff_pct", opt(a.outputDiffPct)},
            {"output_diff_pct_max_abs", opt(a.outputDiffPctMaxAbs)},
            {"discrepant", a.discrepant},
            {"exceeded_max_tokens", a.exceededMaxTokens},
            {"tokenizer", a.tokenizer},
            {"prompt_templated", a.promptTemplated}};
}

TokenAccounting tokenAccountingFromJson(const nlohmann::json& j) {
    TokenAccounting a;
    if (!j.is_object()) return a;
    auto count = [&](const nlohmann::json& o, const char* k) {
        return o.is_object() && o.contains(k) && o[k].is_number() ? o[k].get<int64_t>() : int64_t(0);
    };
    auto pct = [&](const char* k) -> std::optional<double> {
        if (j.contains(k) && j[k].is_number()) return j[k].get<double>();
        return std::nullopt;
    };
    a.requests = count(j, "requests");
    a.withUsage = count(j, "with_usage");
    a.counted = count(j, "counted");
    if (j.contains("usage")) {
        a.usagePrompt = count(j["usage"], "prompt");
        a.usageOutput = count(j["usage"], "output");
    }
    if (j.contains("client")) {
        a.countedPrompt = count(j["client"], "prompt");
        a.countedOutput = count(j["client"], "output");
    }
    a.promptDiffPct = pct("prompt_diff_pct");
    a.outputDiffPct = pct("output_diff_pct");
    a.outputDiffPctMaxAbs = pct("output_diff_pct_max_abs");
    a.discrepant = count(j, "discrepant");
    a.exceededMaxTokens = count(j, "exceeded_max_tokens");
    if (j.contains("tokenizer") && j["tokenizer"].is_string()) a.tokenizer = j["tokenizer"].get<std::string>();
    a.promptTemplated = j.value("prompt_templated", false);
    return a;
}

std::string describe(const TokenAccounting& a) {
    char buf[160];
    std::string s = "usage on " + std::to_string(a.withUsage) + "/" + std::to_string(a.requests) + " requests";
    if (!a.tokenizer.empty()) {
        s += "; counted with " + a.tokenizer + ": ";
        auto pct = [&](const std::optional<double>& v) {
            if (!v) return std::string("n/a");
            std::snprintf(buf, sizeof buf, "%+.1f %%", *v);
            return std::string(buf);
        };
        s += "output " + pct(a.outputDiffPct) + ", prompt " + pct(a.promptDiffPct) +
             (a.promptTemplated ? "" : " (no chat template: the server's count includes its template)");
        if (a.discrepant > 0) s += ", " + std::to_string(a.discrepant) + " request(s) beyond ±10 %";
    }
    if (a.exceededMaxTokens > 0)
        s += "; " + std::to_string(a.exceededMaxTokens) + " request(s) got more tokens than max_tokens (the server ignored it)";
    return s;
}

}  // namespace verdict::core
