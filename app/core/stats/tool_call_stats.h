// Error rates of a function-calling run: the share of graded items with any error and the share
// of each error class (core/score/tool_call_scorer.h), each with a Wilson 95 % interval. Pure.
#pragma once

#include "core/stats/proportion.h"
#include "core/store/run_record.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

struct ToolCallClassRate {
    std::string name;   // error class name ("no_call", ..., or another class seen, e.g. "error")
    int64_t count = 0;  // items with this class
    double rate = 0;    // count / items (0 when there are no items)
    Interval ci;        // Wilson 95 % of count out of items
};

struct ToolCallStats {
    int64_t items = 0;
    int64_t errors = 0;    // items whose class is not ""
    double errorRate = 0;  // errors / items (0 when there are no items)
    Interval errorCi;      // Wilson 95 % of errors out of items
    // Every toolCallErrorNames() class (zeros included) in that order, then any other class seen
    // (e.g. "error"), in first-seen order.
    std::vector<ToolCallClassRate> byClass;
};

// One entry per graded item: "" = correct, else its error class name.
ToolCallStats toolCallStats(const std::vector<std::string>& errorClasses);

// Over a run's function-calling items (details.tool_error, set by the suite runner: "" correct,
// else the class; "error" when the request failed). nullopt when the run has none.
std::optional<ToolCallStats> toolCallStatsOfRun(const std::vector<RunItemRecord>& items);

// {items, errors, error_rate, error_rate_ci: [lo, hi], by_class: [{class, count, rate, ci}]}
// (docs/cli.md "verdict results").
nlohmann::json toolCallStatsJson(const ToolCallStats& s);

}  // namespace verdict::core
