// What the results and diff commands (and the GUI's results views) show about stored runs:
// accuracy with intervals, timing means, and the pairing of two runs' items.
#pragma once

#include "core/stats/accuracy.h"
#include "core/stats/paired_comparison.h"
#include "core/store/run_record.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

struct RunSummary {
    AccuracySummary accuracy;               // scored items only; errors count as wrong
    int64_t nStored = 0;
    std::optional<double> meanTtftMs;       // over items with a TTFT
    std::optional<double> meanDecodeTps;    // over items with a decode rate
    int64_t tokensIn = 0;
    int64_t tokensOut = 0;
    double totalDurationMs = 0;
};

std::vector<ItemOutcome> outcomesOf(const std::vector<RunItemRecord>& items);
RunSummary summarizeRun(const std::vector<RunItemRecord>& items);

// Items of two runs of one suite matched by item index. Only items scored in both are paired;
// the rest are counted.
struct RunPairing {
    std::vector<PairedOutcome> pairs;  // by item index
    int64_t onlyInA = 0;               // stored in A, not in B
    int64_t onlyInB = 0;
    int64_t unscored = 0;              // stored in both, unscored in at least one
    // Why: of `unscored`, pairs where an item failed (prompt or scoring error) and pairs where
    // nothing could grade an item (no reference answer, no choices, no scorer: open-ended prompts).
    int64_t unscoredError = 0;
    int64_t unscoredNoScorer = 0;
};
RunPairing pairRuns(const std::vector<RunItemRecord>& a, const std::vector<RunItemRecord>& b);

// When no item was scored in both runs: one sentence saying so and why, for the CLI, the window
// and the report alike ("" when there are pairs). Never a 0 % that was not measured.
std::string nothingScoredReason(const RunPairing& pairing);

// JSON pieces shared by `verdict run`, `results` and `diff` (shapes in docs/cli.md):
//   cell:  {"n", "correct", "accuracy" (null when n = 0), "ci": [lo, hi]}
nlohmann::json accuracyCellJson(const AccuracyCell& cell);
//   {"<category>": cell, ...} ("" is written as "(none)")
nlohmann::json byCategoryJson(const AccuracySummary& summary);

}  // namespace verdict::core
