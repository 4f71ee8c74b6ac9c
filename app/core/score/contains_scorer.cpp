// "contains": the output contains the expected text(s). Params: value / values (else the item's
// references), mode "any" (default) or "all", ignore_case (false; promptfoo's icontains sets it).
#include "core/score/scorer_factories.h"
#include "core/suite/utf8_text.h"

namespace verdict::core::scorers {

namespace {
class ContainsScorer : public Scorer {
public:
    ContainsScorer(nlohmann::json params, bool all, bool ignoreCase)
        : m_params(std::move(params)), m_all(all), m_ignoreCase(ignoreCase) {}
    std::string name() const override { return m_ignoreCase ? "icontains" : "contains"; }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        const auto wanted = expectedTexts(m_params, item);
        if (wanted.empty()) {
            r.detail = "nothing to look for";
            return r;
        }
        const std::string hay = m_ignoreCase ? utf8::toLowerUtf8(output) : output;
        size_t found = 0;
        std::string missing;
        for (const auto& w : wanted) {
            const std::string needle = m_ignoreCase ? utf8::toLowerUtf8(w) : w;
            if (hay.find(needle) != std::string::npos) {
                ++found;
                if (r.extracted.empty()) r.extracted = w;
            } else if (missing.empty()) {
                missing = w;
            }
        }
        r.pass = m_all ? found == wanted.size() : found > 0;
        r.score = r.pass ? 1.0 : 0.0;
        if (r.pass) r.detail = "found '" + r.extracted + "'";
        else r.detail = m_all ? "missing '" + missing + "'" : "none of " + std::to_string(wanted.size()) + " expected texts found";
        return r;
    }

private:
    nlohmann::json m_params;
    bool m_all;
    bool m_ignoreCase;
};
}  // namespace

Made makeContains(const nlohmann::json& params, const ScorerOptions&) {
    auto mode = stringParam(params, "contains", "mode", "any");
    if (!mode) return mode.error();
    if (*mode != "any" && *mode != "all") return Error{"contains: param 'mode' must be \"any\" or \"all\""};
    auto ic = boolParam(params, "contains", "ignore_case", false);
    if (!ic) return ic.error();
    return std::unique_ptr<Scorer>(std::make_unique<ContainsScorer>(params, *mode == "all", *ic));
}

}  // namespace verdict::core::scorers
