// "label": classification items (issue 22; docs/metrics.md "Classification"). The item's first
// reference is its gold label; params "labels" (required) is the label set the model chooses
// from. The output and every label are normalised alike (text_normalize.h: case, width,
// punctuation and whitespace folded; the same params as "exact" switch each off). The predicted
// label is, first rule that applies:
//   1. the label the whole output equals ("Spam." -> spam);
//   2. the label whose first whole-word occurrence comes earliest in the output ("I would say
//      ham, not spam" -> ham); at the same position the longer label wins ("not spam" over "not");
//   3. none: extracted stays "" (the confusion matrix's "(none)" column) and the item is wrong.
// `expected` is the gold label as the labels list spells it, `extracted` the predicted one: the
// classification statistics (core/stats/classification.h) read both from the stored score.
#include "core/score/scorer_factories.h"
#include "core/score/text_normalize.h"

#include <set>

namespace verdict::core::scorers {

namespace {

class LabelScorer : public Scorer {
public:
    LabelScorer(NormalizeOptions norm, std::vector<std::string> labels) : m_norm(norm), m_labels(std::move(labels)) {
        for (const auto& l : m_labels) m_normalized.push_back(normalizeText(l, m_norm));
    }
    std::string name() const override { return "label"; }

    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        if (item.references.empty()) {
            r.detail = "no gold label (the item has no reference)";
            return r;
        }
        const int gold = find(normalizeText(item.references.front(), m_norm));
        r.expected = gold >= 0 ? m_labels[size_t(gold)] : item.references.front();
        const int predicted = predict(normalizeText(output, m_norm));
        if (predicted >= 0) r.extracted = m_labels[size_t(predicted)];
        if (gold < 0) {
            r.detail = "gold label '" + item.references.front() + "' is not one of the scorer's labels";
            return r;
        }
        r.pass = predicted == gold;
        r.score = r.pass ? 1.0 : 0.0;
        r.detail = predicted < 0 ? "no label in the output (expected '" + r.expected + "')"
                                 : "predicted '" + r.extracted + "', expected '" + r.expected + "'";
        return r;
    }

private:
    int find(const std::string& normalized) const {
        for (size_t i = 0; i < m_normalized.size(); ++i)
            if (m_normalized[i] == normalized) return int(i);
        return -1;
    }

    int predict(const std::string& out) const {
        if (const int whole = find(out); whole >= 0) return whole;
        int best = -1;
        size_t bestPos = std::string::npos;
        for (size_t i = 0; i < m_normalized.size(); ++i) {
            const std::string& l = m_normalized[i];
            if (l.empty()) continue;
            for (size_t pos = out.find(l); pos != std::string::npos; pos = out.find(l, pos + 1)) {
                const bool startOk = pos == 0 || out[pos - 1] == ' ';
                const bool endOk = pos + l.size() == out.size() || out[pos + l.size()] == ' ';
                if (!startOk || !endOk) continue;
                if (pos < bestPos || (pos == bestPos && l.size() > m_normalized[size_t(best)].size())) {
                    best = int(i);
                    bestPos = pos;
                }
                break;
            }
        }
        return best;
    }

    NormalizeOptions m_norm;
    std::vector<std::string> m_labels;
    std::vector<std::string> m_normalized;
};

}  // namespace

Made makeLabel(const nlohmann::json& params, const ScorerOptions&) {
    auto norm = NormalizeOptions::fromParams(params, "label");
    if (!norm) return norm.error();
    auto it = params.find("labels");
    if (it == params.end() || !it->is_array() || it->empty())
        return Error{"label: param 'labels' must be a non-empty array of strings (the label set)"};
    std::vector<std::string> labels;
    std::set<std::string> seen;
    for (const auto& l : *it) {
        if (!l.is_string() || l.get_ref<const std::string&>().empty())
            return Error{"label: param 'labels' must hold non-empty strings, not " + l.dump()};
        const std::string folded = normalizeText(l.get<std::string>(), *norm);
        if (folded.empty())
            return Error{"label: label '" + l.get<std::string>() + "' is empty after normalisation (set punctuation: false?)"};
        if (!seen.insert(folded).second)
            return Error{"label: labels " + it->dump() + " name '" + l.get<std::string>() + "' twice (after normalisation)"};
        labels.push_back(l.get<std::string>());
    }
    return std::unique_ptr<Scorer>(std::make_unique<LabelScorer>(*norm, std::move(labels)));
}

}  // namespace verdict::core::scorers
