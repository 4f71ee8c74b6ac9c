// verdict report --run A --run B [--sweep ID ...] [--hardware ID --tokens-per-day N ...]
//                [--weights accuracy=3,ttft=1] -o report.pdf [--format pdf|html|md] [--json]
// The decision report: models, accuracy with the paired test, performance from stored sweeps,
// cost, the decision table with a weighted recommendation, the checklist and how to reproduce it.
// Data: core/report (buildReportData); drawing: ui/report (verdict_report, Qt Gui + Charts, run
// offscreen when there is no display). What each section shows: docs/report.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
#include "cli/options.h"
#include "core/report/report_command.h"
#include "core/report/report_data.h"
#include "core/report/report_decision.h"
#include "core/store/store.h"
#include "core/version.h"
#include "report/report_renderer.h"

#include <QApplication>
#include <QFile>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace verdict::cli {
namespace {

std::optional<int64_t> parseId(const std::string& s) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v <= 0) return std::nullopt;
    return v;
}

// Qt Charts draw through QGraphicsScene, which needs a QApplication. Without a display the
// offscreen platform plugin is used, so the command works over ssh and in CI.
std::unique_ptr<QApplication> ensureApplication() {
    if (QCoreApplication::instance()) return nullptr;
    const char* display = std::getenv("DISPLAY");
    const char* wayland = std::getenv("WAYLAND_DISPLAY");
    const char* platform = std::getenv("QT_QPA_PLATFORM");
    if ((!display || !*display) && (!wayland || !*wayland) && (!platform || !*platform))
        setenv("QT_QPA_PLATFORM", "offscreen", 1);
    // Offscreen without a session: Qt's note that XDG_RUNTIME_DIR is unset says nothing useful to
    // a report user; every other Qt message still reaches stderr.
    qInstallMessageHandler([](QtMsgType, const QMessageLogContext&, const QString& msg) {
        if (msg.contains("XDG_RUNTIME_DIR")) return;
        std::fprintf(stderr, "%s\n", msg.toLocal8Bit().constData());
    });
    static int argc = 1;
    static char name[] = "verdict";
    static char* argv[] = {name, nullptr};
    return std::make_unique<QApplication>(argc, argv);
}

// The report's request (core/report/report_types.h ReportRequest, the defaults shown in --help are
// its own) and where the file goes. The cost inputs (--hardware ...) are bound apart
// (reportCostOptions), read only when --hardware is given.
struct ReportOptions {
    core::ReportRequest request;
    std::vector<int64_t> runs;                          // --run A --run B: request.runA, request.runB
    std::optional<std::string> output;                  // required
    std::optional<render::ReportFormat> format;         // unset: from the output's extension, else pdf
    std::optional<std::string> layoutJson, dataJson;    // extra files, when asked for
};

// A stored study's id (--run, --sweep, --soak, --quant-compare): one, or appended when the field is a list.
template <class Field>
BoundOption<ReportOptions> idOption(std::string name, std::string help, const char* what, Field field) {
    using F = std::remove_reference_t<decltype(field(std::declval<ReportOptions&>()))>;
    constexpr bool list = requires(F& f) { f.push_back(int64_t{}); };
    BoundOption<ReportOptions> o;
    o.spec = {name, true, "ID", std::move(help), list};
    o.apply = [name, what, field](const Args& args, ReportOptions& s) -> std::optional<std::string> {
        for (const std::string& v : args.values(name)) {
            auto id = parseId(v);
            if (!id) return "'" + v + "' is not a " + what + " id";
            if constexpr (list) field(s).push_back(*id);
            else field(s) = *id;
        }
        return std::nullopt;
    };
    o.shownDefault = [](const ReportOptions&) { return std::string(); };
    return o;
}

// An SLA bound in milliseconds (> 0), unset by default.
template <class Field>
BoundOption<ReportOptions> slaOption(std::string name, std::string help, Field field) {
    return positiveNumberOption<ReportOptions>(std::move(name), "MS", std::move(help), field, " of milliseconds");
}

// An option whose text a core parser reads into the settings; "" when it returns no error.
BoundOption<ReportOptions> parsedOption(OptionSpec spec,
                                        std::function<std::optional<std::string>(const std::string&, ReportOptions&)> parse,
                                        std::function<std::string(const ReportOptions&)> shown = {}) {
    BoundOption<ReportOptions> o;
    const std::string name = spec.name;
    o.spec = std::move(spec);
    o.apply = [name, parse](const Args& args, ReportOptions& s) { return parse(args.value(name).value_or(""), s); };
    o.shownDefault = shown ? shown : [](const ReportOptions&) { return std::string(); };
    return o;
}

// What the report draws on: runs, sweeps, quantization trade-off, soaks.
const OptionTable<ReportOptions>& reportSourceOptions() {
    using S = ReportOptions;
    static const OptionTable<S> table = {
        idOption("run", "the two runs to compare: --run A --run B (same suite for the accuracy comparison)", "run",
                 [](auto& s) -> auto& { return s.runs; }),
        idOption("sweep", "latency sweep to use (repeatable; each is matched to the run of the same model file). "
                          "Default: the newest completed sweep of each model", "sweep",
                 [](auto& s) -> auto& { return s.request.sweepIds; }),
        flagOption<S>("no-auto-sweep", "use only the sweeps given with --sweep", [](S& s) { s.request.autoSweeps = false; }),
        idOption("quant-compare", "quantization trade-off to show (verdict quant-compare list). Default: the newest "
                                  "one that measured A's or B's file", "quant comparison",
                 [](auto& s) -> auto& { return s.request.quantCompareId; }),
        flagOption<S>("no-auto-quant", "no quantization section unless --quant-compare is given",
                      [](S& s) { s.request.autoQuant = false; }),
        idOption("soak", "soak test to show (repeatable; each is matched to the run of the model it soaked). "
                         "Default: the newest soak of each model", "soak",
                 [](auto& s) -> auto& { return s.request.soakIds; }),
        flagOption<S>("no-auto-soak", "use only the soaks given with --soak", [](S& s) { s.request.autoSoak = false; }),
    };
    return table;
}

// How the report decides, and the files it writes.
const OptionTable<ReportOptions>& reportDecisionOptions() {
    using S = ReportOptions;
    static const OptionTable<S> table = {
        // The criteria and their default weights are the decision's own (core::reportCriteria).
        parsedOption({"weights", true, "LIST", "criterion weights, e.g. accuracy=3,ttft=1,cost=2; 0 leaves one out"},
                     [](const std::string& v, S& s) -> std::optional<std::string> {
                         auto parsed = core::parseCriterionWeights(v);
                         if (!parsed) return parsed.error().message;
                         s.request.weights = *parsed;
                         return std::nullopt;
                     },
                     [](const S& s) {
                         std::string out;
                         for (const core::CriterionInfo& c : core::reportCriteria()) {
                             if (c.informational) continue;
                             auto it = s.request.weights.find(c.key);
                             if (!out.empty()) out += ',';
                             out.append(c.key).append("=").append(
                                 formatOptionNumber(it == s.request.weights.end() ? c.defaultWeight : it->second));
                         }
                         return out;
                     }),
        slaOption("sla-ttft-ms", "latency SLA: TTFT P99 at most MS milliseconds", [](auto& s) -> auto& { return s.request.sla.ttftMs; }),
        slaOption("sla-tpot-ms", "latency SLA: TPOT P99 at most MS milliseconds", [](auto& s) -> auto& { return s.request.sla.tpotMs; }),
        parsedOption({"quality-gate", true, "significant|off", "never recommend a model significantly less accurate than the "
                                                               "other: McNemar p < 0.05"},
                     [](const std::string& v, S& s) -> std::optional<std::string> {
                         if (auto r = core::parseQualityGate(v, s.request.quality); !r) return r.error().message;
                         return std::nullopt;
                     },
                     [](const S& s) { return std::string(s.request.quality.noWorseSignificant ? "significant" : "off"); }),
        parsedOption({"min-accuracy", true, "PCT", "quality gate: never recommend a model whose accuracy is below PCT %"},
                     [](const std::string& v, S& s) -> std::optional<std::string> {
                         if (auto r = core::parseMinAccuracy(v, s.request.quality); !r) return r.error().message;
                         return std::nullopt;
                     },
                     [](const S& s) {
                         const auto& m = s.request.quality.minAccuracy;
                         return m ? formatOptionNumber(100 * *m) : std::string();
                     }),
        intOption<S>("disagreements", "N", "items shown where the models disagree",
                     [](auto& s) -> auto& { return s.request.maxDisagreements; }, 0, 100),
        optionalTextOption<S>("output", "PATH", "the report file (required)", [](auto& s) -> auto& { return s.output; }, 'o'),
        parsedOption({"format", true, "FMT", "pdf, html or md (default: from the file extension, else pdf)"},
                     [](const std::string& v, S& s) -> std::optional<std::string> {
                         s.format = render::parseReportFormat(v);
                         if (!s.format) return "--format must be pdf, html or md (not '" + v + "')";
                         return std::nullopt;
                     }),
        optionalTextOption<S>("layout-json", "PATH", "PDF only: also write the layout boxes (tests check nothing is off the page)",
                              [](auto& s) -> auto& { return s.layoutJson; }),
        optionalTextOption<S>("data-json", "PATH", "also write the report's data as JSON (docs/report.md)",
                              [](auto& s) -> auto& { return s.dataJson; }),
    };
    return table;
}

// The cost section's inputs (core/report/report_types.h ReportTcoInputs), the cost assumptions
// among them (cli/cost_options.h, shared with verdict tco): all of them need --hardware.
const OptionTable<core::ReportTcoInputs>& reportCostOptions() {
    using S = core::ReportTcoInputs;
    static const OptionTable<S> table = concatOptions<S>({
        {
            textOption<S>("hardware", "ID", "catalog device to cost (see verdict hardware list); without it: no cost section",
                          [](auto& s) -> auto& { return s.hardwareId; }),
            optionalTextOption<S>("measured-on", "ID", "catalog device the sweeps/runs were measured on (default for CPU runs: this-machine)",
                                  [](auto& s) -> auto& { return s.measuredOnId; }),
            positiveNumberOption<S>("tokens-per-day", "N", "daily output volume: fleet size, monthly and 3-year TCO curve",
                                    [](auto& s) -> auto& { return s.tokensPerDay; }),
            positiveNumberOption<S>("baseline-usd-per-mtok", "X", "hosted API price per 1M tokens: payback and NPV (needs --tokens-per-day)",
                                    [](auto& s) -> auto& { return s.baselineUsdPerMtok; }),
        },
        nestedOptions<S>(costAssumptionOptions(), [](auto& s) -> auto& { return s.assumptions; }),
        {
            optionalTextOption<S>("hardware-file", "PATH", "user hardware catalog", [](auto& s) -> auto& { return s.hardwareFile; }),
        },
    });
    return table;
}

}  // namespace

int runReport(const std::vector<std::string>& argv) {
    const ReportOptions defaults;
    std::vector<OptionSpec> specs = specsOf(reportSourceOptions(), defaults);
    for (OptionSpec spec : specsOf(reportCostOptions(), core::ReportTcoInputs{})) specs.push_back(std::move(spec));
    for (OptionSpec spec : specsOf(reportDecisionOptions(), defaults)) specs.push_back(std::move(spec));
    for (OptionSpec spec : {dbOption(), jsonOption("print where the files are and the summary as one JSON object (docs/cli.md)"),
                            helpOption()})
        specs.push_back(std::move(spec));
    const std::string usage =
        "verdict report --run A --run B [--sweep ID ...] [--hardware ID --tokens-per-day N ...] [--weights LIST] -o FILE "
        "[--format pdf|html|md] [--json]";
    auto args = Args::parse(argv, specs);
    if (!args) return fail("report", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp(usage, formatOptions(specs));
        return kExitOk;
    }
    if (!args->positionals().empty()) return fail("report", "unexpected argument '" + args->positionals()[0] + "'", kExitUsage);
    ReportOptions opts;
    for (const auto* table : {&reportSourceOptions(), &reportDecisionOptions()})
        if (auto e = applyOptions(*table, *args, opts)) return fail("report", *e, kExitUsage);
    if (opts.runs.size() != 2) return fail("report", "give exactly two runs: --run A --run B", kExitUsage);
    core::ReportRequest& req = opts.request;
    req.runA = opts.runs[0];
    req.runB = opts.runs[1];
    if (!opts.output) return fail("report", "give the report file: -o report.pdf", kExitUsage);
    const std::string output = *opts.output;
    const render::ReportFormat format =
        opts.format.value_or(render::reportFormatOfPath(output).value_or(render::ReportFormat::Pdf));
    if (opts.layoutJson && format != render::ReportFormat::Pdf)
        return fail("report", "--layout-json is for PDF output only", kExitUsage);

    const bool costAsked = args->has("hardware");
    for (const auto& o : reportCostOptions())
        if (o.spec.name != "hardware" && args->has(o.spec.name) && !costAsked)
            return fail("report", "--" + o.spec.name + " needs --hardware ID", kExitUsage);
    if (costAsked) {
        core::ReportTcoInputs t;
        if (auto e = applyOptions(reportCostOptions(), *args, t)) return fail("report", *e, kExitUsage);
        if (t.baselineUsdPerMtok && !t.tokensPerDay)
            return fail("report", "--baseline-usd-per-mtok needs --tokens-per-day", kExitUsage);
        req.tco = t;
    }
    req.toolVersion = core::toolVersion();
    req.buildCommit = core::buildCommit();
    req.commandLine = "verdict report";
    for (const auto& a : argv) req.commandLine += " " + core::shellQuote(a);

    auto db = core::openStoreForReading(args->value("db"));
    if (!db) return fail("report", db.error().message, kExitBadInput);
    auto data = core::buildReportData(*db, req);
    if (!data) return fail("report", data.error().message, kExitBadInput);
    if (data->accuracy.refused)
        std::cerr << "verdict report: accuracy comparison refused: " << data->accuracy.refusedReason
                  << " (the report leaves it out)\n";

    auto app = ensureApplication();
    auto rendered = render::renderReport(*data, format, QString::fromStdString(output),
                                     QString::fromStdString(opts.layoutJson.value_or("")));
    if (!rendered) return fail("report", rendered.error().message, kExitRuntime);
    const nlohmann::json dataJson = core::toJson(*data);
    std::string dataPath;
    if (const auto& p = opts.dataJson) {
        QFile f(QString::fromStdString(*p));
        const std::string text = dataJson.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(text.data(), static_cast<qint64>(text.size())) < 0)
            return fail("report", "cannot write " + *p, kExitRuntime);
        dataPath = *p;
    }

    if (args->has("json")) {
        nlohmann::json winners = nlohmann::json::object();
        for (const auto& r : data->decision) winners[r.key] = core::winnerName(r.winner);
        nlohmann::json j = {
            {"output", rendered->path.toStdString()},
            {"format", render::reportFormatName(rendered->format)},
            {"bytes", rendered->bytes},
            {"pages", format == render::ReportFormat::Pdf ? nlohmann::json(rendered->pages) : nlohmann::json(nullptr)},
            {"layout_json", rendered->layoutJsonPath.isEmpty() ? nlohmann::json(nullptr) : nlohmann::json(rendered->layoutJsonPath.toStdString())},
            {"data_json", dataPath.empty() ? nlohmann::json(nullptr) : nlohmann::json(dataPath)},
            {"title", data->title},
            {"run_a", req.runA},
            {"run_b", req.runB},
            {"sweeps", {{"a", data->perfA.sweepIds}, {"b", data->perfB.sweepIds}}},
            {"recommendation", dataJson["recommendation"]},
            {"winners", winners},
            {"accuracy_refused", data->accuracy.refused ? nlohmann::json(data->accuracy.refusedReason) : nlohmann::json(nullptr)},
            {"missing", data->missing}};
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
        std::cout << "wrote " << rendered->path.toStdString();
        if (format == render::ReportFormat::Pdf) std::cout << " (" << rendered->pages << " pages)";
        std::cout << "\n" << data->recommendation.headline << "\n";
        for (const auto& m : data->missing) std::cout << "  missing: " << m << "\n";
    }
    return kExitOk;
}

}  // namespace verdict::cli
