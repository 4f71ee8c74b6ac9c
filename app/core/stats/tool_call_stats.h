// Error rates of a function-calling run: the share of graded items with any error and the share
// of each error class (core/score/tool_call_scorer.h), each with a Wilson 95 % interval. Pure.
#pragma once

#include "core/stats/proportion.h"
#include "core/store/run_record.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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
    // Retry behaviour (run with tool retries): items whose wrong call got the reason back, those of
    // them that then called right (recovery rate, Wilson 95 %), and the error rate counting a
    // recovered item as right.
    int64_t retried = 0, recovered = 0;
    double recoveryRate = 0;
    Interval recoveryCi;
    double errorRateAfterRetries = 0;
    Interval errorAfterRetriesCi;
};

// One entry per graded item: "" = correct, else its error class name. `retries`: per item, whether
// it was retried and whether that recovered (empty: no retry information).
ToolCallStats toolCallStats(const std::vector<std::string>& errorClasses,
                            const std::vector<std::pair<bool, bool>>& retries = {});

// Over a run's function-calling items (details.tool_error, set by the suite runner: "" correct,
// else the class; "error" when the request failed; details.tool_retries / tool_recovered for the
// retries). nullopt when the run has none.
std::optional<ToolCallStats> toolCallStatsOfRun(const std::vector<RunItemRecord>& items);

// {items, errors, error_rate, error_rate_ci: [lo, hi], by_class: [{class, count, rate, ci}],
// retries: null | {retried, recovered, recovery_rate, recovery_ci, error_rate_after,
// error_rate_after_ci}} (docs/cli.md "verdict results").
nlohmann::json toolCallStatsJson(const ToolCallStats& s);

}  // namespace verdict::core
