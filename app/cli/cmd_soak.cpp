// verdict soak URL|MODEL.gguf [--duration 2h] [--window 60s] [--rate R] [--burst-rate H] ...
//         soak list | show ID
// Stability under load (core/services/soak.h): windows of open-loop load with per-window
// percentiles, errors and the server's resident memory; the drift of each series per hour with
// its 95 % interval, and the P99 spread across bursts. Stored after every window. JSON shape in
// docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/endpoint_options.h"
#include "cli/options.h"
#include "cli/signal_stop.h"
#include "cli/study_command.h"
#include "core/models/model_card_json.h"
#include "core/run/backend_factory.h"
#include "core/services/soak.h"
#include "core/store/store.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>

namespace verdict::cli {
namespace {

using nlohmann::json;
constexpr const char* kCmd = "soak";

std::string num(const json& v, const char* fmt, double scale = 1.0) {
    if (!v.is_number()) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v.get<double>() * scale);
    return buf;
}

std::string trendText(const json& t, const char* unit, double scale) {
    if (!t.is_object() || !t["slope_per_hour"].is_number()) return "not enough windows";
    std::string s = num(t["slope_per_hour"], "%+.4g", scale) + " " + unit + "/h";
    if (t["ci"].is_array())
        s += " [" + num(t["ci"][0], "%+.4g", scale) + ", " + num(t["ci"][1], "%+.4g", scale) + "]" +
             (t.value("drifting", false) ? "  DRIFTING" : "  no drift shown");
    s += "  (" + num(t["first"], "%.4g", scale) + " -> " + num(t["last"], "%.4g", scale) + " " + unit + ")";
    return s;
}

void printSoak(const json& s) {
    std::printf("soak %lld: %s (%s), target %s\n", static_cast<long long>(s.value("id", 0LL)), s.value("name", "").c_str(),
                s.value("status", "").c_str(), s.value("target", "").c_str());
    std::printf("%6s %6s %6s %7s %9s %6s %10s %10s %10s %10s %10s %12s\n", "window", "phase", "rate", "t (s)", "requests",
                "failed", "TTFT P50", "TTFT P99", "E2E P50", "E2E P99", "tok/s", "RSS");
    for (const json& w : s.value("windows", json::array()))
        std::printf("%6lld %6s %6s %7s %9lld %6lld %10s %10s %10s %10s %10s %12s%s\n", static_cast<long long>(w.value("index", 0LL)),
                    w.value("phase", "").c_str(), num(w["rate"], "%.3g").c_str(), num(w["end_s"], "%.0f").c_str(),
                    static_cast<long long>(w.value("requests", 0LL)), static_cast<long long>(w.value("failed", 0LL)),
                    num(w["ttft_ms"]["p50"], "%.1f").c_str(), num(w["ttft_ms"]["p99"], "%.1f").c_str(),
                    num(w["e2e_ms"]["p50"], "%.1f").c_str(), num(w["e2e_ms"]["p99"], "%.1f").c_str(),
                    num(w["output_tok_per_s"], "%.1f").c_str(),
                    w["rss_bytes"].is_number() ? core::formatBytes(w["rss_bytes"].get<uint64_t>()).c_str() : "-",
                    w.value("warmup", false) ? "  (warm-up)" : "");
    const json& sum = s["summary"];
    if (!sum.is_object()) return;
    std::printf("requests %lld, failed %lld (error rate %s)\n", static_cast<long long>(sum.value("requests", 0LL)),
                static_cast<long long>(sum.value("failed", 0LL)), num(sum["error_rate"], "%.2f%%", 100).c_str());
    const json& d = sum["drift"];
    std::printf("drift per hour (least squares over the windows after the warm-up%s; 95%% interval):\n",
                sum.value("latency_fit", "all") == "low_rate" ? ", latency and throughput over the low-rate ones" : "");
    std::printf("  memory (RSS)   %s\n", trendText(d["rss_bytes"], "MiB", 1.0 / (1024 * 1024)).c_str());
    std::printf("  TTFT P99       %s\n", trendText(d["ttft_p99_ms"], "ms", 1).c_str());
    std::printf("  E2E P50        %s\n", trendText(d["e2e_p50_ms"], "ms", 1).c_str());
    std::printf("  E2E P99        %s\n", trendText(d["e2e_p99_ms"], "ms", 1).c_str());
    std::printf("  output tok/s   %s\n", trendText(d["output_tok_per_s"], "tok/s", 1).c_str());
    std::printf("  error rate     %s\n", trendText(d["error_rate"], "pts", 100).c_str());
    if (sum["bursts"].is_object())
        for (const char* phase : {"high", "low"}) {
            const json& b = sum["bursts"][phase]["e2e_p99_ms"];
            if (!b.is_object()) continue;
            std::printf("%s-rate windows: E2E P99 mean %s ms, stddev %s ms (jitter, CV %s), range %s .. %s ms over %lld windows\n",
                        phase, num(b["mean"], "%.1f").c_str(), num(b["stddev"], "%.1f").c_str(), num(b["cv"], "%.3f").c_str(),
                        num(b["min"], "%.1f").c_str(), num(b["max"], "%.1f").c_str(), static_cast<long long>(b.value("n", 0LL)));
        }
}

const StudyCommand& studyCommand() {
    static const StudyCommand c{
        kCmd, "soak test", core::listSoaks,
        [](const json& s) {
            std::printf("%4lld  %-28s %-10s %s  %s, %lld window(s)\n", static_cast<long long>(s["id"].get<int64_t>()),
                        s["name"].get<std::string>().c_str(), s["status"].get<std::string>().c_str(),
                        s["created_at"].get<std::string>().c_str(), s["target"].get<std::string>().c_str(),
                        static_cast<long long>(s["windows"].get<int64_t>()));
        },
        core::loadSoak, printSoak};
    return c;
}

// The options bound to the service's request (core/services/soak.h): the defaults shown are
// SoakRequest's, the ones the window's Soak… dialog starts from; the limits are
// validateSoakRequest's (the bounds here only keep the numbers in range of their types).
const OptionTable<core::SoakRequest>& soakOptions() {
    using S = core::SoakRequest;
    constexpr long long kInt = std::numeric_limits<int32_t>::max();
    static const OptionTable<S> table = {
        textOption<S>("model", "NAME", "endpoint: model name (default: the first of GET /v1/models)",
                      [](auto& s) -> auto& { return s.model; }, {}, 'm'),
        durationOption<S>("duration", "how long: 2h, 30m, 90s", [](auto& s) -> auto& { return s.durationS; }, 'd'),
        durationOption<S>("window", "length of one measured window, at least 0.5s", [](auto& s) -> auto& { return s.windowS; }),
        numberOption<S>("rate", "R", "requests/s, Poisson arrivals", [](auto& s) -> auto& { return s.rate; }, 0, 1e9),
        numberOption<S>("burst-rate", "H", "bursts: every other window runs at H requests/s; 0 = none",
                        [](auto& s) -> auto& { return s.burstRate; }, 0, 1e9),
        intOption<S>("prompt-words", "N", "prompt length in words", [](auto& s) -> auto& { return s.promptWords; }, -kInt, kInt),
        intOption<S>("max-tokens", "N", "tokens per request (ignore_eos is sent)", [](auto& s) -> auto& { return s.maxTokens; },
                     -kInt, kInt),
        intOption<S>("warmup-windows", "N", "first windows left out of the drift fits",
                     [](auto& s) -> auto& { return s.warmupWindows; }, -kInt, kInt),
        intOption<S>("pid", "PID", "endpoint: read the server's memory from /proc/PID/status; 0 = its /metrics",
                     [](auto& s) -> auto& { return s.pid; }, 0, std::numeric_limits<int64_t>::max()),
        intOption<S>("parallel", "N", "MODEL.gguf: sequences the in-process server decodes together",
                     [](auto& s) -> auto& { return s.parallel; }, -kInt, kInt),
        intOption<S>("threads", "N", std::string("MODEL.gguf: ") + kThreadsHelp, [](auto& s) -> auto& { return s.threads; }, 0,
                     kMaxThreads, 't'),
        intOption<S>("seed", "N", "seed of prompts and arrivals", [](auto& s) -> auto& { return s.seed; }, 0,
                     std::numeric_limits<int64_t>::max()),
        textOption<S>("name", "NAME", "name of the stored soak (default: the file or URL)", [](auto& s) -> auto& { return s.name; }),
    };
    return table;
}

}  // namespace

int runSoak(const std::vector<std::string>& argv) {
    if (!argv.empty() && (argv[0] == "list" || argv[0] == "show") && !std::filesystem::exists(argv[0]))
        return runStudySubcommand(studyCommand(), argv[0], std::vector<std::string>(argv.begin() + 1, argv.end()));
    std::vector<OptionSpec> specs = endpointOptionSpecs("the endpoint");
    for (OptionSpec spec : specsOf(soakOptions(), core::SoakRequest{})) specs.push_back(std::move(spec));
    for (OptionSpec spec : {deviceOptionSpec(), gpuLayersOptionSpec(), dbOption(), jsonOption(), helpOption()})
        specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail(kCmd, args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict soak URL|MODEL.gguf [--duration 2h] [--window 60s] [--rate R] [--burst-rate H] [--pid PID] [--json]\n"
                  "       verdict soak list | show ID",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail(kCmd, "expected one endpoint URL or GGUF file (see --help)", kExitUsage);

    core::SoakRequest r;
    r.target = args->positionals()[0];
    if (core::isEndpointRef(r.target)) {
        EndpointAccess access;
        if (int rc = readEndpointOptions(kCmd, *args, &access); rc != kExitOk) return rc;
        r.apiKey = access.apiKey;
        r.caFile = access.caFile;
        r.insecure = access.insecure;
        r.api = access.api;
    }
    if (auto e = applyOptions(soakOptions(), *args, r)) return fail(kCmd, *e, kExitUsage);
    if (auto v = core::validateSoakRequest(r); !v) return fail(kCmd, v.error().message, kExitUsage);
    if (int rc = readDeviceOption(kCmd, *args, &r.device); rc != kExitOk) return rc;
    if (int rc = readGpuLayersOption(kCmd, *args, r.device, &r.gpuLayers); rc != kExitOk) return rc;

    auto db = core::openStore(args->value("db"));
    if (!db) return fail(kCmd, db.error().message, kExitBadInput);
    SignalStop signals(kCmd);
    const bool tty = isatty(STDERR_FILENO);
    core::SoakEvents ev;
    int lastWindow = -1;
    ev.progress = [&](const core::SoakProgress& p) {
        if (!tty && p.window == lastWindow) return;  // a log: one line per window
        lastWindow = p.window;
        std::fprintf(stderr, tty ? "\r[soak] window %d/%d  %s  rate %.3g/s  %lld done, %lld failed  %.0fs elapsed   "
                                 : "[soak] window %d/%d  %s  rate %.3g/s  %lld done, %lld failed  %.0fs elapsed\n",
                     p.window + 1, p.windows, p.phase.c_str(), p.rate, static_cast<long long>(p.completed),
                     static_cast<long long>(p.failed), p.elapsedS);
        std::fflush(stderr);
    };
    auto done = core::runSoak(*db, r, ev, signals.token());
    if (tty) std::fprintf(stderr, "\n");
    if (!done) return failService(kCmd, done.error(), r.device);
    if (args->has("json")) std::cout << done->soak.dump(2) << "\n";
    else printSoak(done->soak);
    if (done->cancelled) {
        std::cerr << "verdict soak: cancelled; the finished windows are stored as soak " << done->id << "\n";
        return 130;
    }
    return kExitOk;
}

}  // namespace verdict::cli
