// "mc_letter": multiple choice graded from generated text; the chosen option is read with
// extractChoice (choice_extract.h) and compared with the item's gold index.
#include "core/score/choice_extract.h"
#include "core/score/scorer_factories.h"

namespace verdict::core::scorers {

namespace {
std::string letterOf(int i) { return i >= 0 && i < 26 ? std::string(1, char('A' + i)) : "?"; }

class McLetterScorer : public Scorer {
public:
    std::string name() const override { return "mc_letter"; }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        if (item.choices.empty() || !item.gold) {
            r.detail = "item has no choices or no gold answer";
            return r;
        }
        const ChoicePick pick = extractChoice(output, item.choices.size(), item.choices);
        if (pick.index < 0) {
            r.detail = pick.how + " (expected " + letterOf(*item.gold) + ")";
            return r;
        }
        r.extracted = letterOf(pick.index);
        r.pass = pick.index == *item.gold;
        r.score = r.pass ? 1.0 : 0.0;
        r.detail = (r.pass ? "chose " : "chose " + r.extracted + ", expected ") + (r.pass ? r.extracted : letterOf(*item.gold)) +
                   " (" + pick.how + ")";
        return r;
    }
};
}  // namespace

Made makeMcLetter(const nlohmann::json&, const ScorerOptions&) {
    return std::unique_ptr<Scorer>(std::make_unique<McLetterScorer>());
}

}  // namespace verdict::core::scorers
