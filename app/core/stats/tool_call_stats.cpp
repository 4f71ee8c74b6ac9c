#include "core/stats/tool_call_stats.h"

#include "core/score/tool_call_scorer.h"

#include <algorithm>

namespace verdict::core {

ToolCallStats toolCallStats(const std::vector<std::string>& errorClasses, const std::vector<std::pair<bool, bool>>& retries) {
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
    for (const auto& [retried, recovered] : retries) {
        s.retried += retried ? 1 : 0;
        s.recovered += retried && recovered ? 1 : 0;
    }
    s.recoveryRate = s.retried > 0 ? double(s.recovered) / double(s.retried) : 0.0;
    s.recoveryCi = wilsonInterval(s.recovered, s.retried);
    s.errorRateAfterRetries = rate(s.errors - s.recovered);
    s.errorAfterRetriesCi = wilsonInterval(s.errors - s.recovered, s.items);
    return s;
}

std::optional<ToolCallStats> toolCallStatsOfRun(const std::vector<RunItemRecord>& items) {
    std::vector<std::string> classes;
    std::vector<std::pair<bool, bool>> retries;
    for (const auto& r : items) {
        auto it = r.details.find("tool_error");
        if (it == r.details.end() || !it->is_string()) continue;
        classes.push_back(it->get<std::string>());
        auto tried = r.details.find("tool_retries");
        auto rec = r.details.find("tool_recovered");
        retries.emplace_back(tried != r.details.end() && tried->is_array() && !tried->empty(),
                             rec != r.details.end() && rec->is_boolean() && rec->get<bool>());
    }
    if (classes.empty()) return std::nullopt;
    return toolCallStats(classes, retries);
}

nlohmann::json toolCallStatsJson(const ToolCallStats& s) {
    nlohmann::json byClass = nlohmann::json::array();
    for (const auto& c : s.byClass)
        byClass.push_back({{"class", c.name}, {"count", c.count}, {"rate", c.rate}, {"ci", {c.ci.lo, c.ci.hi}}});
    return {{"items", s.items},
            {"errors", s.errors},
            {"error_rate", s.errorRate},
            {"error_rate_ci", {s.errorCi.lo, s.errorCi.hi}},
            {"by_class", std::move(byClass)},
            {"retries", s.retried == 0 ? nlohmann::json(nullptr)
                                       : nlohmann::json{{"retried", s.retried},
                                                        {"recovered", s.recovered},
                                                        {"recovery_rate", s.recoveryRate},
                                                        {"recovery_ci", {s.recoveryCi.lo, s.recoveryCi.hi}},
                                                        {"error_rate_after", s.errorRateAfterRetries},
                                                        {"error_rate_after_ci", {s.errorAfterRetriesCi.lo, s.errorAfterRetriesCi.hi}}}}};
}

}  // namespace verdict::core
