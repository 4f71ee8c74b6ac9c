#include "core/stats/run_summary.h"

#include <map>

namespace verdict::core {

std::vector<ItemOutcome> outcomesOf(const std::vector<RunItemRecord>& items) {
    std::vector<ItemOutcome> out;
    out.reserve(items.size());
    for (const RunItemRecord& r : items) out.push_back({r.itemId, r.category, r.correct, !r.error.empty()});
    return out;
}

RunSummary summarizeRun(const std::vector<RunItemRecord>& items) {
    RunSummary s;
    s.accuracy = summarizeAccuracy(outcomesOf(items));
    s.nStored = static_cast<int64_t>(items.size());
    double ttft = 0, tps = 0;
    int64_t nTtft = 0, nTps = 0;
    for (const RunItemRecord& r : items) {
        if (r.ttftMs) { ttft += *r.ttftMs; ++nTtft; }
        if (r.decodeTps) { tps += *r.decodeTps; ++nTps; }
        s.tokensIn += r.tokensIn;
        s.tokensOut += r.tokensOut;
        s.totalDurationMs += r.durationMs.value_or(0.0);
    }
    if (nTtft) s.meanTtftMs = ttft / static_cast<double>(nTtft);
    if (nTps) s.meanDecodeTps = tps / static_cast<double>(nTps);
    return s;
}

RunPairing pairRuns(const std::vector<RunItemRecord>& a, const std::vector<RunItemRecord>& b) {
    RunPairing p;
    std::map<int64_t, const RunItemRecord*> inB;
    for (const RunItemRecord& r : b) inB[r.itemIdx] = &r;
    std::map<int64_t, bool> seenA;
    for (const RunItemRecord& r : a) {
        seenA[r.itemIdx] = true;
        auto it = inB.find(r.itemIdx);
        if (it == inB.end()) {
            ++p.onlyInA;
            continue;
        }
        if (!r.correct || !it->second->correct) {
            ++p.unscored;
            const bool failed = (!r.correct && !r.error.empty()) || (!it->second->correct && !it->second->error.empty());
            ++(failed ? p.unscoredError : p.unscoredNoScorer);
            continue;
        }
        p.pairs.push_back({r.itemId, *r.correct, *it->second->correct});
    }
    for (const RunItemRecord& r : b)
        if (!seenA.count(r.itemIdx)) ++p.onlyInB;
    return p;
}

std::string nothingScoredReason(const RunPairing& p) {
    if (!p.pairs.empty()) return {};
    const int64_t both = p.unscored;
    if (both == 0)
        return "nothing to compare: the two runs share no stored item (" + std::to_string(p.onlyInA) + " only in A, " +
               std::to_string(p.onlyInB) + " only in B)";
    std::string s = "nothing was scored: " + std::to_string(both) + " item" + (both == 1 ? " is" : "s are") +
                    " stored in both runs, none scored in both, so there is no accuracy to compare";
    std::string why;
    if (p.unscoredNoScorer > 0)
        why += std::to_string(p.unscoredNoScorer) +
               " have no reference answer, no choices and no scorer (open-ended prompts)";
    if (p.unscoredError > 0)
        why += (why.empty() ? "" : "; ") + std::to_string(p.unscoredError) +
               " failed to render or score (see the item errors: verdict export RUN)";
    s += " (" + why + ")";
    if (p.unscoredNoScorer > 0)
        s += ". Give the suite references or a scorer (docs/cli.md, suite import), or judge the answers by "
             "preference: verdict compare A B --prompt TEXT --vote a|b|tie, or the window's Compare screen";
    return s;
}

nlohmann::json accuracyCellJson(const AccuracyCell& c) {
    return {{"n", c.n},
            {"correct", c.correct},
            {"accuracy", c.n > 0 ? nlohmann::json(c.accuracy) : nlohmann::json(nullptr)},
            {"ci", {c.ci.lo, c.ci.hi}}};
}

nlohmann::json byCategoryJson(const AccuracySummary& s) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [name, cell] : s.byCategory) j[name.empty() ? "(none)" : name] = accuracyCellJson(cell);
    return j;
}

}  // namespace verdict::core
