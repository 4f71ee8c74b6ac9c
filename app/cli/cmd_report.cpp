// verdict report --run A --run B [--sweep ID ...] [--hardware ID --tokens-per-day N ...]
//                [--weights accuracy=3,ttft=1] -o report.pdf [--format pdf|html|md] [--json]
// The decision report: models, accuracy with the paired test, performance from stored sweeps,
// cost, the decision table with a weighted recommendation, the checklist and how to reproduce it.
// Data: core/report (buildReportData); drawing: ui/report (verdict_report, Qt Gui + Charts, run
// offscreen when there is no display). What each section shows: docs/report.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/cost_options.h"
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

}  // namespace

int runReport(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = {
        {"run", true, "ID", "the two runs to compare: --run A --run B (same suite for the accuracy comparison)", true},
        {"sweep", true, "ID", "latency sweep to use (repeatable; each is matched to the run of the same model file). "
                              "Default: the newest completed sweep of each model", true},
        {"no-auto-sweep", false, "", "use only the sweeps given with --sweep"},
        {"quant-compare", true, "ID", "quantization trade-off to show (verdict quant-compare list). Default: the newest "
                                      "one that measured A's or B's file"},
        {"no-auto-quant", false, "", "no quantization section unless --quant-compare is given"},
        {"soak", true, "ID", "soak test to show (repeatable; each is matched to the run of the model it soaked). "
                             "Default: the newest soak of each model", true},
        {"no-auto-soak", false, "", "use only the soaks given with --soak"},
        {"hardware", true, "ID", "catalog device to cost (see verdict hardware list); without it: no cost section"},
        {"measured-on", true, "ID", "catalog device the sweeps/runs were measured on (default for CPU runs: this-machine)"},
        {"tokens-per-day", true, "N", "daily output volume: fleet size, monthly and 3-year TCO curve"},
        {"baseline-usd-per-mtok", true, "X", "hosted API price per 1M tokens: payback and NPV (needs --tokens-per-day)"},
        {"hardware-file", true, "PATH", "user hardware catalog"},
        {"weights", true, "LIST", "criterion weights, e.g. accuracy=3,ttft=1,cost=2 (criteria: accuracy, ttft, tpot, p99, "
                                  "throughput, memory, cost, context)"},
        {"sla-ttft-ms", true, "MS", "latency SLA: TTFT P99 at most MS milliseconds"},
        {"sla-tpot-ms", true, "MS", "latency SLA: TPOT P99 at most MS milliseconds"},
        {"quality-gate", true, "significant|off", "never recommend a model significantly less accurate than the other "
                                                  "(McNemar p < 0.05; default significant)"},
        {"min-accuracy", true, "PCT", "quality gate: never recommend a model whose accuracy is below PCT %"},
        {"disagreements", true, "N", "items shown where the models disagree (default " + std::to_string(core::ReportRequest{}.maxDisagreements) + ")"},
        {"output", true, "PATH", "the report file (required)", false, 'o'},
        {"format", true, "FMT", "pdf, html or md (default: from the file extension, else pdf)"},
        {"layout-json", true, "PATH", "PDF only: also write the layout boxes (tests check nothing is off the page)"},
        {"data-json", true, "PATH", "also write the report's data as JSON (docs/report.md)"},
        dbOption(),
        jsonOption("print where the files are and the summary as one JSON object (docs/cli.md)"),
        helpOption(),
    };
    {
        const auto cost = specsOf(costAssumptionOptions(), core::CostAssumptions{});
        auto at = std::find_if(specs.begin(), specs.end(), [](const OptionSpec& o) { return o.name == "baseline-usd-per-mtok"; });
        specs.insert(at == specs.end() ? at : at + 1, cost.begin(), cost.end());
    }
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
    const auto runs = args->values("run");
    if (runs.size() != 2) return fail("report", "give exactly two runs: --run A --run B", kExitUsage);
    core::ReportRequest req;
    for (int k = 0; k < 2; ++k) {
        auto id = parseId(runs[static_cast<size_t>(k)]);
        if (!id) return fail("report", "'" + runs[static_cast<size_t>(k)] + "' is not a run id", kExitUsage);
        (k == 0 ? req.runA : req.runB) = *id;
    }
    for (const auto& s : args->values("sweep")) {
        auto id = parseId(s);
        if (!id) return fail("report", "'" + s + "' is not a sweep id", kExitUsage);
        req.sweepIds.push_back(*id);
    }
    req.autoSweeps = !args->has("no-auto-sweep");
    if (auto qc = args->value("quant-compare")) {
        auto id = parseId(*qc);
        if (!id) return fail("report", "'" + *qc + "' is not a quant comparison id", kExitUsage);
        req.quantCompareId = *id;
    }
    req.autoQuant = !args->has("no-auto-quant");
    for (const auto& s : args->values("soak")) {
        auto id = parseId(s);
        if (!id) return fail("report", "'" + s + "' is not a soak id", kExitUsage);
        req.soakIds.push_back(*id);
    }
    req.autoSoak = !args->has("no-auto-soak");
    if (!args->has("output")) return fail("report", "give the report file: -o report.pdf", kExitUsage);
    const std::string output = *args->value("output");
    std::optional<render::ReportFormat> format;
    if (auto f = args->value("format")) {
        format = render::parseReportFormat(*f);
        if (!format) return fail("report", "--format must be pdf, html or md (not '" + *f + "')", kExitUsage);
    } else {
        format = render::reportFormatOfPath(output).value_or(render::ReportFormat::Pdf);
    }
    if (args->has("layout-json") && *format != render::ReportFormat::Pdf)
        return fail("report", "--layout-json is for PDF output only", kExitUsage);

    if (auto w = args->value("weights")) {
        auto parsed = core::parseCriterionWeights(*w);
        if (!parsed) return fail("report", parsed.error().message, kExitUsage);
        req.weights = *parsed;
    }
    for (auto [name, target] : {std::pair{"sla-ttft-ms", &req.sla.ttftMs}, std::pair{"sla-tpot-ms", &req.sla.tpotMs}}) {
        if (!args->has(name)) continue;
        auto v = args->number(name, 0);
        if (!v) return fail("report", v.error().message, kExitUsage);
        if (!(*v > 0)) return fail("report", std::string("--") + name + " must be a positive number of milliseconds", kExitUsage);
        *target = *v;
    }
    if (auto g = args->value("quality-gate"))
        if (auto r = core::parseQualityGate(*g, req.quality); !r) return fail("report", r.error().message, kExitUsage);
    if (auto m = args->value("min-accuracy"))
        if (auto r = core::parseMinAccuracy(*m, req.quality); !r) return fail("report", r.error().message, kExitUsage);
    auto dis = args->integer("disagreements", req.maxDisagreements);
    if (!dis) return fail("report", dis.error().message, kExitUsage);
    if (*dis < 0 || *dis > 100) return fail("report", "--disagreements must be between 0 and 100", kExitUsage);
    req.maxDisagreements = static_cast<int>(*dis);

    const bool costAsked = args->has("hardware");
    for (const char* o : {"measured-on", "tokens-per-day", "baseline-usd-per-mtok", "utilisation", "years", "electricity-usd-per-kwh",
                          "pue", "load-factor", "ops-usd-per-month", "fixed-usd-per-year", "discount-rate", "rent", "hardware-file"})
        if (args->has(o) && !costAsked) return fail("report", std::string("--") + o + " needs --hardware ID", kExitUsage);
    if (costAsked) {
        core::ReportTcoInputs t;
        t.hardwareId = *args->value("hardware");
        if (auto m = args->value("measured-on")) t.measuredOnId = *m;
        if (auto h = args->value("hardware-file")) t.hardwareFile = *h;
        if (auto e = applyOptions(costAssumptionOptions(), *args, t.assumptions)) return fail("report", *e, kExitUsage);
        for (auto [name, target] : {std::pair{"tokens-per-day", &t.tokensPerDay}, std::pair{"baseline-usd-per-mtok", &t.baselineUsdPerMtok}}) {
            if (!args->has(name)) continue;
            auto v = args->number(name, 0);
            if (!v) return fail("report", v.error().message, kExitUsage);
            if (!(*v > 0)) return fail("report", std::string("--") + name + " must be a positive number", kExitUsage);
            *target = *v;
        }
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
    auto rendered = render::renderReport(*data, *format, QString::fromStdString(output),
                                     QString::fromStdString(args->value("layout-json").value_or("")));
    if (!rendered) return fail("report", rendered.error().message, kExitRuntime);
    const nlohmann::json dataJson = core::toJson(*data);
    std::string dataPath;
    if (auto p = args->value("data-json")) {
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
            {"pages", *format == render::ReportFormat::Pdf ? nlohmann::json(rendered->pages) : nlohmann::json(nullptr)},
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
        if (*format == render::ReportFormat::Pdf) std::cout << " (" << rendered->pages << " pages)";
        std::cout << "\n" << data->recommendation.headline << "\n";
        for (const auto& m : data->missing) std::cout << "  missing: " << m << "\n";
    }
    return kExitOk;
}

}  // namespace verdict::cli
