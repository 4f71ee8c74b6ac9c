// "numeric": the answer number in the output equals the reference number. The answer number is
// found by extractAnswerNumber (after ####, 答案, \boxed{, "answer is", else the last number).
// Params: tolerance (absolute, default 1e-6), rel_tolerance (relative, default 0), pick
// ("auto" | "last" | "first"), value (expected number, else the item's references).
#include "core/score/number_extract.h"
#include "core/score/scorer_factories.h"

#include <cmath>
#include <sstream>

namespace verdict::core::scorers {

namespace {
std::string formatNumber(double v) {
    std::ostringstream os;
    os.precision(12);
    os << v;
    return os.str();
}

class NumericScorer : public Scorer {
public:
    NumericScorer(nlohmann::json params, double tol, double rel, NumberPick pick)
        : m_params(std::move(params)), m_tol(tol), m_rel(rel), m_pick(pick) {}
    std::string name() const override { return "numeric"; }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        std::vector<double> expected;
        for (const auto& ref : expectedTexts(m_params, item)) {
            if (auto v = parseNumber(ref)) expected.push_back(*v);
            else if (auto n = extractAnswerNumber(ref)) expected.push_back(n->value);
        }
        if (expected.empty()) {
            r.detail = "reference is not a number";
            return r;
        }
        std::string how;
        auto got = extractAnswerNumber(output, m_pick, &how);
        if (!got) {
            r.detail = "no number in the output (expected " + formatNumber(expected.front()) + ")";
            return r;
        }
        r.extracted = got->text;
        for (double e : expected) {
            const double allowed = std::max(m_tol, m_rel * std::fabs(e));
            if (std::fabs(got->value - e) <= allowed) {
                r.pass = true;
                r.score = 1.0;
                r.detail = "got " + formatNumber(got->value) + " (" + how + ")";
                return r;
            }
        }
        r.detail = "expected " + formatNumber(expected.front()) + ", got " + formatNumber(got->value) + " (" + how + ")";
        return r;
    }

private:
    nlohmann::json m_params;
    double m_tol;
    double m_rel;
    NumberPick m_pick;
};
}  // namespace

Made makeNumeric(const nlohmann::json& params, const ScorerOptions&) {
    auto tol = numberParam(params, "numeric", "tolerance", 1e-6);
    if (!tol) return tol.error();
    auto rel = numberParam(params, "numeric", "rel_tolerance", 0.0);
    if (!rel) return rel.error();
    if (*tol < 0 || *rel < 0) return Error{"numeric: tolerances must not be negative"};
    auto pick = stringParam(params, "numeric", "pick", "auto");
    if (!pick) return pick.error();
    NumberPick p = NumberPick::Auto;
    if (*pick == "last") p = NumberPick::Last;
    else if (*pick == "first") p = NumberPick::First;
    else if (*pick != "auto") return Error{"numeric: param 'pick' must be auto, last or first"};
    return std::unique_ptr<Scorer>(std::make_unique<NumericScorer>(params, *tol, *rel, p));
}

}  // namespace verdict::core::scorers
