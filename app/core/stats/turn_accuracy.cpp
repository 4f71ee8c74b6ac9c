#include "core/stats/turn_accuracy.h"

#include "core/stats/run_summary.h"

#include <algorithm>
#include <map>

namespace verdict::core {

namespace {

// The range a turn index falls in: 1-5, 6-10, 11-20, 21-50, 51-100, then 101-200, 201-500,
// 501-1000, ... (1-2-5 steps), so that early and late turns of long conversations compare.
std::pair<int, int> rangeOf(int turn) {
    if (turn <= 5) return {1, 5};
    if (turn <= 10) return {6, 10};
    int lo = 10;
    for (int64_t scale = 10;; scale *= 10) {
        for (int64_t m : {2, 5, 10}) {
            const int64_t hi = scale * m;
            if (turn <= hi) return {lo + 1, int(hi)};
            lo = int(hi);
        }
    }
}

AccuracyCell cellOf(int64_t n, int64_t correct) {
    AccuracyCell c;
    c.n = n;
    c.correct = correct;
    c.accuracy = n ? double(correct) / double(n) : 0.0;
    c.ci = wilsonInterval(correct, n);
    return c;
}

}  // namespace

std::optional<TurnAccuracy> turnAccuracyOfRun(const std::vector<RunItemRecord>& items) {
    std::map<int, std::pair<int64_t, int64_t>> turns;  // turn -> (n, correct)
    TurnAccuracy t;
    for (const auto& r : items) {
        auto it = r.details.find("turns");
        if (it == r.details.end() || !it->is_array()) continue;
        bool any = false;
        for (const auto& turn : *it) {
            if (!turn.is_object() || !turn.contains("correct") || !turn["correct"].is_boolean()) continue;
            auto& c = turns[turn.value("turn", 0)];
            ++c.first;
            c.second += turn["correct"].get<bool>() ? 1 : 0;
            any = true;
        }
        if (any) ++t.conversations;
    }
    if (turns.empty()) return std::nullopt;
    std::map<std::pair<int, int>, std::pair<int64_t, int64_t>> ranges;
    for (const auto& [turn, c] : turns) {
        t.byTurn.push_back({turn, turn, cellOf(c.first, c.second)});
        auto& rc = ranges[rangeOf(turn)];
        rc.first += c.first;
        rc.second += c.second;
    }
    for (const auto& [range, c] : ranges) t.byRange.push_back({range.first, range.second, cellOf(c.first, c.second)});
    return t;
}

const TurnCell* TurnAccuracy::range(int first, int last) const {
    for (const auto& c : byRange)
        if (c.first == first && c.last == last) return &c;
    return nullptr;
}

std::vector<std::pair<int, int>> unionRanges(const std::optional<TurnAccuracy>& a, const std::optional<TurnAccuracy>& b) {
    std::vector<std::pair<int, int>> out;
    for (const auto* t : {&a, &b})
        if (*t)
            for (const auto& c : (*t)->byRange) out.emplace_back(c.first, c.last);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

nlohmann::json turnAccuracyJson(const TurnAccuracy& t) {
    nlohmann::json byTurn = nlohmann::json::array(), byRange = nlohmann::json::array();
    for (const auto& c : t.byTurn) {
        nlohmann::json j = accuracyCellJson(c.acc);
        j["turn"] = c.first;
        byTurn.push_back(j);
    }
    for (const auto& c : t.byRange) {
        nlohmann::json j = accuracyCellJson(c.acc);
        j["from"] = c.first;
        j["to"] = c.last;
        byRange.push_back(j);
    }
    return {{"conversations", t.conversations}, {"by_turn", byTurn}, {"by_range", byRange}};
}

}  // namespace verdict::core
