#include "core/report/report_perf_cost.h"

#include "core/endpoints/token_count.h"
#include "core/report/report_format.h"
#include "core/store/sweep_repository.h"
#include "core/tco/tco_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace verdict::core {
namespace {

double num(const nlohmann::json& j, std::initializer_list<const char*> path) {
    const nlohmann::json* cur = &j;
    for (const char* k : path) {
        if (!cur->is_object() || !cur->contains(k)) return 0;
        cur = &(*cur)[k];
    }
    return cur->is_number() ? cur->get<double>() : 0;
}

std::optional<double> optNum(const nlohmann::json& j, std::initializer_list<const char*> path) {
    const nlohmann::json* cur = &j;
    for (const char* k : path) {
        if (!cur->is_object() || !cur->contains(k)) return std::nullopt;
        cur = &(*cur)[k];
    }
    if (!cur->is_number()) return std::nullopt;
    return cur->get<double>();
}

bool sameModel(const SweepRecord& s, const RunRecord& r) {
    if (!s.modelSha256.empty() && !r.modelSha256.empty()) return s.modelSha256 == r.modelSha256;
    return !s.modelPath.empty() && s.modelPath == r.modelPath;
}

std::string fmt(const char* f, double v) {
    char buf[96];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

Result<void> loadPoints(SweepRepository& repo, const SweepRecord& s, ReportPerf* perf) {
    auto pts = repo.points(s.id);
    if (!pts) return pts.error();
    perf->sweepIds.push_back(s.id);
    if (perf->device.empty()) perf->device = s.device;
    if (auto bw = optNum(s.environment, {"bandwidth_gb_per_s"})) perf->bandwidthGbPerS = *bw;
    if (s.environment.is_object() && s.environment.contains("bandwidth_probe") && s.environment["bandwidth_probe"].is_object()) {
        const auto& w = s.environment["bandwidth_probe"].value("warnings", nlohmann::json::array());
        if (w.is_array())
            for (const auto& line : w)
                if (line.is_string()) perf->bandwidthWarnings.push_back("sweep " + std::to_string(s.id) + ": " + line.get<std::string>());
    }
    for (const auto& rec : *pts) {
        ReportPerfPoint p = perfPointFromRecord(rec);
        // A later sweep of the same grid point replaces an earlier one.
        auto same = std::find_if(perf->points.begin(), perf->points.end(), [&](const ReportPerfPoint& q) {
            return q.promptTokens == p.promptTokens && q.genTokens == p.genTokens && q.batch == p.batch;
        });
        if (same != perf->points.end()) *same = p;
        else perf->points.push_back(p);
        if (const nlohmann::json m = pointMetrics(rec); m.is_object() && m.contains("token_accounting")) {
            const TokenAccounting a = tokenAccountingFromJson(m["token_accounting"]);
            if (a.requests > 0)
                perf->tokenNotes.push_back("sweep " + std::to_string(s.id) + ", " + m.value("mode", std::string("level")) + " " +
                                           fmt("%g", m.value("level", 0.0)) + ": " + describe(a));
        }
        if (rec.metrics.is_object() && rec.metrics.contains("cold_start") && rec.metrics["cold_start"].is_object()) {
            const auto& c = rec.metrics["cold_start"];
            perf->coldStart = ReportColdStart{num(c, {"load_ms"}), num(c, {"first_request_ms"}), num(c, {"warm_median_ms"}),
                                              num(c, {"first_vs_warm"})};
        }
    }
    return {};
}

}  // namespace

ReportPerfPoint perfPointFromRecord(const SweepPointRecord& r) {
    ReportPerfPoint p;
    p.promptTokens = r.promptTokens;
    p.genTokens = r.genTokens;
    p.batch = r.batch;
    p.error = r.error;
    const nlohmann::json m = pointMetrics(r);
    p.requests = static_cast<int64_t>(num(m, {"requests"}));
    p.failed = static_cast<int64_t>(num(m, {"failed"}));
    p.ttftP50 = num(m, {"ttft_ms", "p50"});
    p.ttftP90 = num(m, {"ttft_ms", "p90"});
    p.ttftP99 = num(m, {"ttft_ms", "p99"});
    p.tpotP50 = num(m, {"tpot_ms", "p50"});
    p.tpotP99 = num(m, {"tpot_ms", "p99"});
    p.itlP50 = num(m, {"itl_ms", "p50"});
    p.itlP99 = num(m, {"itl_ms", "p99"});
    p.e2eP50 = num(m, {"e2e_ms", "p50"});
    p.e2eP90 = num(m, {"e2e_ms", "p90"});
    p.e2eP95 = num(m, {"e2e_ms", "p95"});
    p.e2eP99 = num(m, {"e2e_ms", "p99"});
    p.outputTokPerS = num(m, {"output_tok_per_s"});
    p.prefillTokPerS = num(m, {"prefill_tok_per_s"});
    p.decodeTokPerS = num(m, {"decode_tok_per_s"});
    p.requestsPerS = num(m, {"requests_per_s"});
    p.rooflineBoundTokPerS = optNum(m, {"roofline", "decode_tok_per_s_bound"});
    p.rooflineFraction = optNum(m, {"roofline", "fraction"});
    p.weightsBytes = static_cast<int64_t>(num(m, {"memory", "weights_bytes"}));
    p.kvBytes = static_cast<int64_t>(num(m, {"memory", "kv_bytes"}));
    p.scratchBytes = static_cast<int64_t>(num(m, {"memory", "scratch_bytes"}));
    p.peakRssBytes = static_cast<int64_t>(num(m, {"memory", "peak_rss_bytes"}));
    return p;
}

Result<void> loadSweepPerformance(Database& db, int64_t sweepId, ReportPerf* perf, SweepRecord* record) {
    SweepRepository repo(db);
    auto s = repo.find(sweepId);
    if (!s) return s.error();
    if (!*s) return Error{"sweep " + std::to_string(sweepId) + " does not exist (see verdict sweep list)"};
    if (auto r = loadPoints(repo, **s, perf); !r) return r.error();
    if (std::none_of(perf->points.begin(), perf->points.end(),
                     [](const ReportPerfPoint& p) { return p.error.empty() && p.requests > 0; }))
        perf->missing = "sweep " + std::to_string(sweepId) + " has no measured point";
    if (record) *record = **s;
    return {};
}

Result<void> gatherPerformance(Database& db, const ReportRequest& request, const RunRecord& runA, const RunRecord& runB,
                               ReportPerf* perfA, ReportPerf* perfB, std::vector<SweepRecord>* sweepsUsed) {
    SweepRepository repo(db);
    std::vector<SweepRecord> forA, forB;
    if (!request.sweepIds.empty()) {
        for (int64_t id : request.sweepIds) {
            auto s = repo.find(id);
            if (!s) return s.error();
            if (!*s) return Error{"sweep " + std::to_string(id) + " does not exist (see verdict sweep list)"};
            const bool a = sameModel(**s, runA), b = sameModel(**s, runB);
            if (!a && !b)
                return Error{"sweep " + std::to_string(id) + " measured " + (*s)->modelPath + ", which is neither run " +
                             std::to_string(runA.id) + "'s nor run " + std::to_string(runB.id) + "'s model"};
            if (a) forA.push_back(**s);
            if (b) forB.push_back(**s);
        }
    } else if (request.autoSweeps) {
        auto all = repo.list();
        if (!all) return all.error();
        for (auto it = all->rbegin(); it != all->rend(); ++it) {
            if (it->status != "completed") continue;
            if (it->environment.is_object() && it->environment.contains("purpose")) continue;  // part of a study (quant-compare)
            if (forA.empty() && sameModel(*it, runA)) forA.push_back(*it);
            if (forB.empty() && sameModel(*it, runB)) forB.push_back(*it);
        }
    }
    auto fill = [&](std::vector<SweepRecord>& list, ReportPerf* perf, const RunRecord& run, char side) -> Result<void> {
        for (const auto& s : list) {
            if (auto r = loadPoints(repo, s, perf); !r) return r.error();
            if (std::find_if(sweepsUsed->begin(), sweepsUsed->end(), [&](const SweepRecord& u) { return u.id == s.id; }) ==
                sweepsUsed->end())
                sweepsUsed->push_back(s);
        }
        const bool anyGood = std::any_of(perf->points.begin(), perf->points.end(),
                                         [](const ReportPerfPoint& p) { return p.error.empty() && p.requests > 0; });
        if (list.empty())
            perf->missing = std::string("no latency sweep of model ") + side + " (" + run.modelPath +
                            ") is stored: run `verdict sweep` on it, or pass --sweep ID";
        else if (!anyGood)
            perf->missing = std::string("the sweep of model ") + side + " has no measured point";
        return {};
    };
    if (auto r = fill(forA, perfA, runA, 'A'); !r) return r.error();
    if (auto r = fill(forB, perfB, runB, 'B'); !r) return r.error();
    return {};
}

void selectPerfSeries(ReportPerf* a, ReportPerf* b) {
    auto good = [](const ReportPerfPoint& p) { return p.error.empty() && p.requests > 0; };
    for (ReportPerf* perf : {a, b}) {
        perf->ttftSeries.clear();
        perf->throughputSeries.clear();
        perf->reference.reset();
        perf->largest.reset();
        perf->maxOutputTokPerS = 0;
        if (!perf->missing.empty()) continue;
        int64_t minGen = INT64_MAX, minPrompt = INT64_MAX;
        for (const auto& p : perf->points) {
            if (!good(p)) continue;
            if (p.batch == 1) minGen = std::min(minGen, p.genTokens);
            minPrompt = std::min(minPrompt, p.promptTokens);
        }
        int64_t minGenAtPrompt = INT64_MAX;
        for (const auto& p : perf->points)
            if (good(p) && p.promptTokens == minPrompt) minGenAtPrompt = std::min(minGenAtPrompt, p.genTokens);
        uint64_t biggest = 0;
        for (size_t i = 0; i < perf->points.size(); ++i) {
            const auto& p = perf->points[i];
            if (!good(p)) continue;
            if (p.batch == 1 && p.genTokens == minGen) perf->ttftSeries.push_back(i);
            if (p.promptTokens == minPrompt && p.genTokens == minGenAtPrompt) perf->throughputSeries.push_back(i);
            perf->maxOutputTokPerS = std::max(perf->maxOutputTokPerS, p.outputTokPerS);
            const uint64_t mem = static_cast<uint64_t>(p.weightsBytes + p.kvBytes + p.scratchBytes);
            if (!perf->largest || mem > biggest) {
                biggest = mem;
                perf->largest = i;
            }
        }
        const auto& pts = perf->points;
        std::sort(perf->ttftSeries.begin(), perf->ttftSeries.end(),
                  [&](size_t x, size_t y) { return pts[x].promptTokens < pts[y].promptTokens; });
        std::sort(perf->throughputSeries.begin(), perf->throughputSeries.end(),
                  [&](size_t x, size_t y) { return pts[x].batch < pts[y].batch; });
    }
    // Reference: a batch-1 point both measured (smallest prompt, then gen); else each one's own.
    auto batch1 = [&](const ReportPerf* perf) {
        std::set<std::pair<int64_t, int64_t>> keys;
        if (perf->missing.empty())
            for (const auto& p : perf->points)
                if (good(p) && p.batch == 1) keys.insert({p.promptTokens, p.genTokens});
        return keys;
    };
    const auto ka = batch1(a), kb = batch1(b);
    std::optional<std::pair<int64_t, int64_t>> common;
    for (const auto& k : ka)
        if (kb.count(k)) {
            common = k;
            break;
        }
    for (auto [perf, keys] : {std::pair{a, &ka}, std::pair{b, &kb}}) {
        if (keys->empty()) continue;
        const auto want = common ? *common : *keys->begin();
        for (size_t i = 0; i < perf->points.size(); ++i) {
            const auto& p = perf->points[i];
            if (good(p) && p.batch == 1 && p.promptTokens == want.first && p.genTokens == want.second) perf->reference = i;
        }
    }
}

namespace {

std::string figureSource(const HardwareFigure& f) {
    std::string s = f.source.empty() ? "catalog" : f.source;
    if (!f.asOf.empty()) s += ", " + f.asOf;
    return s;
}

void costOne(const HardwareCatalog& catalog, const ReportTcoInputs& in, const RunRecord& run,
             const std::vector<RunItemRecord>& items, const ReportPerf& perf, const ReportModel& model,
             ReportCostModel* out) {
    TcoRequest req;
    req.hardwareId = in.hardwareId;
    req.assumptions = in.assumptions;
    req.tokensPerDay = in.tokensPerDay;
    req.baselineUsdPerMtok = in.tokensPerDay ? in.baselineUsdPerMtok : std::nullopt;
    if (model.weightsBytes > 0) req.modelBytes = static_cast<double>(model.weightsBytes);
    // The same throughput rule as `verdict tco` (tco_report.h): the sweep's best point, else the run.
    std::string device, what;
    std::optional<ThroughputPoint> best;
    if (perf.missing.empty() && perf.maxOutputTokPerS > 0 && !perf.sweepIds.empty()) {
        std::vector<ThroughputPoint> measured;
        for (const auto& p : perf.points)
            if (p.error.empty()) measured.push_back({p.promptTokens, p.genTokens, p.batch, p.outputTokPerS});
        best = bestThroughputPoint(measured);
    }
    if (best) {
        useSweepThroughput(req, perf.sweepIds.front(), *best);
        device = perf.device;
        what = "sweep " + std::to_string(perf.sweepIds.front());
    } else {
        if (auto r = useRunThroughput(req, run.id, runThroughputOf(items)); !r) {
            out->missing = "no sweep and no item of run " + std::to_string(run.id) + " with a decode rate";
            return;
        }
        device = run.device;
        what = "run " + std::to_string(run.id);
    }
    out->throughputSource = describeThroughput(req, best);
    auto on = measuredOnFor(device, in.measuredOnId, what);
    if (!on) {
        out->missing = on.error().message;
        return;
    }
    req.measuredOnId = *on;
    dropUnprojectablePrefill(catalog, req);
    auto rep = computeTco(catalog, req);
    if (!rep) {
        out->missing = rep.error().message;
        return;
    }
    out->throughputTokPerS = rep->costTps;
    out->estimated = rep->estimated;
    if (rep->projection) out->projectionBasis = rep->projection->basis;
    out->device = rep->device;
    out->fleet = rep->fleet;
    out->baseline = rep->baseline;
    if (rep->fleet)
        for (int m = 0; m <= 36; ++m)
            out->cumulativeUsd.push_back(rep->fleet->capexUsd + m * rep->fleet->monthlyCashOperatingUsd);
}

}  // namespace

Result<ReportCost> gatherCost(const ReportTcoInputs& in, const RunRecord& runA, const RunRecord& runB,
                              const std::vector<RunItemRecord>& itemsA, const std::vector<RunItemRecord>& itemsB,
                              const ReportPerf& perfA, const ReportPerf& perfB, const ReportModel& modelA,
                              const ReportModel& modelB) {
    ReportCost cost;
    if (auto v = validateAssumptions(in.assumptions); !v) return v.error();
    auto catalog = loadHardwareCatalog(in.hardwareFile);
    if (!catalog) return catalog.error();
    auto hw = catalog->lookup(in.hardwareId);
    if (!hw) return hw.error();
    const HardwareEntry& h = **hw;
    cost.hardwareId = h.id;
    cost.hardwareName = h.name;
    cost.measuredOnId = in.measuredOnId.value_or(kThisMachineId);
    cost.purchaseUsd = h.purchaseUsd.value;
    cost.cloudUsdPerHour = h.cloudUsdPerHour.value;
    cost.tdpW = h.tdpW.value;
    cost.memoryGb = h.memoryGb.value;
    cost.assumptions = in.assumptions;
    cost.tokensPerDay = in.tokensPerDay;
    cost.baselineUsdPerMtok = in.baselineUsdPerMtok;
    costOne(*catalog, in, runA, itemsA, perfA, modelA, &cost.a);
    costOne(*catalog, in, runB, itemsB, perfB, modelB, &cost.b);
    if (in.tokensPerDay && in.baselineUsdPerMtok) {
        const double monthly = *in.tokensPerDay * kDaysPerMonth / 1e6 * *in.baselineUsdPerMtok;
        for (int m = 0; m <= 36; ++m) cost.baselineCumulativeUsd.push_back(m * monthly);
    }

    const auto& a = in.assumptions;
    auto opt = [](const std::optional<double>& v, const char* f) { return v ? fmt(f, *v) : std::string(kDash); };
    auto& rows = cost.assumptionRows;
    rows.push_back({"Device", h.name + " (" + h.id + ")", std::string("catalog (") + hardwareOriginName(h.origin) + ")"});
    rows.push_back({"Ownership", ownershipName(a.mode), "user"});
    if (a.mode == Ownership::Buy) {
        rows.push_back({"Purchase price", h.purchaseUsd.value ? formatUsd(*h.purchaseUsd.value) : kDash, figureSource(h.purchaseUsd)});
        rows.push_back({"Amortisation", fmt("%g years", a.years), "user / default"});
        rows.push_back({"Power (TDP)", opt(h.tdpW.value, "%.0f W"), figureSource(h.tdpW)});
        rows.push_back({"Load factor", fmt("%.2f", a.loadFactor), "user / default"});
        rows.push_back({"PUE", fmt("%.2f", a.pue), "user / default"});
        rows.push_back({"Electricity", fmt("$%.3f/kWh", a.electricityUsdPerKwh), "user / default"});
        rows.push_back({"Ops overhead", formatUsd(a.opsUsdPerMonth) + "/month per device", "user / default"});
    } else {
        rows.push_back({"Rent", opt(h.cloudUsdPerHour.value, "$%.2f/hour"), figureSource(h.cloudUsdPerHour)});
    }
    rows.push_back({"Utilisation", formatPercent(a.utilisation, 0), "user / default"});
    rows.push_back({"Fixed yearly costs", formatUsd(a.fixedUsdPerYear), "user / default"});
    rows.push_back({"Discount rate (NPV)", formatPercent(a.discountRate, 1), "user / default"});
    rows.push_back({"Daily volume", in.tokensPerDay ? fmt("%.3g tokens/day", *in.tokensPerDay) : std::string("not given"), "user"});
    rows.push_back({"API baseline", in.baselineUsdPerMtok ? formatUsd(*in.baselineUsdPerMtok) + " per 1M tokens" : std::string("not given"),
                    "user"});
    rows.push_back({"Memory", opt(h.memoryGb.value, "%g GB"), figureSource(h.memoryGb)});
    return cost;
}

}  // namespace verdict::core
