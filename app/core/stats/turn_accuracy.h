// Multi-turn consistency (issue 22): accuracy by turn index over a run's conversation items whose
// turns carry references (suite field turn_references; the runner scores each such turn and
// stores it in details.turns[k].correct). Answers "does the model still know at turn 100 what it
// was told at turn 1": per turn index and in ranges of turns, with Wilson 95 % intervals.
#pragma once

#include "core/stats/accuracy.h"
#include "core/store/run_record.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <utility>
#include <vector>

namespace verdict::core {

struct TurnCell {
    int first = 0, last = 0;  // 1-based turn indices the cell covers (first == last for one turn)
    AccuracyCell acc;
};

struct TurnAccuracy {
    std::vector<TurnCell> byTurn;    // one per scored turn index, ascending
    std::vector<TurnCell> byRange;   // ranges of turn indices: 1-5, 6-10, 11-20, 21-50, 51-100, 101-200, ...
    int64_t conversations = 0;       // items with at least one scored turn

    const TurnCell* range(int first, int last) const;  // the byRange cell, nullptr when absent
};

// The turn ranges of two runs' summaries (either may be absent), sorted: the rows of a
// side-by-side table.
std::vector<std::pair<int, int>> unionRanges(const std::optional<TurnAccuracy>& a, const std::optional<TurnAccuracy>& b);

// nullopt when no item has a scored turn. Items that failed part-way count the turns they reached.
std::optional<TurnAccuracy> turnAccuracyOfRun(const std::vector<RunItemRecord>& items);

// {conversations, by_turn: [{turn, n, correct, accuracy, ci}], by_range: [{from, to, n, correct,
// accuracy, ci}]} (docs/cli.md).
nlohmann::json turnAccuracyJson(const TurnAccuracy& t);

}  // namespace verdict::core
