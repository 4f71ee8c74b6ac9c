#include "core/score/mc_loglik.h"

#include "core/suite/utf8_text.h"

#include <algorithm>

namespace verdict::core {

size_t choiceLength(std::string_view choiceText, LengthUnit unit) {
    return unit == LengthUnit::Bytes ? choiceText.size() : utf8::codePointCount(choiceText);
}

McLoglikResult scoreMcLoglik(const std::vector<ChoiceLoglik>& choices, int gold) {
    McLoglikResult r;
    if (choices.empty()) return r;
    r.pred = 0;
    r.predNorm = 0;
    auto norm = [](const ChoiceLoglik& c) { return c.logprob / double(std::max<size_t>(c.length, 1)); };
    for (size_t i = 1; i < choices.size(); ++i) {  // strict '>' keeps the first of equal values, like numpy.argmax
        if (choices[i].logprob > choices[size_t(r.pred)].logprob) r.pred = int(i);
        if (norm(choices[i]) > norm(choices[size_t(r.predNorm)])) r.predNorm = int(i);
    }
    if (gold >= 0 && size_t(gold) < choices.size()) {
        r.acc = r.pred == gold ? 1.0 : 0.0;
        r.accNorm = r.predNorm == gold ? 1.0 : 0.0;
    }
    return r;
}

ScoreResult mcLoglikScore(const SuiteItem& item, const std::vector<ChoiceLoglik>& choices, bool useNorm) {
    ScoreResult s;
    if (!item.gold) {
        s.detail = "item has no gold answer";
        return s;
    }
    if (choices.size() != item.choices.size()) {
        s.detail = "got " + std::to_string(choices.size()) + " log-likelihoods for " + std::to_string(item.choices.size()) + " choices";
        return s;
    }
    const McLoglikResult r = scoreMcLoglik(choices, *item.gold);
    const int chosen = useNorm ? r.predNorm : r.pred;
    auto letter = [](int i) { return i >= 0 && i < 26 ? std::string(1, char('A' + i)) : std::string("?"); };
    s.score = useNorm ? r.accNorm : r.acc;
    s.pass = s.score > 0.5;
    s.extracted = letter(chosen);
    s.detail = "acc pred " + letter(r.pred) + ", acc_norm pred " + letter(r.predNorm) + ", gold " + letter(*item.gold);
    return s;
}

}  // namespace verdict::core
