// The long-context heat map of a needle-in-a-haystack run (core/suite/needle_suite.h): accuracy
// per (context length, needle depth), with the cells the model or device could not hold marked
// (every item of the cell failed; the first error says why), and the KV cache each length needs.
#pragma once

#include "core/store/run_record.h"
#include "core/suite/suite_item.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

struct NeedleCell {
    int64_t contextTokens = 0;
    double depthPct = 0;
    int64_t n = 0;        // items stored for the cell
    int64_t correct = 0;
    int64_t errors = 0;   // items that failed (prompt too long for the context, out of memory, ...)
    std::string error;    // the first failure's message ("" when none)
    bool held() const { return n > errors; }  // false: no item of the cell could run
    std::optional<double> accuracy() const {  // correct / n, failures counting as wrong; none when n = 0
        if (n == 0) return std::nullopt;
        return double(correct) / double(n);
    }
};

struct NeedleGrid {
    std::vector<int64_t> lengths;  // ascending
    std::vector<double> depths;    // ascending
    std::vector<NeedleCell> cells; // lengths.size() x depths.size(), row per length
    const NeedleCell& at(size_t length, size_t depth) const { return cells[length * depths.size() + depth]; }
};

// Items are matched to the suite by index; nullopt when no stored item is a needle item
// (metadata.needle).
std::optional<NeedleGrid> needleGridOfRun(const std::vector<SuiteItem>& suite, const std::vector<RunItemRecord>& items);

// {lengths, depths, kv_bytes_per_token (null when unknown), cells: [{context_tokens, depth_pct,
// n, correct, errors, accuracy, held, error, kv_bytes (null when unknown)}]} (docs/cli.md).
nlohmann::json needleGridJson(const NeedleGrid& grid, std::optional<uint64_t> kvBytesPerToken);

}  // namespace verdict::core
