// The decision half of the report: the criteria, the user's weights, the table of winners per
// criterion, the weighted recommendation and the five-question checklist. Pure functions over
// ReportData, so they are tested on hand-made contents (tests/core/test_report_data.cpp).
//
// Winner rules (docs/report.md "Decision"):
//   accuracy        the higher accuracy wins only when McNemar's exact p < 0.05; otherwise a tie
//   preference      the primary judge's (a person before a judge model) win rate over the decided
//                   items: a winner only when its Wilson 95 % interval excludes 50 %; otherwise a tie
//   measured speed  the better figure wins when it is at least kTieRelative (5 %) better; else a tie
//   context         the longer training context wins; equal is a tie
//   params, license informational rows: never a winner, weight 0
// A row whose figure is missing for either model is not counted (winner None, its note says why).
// The recommendation is the model with the larger sum of the weights of the rows it won.
#pragma once

#include "core/report/report_types.h"
#include "verdict/engine/result.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

inline constexpr double kTieRelative = 0.05;

struct CriterionInfo {
    const char* key;          // weights use it: --weights accuracy=3,ttft=1
    const char* label;
    bool higherIsBetter;
    double defaultWeight;
    bool informational;       // never wins
};
// accuracy, preference, ttft, tpot, p99, throughput, memory, cost, context, params, license (in table order).
const std::vector<CriterionInfo>& reportCriteria();
std::map<std::string, double> defaultCriterionWeights();

// "accuracy=3,ttft=1.5" -> the defaults with those keys replaced. Errors name the bad part:
// unknown criterion (listing the known ones), a value that is not a finite number >= 0.
Result<std::map<std::string, double>> parseCriterionWeights(std::string_view text);
// Checks an already-built map the same way (unknown keys, negative or non-finite values).
Result<void> validateCriterionWeights(const std::map<std::string, double>& weights);

// Rows in reportCriteria() order from the models, accuracy, performance and cost of `data`.
std::vector<DecisionRow> buildDecisionTable(const ReportData& data, const std::map<std::string, double>& weights);
// Weighted recommendation over the counted rows; reasons name the rows won and the missing ones.
// Then the quality gate (from the accuracy row): a model that fails it is never recommended; when
// one fails, the other is recommended whatever the weighted points; when both fail, none is.
// The gate is not applied (and says so) when accuracy could not be compared.
Recommendation recommend(const std::vector<DecisionRow>& rows, const ReportModel& a, const ReportModel& b,
                         const QualityGate& gate = {});
// "no worse than the other at p < 0.05, at least 60.0 %" / "off".
std::string describeQualityGate(const QualityGate& gate);
// "significant" | "off" (--quality-gate) and a percentage (--min-accuracy) into `gate`; errors name the flag.
Result<void> parseQualityGate(std::string_view mode, QualityGate& gate);
Result<void> parseMinAccuracy(std::string_view percent, QualityGate& gate);
// The five questions, answered from `data` or left to a person.
std::vector<ChecklistAnswer> buildChecklist(const ReportData& data);

}  // namespace verdict::core
