// The decision report's data model (plain structs, no Qt). Built by buildReportData
// (report_data.h); drawn by ui/report (PDF, HTML, Markdown); shown by the window's Decision screen.
// Units are in the field names or comments; an absent optional means "not measured / not given".
#pragma once

#include "core/stats/accuracy.h"
#include "core/stats/classification.h"
#include "core/stats/tool_call_stats.h"
#include "core/stats/needle_grid.h"
#include "core/stats/turn_accuracy.h"
#include "core/stats/paired_comparison.h"
#include "core/stats/preference.h"
#include "core/tco/cost_model.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// ---------------------------------------------------------------- request

// Service-level objective the user entered (checklist question 2).
struct ReportSla {
    std::optional<double> ttftMs;  // P99 time to first token must be <= this
    std::optional<double> tpotMs;  // P99 time per output token must be <= this
};

// The quality gate, set next to the SLA (docs/report.md "Quality gate"): a model that fails it is
// not recommended, whatever its speed, memory and cost points. The default is what a careful team
// lead would choose: never pick the model that is measurably less accurate on your own suite.
struct QualityGate {
    bool noWorseSignificant = true;        // fail a model significantly less accurate than the other (McNemar p < 0.05)
    std::optional<double> minAccuracy;     // fraction in [0, 1]: fail a model whose overall accuracy is below it
};

// Cost inputs (the same meaning as `verdict tco`, docs/tco.md).
struct ReportTcoInputs {
    std::string hardwareId;                  // catalog device to cost ("" = no cost section)
    std::optional<std::string> measuredOnId; // where the sweeps/runs were measured (default: this-machine for CPU devices)
    std::optional<double> tokensPerDay;      // daily output volume: fleet size, monthly, 3-year curve
    std::optional<double> baselineUsdPerMtok;// hosted API price: payback and NPV
    CostAssumptions assumptions;
    std::optional<std::string> hardwareFile; // user catalog (default: the XDG one when present)
};

struct ReportRequest {
    int64_t runA = 0;
    int64_t runB = 0;
    // Sweeps to use. Each is assigned to the run whose model it measured (same file SHA-256, else
    // the same path). Empty and autoSweeps: the newest completed sweep of each model's file.
    std::vector<int64_t> sweepIds;
    bool autoSweeps = true;
    std::optional<ReportTcoInputs> tco;
    // A quantization trade-off (`verdict quant-compare`) to show. nullopt and autoQuant: the newest
    // stored one whose base or files include model A's or B's file (same path).
    std::optional<int64_t> quantCompareId;
    bool autoQuant = true;
    // Soak tests (`verdict soak`) to show, each assigned to the run whose model it soaked. Empty and
    // autoSoak: the newest stored soak of each model (same file path, or same endpoint and model).
    std::vector<int64_t> soakIds;
    bool autoSoak = true;
    std::map<std::string, double> weights;   // criterion key -> weight >= 0 (missing keys: defaults)
    ReportSla sla;
    QualityGate quality;
    int maxDisagreements = 6;                // items shown where A and B disagree
    // Reproducibility, filled by the caller (the core cannot know them).
    std::string commandLine;                 // the exact command that produced the report
    std::string toolVersion;                 // "verdict 0.1.0"
    std::string buildCommit;                 // git commit of the build ("unknown" outside a checkout)
    std::string generatedAt;                 // UTC; default utcTimestamp()
};

// ---------------------------------------------------------------- models

struct ReportModel {
    char side = 'A';                 // 'A' or 'B'
    int64_t runId = 0;
    std::string label;               // short display name: general.name, else the file name
    std::string path;
    std::string sha256;              // of the file bytes, from the run
    int64_t fileBytes = 0;
    bool cardAvailable = false;      // false: the file could not be read now (cardError says why)
    std::string cardError;
    std::string arch;
    uint64_t paramsTotal = 0;
    uint64_t paramsActive = 0;       // per token (MoE: the used experts)
    std::string quantization;        // dominant tensor type + bits per weight, e.g. "Q4_K (4.8 bpw)"
    uint64_t contextTrain = 0;       // tokens
    uint64_t weightsBytes = 0;
    uint64_t kvBytesPerToken = 0;
    std::string license;             // general.license, or kLicenseUnknown
    bool licenseKnown = false;
    std::string chatTemplateFamily;  // "llama3", "chatml", ..., "none"
    std::string chatTemplateHash;    // SHA-256 of the template text the run used ("" = raw prompts)
    std::string chatTemplateMode;    // "model" | "raw"
    std::string tokenizer;           // tokenizer.ggml.model (+ pre)
};
inline constexpr const char* kLicenseUnknown = "unknown - to be checked by a person";

// ---------------------------------------------------------------- accuracy

struct ReportDisagreement {
    std::string itemId;
    std::string category;
    std::string prompt;              // the suite item's prompt (chat items: the turns joined)
    std::string reference;           // references / gold choice joined with " | "
    std::string outputA, outputB;
    bool aCorrect = false, bCorrect = false;
};

struct ReportAccuracy {
    bool refused = false;            // runs on different suites: no accuracy comparison
    std::string refusedReason;
    std::string suiteName;
    int64_t suiteId = 0;
    std::string suiteHash;           // suites.content_hash
    int64_t suiteItems = 0;
    AccuracySummary a, b;            // overall + per category, Wilson 95 %
    std::optional<PairedComparison> paired;  // McNemar exact + paired bootstrap (not when refused)
    int64_t onlyInA = 0, onlyInB = 0, unscored = 0;
    std::string nothingScored;       // nothingScoredReason(): why no item was paired ("" when some were)
    bool significant = false;        // McNemar p < 0.05
    std::vector<ReportDisagreement> disagreements;
    // Classification suites ("label" scorer): confusion matrix and per-label P / R / F1 of each run.
    std::optional<ClassificationSummary> classificationA, classificationB;
    // Needle-in-a-haystack suites: accuracy per (prompt length, needle depth) of each run.
    std::optional<NeedleGrid> needleA, needleB;
    // Conversation suites with per-turn references: accuracy by turn of each run.
    std::optional<TurnAccuracy> turnsA, turnsB;
    // Function-calling suites: error rate and classes of each run (nullopt: no such items).
    std::optional<ToolCallStats> toolsA, toolsB;
};

// ---------------------------------------------------------------- judged preference

// One judge of runs A and B (a person or a judge model; `verdict judge`, core/judge/judge_runner.h).
struct ReportJudge {
    std::string judge;               // "human:NAME" or the judge model's reference
    std::string label;               // "person ann" / "judge qwen3-8b.gguf"
    bool human = false;
    WinRate winRate;                 // per item; ties (and "both bad") apart, Wilson 95 % of A's rate
    PositionBias positionBias;       // judge models (both orders); zero for people
    int64_t bothBad = 0;
};

struct ReportJudgeAgreement {
    std::string label1, label2;
    Kappa kappa;                     // Cohen's kappa on A / B / tie over the items both judged
};

// An item the judges did not agree on, with every judge's verdict.
struct ReportJudgeDisagreement {
    std::string itemId;
    std::string category;
    std::string prompt;
    std::string outputA, outputB;
    std::vector<std::pair<std::string, std::string>> verdicts;  // judge label, "A" | "B" | "tie" | "unreadable"
};

struct ReportPreference {
    std::string missing;             // non-empty: why there is no judged preference
    std::vector<ReportJudge> judges; // people first, then judge models
    std::optional<size_t> primary;   // the judge the decision row rests on: the person, else the judge model, with the most decided items
    std::vector<ReportJudgeAgreement> agreement;
    std::vector<ReportJudgeDisagreement> disagreements;  // up to ReportRequest::maxDisagreements
};

// ---------------------------------------------------------------- performance

struct ReportPerfPoint {
    int64_t promptTokens = 0, genTokens = 0, batch = 0;
    std::string error;               // non-empty: the point could not be measured
    int64_t requests = 0, failed = 0;
    double ttftP50 = 0, ttftP90 = 0, ttftP99 = 0;   // ms
    double tpotP50 = 0, tpotP99 = 0;                // ms
    double itlP50 = 0, itlP99 = 0;                  // ms
    double e2eP50 = 0, e2eP90 = 0, e2eP95 = 0, e2eP99 = 0;  // ms
    double outputTokPerS = 0, prefillTokPerS = 0, decodeTokPerS = 0, requestsPerS = 0;
    std::optional<double> rooflineBoundTokPerS;     // decode tok/s bound from memory bandwidth
    std::optional<double> rooflineFraction;         // decode tok/s / bound
    int64_t weightsBytes = 0, kvBytes = 0, scratchBytes = 0, peakRssBytes = 0;
};

struct ReportColdStart {
    double loadMs = 0, firstRequestMs = 0, warmMedianMs = 0, firstVsWarm = 0;
};

struct ReportPerf {
    std::string missing;             // non-empty: why there is no performance data
    std::vector<int64_t> sweepIds;
    std::string device;
    std::optional<double> bandwidthGbPerS;
    std::vector<std::string> bandwidthWarnings;      // the sweep's probe found it unreliable (busy machine ...)
    std::vector<std::string> tokenNotes;             // endpoint load points: usage vs the client's count, max_tokens ignored
    std::vector<ReportPerfPoint> points;             // every stored point, grid order
    std::optional<ReportColdStart> coldStart;
    // The selections the charts and the decision table use (indices into points):
    std::vector<size_t> ttftSeries;        // batch 1, smallest gen, by prompt length
    std::vector<size_t> throughputSeries;  // smallest prompt, smallest gen, by batch
    std::optional<size_t> reference;       // batch 1 at the reference prompt/gen (see docs/report.md)
    std::optional<size_t> largest;         // the point with the largest memory footprint
    double maxOutputTokPerS = 0;           // best output tok/s over all points
};

// ---------------------------------------------------------------- cost

struct ReportCostModel {
    std::string missing;             // non-empty: why this model has no cost figures
    double throughputTokPerS = 0;    // measured (or projected) output tok/s the cost uses
    std::string throughputSource;    // "sweep 7: best output tok/s (batch 8)" / "run 3: median decode tok/s"
    bool estimated = false;          // projected to another device: an estimate, never a measurement
    std::string projectionBasis;
    DeviceCost device;
    std::optional<FleetCost> fleet;
    std::optional<BaselineComparison> baseline;
    std::vector<double> cumulativeUsd;  // months 0..36: capex + m x monthly cash operating cost
};

struct ReportCost {
    std::string missing;             // non-empty: why there is no cost section
    std::string hardwareId, hardwareName;
    std::string measuredOnId;
    std::optional<double> purchaseUsd, cloudUsdPerHour, tdpW, memoryGb;
    CostAssumptions assumptions;
    std::optional<double> tokensPerDay;
    std::optional<double> baselineUsdPerMtok;
    std::vector<double> baselineCumulativeUsd;  // months 0..36 paying the API (when a baseline is given)
    ReportCostModel a, b;
    // Assumptions table rows: name, value, source ("catalog: SOURCE, AS_OF" / "default" / "user").
    std::vector<std::vector<std::string>> assumptionRows;
};

// ---------------------------------------------------------------- decision

enum class Winner { A, B, Tie, None };  // None: not comparable (missing data or informational)
const char* winnerName(Winner w);       // "A", "B", "tie", "none"

struct DecisionRow {
    std::string key;                 // criterion key (weights use it): accuracy, ttft, ...
    std::string label;               // "Accuracy (overall)"
    std::string aValue, bValue;      // formatted for display
    std::optional<double> aNumber, bNumber;  // the raw figures compared
    bool higherIsBetter = true;
    Winner winner = Winner::None;
    double weight = 0;
    std::string note;                // why it is a tie / not counted
};

struct Recommendation {
    Winner winner = Winner::None;    // None: nothing could be compared; Tie: equal weighted score
    std::string headline;            // "Recommend B (model name): 5 of 8 weighted points"
    double scoreA = 0, scoreB = 0, scoreMax = 0;  // sum of weights won / of all counted rows
    std::vector<std::string> reasons;  // the quality gate's line first, then the rows
    // The quality gate as applied: whether it could be (accuracy compared), and each model's result.
    bool gateApplied = false;
    bool gatePassA = true, gatePassB = true;
    std::string gate;                // "Quality gate (no worse than the other at p < 0.05): A passes, B fails (...)"
};

struct ChecklistAnswer {
    std::string question;
    std::string answer;
    bool fromData = false;           // false: "to be checked by a person"
};

// ---------------------------------------------------------------- reproducibility

struct ReportReproducibility {
    std::vector<std::pair<std::string, std::string>> rows;  // label, value
    std::vector<std::string> commands;                       // commands that re-create the inputs and the report
};

struct ReportData {
    std::string title;               // "A vs B on SUITE"
    std::string generatedAt;
    ReportModel a, b;
    ReportAccuracy accuracy;
    ReportPreference preference;
    ReportPerf perfA, perfB;
    ReportCost cost;
    // A run made through a hosted provider preset: what its tokens cost at the provider's prices
    // (endpoint_cost.h runCostJson: usd_total, usd_per_mtok_output, prices, price_source, ...);
    // null for other runs. The "hosted API" side beside the hardware TCO of `cost`.
    nlohmann::json apiCostA = nullptr, apiCostB = nullptr;
    // The quantization trade-off shown (the stored shape, docs/cli.md "verdict quant-compare"), or
    // null; quantSide: 'A' or 'B', the model whose file it measured ('\0' when picked by id and
    // neither's).
    nlohmann::json quant = nullptr;
    char quantSide = 0;
    // Stability under load of each model (the stored soak, docs/cli.md "verdict soak"), or null.
    nlohmann::json soakA = nullptr, soakB = nullptr;
    ReportSla sla;
    QualityGate quality;
    std::vector<DecisionRow> decision;
    Recommendation recommendation;
    std::vector<ChecklistAnswer> checklist;
    ReportReproducibility reproducibility;
    std::vector<std::string> missing;  // every missing piece, one sentence each (the summary lists them)
};

}  // namespace verdict::core
