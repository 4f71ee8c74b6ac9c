// verdict sweep MODEL --prompt 128,512 --gen 128 --batch 1,4,16 [--reps 3] [--warmup 1] [--json]
//   a latency sweep on the built-in engine, every point stored in the results database
// verdict sweep list | show ID | export ID --format csv|json
//   stored sweeps. Metric definitions: docs/metrics.md; JSON shapes: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/options.h"
#include "cli/signal_stop.h"
#include "core/services/sweep.h"
#include "core/store/store.h"
#include "core/store/sweep_repository.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <unistd.h>

namespace verdict::cli {
namespace {

std::string dump(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); }

double num(const nlohmann::json& j, std::initializer_list<const char*> path) {
    const nlohmann::json* cur = &j;
    for (const char* k : path) {
        if (!cur->is_object() || !cur->contains(k)) return 0;
        cur = &(*cur)[k];
    }
    return cur->is_number() ? cur->get<double>() : 0;
}

nlohmann::json sweepJson(const core::SweepRecord& s, const std::vector<core::SweepPointRecord>& points, bool withRequests) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& p : points) {
        nlohmann::json j = {{"prompt_tokens", p.promptTokens}, {"gen_tokens", p.genTokens}, {"batch", p.batch},
                            {"error", p.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.error)},
                            {"metrics", core::pointMetrics(p)}, {"created_at", p.createdAt}};
        if (withRequests) {
            j["requests"] = p.requests;
            j["seq"] = p.seq;
            j["row_hash"] = p.rowHash;
        }
        list.push_back(std::move(j));
    }
    nlohmann::json cold = nullptr;
    for (const auto& p : points)
        if (p.metrics.is_object() && p.metrics.contains("cold_start")) cold = p.metrics["cold_start"];
    return {{"sweep_id", s.id},
            {"name", s.name},
            {"status", s.status},
            {"backend", s.backend},
            {"model_path", s.modelPath},
            {"model_sha256", s.modelSha256},
            {"model_bytes", s.modelBytes},
            {"device", s.device},
            {"engine_version", s.engineVersion},
            {"spec", s.spec},
            {"environment", s.environment},
            {"cold_start", cold},
            {"created_at", s.createdAt},
            {"finished_at", s.finishedAt.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.finishedAt)},
            {"header_hash", s.headerHash},
            {"points", list}};
}

void printTable(const core::SweepRecord& s, const std::vector<core::SweepPointRecord>& points) {
    std::printf("sweep %lld  %s  %s  [%s]\n", static_cast<long long>(s.id), s.name.c_str(), s.device.c_str(),
                s.status.c_str());
    std::printf("%7s %5s %5s | %9s %9s | %8s %8s | %9s %9s | %9s %9s | %6s\n", "prompt", "gen", "batch", "TTFT p50",
                "TTFT p99", "TPOT p50", "ITL p99", "E2E p50", "E2E p99", "out tok/s", "req/s", "roof%");
    for (const auto& p : points) {
        if (!p.error.empty()) {
            std::printf("%7lld %5lld %5lld | error: %s\n", static_cast<long long>(p.promptTokens),
                        static_cast<long long>(p.genTokens), static_cast<long long>(p.batch), p.error.c_str());
            continue;
        }
        const nlohmann::json m = core::pointMetrics(p);
        std::printf("%7lld %5lld %5lld | %7.1fms %7.1fms | %6.1fms %6.1fms | %7.0fms %7.0fms | %9.1f %9.2f | %5.0f%%\n",
                    static_cast<long long>(p.promptTokens), static_cast<long long>(p.genTokens),
                    static_cast<long long>(p.batch), num(m, {"ttft_ms", "p50"}), num(m, {"ttft_ms", "p99"}),
                    num(m, {"tpot_ms", "p50"}), num(m, {"itl_ms", "p99"}), num(m, {"e2e_ms", "p50"}),
                    num(m, {"e2e_ms", "p99"}), num(m, {"output_tok_per_s"}), num(m, {"requests_per_s"}),
                    100.0 * num(m, {"roofline", "fraction"}));
    }
    for (const auto& p : points)
        if (p.metrics.is_object() && p.metrics.contains("cold_start")) {
            const auto& c = p.metrics["cold_start"];
            std::printf("cold start: load %.0f ms, first request %.0f ms vs warm median %.0f ms (%.2fx)\n",
                        num(c, {"load_ms"}), num(c, {"first_request_ms"}), num(c, {"warm_median_ms"}),
                        num(c, {"first_vs_warm"}));
        }
}

Result<int64_t> parseId(const std::string& text) {
    int64_t id = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec != std::errc() || end != text.data() + text.size() || id <= 0) return Error{"'" + text + "' is not a sweep id"};
    return id;
}

std::string exportCsv(const core::SweepRecord& s, const std::vector<core::SweepPointRecord>& points) {
    std::ostringstream out;
    out << "sweep_id,prompt_tokens,gen_tokens,batch,requests,failed,duration_s,requests_per_s,output_tok_per_s,"
           "prefill_tok_per_s,decode_tok_per_s,ttft_ms_mean,ttft_ms_p50,ttft_ms_p90,ttft_ms_p99,tpot_ms_mean,"
           "tpot_ms_p50,tpot_ms_p99,itl_ms_mean,itl_ms_p50,itl_ms_p99,e2e_ms_mean,e2e_ms_p50,e2e_ms_p90,e2e_ms_p95,"
           "e2e_ms_p99,roofline_decode_tok_per_s,roofline_fraction,kv_bytes,peak_rss_bytes,error,row_hash\r\n";
    auto f = [](double v) { return nlohmann::json(v).dump(); };
    for (const auto& p : points) {
        const nlohmann::json m = core::pointMetrics(p);
        out << s.id << ',' << p.promptTokens << ',' << p.genTokens << ',' << p.batch << ','
            << f(num(m, {"requests"})) << ',' << f(num(m, {"failed"})) << ',' << f(num(m, {"duration_s"})) << ','
            << f(num(m, {"requests_per_s"})) << ',' << f(num(m, {"output_tok_per_s"})) << ','
            << f(num(m, {"prefill_tok_per_s"})) << ',' << f(num(m, {"decode_tok_per_s"})) << ',';
        for (const char* d : {"ttft_ms"})
            out << f(num(m, {d, "mean"})) << ',' << f(num(m, {d, "p50"})) << ',' << f(num(m, {d, "p90"})) << ','
                << f(num(m, {d, "p99"})) << ',';
        for (const char* d : {"tpot_ms", "itl_ms"})
            out << f(num(m, {d, "mean"})) << ',' << f(num(m, {d, "p50"})) << ',' << f(num(m, {d, "p99"})) << ',';
        out << f(num(m, {"e2e_ms", "mean"})) << ',' << f(num(m, {"e2e_ms", "p50"})) << ','
            << f(num(m, {"e2e_ms", "p90"})) << ',' << f(num(m, {"e2e_ms", "p95"})) << ','
            << f(num(m, {"e2e_ms", "p99"})) << ',' << f(num(m, {"roofline", "decode_tok_per_s_bound"})) << ','
            << f(num(m, {"roofline", "fraction"})) << ',' << f(num(m, {"memory", "kv_bytes"})) << ','
            << f(num(m, {"memory", "peak_rss_bytes"})) << ',' << csvField(p.error) << ',' << p.rowHash << "\r\n";
    }
    return out.str();
}

// The options of `verdict sweep export` (list and show take them and leave them unread).
struct SweepExportOptions {
    std::string format;                 // csv or json; required
    std::optional<std::string> output;  // unset: stdout
};

const OptionTable<SweepExportOptions>& exportOptions() {
    using S = SweepExportOptions;
    static const OptionTable<S> table = {
        textOption<S>("format", "F", "export: csv or json", [](auto& s) -> auto& { return s.format; }, {"csv", "json"}),
        optionalTextOption<S>("output", "FILE", "export: write to FILE instead of stdout", [](auto& s) -> auto& { return s.output; }, 'o'),
    };
    return table;
}

const std::vector<OptionSpec>& storedSpecs() {
    static const std::vector<OptionSpec> specs = [] {
        std::vector<OptionSpec> out = specsOf(exportOptions(), SweepExportOptions{});
        for (OptionSpec spec : {dbOption(), jsonOption("print JSON (shape: docs/cli.md)"), helpOption()}) out.push_back(std::move(spec));
        return out;
    }();
    return specs;
}

int runStored(const std::string& sub, const std::vector<std::string>& argv) {
    auto args = Args::parse(argv, storedSpecs());
    if (!args) return fail("sweep", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict sweep list | show ID | export ID --format csv|json [-o FILE]", formatOptions(storedSpecs()));
        return kExitOk;
    }
    auto db = core::openStore(args->value("db"));
    if (!db) return fail("sweep", db.error().message, kExitBadInput);
    core::SweepRepository repo(*db);
    if (sub == "list") {
        if (!args->positionals().empty()) return fail("sweep", "list takes no arguments", kExitUsage);
        auto all = repo.list();
        if (!all) return fail("sweep", all.error().message, kExitRuntime);
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : *all) {
            auto pts = repo.points(s.id);
            if (!pts) return fail("sweep", pts.error().message, kExitRuntime);
            if (args->has("json")) {
                list.push_back({{"sweep_id", s.id}, {"name", s.name}, {"status", s.status}, {"model_path", s.modelPath},
                                {"device", s.device}, {"created_at", s.createdAt}, {"n_points", pts->size()}});
            } else {
                std::printf("%4lld  %-10s %-24s %3zu points  %s  %s\n", static_cast<long long>(s.id), s.status.c_str(),
                            s.name.c_str(), pts->size(), s.createdAt.c_str(), s.device.c_str());
            }
        }
        if (args->has("json")) std::cout << dump({{"sweeps", list}}) << "\n";
        else if (all->empty()) std::printf("no sweeps in %s\n", db->path().c_str());
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("sweep", sub + " expects one sweep id", kExitUsage);
    auto id = parseId(args->positionals()[0]);
    if (!id) return fail("sweep", id.error().message, kExitUsage);
    auto s = repo.find(*id);
    if (!s) return fail("sweep", s.error().message, kExitRuntime);
    if (!*s) return fail("sweep", "sweep " + std::to_string(*id) + " does not exist in " + db->path(), kExitBadInput);
    auto pts = repo.points(*id);
    if (!pts) return fail("sweep", pts.error().message, kExitRuntime);
    if (sub == "show") {
        if (args->has("json")) std::cout << dump(sweepJson(**s, *pts, false)) << "\n";
        else printTable(**s, *pts);
        return kExitOk;
    }
    SweepExportOptions o;
    // A --format that is neither (textOption's choices) and none at all read the same.
    if (applyOptions(exportOptions(), *args, o) || o.format.empty())
        return fail("sweep", "export needs --format csv or json", kExitUsage);
    const std::string text = o.format == "json" ? dump(sweepJson(**s, *pts, true)) + "\n" : exportCsv(**s, *pts);
    if (const auto& file = o.output) {
        std::ofstream f(*file, std::ios::binary);
        f << text;
        if (!f) return fail("sweep", *file + ": cannot write", kExitRuntime);
    } else {
        std::cout << text;
    }
    return kExitOk;
}

// The options of `verdict sweep MODEL`, bound to the service's settings (core/services/sweep.h):
// the defaults shown in --help are SweepSettings'. The grid's rules (gen >= 2, batch <= 32 …) are
// validateSweepSpec's; the bounds here only keep the numbers sane.
const OptionTable<core::SweepSettings>& sweepOptions() {
    using S = core::SweepSettings;
    constexpr long long kBig = 1LL << 30;
    static const OptionTable<S> table = {
        intListOption<S>("prompt", "N,N", "prompt lengths in tokens", [](auto& s) -> auto& { return s.spec.promptTokens; }, 0, kBig, 'p'),
        intListOption<S>("gen", "N,N", "output lengths in tokens, >= 2", [](auto& s) -> auto& { return s.spec.genTokens; }, 0, kBig, 'n'),
        intListOption<S>("batch", "N,N", "concurrent sequences, 1..32", [](auto& s) -> auto& { return s.spec.batches; }, 0, kBig, 'b'),
        intOption<S>("reps", "N", "measured repetitions per point", [](auto& s) -> auto& { return s.spec.reps; }, 1, 1000000, 'r'),
        intOption<S>("warmup", "N", "unmeasured warm-up batches per point", [](auto& s) -> auto& { return s.spec.warmups; }, 0, 1000000),
        intOption<S>("threads", "N", kThreadsHelp, [](auto& s) -> auto& { return s.threads; }, 0, kMaxThreads, 't'),
        intOption<S>("seed", "N", "seed of the random prompt tokens", [](auto& s) -> auto& { return s.spec.seed; }, 0,
                     std::numeric_limits<int64_t>::max()),
        textOption<S>("name", "NAME", "name of the sweep (default: the model file name)", [](auto& s) -> auto& { return s.name; }),
        numberOption<S>("bandwidth", "GB/S", "memory bandwidth for the roofline; 0 = measured on the CPU, none on a GPU",
                        [](auto& s) -> auto& { return s.bandwidthGbPerS; }, 0, 1e6),
    };
    return table;
}

}  // namespace

int runSweep(const std::vector<std::string>& argv) {
    if (!argv.empty() && (argv[0] == "list" || argv[0] == "show" || argv[0] == "export") &&
        !std::filesystem::exists(argv[0]))
        return runStored(argv[0], std::vector<std::string>(argv.begin() + 1, argv.end()));

    std::vector<OptionSpec> specs = specsOf(sweepOptions(), core::SweepSettings{});
    for (OptionSpec spec : {deviceOptionSpec(), gpuLayersOptionSpec(),
                            dbOption(),
                            jsonOption(),
                            helpOption()})
        specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("sweep", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict sweep MODEL [--prompt 128,512] [--gen 128] [--batch 1,4,16] [--reps 3] [--device DEV] [--gpu-layers N] [--json]\n"
                  "       verdict sweep list | show ID | export ID --format csv|json",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("sweep", "expected one MODEL file (see --help)", kExitUsage);
    const std::string modelPath = args->positionals()[0];

    core::SweepSettings settings;
    if (auto e = applyOptions(sweepOptions(), *args, settings)) return fail("sweep", *e, kExitUsage);
    if (auto r = core::validateSweepSpec(settings.spec, core::kMaxSweepBatch); !r)
        return fail("sweep", r.error().message, kExitUsage);
    if (int rc = readDeviceOption("sweep", *args, &settings.device); rc != kExitOk) return rc;
    if (int rc = readGpuLayersOption("sweep", *args, settings.device, &settings.gpuLayers); rc != kExitOk) return rc;

    auto db = core::openStore(args->value("db"));
    if (!db) return fail("sweep", db.error().message, kExitBadInput);

    SignalStop signals("sweep");  // before the engine starts its threads
    core::SweepEvents events;
    const bool tty = isatty(STDERR_FILENO);
    events.progress = [tty](const core::SweepProgress& p) {
        if (!tty && p.phase != "stored") return;
        std::fprintf(stderr, "%s[sweep] point %d/%d  prompt %lld gen %lld batch %lld  %s  %.0fs elapsed%s",
                     tty ? "\r" : "", p.pointIndex + (p.phase == "stored" ? 0 : 1), p.pointCount,
                     static_cast<long long>(p.promptTokens), static_cast<long long>(p.genTokens),
                     static_cast<long long>(p.batch), p.phase.c_str(), p.elapsedS,
                     p.etaS >= 0 ? (", ETA " + std::to_string(static_cast<int>(p.etaS)) + "s   ").c_str() : "   ");
        if (!tty) std::fprintf(stderr, "\n");
        std::fflush(stderr);
    };
    auto outcome = core::runModelSweep(*db, modelPath, settings, events, signals.cancelFlag());
    if (tty) std::fprintf(stderr, "\n");
    if (!outcome) return failService("sweep", outcome.error(), settings.device);

    if (args->has("json")) std::cout << dump(sweepJson(outcome->sweep, outcome->points, false)) << "\n";
    else printTable(outcome->sweep, outcome->points);
    for (const auto& w : outcome->warnings) std::cerr << "verdict sweep: warning: " << w << "\n";
    if (outcome->cancelled) {
        std::cerr << "verdict sweep: cancelled; " << outcome->points.size() << " finished point(s) are stored as sweep "
                  << outcome->sweep.id << "\n";
        return 130;
    }
    return kExitOk;
}

}  // namespace verdict::cli
