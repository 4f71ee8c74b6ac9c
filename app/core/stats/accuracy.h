// Accuracy of a run, overall and per category, each with its Wilson 95 % interval.
#pragma once

#include "core/stats/proportion.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// What the statistics need from one stored item.
struct ItemOutcome {
    std::string itemId;
    std::string category;          // "" when the suite has none
    std::optional<bool> correct;   // nullopt: nothing could be scored (left out of accuracy)
    bool error = false;            // the item failed (stored with correct = false: counts as wrong)
};

struct AccuracyCell {
    int64_t n = 0;         // scored items
    int64_t correct = 0;
    double accuracy = 0;   // correct / n (0 when n = 0)
    Interval ci{0, 1};     // Wilson 95 %
};

struct AccuracySummary {
    AccuracyCell overall;
    std::map<std::string, AccuracyCell> byCategory;  // only categories that occur; "" is "uncategorised"
    int64_t nItems = 0;     // all outcomes given
    int64_t nUnscored = 0;  // correct == nullopt
    int64_t nErrors = 0;
};

AccuracySummary summarizeAccuracy(const std::vector<ItemOutcome>& outcomes);

}  // namespace verdict::core
