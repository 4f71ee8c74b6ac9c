// toJson(ReportData): the report's stable JSON shape (docs/report.md "JSON").
#include "core/report/report_data.h"
#include "core/stats/run_summary.h"

namespace verdict::core {
namespace {

using json = nlohmann::json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
json optStr(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json modelJson(const ReportModel& m) {
    return {{"side", std::string(1, m.side)},
            {"run_id", m.runId},
            {"label", m.label},
            {"path", m.path},
            {"sha256", m.sha256},
            {"file_bytes", m.fileBytes},
            {"card_available", m.cardAvailable},
            {"card_error", optStr(m.cardError)},
            {"arch", m.arch},
            {"params_total", m.paramsTotal},
            {"params_active", m.paramsActive},
            {"quantization", m.quantization},
            {"context_train", m.contextTrain},
            {"weights_bytes", m.weightsBytes},
            {"kv_bytes_per_token", m.kvBytesPerToken},
            {"license", m.license},
            {"license_known", m.licenseKnown},
            {"chat_template_family", m.chatTemplateFamily},
            {"chat_template_hash", m.chatTemplateHash},
            {"chat_template_mode", m.chatTemplateMode},
            {"tokenizer", m.tokenizer}};
}

json summaryJson(const AccuracySummary& s) {
    return {{"overall", accuracyCellJson(s.overall)},
            {"by_category", byCategoryJson(s)},
            {"n_items", s.nItems},
            {"n_unscored", s.nUnscored},
            {"n_errors", s.nErrors}};
}

// A model's KV cache per token where its card was read (local files), else none.
std::optional<uint64_t> kvPerToken(const ReportModel& m) {
    if (!m.cardAvailable || m.kvBytesPerToken == 0) return std::nullopt;
    return m.kvBytesPerToken;
}

json accuracyJson(const ReportAccuracy& a, std::optional<uint64_t> kvA, std::optional<uint64_t> kvB) {
    json j = {{"refused", a.refused}, {"refused_reason", optStr(a.refusedReason)}};
    if (a.refused) return j;
    j["suite"] = {{"id", a.suiteId}, {"name", a.suiteName}, {"content_hash", a.suiteHash}, {"n_items", a.suiteItems}};
    j["a"] = summaryJson(a.a);
    j["b"] = summaryJson(a.b);
    j["nothing_scored"] = optStr(a.nothingScored);
    if (a.classificationA || a.classificationB)
        j["classification"] = {
            {"a", a.classificationA ? classificationJson(*a.classificationA) : json(nullptr)},
            {"b", a.classificationB ? classificationJson(*a.classificationB) : json(nullptr)}};
    else
        j["classification"] = nullptr;
    if (a.needleA || a.needleB)
        j["needle"] = {{"a", a.needleA ? needleGridJson(*a.needleA, kvA) : json(nullptr)},
                       {"b", a.needleB ? needleGridJson(*a.needleB, kvB) : json(nullptr)}};
    else
        j["needle"] = nullptr;
    if (a.toolsA || a.toolsB)
        j["function_calling"] = {{"a", a.toolsA ? toolCallStatsJson(*a.toolsA) : json(nullptr)},
                                 {"b", a.toolsB ? toolCallStatsJson(*a.toolsB) : json(nullptr)}};
    else
        j["function_calling"] = nullptr;
    if (a.turnsA || a.turnsB)
        j["by_turn"] = {{"a", a.turnsA ? turnAccuracyJson(*a.turnsA) : json(nullptr)},
                        {"b", a.turnsB ? turnAccuracyJson(*a.turnsB) : json(nullptr)}};
    else
        j["by_turn"] = nullptr;
    if (a.paired) {
        const auto& p = *a.paired;
        j["paired"] = {{"n_pairs", p.nPairs},
                       {"both_right", p.bothRight},
                       {"a_only", p.aOnly},
                       {"b_only", p.bOnly},
                       {"both_wrong", p.bothWrong},
                       {"difference", p.difference},
                       {"difference_ci", {p.differenceCi.lo, p.differenceCi.hi}},
                       {"mcnemar_p", p.mcnemarP},
                       {"bootstrap", {{"resamples", p.resamples}, {"seed", p.seed}}},
                       {"significant", a.significant},
                       {"only_in_a", a.onlyInA},
                       {"only_in_b", a.onlyInB},
                       {"unscored", a.unscored}};
    } else {
        j["paired"] = nullptr;
    }
    json dis = json::array();
    for (const auto& d : a.disagreements)
        dis.push_back({{"item_id", d.itemId},
                       {"category", d.category},
                       {"prompt", d.prompt},
                       {"reference", d.reference},
                       {"output_a", d.outputA},
                       {"output_b", d.outputB},
                       {"a_correct", d.aCorrect},
                       {"b_correct", d.bCorrect}});
    j["disagreements"] = dis;
    return j;
}

json preferenceJson(const ReportPreference& p) {
    json judges = json::array(), agreement = json::array(), dis = json::array();
    for (const ReportJudge& j : p.judges) {
        const WinRate& w = j.winRate;
        judges.push_back({{"judge", j.judge},
                          {"label", j.label},
                          {"human", j.human},
                          {"items", w.items},
                          {"wins_a", w.winsA},
                          {"wins_b", w.winsB},
                          {"ties", w.ties},
                          {"both_bad", j.bothBad},
                          {"unreadable", w.errors},
                          {"win_rate_a", opt(w.winRateA)},
                          {"win_rate_a_ci", {w.winRateACi.lo, w.winRateACi.hi}},
                          {"flip_rate", opt(j.positionBias.flipRate)}});
    }
    for (const ReportJudgeAgreement& a : p.agreement)
        agreement.push_back({{"judge_1", a.label1},
                             {"judge_2", a.label2},
                             {"n", a.kappa.n},
                             {"kappa", opt(a.kappa.kappa)},
                             {"kappa_ci", {a.kappa.ci.lo, a.kappa.ci.hi}}});
    for (const ReportJudgeDisagreement& d : p.disagreements) {
        json verdicts = json::array();
        for (const auto& [label, v] : d.verdicts) verdicts.push_back({{"judge", label}, {"verdict", v}});
        dis.push_back({{"item_id", d.itemId},
                       {"category", d.category},
                       {"prompt", d.prompt},
                       {"output_a", d.outputA},
                       {"output_b", d.outputB},
                       {"verdicts", verdicts}});
    }
    return {{"missing", optStr(p.missing)},
            {"primary", p.primary ? json(p.judges[*p.primary].label) : json(nullptr)},
            {"judges", judges},
            {"agreement", agreement},
            {"disagreements", dis}};
}

json pointJson(const ReportPerfPoint& p) {
    return {{"prompt_tokens", p.promptTokens},
            {"gen_tokens", p.genTokens},
            {"batch", p.batch},
            {"error", optStr(p.error)},
            {"requests", p.requests},
            {"failed", p.failed},
            {"ttft_ms", {{"p50", p.ttftP50}, {"p90", p.ttftP90}, {"p99", p.ttftP99}}},
            {"tpot_ms", {{"p50", p.tpotP50}, {"p99", p.tpotP99}}},
            {"itl_ms", {{"p50", p.itlP50}, {"p99", p.itlP99}}},
            {"e2e_ms", {{"p50", p.e2eP50}, {"p90", p.e2eP90}, {"p95", p.e2eP95}, {"p99", p.e2eP99}}},
            {"output_tok_per_s", p.outputTokPerS},
            {"prefill_tok_per_s", p.prefillTokPerS},
            {"decode_tok_per_s", p.decodeTokPerS},
            {"requests_per_s", p.requestsPerS},
            {"roofline", {{"decode_tok_per_s_bound", opt(p.rooflineBoundTokPerS)}, {"fraction", opt(p.rooflineFraction)}}},
            {"memory",
             {{"weights_bytes", p.weightsBytes}, {"kv_bytes", p.kvBytes}, {"scratch_bytes", p.scratchBytes},
              {"peak_rss_bytes", p.peakRssBytes}}}};
}

json perfJson(const ReportPerf& p) {
    json pts = json::array();
    for (const auto& x : p.points) pts.push_back(pointJson(x));
    auto idx = [](const std::vector<size_t>& v) {
        json a = json::array();
        for (size_t i : v) a.push_back(i);
        return a;
    };
    json cold = nullptr;
    if (p.coldStart)
        cold = {{"load_ms", p.coldStart->loadMs},
                {"first_request_ms", p.coldStart->firstRequestMs},
                {"warm_median_ms", p.coldStart->warmMedianMs},
                {"first_vs_warm", p.coldStart->firstVsWarm}};
    return {{"missing", optStr(p.missing)},
            {"sweep_ids", p.sweepIds},
            {"device", p.device},
            {"bandwidth_gb_per_s", opt(p.bandwidthGbPerS)},
            {"bandwidth_warnings", p.bandwidthWarnings},
            {"token_notes", p.tokenNotes},
            {"points", pts},
            {"cold_start", cold},
            {"ttft_series", idx(p.ttftSeries)},
            {"throughput_series", idx(p.throughputSeries)},
            {"reference", p.reference ? json(*p.reference) : json(nullptr)},
            {"largest", p.largest ? json(*p.largest) : json(nullptr)},
            {"max_output_tok_per_s", p.maxOutputTokPerS}};
}

json costModelJson(const ReportCostModel& c) {
    json j = {{"missing", optStr(c.missing)}};
    if (!c.missing.empty()) return j;
    j["throughput_tok_per_s"] = c.throughputTokPerS;
    j["throughput_source"] = c.throughputSource;
    j["estimated"] = c.estimated;
    j["projection_basis"] = optStr(c.projectionBasis);
    j["hourly_usd"] = c.device.hourlyUsd;
    j["usd_per_mtok"] = c.device.usdPerMtok;
    if (c.fleet)
        j["fleet"] = {{"devices", c.fleet->devices},       {"capex_usd", c.fleet->capexUsd},
                      {"monthly_usd", c.fleet->monthlyUsd}, {"tco_3y_usd", c.fleet->tco3yUsd},
                      {"usd_per_mtok_all_in", c.fleet->usdPerMtokAllIn}};
    else
        j["fleet"] = nullptr;
    if (c.baseline)
        j["baseline"] = {{"monthly_savings_usd", c.baseline->monthlySavingsUsd},
                         {"payback_months", opt(c.baseline->paybackMonths)},
                         {"npv_usd", c.baseline->npvUsd},
                         {"horizon_months", c.baseline->horizonMonths}};
    else
        j["baseline"] = nullptr;
    j["cumulative_usd"] = c.cumulativeUsd;
    return j;
}

json costJson(const ReportCost& c) {
    json j = {{"missing", optStr(c.missing)}};
    if (!c.missing.empty()) return j;
    j["hardware"] = {{"id", c.hardwareId}, {"name", c.hardwareName}, {"memory_gb", opt(c.memoryGb)}};
    j["tokens_per_day"] = opt(c.tokensPerDay);
    j["baseline_usd_per_mtok"] = opt(c.baselineUsdPerMtok);
    j["baseline_cumulative_usd"] = c.baselineCumulativeUsd;
    j["a"] = costModelJson(c.a);
    j["b"] = costModelJson(c.b);
    j["assumptions"] = c.assumptionRows;
    return j;
}

}  // namespace

nlohmann::json toJson(const ReportData& d) {
    json decision = json::array();
    for (const auto& r : d.decision)
        decision.push_back({{"criterion", r.key},
                            {"label", r.label},
                            {"a", r.aValue},
                            {"b", r.bValue},
                            {"a_number", opt(r.aNumber)},
                            {"b_number", opt(r.bNumber)},
                            {"higher_is_better", r.higherIsBetter},
                            {"winner", winnerName(r.winner)},
                            {"weight", r.weight},
                            {"note", r.note}});
    json checklist = json::array();
    for (const auto& c : d.checklist)
        checklist.push_back({{"question", c.question}, {"answer", c.answer}, {"from_data", c.fromData}});
    json repro = json::object();
    for (const auto& [k, v] : d.reproducibility.rows) repro[k] = v;
    return {{"title", d.title},
            {"generated_at", d.generatedAt},
            {"models", {{"a", modelJson(d.a)}, {"b", modelJson(d.b)}}},
            {"accuracy", accuracyJson(d.accuracy, kvPerToken(d.a), kvPerToken(d.b))},
            {"preference", preferenceJson(d.preference)},
            {"performance", {{"a", perfJson(d.perfA)}, {"b", perfJson(d.perfB)}}},
            {"cost", costJson(d.cost)},
            {"api_cost", {{"a", d.apiCostA}, {"b", d.apiCostB}}},
            {"quantization", d.quant.is_null() ? json(nullptr)
                                               : json{{"side", d.quantSide ? json(std::string(1, d.quantSide)) : json(nullptr)},
                                                      {"comparison", d.quant}}},
            {"stability", {{"a", d.soakA}, {"b", d.soakB}}},
            {"sla", {{"ttft_ms", opt(d.sla.ttftMs)}, {"tpot_ms", opt(d.sla.tpotMs)}}},
            {"quality_gate", {{"no_worse_significant", d.quality.noWorseSignificant},
                              {"min_accuracy", opt(d.quality.minAccuracy)},
                              {"applied", d.recommendation.gateApplied},
                              {"a_passes", d.recommendation.gatePassA},
                              {"b_passes", d.recommendation.gatePassB},
                              {"summary", d.recommendation.gate}}},
            {"decision", decision},
            {"recommendation",
             {{"winner", winnerName(d.recommendation.winner)},
              {"headline", d.recommendation.headline},
              {"score_a", d.recommendation.scoreA},
              {"score_b", d.recommendation.scoreB},
              {"score_max", d.recommendation.scoreMax},
              {"reasons", d.recommendation.reasons}}},
            {"checklist", checklist},
            {"reproducibility", {{"rows", repro}, {"commands", d.reproducibility.commands}}},
            {"missing", d.missing}};
}

}  // namespace verdict::core
