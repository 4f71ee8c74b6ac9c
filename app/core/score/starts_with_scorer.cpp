// "starts_with": the output begins with one of the expected texts (value/values, else the item's
// references). Params: trim (leading whitespace ignored; default true), ignore_case (false).
// OpenAI evals' basic Match grades this way.
#include "core/score/scorer_factories.h"
#include "core/suite/utf8_text.h"

namespace verdict::core::scorers {

namespace {
class StartsWithScorer : public Scorer {
public:
    StartsWithScorer(nlohmann::json params, bool trim, bool ignoreCase)
        : m_params(std::move(params)), m_trim(trim), m_ignoreCase(ignoreCase) {}
    std::string name() const override { return "starts_with"; }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        const auto wanted = expectedTexts(m_params, item);
        if (wanted.empty()) {
            r.detail = "nothing to compare with";
            return r;
        }
        std::string text = m_trim ? std::string(utf8::trim(output)) : output;
        if (m_ignoreCase) text = utf8::toLowerUtf8(text);
        for (const auto& w : wanted) {
            std::string prefix = m_trim ? std::string(utf8::trim(w)) : w;
            if (m_ignoreCase) prefix = utf8::toLowerUtf8(prefix);
            if (text.compare(0, prefix.size(), prefix) == 0) {
                r.pass = true;
                r.score = 1.0;
                r.extracted = w;
                r.detail = "starts with '" + w + "'";
                return r;
            }
        }
        r.detail = "does not start with '" + wanted.front() + "'";
        return r;
    }

private:
    nlohmann::json m_params;
    bool m_trim;
    bool m_ignoreCase;
};
}  // namespace

Made makeStartsWith(const nlohmann::json& params, const ScorerOptions&) {
    auto trim = boolParam(params, "starts_with", "trim", true);
    if (!trim) return trim.error();
    auto ic = boolParam(params, "starts_with", "ignore_case", false);
    if (!ic) return ic.error();
    return std::unique_ptr<Scorer>(std::make_unique<StartsWithScorer>(params, *trim, *ic));
}

}  // namespace verdict::core::scorers
