// "exact": the output equals one of the references after normalisation (text_normalize.h).
// Defaults: case, whitespace, punctuation, full-width and Chinese punctuation folded; params
// can switch each off, or "normalize": false for a byte-exact compare (promptfoo's equals).
#include "core/score/scorer_factories.h"
#include "core/score/text_normalize.h"

namespace verdict::core::scorers {

namespace {
class ExactScorer : public Scorer {
public:
    ExactScorer(NormalizeOptions norm, nlohmann::json params) : m_norm(norm), m_params(std::move(params)) {}
    std::string name() const override { return "exact"; }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        const auto refs = expectedTexts(m_params, item);
        if (refs.empty()) {
            r.detail = "no reference to compare with";
            return r;
        }
        r.extracted = normalizeText(output, m_norm);
        for (const auto& ref : refs)
            if (normalizeText(ref, m_norm) == r.extracted) {
                r.pass = true;
                r.score = 1.0;
                r.detail = "matches '" + ref + "'";
                return r;
            }
        r.detail = "expected '" + refs.front() + "'" + (refs.size() > 1 ? " (or " + std::to_string(refs.size() - 1) + " more)" : "");
        return r;
    }

private:
    NormalizeOptions m_norm;
    nlohmann::json m_params;
};
}  // namespace

Made makeExact(const nlohmann::json& params, const ScorerOptions&) {
    auto norm = NormalizeOptions::fromParams(params, "exact");
    if (!norm) return norm.error();
    return std::unique_ptr<Scorer>(std::make_unique<ExactScorer>(*norm, params));
}

}  // namespace verdict::core::scorers
