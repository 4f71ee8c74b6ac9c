#include "core/stats/tool_call_stats.h"

#include "core/score/tool_call_scorer.h"

#include <algorithm>

namespace verdict::core {

ToolCallStats toolCallStats(const std::vector<std::string>& errorClasses) {
    ToolCallStats s;
    s.items = int64_t(errorClasses.size());
    for (const auto& name : toolCallErrorNames()) s.byClass.push_back({name, 0, 0, {}});
    for (const auto& c : errorClasses) {
        if (c.empty()) continue;
        ++s.errors;
        auto it = std::find_if(s.byClass.begin(), s.byClass.end(), [&](const ToolCallClassRate& r) { return r.name == c; });
        if (it == s.byClass.end()) it = s.byClass.insert(s.byClass.end(), ToolCallClassRate{c, 0, 0, {}});
        ++it->count;
    }
    auto rate = [&](int64_t k) { return s.items > 0 ? double(k) / double(s.items) : 0.0; };
    s.errorRate = rate(s.errors);
    s.errorCi = wilsonInterval(s.errors, s.items);
    for (auto& r : s.byClass) {
        r.rate = rate(r.count);
        r.ci = wilsonInterval(r.count, s.items);
    }
    return s;
}

std::optional<ToolCallStats> toolCallStatsOfRun(const std::vector<RunItemRecord>& items) {
    std::vector<std::string> classes;
    for (const auto& r : items) {
        auto it = r.details.find("tool_error");
        if (it != r.details.end() && it->is_string()) classes.push_back(it->get<std::string>());
    }
    if (classes.empty()) return std::nullopt;
    return toolCallStats(classes);
}

nlohmann::json toolCallStatsJson(const ToolCallStats& s) {
    nlohmann::json byClass = nlohmann::json::array();
    for (const auto& c : s.byClass)
        byClass.push_back({{"class", c.name}, {"count", c.count}, {"rate", c.rate}, {"ci", {c.ci.lo, c.ci.hi}}});
    return {{"items", s.items},
            {"errors", s.errors},
            {"error_rate", s.errorRate},
            {"error_rate_ci", {s.errorCi.lo, s.errorCi.hi}},
            {"by_class", std::move(byClass)}};
}

}  // namespace verdict::core
