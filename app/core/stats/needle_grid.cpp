#include "core/stats/needle_grid.h"

#include <algorithm>
#include <map>

namespace verdict::core {

std::optional<NeedleGrid> needleGridOfRun(const std::vector<SuiteItem>& suite, const std::vector<RunItemRecord>& items) {
    std::map<std::pair<int64_t, double>, NeedleCell> cells;
    for (const RunItemRecord& r : items) {
        if (r.itemIdx < 0 || static_cast<size_t>(r.itemIdx) >= suite.size()) continue;
        const nlohmann::json& meta = suite[static_cast<size_t>(r.itemIdx)].metadata;
        auto it = meta.find("needle");
        if (it == meta.end() || !it->is_object()) continue;
        const int64_t len = it->value("context_tokens", int64_t(0));
        const double depth = it->value("depth_pct", 0.0);
        NeedleCell& c = cells[{len, depth}];
        c.contextTokens = len;
        c.depthPct = depth;
        ++c.n;
        if (r.correct.value_or(false)) ++c.correct;
        if (!r.error.empty()) {
            ++c.errors;
            if (c.error.empty()) c.error = r.error;
        }
    }
    if (cells.empty()) return std::nullopt;
    NeedleGrid g;
    for (const auto& [key, c] : cells) {
        if (std::find(g.lengths.begin(), g.lengths.end(), key.first) == g.lengths.end()) g.lengths.push_back(key.first);
        if (std::find(g.depths.begin(), g.depths.end(), key.second) == g.depths.end()) g.depths.push_back(key.second);
    }
    std::sort(g.lengths.begin(), g.lengths.end());
    std::sort(g.depths.begin(), g.depths.end());
    for (int64_t len : g.lengths)
        for (double d : g.depths) {
            auto it = cells.find({len, d});
            NeedleCell c = it != cells.end() ? it->second : NeedleCell{};
            c.contextTokens = len;
            c.depthPct = d;
            g.cells.push_back(std::move(c));
        }
    return g;
}

nlohmann::json needleGridJson(const NeedleGrid& g, std::optional<uint64_t> kvBytesPerToken) {
    nlohmann::json cells = nlohmann::json::array();
    for (const NeedleCell& c : g.cells) {
        const auto acc = c.accuracy();
        cells.push_back({{"context_tokens", c.contextTokens},
                         {"depth_pct", c.depthPct},
                         {"n", c.n},
                         {"correct", c.correct},
                         {"errors", c.errors},
                         {"accuracy", acc ? nlohmann::json(*acc) : nlohmann::json(nullptr)},
                         {"held", c.held()},
                         {"error", c.error},
                         {"kv_bytes", kvBytesPerToken ? nlohmann::json(*kvBytesPerToken * uint64_t(c.contextTokens))
                                                      : nlohmann::json(nullptr)}});
    }
    return {{"lengths", g.lengths},
            {"depths", g.depths},
            {"kv_bytes_per_token", kvBytesPerToken ? nlohmann::json(*kvBytesPerToken) : nlohmann::json(nullptr)},
            {"cells", cells}};
}

}  // namespace verdict::core
