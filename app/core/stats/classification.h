// Classification statistics of a run whose items are scored by the "label" scorer (issue 22):
// the confusion matrix, precision / recall / F1 per label with intervals, macro-F1. Definitions
// in docs/metrics.md "Classification". Pure functions.
#pragma once

#include "core/stats/paired_comparison.h"
#include "core/stats/proportion.h"
#include "core/store/run_record.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// One item's gold and predicted label ("" = no label found in the output).
struct LabelOutcome {
    std::string gold;
    std::string predicted;
};

struct LabelMetrics {
    std::string label;
    int64_t support = 0;     // items whose gold label this is (TP + FN)
    int64_t predicted = 0;   // items predicted as this label (TP + FP)
    int64_t tp = 0;
    std::optional<double> precision;  // TP / (TP + FP); none when nothing was predicted as it
    std::optional<double> recall;     // TP / (TP + FN); none when no item has it
    std::optional<double> f1;         // 2 TP / (2 TP + FP + FN); none when both counts are 0
    Interval precisionCi{0, 1};       // Wilson 95 % of TP out of TP + FP
    Interval recallCi{0, 1};          // Wilson 95 % of TP out of TP + FN
    Interval f1Ci{0, 1};              // percentile bootstrap 95 % over items
};

struct ClassificationSummary {
    int64_t n = 0;                      // items with a gold label
    int64_t correct = 0;
    double accuracy = 0;                // correct / n (= micro-F1 for single-label items)
    Interval accuracyCi{0, 1};          // Wilson 95 %
    int64_t noLabel = 0;                // outputs in which no label was found
    // Labels in order: gold and predicted labels, sorted (byte order). The confusion matrix is
    // [gold][predicted] over these, plus a last column for "no label found".
    std::vector<std::string> labels;
    std::vector<std::vector<int64_t>> confusion;
    std::vector<LabelMetrics> perLabel;  // one per entry of `labels`
    std::optional<double> macroF1;       // mean F1 over `labels` (scikit-learn's average="macro")
    Interval macroF1Ci{0, 1};            // percentile bootstrap 95 % over items

    const LabelMetrics* find(const std::string& label) const;  // nullptr when the label does not occur
};

// The labels of two runs' summaries (either may be absent), sorted: the rows of a side-by-side table.
std::vector<std::string> unionLabels(const std::optional<ClassificationSummary>& a,
                                     const std::optional<ClassificationSummary>& b);

// From gold/predicted pairs. Empty input gives n = 0 and no labels.
ClassificationSummary summarizeClassification(const std::vector<LabelOutcome>& outcomes,
                                              int resamples = kBootstrapResamples,
                                              uint64_t seed = kBootstrapSeed);

// The "label" scores of stored items (detail.expected / detail.extracted); nullopt when no item
// of the run was scored by "label".
std::optional<ClassificationSummary> classificationOfRun(const std::vector<RunItemRecord>& items);

// {"n", "correct", "accuracy", "accuracy_ci", "no_label", "labels", "confusion",
//  "per_label": [{"label", "support", "predicted", "tp", "precision", "precision_ci", "recall",
//  "recall_ci", "f1", "f1_ci"}], "macro_f1", "macro_f1_ci"} (docs/cli.md).
nlohmann::json classificationJson(const ClassificationSummary& s);

}  // namespace verdict::core
