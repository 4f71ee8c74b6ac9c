#include "core/report/report_decision.h"

#include "core/models/model_card_json.h"
#include "core/report/report_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace verdict::core {

const char* winnerName(Winner w) {
    switch (w) {
    case Winner::A: return "A";
    case Winner::B: return "B";
    case Winner::Tie: return "tie";
    case Winner::None: return "none";
    }
    return "none";
}

const std::vector<CriterionInfo>& reportCriteria() {
    static const std::vector<CriterionInfo> kCriteria = {
        {"accuracy", "Accuracy (overall)", true, 3.0, false},
        {"preference", "Preference (judged)", true, 3.0, false},
        {"ttft", "Time to first token (P50)", false, 1.0, false},
        {"tpot", "Time per output token (P50)", false, 1.0, false},
        {"p99", "End-to-end latency (P99)", false, 1.0, false},
        {"throughput", "Output throughput (best batch)", true, 1.0, false},
        {"memory", "Memory", false, 1.0, false},
        {"cost", "Cost per 1M output tokens", false, 1.0, false},
        {"context", "Context length (trained)", true, 0.5, false},
        {"params", "Parameters (total / active)", false, 0.0, true},
        {"license", "License", true, 0.0, true},
    };
    return kCriteria;
}

std::map<std::string, double> defaultCriterionWeights() {
    std::map<std::string, double> w;
    for (const auto& c : reportCriteria()) w[c.key] = c.defaultWeight;
    return w;
}

namespace {

const CriterionInfo* criterion(std::string_view key) {
    for (const auto& c : reportCriteria())
        if (key == c.key) return &c;
    return nullptr;
}

std::string knownKeys() {
    std::string s;
    for (const auto& c : reportCriteria()) {
        if (!s.empty()) s += ", ";
        s += c.key;
    }
    return s;
}

std::string trim(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
    return std::string(s.substr(b, e - b));
}

std::string fmt(const char* f, double v) {
    char buf[96];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

}  // namespace

Result<void> validateCriterionWeights(const std::map<std::string, double>& weights) {
    for (const auto& [k, v] : weights) {
        if (!criterion(k)) return Error{"unknown criterion '" + k + "' (known: " + knownKeys() + ")"};
        if (!std::isfinite(v) || v < 0) return Error{"weight of '" + k + "' must be a finite number >= 0"};
    }
    return {};
}

Result<std::map<std::string, double>> parseCriterionWeights(std::string_view text) {
    auto weights = defaultCriterionWeights();
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        const std::string part = trim(text.substr(start, comma - start));
        start = comma + 1;
        if (part.empty()) {
            if (comma == text.size()) break;
            continue;
        }
        const size_t eq = part.find('=');
        if (eq == std::string::npos) return Error{"weights: '" + part + "' is not NAME=VALUE"};
        const std::string key = trim(std::string_view(part).substr(0, eq));
        const std::string val = trim(std::string_view(part).substr(eq + 1));
        if (!criterion(key)) return Error{"weights: unknown criterion '" + key + "' (known: " + knownKeys() + ")"};
        double v = 0;
        auto [end, ec] = std::from_chars(val.data(), val.data() + val.size(), v);
        if (val.empty() || ec != std::errc() || end != val.data() + val.size() || !std::isfinite(v) || v < 0)
            return Error{"weights: '" + val + "' (for " + key + ") is not a number >= 0"};
        weights[key] = v;
        if (comma == text.size()) break;
    }
    return weights;
}

namespace {

// Compares two measured figures with the 5 % tie band.
Winner compareMeasured(double a, double b, bool higherIsBetter, std::string* note) {
    const double scale = std::max(std::fabs(a), std::fabs(b));
    if (scale == 0 || std::fabs(a - b) / scale < kTieRelative) {
        *note = "within 5 % of each other";
        return Winner::Tie;
    }
    const bool aBetter = higherIsBetter ? a > b : a < b;
    return aBetter ? Winner::A : Winner::B;
}

// "62.5 % [40.1–81.0]" for a win rate and its interval.
std::string winRateCell(double rate, const Interval& ci) {
    return formatPercent(rate) + " [" + fmt("%.1f", ci.lo * 100) + "\u2013" + fmt("%.1f", ci.hi * 100) + "]";
}

std::string accuracyCell(const AccuracyCell& c) {
    return winRateCell(c.accuracy, c.ci);
}

// The judged-preference row (docs/report.md "Decision"): the primary judge's win rates of A and
// B over the decided items; a winner only when the Wilson interval of A's rate excludes 50 %.
void preferenceRow(const ReportPreference& p, DecisionRow& r) {
    if (!p.primary) {
        r.note = "not judged: " + p.missing;
        return;
    }
    const ReportJudge& j = p.judges[*p.primary];
    r.label = "Preference (" + j.label + ")";
    const WinRate& w = j.winRate;
    std::string basis = std::to_string(w.items) + " items: " + std::to_string(w.winsA) + " A, " + std::to_string(w.winsB) +
                        " B, " + std::to_string(w.ties) + " ties";
    if (w.errors) basis += ", " + std::to_string(w.errors) + " unreadable";
    if (j.positionBias.flipRate) basis += "; position bias " + formatPercent(*j.positionBias.flipRate);
    if (p.judges.size() > 1) basis += "; " + std::to_string(p.judges.size()) + " judges in the report";
    if (!w.winRateA) {
        r.winner = Winner::Tie;
        r.note = "no item decided (" + basis + ")";
        return;
    }
    r.aNumber = *w.winRateA;
    r.bNumber = 1.0 - *w.winRateA;
    r.aValue = winRateCell(*r.aNumber, w.winRateACi);
    r.bValue = winRateCell(*r.bNumber, {1.0 - w.winRateACi.hi, 1.0 - w.winRateACi.lo});
    if (w.winRateACi.lo > 0.5) r.winner = Winner::A;
    else if (w.winRateACi.hi < 0.5) r.winner = Winner::B;
    else r.winner = Winner::Tie;
    r.note = std::string(r.winner == Winner::Tie ? "95 % interval includes 50 %" : "95 % interval excludes 50 %") +
             " (win rate of the decided; " + basis + ")";
}

uint64_t referenceMemory(const ReportPerfPoint& p) {
    return static_cast<uint64_t>(p.weightsBytes + p.kvBytes + p.scratchBytes);
}

}  // namespace

std::vector<DecisionRow> buildDecisionTable(const ReportData& d, const std::map<std::string, double>& weights) {
    std::vector<DecisionRow> rows;
    const ReportPerfPoint* refA = d.perfA.reference ? &d.perfA.points[*d.perfA.reference] : nullptr;
    const ReportPerfPoint* refB = d.perfB.reference ? &d.perfB.points[*d.perfB.reference] : nullptr;
    const bool perfBoth = d.perfA.missing.empty() && d.perfB.missing.empty();
    const bool samePoint = refA && refB && refA->promptTokens == refB->promptTokens && refA->genTokens == refB->genTokens;

    for (const auto& c : reportCriteria()) {
        DecisionRow r;
        r.key = c.key;
        r.label = c.label;
        r.higherIsBetter = c.higherIsBetter;
        auto w = weights.find(c.key);
        r.weight = c.informational ? 0.0 : (w != weights.end() ? w->second : c.defaultWeight);
        r.aValue = r.bValue = kDash;
        const std::string key = c.key;

        // Speed rows from the reference points (batch 1 at the same prompt/gen for both).
        auto speedRow = [&](auto field, auto format, const char* what) {
            if (!perfBoth) {
                r.note = "no sweep for " + std::string(!d.perfA.missing.empty() && !d.perfB.missing.empty() ? "either model"
                                                     : !d.perfA.missing.empty() ? "A" : "B");
                return;
            }
            if (!refA || !refB || !samePoint) {
                if (refA) r.aValue = format(field(*refA));
                if (refB) r.bValue = format(field(*refB));
                r.note = "the sweeps share no batch-1 point: not compared";
                return;
            }
            r.aNumber = field(*refA);
            r.bNumber = field(*refB);
            r.aValue = format(*r.aNumber);
            r.bValue = format(*r.bNumber);
            r.winner = compareMeasured(*r.aNumber, *r.bNumber, c.higherIsBetter, &r.note);
            if (r.note.empty())
                r.note = std::string(what) + " at prompt " + std::to_string(refA->promptTokens) + ", gen " +
                         std::to_string(refA->genTokens) + ", batch 1";
        };

        if (key == "accuracy") {
            if (d.accuracy.refused) {
                r.note = "not compared: " + d.accuracy.refusedReason;
            } else if (d.accuracy.a.overall.n == 0 || d.accuracy.b.overall.n == 0) {
                r.note = "no scored items";
            } else {
                r.aNumber = d.accuracy.a.overall.accuracy;
                r.bNumber = d.accuracy.b.overall.accuracy;
                r.aValue = accuracyCell(d.accuracy.a.overall);
                r.bValue = accuracyCell(d.accuracy.b.overall);
                const double p = d.accuracy.paired ? d.accuracy.paired->mcnemarP : 1.0;
                if (d.accuracy.paired && p < 0.05 && *r.aNumber != *r.bNumber) {
                    r.winner = *r.aNumber > *r.bNumber ? Winner::A : Winner::B;
                    r.note = "significant (McNemar p = " + formatPValue(p) + ")";
                } else {
                    r.winner = Winner::Tie;
                    r.note = "difference not significant (McNemar p = " + formatPValue(p) + ")";
                }
            }
        } else if (key == "preference") {
            preferenceRow(d.preference, r);
        } else if (key == "ttft") {
            speedRow([](const ReportPerfPoint& p) { return p.ttftP50; }, formatMs, "P50");
        } else if (key == "tpot") {
            speedRow([](const ReportPerfPoint& p) { return p.tpotP50; }, formatMs, "P50");
        } else if (key == "p99") {
            speedRow([](const ReportPerfPoint& p) { return p.e2eP99; }, formatMs, "P99 end-to-end");
        } else if (key == "throughput") {
            if (!perfBoth) {
                r.note = "no sweep for both models";
            } else {
                r.aNumber = d.perfA.maxOutputTokPerS;
                r.bNumber = d.perfB.maxOutputTokPerS;
                r.aValue = formatTokPerS(*r.aNumber);
                r.bValue = formatTokPerS(*r.bNumber);
                r.winner = compareMeasured(*r.aNumber, *r.bNumber, true, &r.note);
                if (r.note.empty()) r.note = "best output tok/s over the sweep's points";
            }
        } else if (key == "memory") {
            if (perfBoth && samePoint) {
                r.aNumber = static_cast<double>(referenceMemory(*refA));
                r.bNumber = static_cast<double>(referenceMemory(*refB));
                r.note = "weights + KV + scratch at the reference point";
            } else if (d.a.cardAvailable && d.b.cardAvailable) {
                r.aNumber = static_cast<double>(d.a.weightsBytes);
                r.bNumber = static_cast<double>(d.b.weightsBytes);
                r.note = "weights only, from the model files (no common sweep point)";
            } else {
                r.note = "no sweep and no readable model file";
            }
            if (r.aNumber) {
                r.aValue = formatBytes(static_cast<uint64_t>(*r.aNumber));
                r.bValue = formatBytes(static_cast<uint64_t>(*r.bNumber));
                std::string tieNote;
                r.winner = compareMeasured(*r.aNumber, *r.bNumber, false, &tieNote);
                if (!tieNote.empty()) r.note = tieNote + "; " + r.note;
            }
        } else if (key == "cost") {
            if (!d.cost.missing.empty()) {
                r.note = d.cost.missing;
            } else if (!d.cost.a.missing.empty() || !d.cost.b.missing.empty()) {
                r.note = !d.cost.a.missing.empty() ? "A: " + d.cost.a.missing : "B: " + d.cost.b.missing;
            } else {
                r.aNumber = d.cost.a.device.usdPerMtok;
                r.bNumber = d.cost.b.device.usdPerMtok;
                r.aValue = formatUsd(*r.aNumber) + (d.cost.a.estimated ? " (est.)" : "");
                r.bValue = formatUsd(*r.bNumber) + (d.cost.b.estimated ? " (est.)" : "");
                r.winner = compareMeasured(*r.aNumber, *r.bNumber, false, &r.note);
                if (r.note.empty()) r.note = "on " + d.cost.hardwareName;
            }
        } else if (key == "context") {
            if (d.a.cardAvailable && d.b.cardAvailable) {
                r.aNumber = static_cast<double>(d.a.contextTrain);
                r.bNumber = static_cast<double>(d.b.contextTrain);
                r.aValue = std::to_string(d.a.contextTrain) + " tokens";
                r.bValue = std::to_string(d.b.contextTrain) + " tokens";
                r.winner = d.a.contextTrain == d.b.contextTrain ? Winner::Tie
                           : d.a.contextTrain > d.b.contextTrain ? Winner::A
                                                                   : Winner::B;
            } else {
                r.note = "model file not readable";
            }
        } else if (key == "params") {
            auto pv = [](const ReportModel& m) {
                if (!m.cardAvailable) return std::string(kDash);
                std::string s = formatCount(m.paramsTotal);
                if (m.paramsActive != m.paramsTotal) s += " / " + formatCount(m.paramsActive) + " active";
                return s;
            };
            r.aValue = pv(d.a);
            r.bValue = pv(d.b);
            r.note = "informational";
        } else if (key == "license") {
            r.aValue = d.a.license;
            r.bValue = d.b.license;
            r.note = "informational; terms are for a person to check";
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string describeQualityGate(const QualityGate& g) {
    std::string s;
    if (g.noWorseSignificant) s = "no worse than the other at p < 0.05";
    if (g.minAccuracy) s += (s.empty() ? "" : ", ") + std::string("accuracy at least ") + formatPercent(*g.minAccuracy);
    return s.empty() ? "off" : s;
}

Result<void> parseQualityGate(std::string_view mode, QualityGate& g) {
    if (mode == "significant") g.noWorseSignificant = true;
    else if (mode == "off") g.noWorseSignificant = false;
    else return Error{"--quality-gate must be 'significant' or 'off' (not '" + std::string(mode) + "')"};
    return {};
}

Result<void> parseMinAccuracy(std::string_view text, QualityGate& g) {
    std::string t = trim(text);
    if (!t.empty() && t.back() == '%') t = trim(std::string_view(t).substr(0, t.size() - 1));
    double v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v) || v < 0 || v > 100)
        return Error{"--min-accuracy must be a percentage between 0 and 100 (not '" + std::string(text) + "')"};
    g.minAccuracy = v / 100.0;
    return {};
}

namespace {

// The gate over the accuracy row: fills rec.gate* (gateApplied stays false when it cannot be applied).
void applyQualityGate(const std::vector<DecisionRow>& rows, const QualityGate& g, Recommendation& rec) {
    const std::string title = "Quality gate (" + describeQualityGate(g) + ")";
    if (!g.noWorseSignificant && !g.minAccuracy) {
        rec.gate = title + ": not applied";
        return;
    }
    const DecisionRow* acc = nullptr;
    for (const auto& r : rows)
        if (r.key == "accuracy") acc = &r;
    if (!acc || acc->winner == Winner::None || !acc->aNumber || !acc->bNumber) {
        rec.gate = title + ": not applied, accuracy was not compared" +
                   (acc && !acc->note.empty() ? " (" + acc->note + ")" : std::string());
        return;
    }
    rec.gateApplied = true;
    std::string why[2];
    const double value[2] = {*acc->aNumber, *acc->bNumber};
    const std::string shown[2] = {acc->aValue, acc->bValue};
    for (int k = 0; k < 2; ++k) {
        const Winner other = k == 0 ? Winner::B : Winner::A;
        if (g.noWorseSignificant && acc->winner == other)
            why[k] = "significantly less accurate: " + shown[k] + " vs " + shown[1 - k] + ", " + acc->note;
        if (g.minAccuracy && value[k] < *g.minAccuracy)
            why[k] += (why[k].empty() ? "" : "; ") + std::string("accuracy ") + formatPercent(value[k]) + " is below " +
                      formatPercent(*g.minAccuracy);
    }
    rec.gatePassA = why[0].empty();
    rec.gatePassB = why[1].empty();
    auto side = [&](int k) { return std::string(k == 0 ? "A" : "B") + (why[k].empty() ? " passes" : " fails (" + why[k] + ")"); };
    rec.gate = title + ": " + side(0) + ", " + side(1);
}

}  // namespace

Recommendation recommend(const std::vector<DecisionRow>& rows, const ReportModel& a, const ReportModel& b, const QualityGate& gate) {
    Recommendation rec;
    std::vector<std::string> notCounted;
    int counted = 0;
    for (const auto& r : rows) {
        if (r.key == "params" || r.key == "license") continue;
        if (r.winner == Winner::None) {
            notCounted.push_back(r.label + (r.note.empty() ? "" : " (" + r.note + ")"));
            continue;
        }
        if (r.weight <= 0) continue;
        ++counted;
        rec.scoreMax += r.weight;
        const std::string w = " (weight " + fmt("%g", r.weight) + ")";
        if (r.winner == Winner::A) {
            rec.scoreA += r.weight;
            rec.reasons.push_back("A wins " + r.label + ": " + r.aValue + " vs " + r.bValue + w);
        } else if (r.winner == Winner::B) {
            rec.scoreB += r.weight;
            rec.reasons.push_back("B wins " + r.label + ": " + r.bValue + " vs " + r.aValue + w);
        } else {
            rec.reasons.push_back("Tie on " + r.label + ": " + r.note + w);
        }
    }
    for (const auto& n : notCounted) rec.reasons.push_back("Not counted: " + n);
    applyQualityGate(rows, gate, rec);
    rec.reasons.insert(rec.reasons.begin(), rec.gate);

    const std::string pts = fmt("%g", rec.scoreMax);
    if (rec.gateApplied && !rec.gatePassA && !rec.gatePassB) {
        rec.winner = Winner::None;
        rec.headline = "No recommendation: neither model passes the quality gate (" + describeQualityGate(gate) + ")";
    } else if (rec.gateApplied && rec.gatePassA != rec.gatePassB) {
        const bool aWins = rec.gatePassA;
        rec.winner = aWins ? Winner::A : Winner::B;
        const ReportModel& m = aWins ? a : b;
        rec.headline = std::string("Recommend ") + (aWins ? "A" : "B") + " (" + m.label + "): " + (aWins ? "B" : "A") +
                       " fails the quality gate (" + describeQualityGate(gate) + "); weighted points A " + fmt("%g", rec.scoreA) +
                       ", B " + fmt("%g", rec.scoreB) + " of " + pts;
    } else if (counted == 0) {
        rec.winner = Winner::None;
        rec.headline = "No recommendation: no weighted criterion could be compared";
    } else if (rec.scoreA == rec.scoreB) {
        rec.winner = Winner::Tie;
        rec.headline = "No clear winner: A and B each win " + fmt("%g", rec.scoreA) + " of " + pts + " weighted points";
    } else {
        const bool aWins = rec.scoreA > rec.scoreB;
        rec.winner = aWins ? Winner::A : Winner::B;
        const ReportModel& m = aWins ? a : b;
        rec.headline = std::string("Recommend ") + (aWins ? "A" : "B") + " (" + m.label + "): " +
                       fmt("%g", aWins ? rec.scoreA : rec.scoreB) + " of " + pts + " weighted points against " +
                       fmt("%g", aWins ? rec.scoreB : rec.scoreA);
    }
    return rec;
}

namespace {

std::string slaVerdict(const ReportPerfPoint& p, const ReportSla& sla, std::vector<std::string>* misses) {
    std::string s;
    if (sla.ttftMs) {
        const bool ok = p.ttftP99 <= *sla.ttftMs;
        s += "TTFT P99 " + formatMs(p.ttftP99) + (ok ? " <= " : " > ") + formatMs(*sla.ttftMs);
        if (!ok) misses->push_back("TTFT");
    }
    if (sla.tpotMs) {
        const bool ok = p.tpotP99 <= *sla.tpotMs;
        if (!s.empty()) s += ", ";
        s += "TPOT P99 " + formatMs(p.tpotP99) + (ok ? " <= " : " > ") + formatMs(*sla.tpotMs);
        if (!ok) misses->push_back("TPOT");
    }
    return s;
}

std::string deployment(const ReportModel& m, const ReportCost& cost) {
    std::string s = m.side + std::string(": ") + (m.quantization.empty() ? "unknown type" : m.quantization) + ", weights " +
                    formatBytes(m.weightsBytes) + ", KV cache " + formatBytes(m.kvBytesPerToken) + "/token, context " +
                    std::to_string(m.contextTrain) + " tokens";
    if (cost.memoryGb && cost.missing.empty()) {
        const double need = static_cast<double>(m.weightsBytes + m.kvBytesPerToken * m.contextTrain);
        const bool fits = need <= *cost.memoryGb * 1e9;
        s += "; weights + KV at full context " + formatBytes(static_cast<uint64_t>(need)) + (fits ? " fit" : " do NOT fit") +
             " in the " + cost.hardwareName + "'s " + fmt("%g", *cost.memoryGb) + " GB";
    }
    return s;
}

}  // namespace

std::vector<ChecklistAnswer> buildChecklist(const ReportData& d) {
    std::vector<ChecklistAnswer> out;
    const std::string person = "to be checked by a person";

    // 1. Functional fit.
    {
        ChecklistAnswer c{"1. Functional fit: does each model do the job on your own test set?", "", false};
        if (d.accuracy.refused) {
            c.answer = "Not answered from data: " + d.accuracy.refusedReason + ". " + person + ".";
        } else if (!d.accuracy.paired || d.accuracy.paired->nPairs == 0) {
            c.answer = "No item was scored for both models; " + person + ".";
        } else {
            const auto& p = *d.accuracy.paired;
            c.fromData = true;
            c.answer = "On suite '" + d.accuracy.suiteName + "' (" + std::to_string(p.nPairs) + " paired items): A " +
                       accuracyCell(d.accuracy.a.overall) + ", B " + accuracyCell(d.accuracy.b.overall) +
                       "; A - B = " + formatPoints(p.difference) + " (95 % CI " + fmt("%+.1f", p.differenceCi.lo * 100) +
                       " to " + fmt("%+.1f", p.differenceCi.hi * 100) + "), McNemar p = " + formatPValue(p.mcnemarP) +
                       (d.accuracy.significant ? ": a significant difference." : ": not a significant difference.");
            if (p.nPairs < 30) c.answer += " Fewer than 30 items: the intervals are wide; a larger suite would decide more.";
        }
        out.push_back(std::move(c));
    }
    // 2. Performance and cost against the SLA.
    {
        ChecklistAnswer c{"2. Performance and cost: do they meet your latency SLA, and at what cost?", "", false};
        const bool haveSla = d.sla.ttftMs || d.sla.tpotMs;
        const ReportPerfPoint* ref[2] = {d.perfA.reference ? &d.perfA.points[*d.perfA.reference] : nullptr,
                                         d.perfB.reference ? &d.perfB.points[*d.perfB.reference] : nullptr};
        std::string perf;
        for (int k = 0; k < 2; ++k) {
            const char side = k == 0 ? 'A' : 'B';
            if (!ref[k]) {
                perf += std::string(perf.empty() ? "" : " ") + side + ": no performance data.";
                continue;
            }
            std::vector<std::string> misses;
            if (haveSla) {
                const std::string verdict = slaVerdict(*ref[k], d.sla, &misses);  // fills misses: call it first
                perf += std::string(perf.empty() ? "" : " ") + side + ": " + verdict +
                        (misses.empty() ? " (meets the SLA)." : " (misses the SLA).");
            } else {
                perf += std::string(perf.empty() ? "" : " ") + side + ": TTFT P99 " + formatMs(ref[k]->ttftP99) + ", TPOT P99 " +
                        formatMs(ref[k]->tpotP99) + ".";
            }
        }
        if (d.cost.missing.empty() && d.cost.a.missing.empty() && d.cost.b.missing.empty())
            perf += " Cost on " + d.cost.hardwareName + ": A " + formatUsd(d.cost.a.device.usdPerMtok) + ", B " +
                    formatUsd(d.cost.b.device.usdPerMtok) + " per 1M output tokens" +
                    (d.cost.a.estimated || d.cost.b.estimated ? " (estimated)." : ".");
        else
            perf += " No cost analysis given.";
        c.fromData = haveSla && ref[0] && ref[1];
        c.answer = perf;
        if (!haveSla) c.answer += " No SLA was entered: " + person + " against the target.";
        else if (!c.fromData) c.answer += " " + person + ": run a sweep for both models.";
        out.push_back(std::move(c));
    }
    // 3. Deployment complexity.
    {
        ChecklistAnswer c{"3. Deployment complexity: memory fit, context and quantization", "", false};
        if (d.a.cardAvailable && d.b.cardAvailable) {
            c.fromData = true;
            c.answer = deployment(d.a, d.cost) + ". " + deployment(d.b, d.cost) + ".";
        } else {
            c.answer = "A model file could not be read (" + (d.a.cardAvailable ? d.b.cardError : d.a.cardError) + "); " +
                       person + ".";
        }
        out.push_back(std::move(c));
    }
    // 4. License and compliance.
    {
        ChecklistAnswer c{"4. License and compliance", "", false};
        c.fromData = d.a.licenseKnown && d.b.licenseKnown;
        c.answer = "From the file metadata (general.license): A " + d.a.license + "; B " + d.b.license + ".";
        c.answer += c.fromData ? " Whether the terms allow your use is for a person to confirm."
                               : " A license is missing from the metadata: " + person + ".";
        out.push_back(std::move(c));
    }
    // 5. Ecosystem.
    {
        ChecklistAnswer c{"5. Ecosystem: tooling, community, support and update cadence", "", false};
        auto eco = [](const ReportModel& m) {
            return m.side + std::string(": architecture ") + (m.arch.empty() ? "unknown" : m.arch) + ", tokenizer " +
                   (m.tokenizer.empty() ? "unknown" : m.tokenizer) + ", chat template " +
                   (m.chatTemplateFamily.empty() ? "none" : m.chatTemplateFamily);
        };
        c.answer = "Not measurable from the files: " + person + ". From the files: " + eco(d.a) + "; " + eco(d.b) + ".";
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace verdict::core
