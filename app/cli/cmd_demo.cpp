// verdict demo [--out DIR] [--db PATH] [--quick] [--device DEV] [--gpu-layers N] [--json]
// The first-run comparison with nothing downloaded: imports the bundled demo suites, runs both
// demo models on them (greedy), a short latency sweep of each, and writes the decision report
// with the cost of a default hardware profile. Every step is the public command a user would
// type (run as a child process of this binary with --json), so the demo exercises exactly the
// documented paths; results land in the results database the window opens.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/options.h"
#include "core/workspace/demo_resources.h"

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

namespace verdict::cli {
namespace {

struct Child {
    int exitCode = -1;
    std::string out;
    nlohmann::json json() const { return nlohmann::json::parse(out, nullptr, false); }
};

// Runs this binary with `args`, capturing stdout (stderr passes through: progress, errors).
Child runSelf(const std::string& exe, const std::vector<std::string>& args) {
    Child c;
    int pipeFd[2];
    if (::pipe(pipeFd) != 0) return c;
    const pid_t pid = ::fork();
    if (pid < 0) return c;
    if (pid == 0) {
        ::dup2(pipeFd[1], STDOUT_FILENO);
        ::close(pipeFd[0]);
        ::close(pipeFd[1]);
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>(exe.c_str()));
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(exe.c_str(), argv.data());
        ::_exit(127);
    }
    ::close(pipeFd[1]);
    char buf[65536];
    ssize_t n;
    while ((n = ::read(pipeFd[0], buf, sizeof buf)) > 0) c.out.append(buf, static_cast<size_t>(n));
    ::close(pipeFd[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    c.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return c;
}

double num(const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

struct DemoOptions {
    std::string outDir = "verdict-demo";  // where the report goes, relative to the working directory
    bool quick = false;                   // the smaller sweep grid
};

const OptionTable<DemoOptions>& demoOptions() {
    using S = DemoOptions;
    static const OptionTable<S> table = {
        textOption<S>("out", "DIR", "where the report goes", [](auto& s) -> auto& { return s.outDir; }, {}, 'o'),
        flagOption<S>("quick", "fewer sweep points (CI)", [](S& s) { s.quick = true; }),
    };
    return table;
}

}  // namespace

int runDemo(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(demoOptions(), DemoOptions{});
    for (OptionSpec spec : {dbOption(), threadsOption(), deviceOptionSpec(), gpuLayersOptionSpec(),
                            jsonOption("print one JSON object at the end (shape: docs/cli.md)"), helpOption()})
        specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("demo", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict demo [--out DIR] [--db PATH] [--quick] [--device DEV] [--gpu-layers N] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (!args->positionals().empty()) return fail("demo", "takes no arguments", kExitUsage);
    DemoOptions o;
    if (auto e = applyOptions(demoOptions(), *args, o)) return fail("demo", *e, kExitUsage);
    // --threads, --device and --gpu-layers are checked here so a bad one fails before any step;
    // they are passed on to run and sweep.
    const auto threads = threadsValue(*args);
    if (!threads) return fail("demo", threads.error().message, kExitUsage);
    std::string device;
    if (int rc = readDeviceOption("demo", *args, &device); rc != kExitOk) return rc;
    int gpuLayers = -1;
    if (int rc = readGpuLayersOption("demo", *args, device, &gpuLayers); rc != kExitOk) return rc;
    const std::string exe = core::currentExecutable();
    if (exe.empty()) return fail("demo", "cannot find this program's own path (/proc/self/exe)", kExitRuntime);
    auto res = core::findDemoResources(exe);
    if (!res) return fail("demo", res.error().message, kExitBadInput);
    const std::string& outDir = o.outDir;
    std::error_code ec;
    std::filesystem::create_directories(outDir, ec);
    if (ec) return fail("demo", outDir + ": cannot create: " + ec.message(), kExitBadInput);
    std::vector<std::string> common;
    if (auto db = args->value("db")) common = {"--db", *db};
    std::vector<std::string> engineArgs;  // --threads, --device, --gpu-layers: the steps that load models
    if (args->has("threads")) engineArgs = {"--threads", std::to_string(*threads)};
    engineArgs.insert(engineArgs.end(), {"--device", device});
    if (gpuLayers >= 0) engineArgs.insert(engineArgs.end(), {"--gpu-layers", std::to_string(gpuLayers)});
    const bool json = args->has("json");
    const auto t0 = std::chrono::steady_clock::now();
    auto say = [&](const std::string& s) {
        if (!json) std::cerr << "[demo] " << s << "\n";
    };
    auto step = [&](std::vector<std::string> a, bool withThreads = false) {
        a.insert(a.end(), common.begin(), common.end());
        if (withThreads) a.insert(a.end(), engineArgs.begin(), engineArgs.end());
        a.push_back("--json");
        return runSelf(exe, a);
    };

    // 1. Suites: imported once; a second demo reuses them.
    std::vector<std::string> suiteNames;
    std::set<std::string> existing;
    if (Child list = step({"suite", "list"}); list.exitCode == 0 && list.json().is_object())
        for (const auto& s : list.json()["suites"])
            if (s.contains("name") && s["name"].is_string()) existing.insert(s["name"].get<std::string>());
    for (const std::string& file : res->suites) {
        const std::string name = core::demoSuiteName(file);
        if (!existing.count(name)) {
            say("importing " + file + " as suite " + name);
            Child imp = step({"suite", "import", file, "--name", name});
            if (imp.exitCode != 0) return fail("demo", "importing " + file + " failed", kExitRuntime);
        }
        suiteNames.push_back(name);
    }

    // 2. Both models on every suite, greedy and seeded.
    const std::vector<std::pair<std::string, std::string>> models = {{"demo-large", res->largeModel},
                                                                     {"demo-small", res->smallModel}};
    nlohmann::json runs = nlohmann::json::object();
    std::map<std::string, std::map<std::string, int64_t>> runIds;  // suite -> model -> run
    for (const std::string& suite : suiteNames) {
        for (const auto& [label, path] : models) {
            say("running " + label + " on " + suite);
            Child r = step({"run", path, "--suite", suite, "--temp", "0", "--seed", "1", "--max-tokens", "24"}, true);
            const nlohmann::json j = r.json();
            if (r.exitCode != 0 || !j.is_object() || !j.contains("run_id"))
                return fail("demo", "the run of " + label + " on " + suite + " failed", kExitRuntime);
            runIds[suite][label] = j["run_id"].get<int64_t>();
            runs[suite][label] = {{"run_id", j["run_id"]}, {"accuracy", num(j, "accuracy")}, {"n_items", j["n_items"]},
                                  {"mean_decode_tps", num(j, "mean_decode_tps")}};
        }
    }

    // 3. A short latency sweep of each model.
    const std::vector<std::string> grid = o.quick
                                              ? std::vector<std::string>{"--prompt", "32", "--gen", "16", "--batch", "1,4", "--reps", "2"}
                                              : std::vector<std::string>{"--prompt", "32,128", "--gen", "32", "--batch", "1,4,8", "--reps", "3"};
    nlohmann::json sweeps = nlohmann::json::object();
    std::map<std::string, int64_t> sweepIds;
    for (const auto& [label, path] : models) {
        say("latency sweep of " + label);
        std::vector<std::string> a = {"sweep", path, "--name", label};
        a.insert(a.end(), grid.begin(), grid.end());
        Child s = step(a, true);
        const nlohmann::json j = s.json();
        if (s.exitCode != 0 || !j.is_object() || !j.contains("sweep_id"))
            return fail("demo", "the sweep of " + label + " failed", kExitRuntime);
        sweepIds[label] = j["sweep_id"].get<int64_t>();
        double bestTps = 0;
        for (const auto& p : j["points"])
            bestTps = std::max(bestTps, num(p["metrics"], "output_tok_per_s"));
        sweeps[label] = {{"sweep_id", j["sweep_id"]}, {"best_output_tok_per_s", bestTps}};
    }

    // 4. The decision report: accuracy from the prompt/reference suite (the first otherwise),
    //    performance from the sweeps, cost on this machine with the demo's stated assumptions
    //    (a user hardware file next to the report, so every figure shows its source).
    nlohmann::json report = nullptr;
    if (findCommand("report")) {
        std::string suite = suiteNames.front();
        for (const std::string& s : suiteNames)
            if (s.find("tasks") != std::string::npos) suite = s;
        const std::filesystem::path dir(outDir);
        const std::string pdf = (dir / "verdict-demo-report.pdf").string();
        const std::string hwFile = (dir / "demo-hardware.json").string();
        double bandwidth = 0;
        if (Child show = step({"sweep", "show", std::to_string(sweepIds["demo-large"])}); show.exitCode == 0)
            bandwidth = num(show.json()["environment"], "bandwidth_gb_per_s");
        nlohmann::json hw = {{"hardware", nlohmann::json::array({{{"id", "this-machine"},
                                                                  {"purchase_usd", {{"value", 1500}, {"source", "verdict demo assumption: a small 2-core server"}, {"as_of", "2026-11"}}},
                                                                  {"tdp_w", {{"value", 65}, {"source", "verdict demo assumption"}, {"as_of", "2026-11"}}}}})}};
        if (bandwidth > 0)
            hw["hardware"][0]["memory_bandwidth_gbs"] = {{"value", bandwidth}, {"source", "STREAM-style triad measured by verdict sweep"}, {"as_of", "2026-11"}};
        if (FILE* f = std::fopen(hwFile.c_str(), "w")) {
            const std::string text = hw.dump(2);
            std::fwrite(text.data(), 1, text.size(), f);
            std::fclose(f);
        }
        say("writing the decision report " + pdf);
        Child rep = step({"report", "--run", std::to_string(runIds[suite]["demo-large"]), "--run",
                          std::to_string(runIds[suite]["demo-small"]), "--sweep", std::to_string(sweepIds["demo-large"]),
                          "--sweep", std::to_string(sweepIds["demo-small"]), "--hardware", "this-machine",
                          "--hardware-file", hwFile, "--tokens-per-day", "1000000", "--baseline-usd-per-mtok", "0.5",
                          "--measured-on", "this-machine", "-o", pdf});
        if (rep.exitCode != 0) return fail("demo", "the report failed", kExitRuntime);
        report = rep.json();
        if (!report.is_object()) report = {{"output", pdf}};
    }

    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const nlohmann::json out = {{"resources", res->root}, {"suites", suiteNames}, {"runs", runs},
                                {"sweeps", sweeps},       {"report", report},     {"seconds", secs}};
    if (json) {
        std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return kExitOk;
    }
    std::printf("\nVerdict demo: demo-large vs demo-small (models and suites from %s)\n\n", res->root.c_str());
    std::printf("%-16s %12s %12s\n", "suite", "demo-large", "demo-small");
    for (const std::string& suite : suiteNames)
        std::printf("%-16s %11.1f%% %11.1f%%\n", suite.c_str(), 100 * runs[suite]["demo-large"]["accuracy"].get<double>(),
                    100 * runs[suite]["demo-small"]["accuracy"].get<double>());
    std::printf("%-16s %12.0f %12.0f   (best output tokens/s in the sweep)\n", "speed",
                sweeps["demo-large"]["best_output_tok_per_s"].get<double>(),
                sweeps["demo-small"]["best_output_tok_per_s"].get<double>());
    std::printf("\nruns:   ");
    for (const std::string& suite : suiteNames)
        std::printf("%s: %lld vs %lld   ", suite.c_str(), static_cast<long long>(runIds[suite]["demo-large"]),
                    static_cast<long long>(runIds[suite]["demo-small"]));
    std::printf("\nsweeps: %lld vs %lld\n", static_cast<long long>(sweepIds["demo-large"]),
                static_cast<long long>(sweepIds["demo-small"]));
    if (report.is_object()) {
        if (report.contains("recommendation") && report["recommendation"].is_object())
            std::printf("\nrecommendation: %s\n", report["recommendation"].value("headline", "").c_str());
        std::printf("report: %s\n", report.value("output", "").c_str());
    }
    std::printf("\nNext: `verdict diff %lld %lld` for the paired test, `verdict sweep show %lld`, or `verdict` for the window.\n",
                static_cast<long long>(runIds[suiteNames.front()]["demo-large"]),
                static_cast<long long>(runIds[suiteNames.front()]["demo-small"]),
                static_cast<long long>(sweepIds["demo-large"]));
    std::printf("(%.0f s)\n", secs);
    return kExitOk;
}

}  // namespace verdict::cli
