// verdict quant-compare BASE.gguf Q1.gguf [Q2.gguf ...] [--suite S] [--text FILE] [--no-sweep] ...
//         quant-compare list | show ID
// One model in several files against a base file: KLD and top-1 agreement on a text, accuracy
// delta on a suite (paired), decode / prefill throughput and P99 change (a one-point sweep), and
// memory; stored (a study, store/study_repository.h) after every step (core/services/quant_compare.h). The JSON
// shape is in docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/options.h"
#include "cli/signal_stop.h"
#include "cli/study_command.h"
#include "core/models/model_card_json.h"
#include "core/services/quant_compare.h"
#include "core/store/store.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace verdict::cli {
namespace {

using nlohmann::json;
constexpr const char* kCmd = "quant-compare";

std::string num(const json& v, const char* fmt, double scale = 1.0) {
    if (!v.is_number()) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v.get<double>() * scale);
    return buf;
}

std::string pct(const json& v) {
    if (!v.is_number()) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", v.get<double>() * 100.0);
    return buf;
}

void printComparison(const json& c) {
    std::printf("quant comparison %lld: %s (%s), base %s\n", static_cast<long long>(c.value("id", 0LL)),
                c.value("name", "").c_str(), c.value("status", "").c_str(), c.value("base", "").c_str());
    std::printf("%-28s %-9s %8s %6s %10s %8s %9s %12s %10s %10s %10s %9s\n", "file", "type", "size", "bpw", "mean KLD",
                "same top", "PPL", "accuracy", "acc delta", "decode t/s", "decode chg", "ITL P99 chg");
    for (const json& row : c.value("rows", json::array())) {
        const json& f = row["file"];
        const json& fid = row["fidelity"];
        const json& acc = row["accuracy"];
        const json& sp = row["speed"];
        const json& d = row["vs_base"];
        std::string name = std::filesystem::path(f.value("path", "")).filename().string();
        if (name.size() > 28) name = name.substr(0, 25) + "...";
        std::string accuracy = "-";
        if (acc.is_object() && acc["cell"].is_object() && acc["cell"]["accuracy"].is_number())
            accuracy = num(acc["cell"]["accuracy"], "%.1f%%", 100) + " (" + std::to_string(acc["cell"].value("n", 0LL)) + ")";
        std::string delta = d.is_object() ? pct(d["accuracy_delta"]) : "base";
        std::printf("%-28s %-9s %8s %6s %10s %8s %9s %12s %10s %10s %10s %9s\n", name.c_str(),
                    f.value("file_type", "").c_str(),
                    f["bytes"].is_number() ? core::formatBytes(f["bytes"].get<uint64_t>()).c_str() : "-",
                    num(f.value("bits_per_weight", json(nullptr)), "%.2f").c_str(),
                    fid.is_object() ? num(fid["mean_kld"], "%.6f").c_str() : "-",
                    fid.is_object() ? num(fid["same_top_p"], "%.1f%%", 100).c_str() : "-",
                    fid.is_object() ? num(fid["ppl"], "%.3f").c_str() : "-", accuracy.c_str(), delta.c_str(),
                    sp.is_object() ? num(sp["decode_tok_per_s"], "%.1f").c_str() : "-",
                    d.is_object() ? pct(d["decode_change"]).c_str() : "base",
                    d.is_object() ? pct(d["itl_p99_change"]).c_str() : "base");
        for (const auto& [part, why] : row.value("errors", json::object()).items())
            std::printf("  %s: %s\n", part.c_str(), why.is_string() ? why.get<std::string>().c_str() : why.dump().c_str());
    }
}

const StudyCommand& studyCommand() {
    static const StudyCommand c{
        kCmd, "quant comparison",
        [](core::Database& db) -> Result<json> {
            auto list = core::listQuantCompares(db);
            if (!list) return list.error();
            json out = json::array();
            for (const auto& s : *list)
                out.push_back({{"id", s.id}, {"name", s.name}, {"created_at", s.createdAt}, {"status", s.status},
                               {"base", s.basePath}, {"files", s.files}});
            return out;
        },
        [](const json& s) {
            std::printf("%4lld  %-24s %-10s %s  base %s, %lld file(s)\n", static_cast<long long>(s["id"].get<int64_t>()),
                        s["name"].get<std::string>().c_str(), s["status"].get<std::string>().c_str(),
                        s["created_at"].get<std::string>().c_str(), s["base"].get<std::string>().c_str(),
                        static_cast<long long>(s["files"].get<int64_t>()));
        },
        core::loadQuantCompare, printComparison};
    return c;
}

}  // namespace

int runQuantCompare(const std::vector<std::string>& argv) {
    if (!argv.empty() && (argv[0] == "list" || argv[0] == "show") && !std::filesystem::exists(argv[0]))
        return runStudySubcommand(studyCommand(), argv[0], std::vector<std::string>(argv.begin() + 1, argv.end()));
    const std::vector<OptionSpec> specs = {
        {"suite", true, "NAME", "stored suite: accuracy per file, paired with the base (default: none)", false, 's'},
        {"limit", true, "N", "the suite's first N items only"},
        {"text", true, "FILE", "UTF-8 text: KL-divergence and top-1 agreement against the base (default: none)"},
        {"ctx", true, "N", "KLD chunk size in tokens (default 512); the text needs at least 2*N tokens", false, 'c'},
        {"chunks", true, "N", "KLD over at most N chunks (default: all)"},
        {"prompt", true, "N", "speed: prompt tokens of the sweep point (default 128)", false, 'p'},
        {"gen", true, "N", "speed: output tokens, >= 2 (default 64)", false, 'n'},
        {"batch", true, "N", "speed: concurrent sequences, 1..32 (default 1)", false, 'b'},
        {"reps", true, "N", "speed: measured repetitions (default 5)", false, 'r'},
        {"no-sweep", false, "", "skip the speed and memory part"},
        {"threads", true, "N", "compute threads (default: physical cores)", false, 't'},
        {"name", true, "NAME", "name of the comparison (default: the base file name)"},
        deviceOptionSpec(),
        gpuLayersOptionSpec(),
        {"db", true, "PATH", "results database (default: $VERDICT_DB, else the XDG data dir)"},
        {"json", false, "", "print one JSON object (shape: docs/cli.md)"},
        {"help", false, "", "show this help", false, 'h'},
    };
    auto args = Args::parse(argv, specs);
    if (!args) return fail(kCmd, args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict quant-compare BASE.gguf FILE.gguf [FILE.gguf ...] [--suite S] [--text FILE] [--no-sweep] "
                  "[--device DEV] [--json]\n       verdict quant-compare list | show ID",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() < 2)
        return fail(kCmd, "expected a base file and at least one file to compare with it (see --help)", kExitUsage);

    core::QuantCompareRequest r;
    r.basePath = args->positionals()[0];
    r.files.assign(args->positionals().begin() + 1, args->positionals().end());
    r.suite = args->value("suite").value_or("");
    r.textPath = args->value("text").value_or("");
    r.name = args->value("name").value_or("");
    r.sweep = !args->has("no-sweep");
    auto limit = args->integer("limit", 0);
    auto ctx = args->integer("ctx", 512);
    auto chunks = args->integer("chunks", 0);
    auto prompt = args->integer("prompt", 128);
    auto gen = args->integer("gen", 64);
    auto batch = args->integer("batch", 1);
    auto reps = args->integer("reps", 5);
    auto threads = args->integer("threads", 0);
    for (const Result<long long>* v : {&limit, &ctx, &chunks, &prompt, &gen, &batch, &reps, &threads})
        if (!*v) return fail(kCmd, v->error().message, kExitUsage);
    if (args->has("limit")) r.limit = *limit;
    r.ctx = *ctx;
    r.chunks = *chunks;
    r.sweepSpec.promptTokens = {*prompt};
    r.sweepSpec.genTokens = {*gen};
    r.sweepSpec.batches = {*batch};
    r.sweepSpec.reps = static_cast<int>(*reps);
    r.threads = static_cast<int>(*threads);
    if (auto v = core::validateQuantCompareRequest(r); !v) return fail(kCmd, v.error().message, kExitUsage);
    if (int rc = readDeviceOption(kCmd, *args, &r.device); rc != kExitOk) return rc;
    if (int rc = readGpuLayersOption(kCmd, *args, r.device, &r.gpuLayers); rc != kExitOk) return rc;

    auto db = core::openStore(args->value("db"));
    if (!db) return fail(kCmd, db.error().message, kExitBadInput);
    SignalStop signals(kCmd);
    const bool tty = isatty(STDERR_FILENO);
    core::QuantCompareEvents ev;
    std::string lastStage;
    ev.progress = [&](const core::QuantCompareProgress& p) {
        const std::string stage = std::to_string(p.file) + " " + p.stage;
        if (!tty && stage == lastStage) return;  // a log: one line per file and stage
        lastStage = stage;
        const std::string line = "[quant-compare] file " + std::to_string(p.file + 1) + "/" + std::to_string(p.fileCount) +
                                 " " + std::filesystem::path(p.path).filename().string() + "  " + p.stage +
                                 (p.detail.empty() ? "" : " " + p.detail);
        std::fprintf(stderr, tty ? "\r%-100s" : "%s\n", line.c_str());
        std::fflush(stderr);
    };
    auto done = core::runQuantCompare(*db, r, ev, signals.token());
    if (tty) std::fprintf(stderr, "\n");
    if (!done) return failService(kCmd, done.error(), r.device);
    if (args->has("json")) std::cout << done->comparison.dump(2) << "\n";
    else printComparison(done->comparison);
    if (done->cancelled) {
        std::cerr << "verdict quant-compare: cancelled; what was measured is stored as comparison " << done->id << "\n";
        return 130;
    }
    return kExitOk;
}

}  // namespace verdict::cli
