#include "core/stats/classification.h"

#include "core/stats/paired_comparison.h"
#include "core/stats/quantile.h"

#include <algorithm>
#include <map>

namespace verdict::core {

namespace {

struct Counts {
    std::vector<int64_t> tp, fp, fn;
};

// Per-label counts of the items idx[0..m) (indices into the coded outcomes).
Counts countOf(const std::vector<std::pair<int, int>>& coded, const std::vector<size_t>& idx, size_t nLabels) {
    Counts c{std::vector<int64_t>(nLabels, 0), std::vector<int64_t>(nLabels, 0), std::vector<int64_t>(nLabels, 0)};
    for (size_t i : idx) {
        const auto [g, p] = coded[i];
        if (g == p) {
            ++c.tp[size_t(g)];
            continue;
        }
        ++c.fn[size_t(g)];
        if (p >= 0) ++c.fp[size_t(p)];
    }
    return c;
}

std::optional<double> f1Of(int64_t tp, int64_t fp, int64_t fn) {
    const int64_t d = 2 * tp + fp + fn;
    if (d == 0) return std::nullopt;
    return 2.0 * double(tp) / double(d);
}

std::optional<double> macroOf(const Counts& c) {
    double sum = 0;
    int k = 0;
    for (size_t l = 0; l < c.tp.size(); ++l)
        if (auto f = f1Of(c.tp[l], c.fp[l], c.fn[l])) {
            sum += *f;
            ++k;
        }
    if (k == 0) return std::nullopt;
    return sum / k;
}

Interval percentiles(std::vector<double>& v) {
    if (v.empty()) return {0, 1};
    std::sort(v.begin(), v.end());
    return {quantileSorted(v, 0.025), quantileSorted(v, 0.975)};
}

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json ci(const Interval& i) { return nlohmann::json::array({i.lo, i.hi}); }

}  // namespace

ClassificationSummary summarizeClassification(const std::vector<LabelOutcome>& outcomes, int resamples, uint64_t seed) {
    ClassificationSummary s;
    std::map<std::string, int> code;
    for (const auto& o : outcomes) {
        code.emplace(o.gold, 0);
        if (!o.predicted.empty()) code.emplace(o.predicted, 0);
    }
    for (auto& [label, c] : code) {
        c = int(s.labels.size());
        s.labels.push_back(label);
    }
    const size_t L = s.labels.size();
    s.confusion.assign(L, std::vector<int64_t>(L + 1, 0));
    std::vector<std::pair<int, int>> coded;
    coded.reserve(outcomes.size());
    for (const auto& o : outcomes) {
        const int g = code[o.gold];
        const int p = o.predicted.empty() ? -1 : code[o.predicted];
        coded.emplace_back(g, p);
        ++s.confusion[size_t(g)][p < 0 ? L : size_t(p)];
        if (p < 0) ++s.noLabel;
        if (g == p) ++s.correct;
    }
    s.n = int64_t(outcomes.size());
    s.accuracy = s.n ? double(s.correct) / double(s.n) : 0.0;
    s.accuracyCi = wilsonInterval(s.correct, s.n);

    std::vector<size_t> all(coded.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    const Counts c = countOf(coded, all, L);
    for (size_t l = 0; l < L; ++l) {
        LabelMetrics m;
        m.label = s.labels[l];
        m.tp = c.tp[l];
        m.support = c.tp[l] + c.fn[l];
        m.predicted = c.tp[l] + c.fp[l];
        if (m.predicted > 0) m.precision = double(m.tp) / double(m.predicted);
        if (m.support > 0) m.recall = double(m.tp) / double(m.support);
        m.f1 = f1Of(c.tp[l], c.fp[l], c.fn[l]);
        m.precisionCi = wilsonInterval(m.tp, m.predicted);
        m.recallCi = wilsonInterval(m.tp, m.support);
        s.perLabel.push_back(std::move(m));
    }
    s.macroF1 = macroOf(c);

    // Percentile bootstrap over items: resample n items with replacement, recompute.
    if (!coded.empty() && resamples > 0) {
        BootstrapRng rng(seed);
        std::vector<std::vector<double>> f1s(L);
        std::vector<double> macros;
        std::vector<size_t> idx(coded.size());
        for (int r = 0; r < resamples; ++r) {
            for (auto& i : idx) i = size_t(rng.below(coded.size()));
            const Counts rc = countOf(coded, idx, L);
            for (size_t l = 0; l < L; ++l)
                if (auto f = f1Of(rc.tp[l], rc.fp[l], rc.fn[l])) f1s[l].push_back(*f);
            if (auto m = macroOf(rc)) macros.push_back(*m);
        }
        for (size_t l = 0; l < L; ++l) s.perLabel[l].f1Ci = percentiles(f1s[l]);
        s.macroF1Ci = percentiles(macros);
    }
    return s;
}

const LabelMetrics* ClassificationSummary::find(const std::string& label) const {
    for (const auto& m : perLabel)
        if (m.label == label) return &m;
    return nullptr;
}

std::vector<std::string> unionLabels(const std::optional<ClassificationSummary>& a,
                                     const std::optional<ClassificationSummary>& b) {
    std::vector<std::string> out;
    for (const auto* c : {&a, &b})
        if (*c) out.insert(out.end(), (*c)->labels.begin(), (*c)->labels.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::optional<ClassificationSummary> classificationOfRun(const std::vector<RunItemRecord>& items) {
    std::vector<LabelOutcome> outcomes;
    bool any = false;
    for (const auto& r : items) {
        if (!r.scores.is_array()) continue;
        for (const auto& sc : r.scores) {
            if (!sc.is_object() || sc.value("name", "") != "label") continue;
            any = true;
            const auto& d = sc.contains("detail") && sc["detail"].is_object() ? sc["detail"] : nlohmann::json::object();
            const std::string gold = d.value("expected", "");
            if (gold.empty()) continue;  // no gold label: nothing to count
            outcomes.push_back({gold, d.value("extracted", "")});
            break;
        }
    }
    if (!any) return std::nullopt;
    return summarizeClassification(outcomes);
}

nlohmann::json classificationJson(const ClassificationSummary& s) {
    nlohmann::json per = nlohmann::json::array();
    for (const auto& m : s.perLabel)
        per.push_back({{"label", m.label},
                       {"support", m.support},
                       {"predicted", m.predicted},
                       {"tp", m.tp},
                       {"precision", opt(m.precision)},
                       {"precision_ci", ci(m.precisionCi)},
                       {"recall", opt(m.recall)},
                       {"recall_ci", ci(m.recallCi)},
                       {"f1", opt(m.f1)},
                       {"f1_ci", ci(m.f1Ci)}});
    return {{"n", s.n},
            {"correct", s.correct},
            {"accuracy", s.n ? nlohmann::json(s.accuracy) : nlohmann::json(nullptr)},
            {"accuracy_ci", ci(s.accuracyCi)},
            {"no_label", s.noLabel},
            {"labels", s.labels},
            {"confusion", s.confusion},
            {"per_label", per},
            {"macro_f1", opt(s.macroF1)},
            {"macro_f1_ci", ci(s.macroF1Ci)}};
}

}  // namespace verdict::core
