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
#include <limits>

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

// The options bound to the service's request (core/services/quant_compare.h): the defaults
// shown are QuantCompareRequest's, the ones the window's Quantization… dialog starts from; the
// limits are validateQuantCompareRequest's.
const OptionTable<core::QuantCompareRequest>& quantCompareOptions() {
    using S = core::QuantCompareRequest;
    constexpr long long kBig = 1LL << 30;
    static const OptionTable<S> table = {
        textOption<S>("suite", "NAME", "stored suite: accuracy per file, paired with the base (default: none)",
                      [](auto& s) -> auto& { return s.suite; }, {}, 's'),
        optionalIntOption<S>("limit", "N", "the suite's first N items only", [](auto& s) -> auto& { return s.limit; }, 1,
                             std::numeric_limits<int64_t>::max()),
        textOption<S>("text", "FILE", "UTF-8 text: KL-divergence and top-1 agreement against the base (default: none)",
                      [](auto& s) -> auto& { return s.textPath; }),
        intOption<S>("ctx", "N", "KLD chunk size in tokens; the text needs at least 2*N tokens",
                     [](auto& s) -> auto& { return s.ctx; }, -kBig, kBig, 'c'),
        intOption<S>("chunks", "N", "KLD over at most N chunks; 0 = all", [](auto& s) -> auto& { return s.chunks; }, -kBig, kBig),
        // One sweep point: the first (only) element of each of the spec's lists.
        intOption<S>("prompt", "N", "speed: prompt tokens of the sweep point",
                     [](auto& s) -> auto& { return s.sweepSpec.promptTokens.front(); }, 0, kBig, 'p'),
        intOption<S>("gen", "N", "speed: output tokens, >= 2", [](auto& s) -> auto& { return s.sweepSpec.genTokens.front(); }, 0,
                     kBig, 'n'),
        intOption<S>("batch", "N", "speed: concurrent sequences, 1..32",
                     [](auto& s) -> auto& { return s.sweepSpec.batches.front(); }, 0, kBig, 'b'),
        intOption<S>("reps", "N", "speed: measured repetitions", [](auto& s) -> auto& { return s.sweepSpec.reps; }, 1, 1000000,
                     'r'),
        flagOption<S>("no-sweep", "skip the speed and memory part", [](S& s) { s.sweep = false; }),
        intOption<S>("threads", "N", kThreadsHelp, [](auto& s) -> auto& { return s.threads; }, 0, kMaxThreads, 't'),
        textOption<S>("name", "NAME", "name of the comparison (default: the base file name)", [](auto& s) -> auto& { return s.name; }),
    };
    return table;
}

}  // namespace

int runQuantCompare(const std::vector<std::string>& argv) {
    if (!argv.empty() && (argv[0] == "list" || argv[0] == "show") && !std::filesystem::exists(argv[0]))
        return runStudySubcommand(studyCommand(), argv[0], std::vector<std::string>(argv.begin() + 1, argv.end()));
    std::vector<OptionSpec> specs = specsOf(quantCompareOptions(), core::QuantCompareRequest{});
    for (OptionSpec spec : {deviceOptionSpec(), gpuLayersOptionSpec(), dbOption(), jsonOption(), helpOption()})
        specs.push_back(std::move(spec));
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
    if (auto e = applyOptions(quantCompareOptions(), *args, r)) return fail(kCmd, *e, kExitUsage);
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
