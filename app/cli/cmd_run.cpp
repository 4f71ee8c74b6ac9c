// verdict run MODEL.gguf --suite NAME [--limit N] [--shots K] [--temp T] [--seed S] [--resume RUN]
//                        [--json] ...: evaluates a stored suite with the built-in engine and
// stores every item in the results database the moment it is scored.
//
// Resuming: an unfinished run (killed, cancelled with Ctrl-C) of the same model file, suite and
// settings is continued automatically (--new starts over instead); --resume RUN continues that
// run with its stored settings (MODEL and --suite may then be left out). Ctrl-C stops after the
// item in flight is abandoned (exit 130); a second Ctrl-C exits at once.
// Progress (items/s, ETA) goes to stderr when it is a terminal. JSON shape: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/signal_stop.h"
#include "core/run/backend_factory.h"
#include "core/run/suite_bindings.h"
#include "core/run/suite_runner.h"
#include "core/stats/run_summary.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/suite_repository.h"

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <thread>
#include <unistd.h>

#ifndef VERDICT_VERSION
#define VERDICT_VERSION "dev"
#endif

namespace verdict::cli {
namespace {

std::string formatEta(double secs) {
    char buf[32];
    if (secs >= 3600) std::snprintf(buf, sizeof buf, "%dh%02dm", int(secs / 3600), int(secs / 60) % 60);
    else if (secs >= 60) std::snprintf(buf, sizeof buf, "%dm%02ds", int(secs / 60), int(secs) % 60);
    else std::snprintf(buf, sizeof buf, "%ds", int(secs));
    return buf;
}

nlohmann::json ciJson(const core::Interval& i) { return {i.lo, i.hi}; }

}  // namespace

int runRun(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = {
        {"suite", true, "NAME", "stored suite to evaluate (name or #ID; see verdict suite list)"},
        {"limit", true, "N", "evaluate the first N items only"},
        {"shots", true, "K", "few-shot examples before each item, drawn from the suite (default 0)"},
        {"temp", true, "T", "temperature; 0 = greedy (default 0)"},
        {"seed", true, "S", "sampling seed; item i uses S + i (default 0)"},
        {"max-tokens", true, "N", "generated tokens per item at most (default 256)"},
        {"top-k", true, "K", "top-k (default 40; 0 = off)"},
        {"top-p", true, "P", "top-p (default 0.95; 1 = off)"},
        {"min-p", true, "P", "min-p (default 0.05; 0 = off)"},
        {"repeat-penalty", true, "R", "repetition penalty (default 1 = off)"},
        {"stop", true, "STR", "stop generating when the output contains STR (repeatable)", true},
        {"system", true, "TEXT", "system message put before every item"},
        {"no-chat-template", false, "", "send plain prompts even when the model has a chat template"},
        {"mc-mode", true, "MODE", "multiple-choice items: loglik (default) or generate"},
        {"template", true, "TEXT", "prompt template with {{field}} placeholders (default: the suite shape's)"},
        {"resume", true, "RUN", "continue this run with its stored settings"},
        {"new", false, "", "start a new run even if an unfinished one with the same settings exists"},
        {"allow-code-exec", false, "", "let code_exec scorers run the generated programs (HumanEval, MBPP)"},
        {"model", true, "NAME", "endpoint runs: the served model (default: the first of GET /v1/models)", false, 'm'},
        {"api-key-env", true, "VAR", "endpoint runs: environment variable with the API key (default VERDICT_API_KEY)"},
        {"threads", true, "N", "compute threads (default: physical cores)", false, 't'},
        {"ctx", true, "N", "context size in tokens (default: min(training context, 4096))", false, 'c'},
        deviceOptionSpec(true),
        gpuLayersOptionSpec(),
        {"db", true, "PATH", "results database (default: $VERDICT_DB, else the XDG data dir)"},
        {"json", false, "", "print one JSON object at the end (shape: docs/cli.md)"},
        {"help", false, "", "show this help", false, 'h'},
    };
    auto args = Args::parse(argv, specs);
    if (!args) return fail("run", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict run MODEL.gguf --suite NAME [--limit N] [--shots K] [--temp T] [--seed S] [--resume RUN] [--json]",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() > 1) return fail("run", "expected one MODEL file (see --help)", kExitUsage);
    auto limit = args->integer("limit", -1);
    auto shots = args->integer("shots", 0);
    auto seed = args->integer("seed", 0);
    auto maxTokens = args->integer("max-tokens", 256);
    auto topK = args->integer("top-k", 40);
    auto threads = args->integer("threads", 0);
    auto ctx = args->integer("ctx", 0);
    auto resume = args->integer("resume", -1);
    for (const Result<long long>* r : {&limit, &shots, &seed, &maxTokens, &topK, &threads, &ctx, &resume})
        if (!*r) return fail("run", r->error().message, kExitUsage);
    auto temp = args->number("temp", 0.0);
    auto topP = args->number("top-p", 0.95);
    auto minP = args->number("min-p", 0.05);
    auto rep = args->number("repeat-penalty", 1.0);
    for (const Result<double>* r : {&temp, &topP, &minP, &rep})
        if (!*r) return fail("run", r->error().message, kExitUsage);
    if (args->has("limit") && *limit <= 0) return fail("run", "--limit must be positive", kExitUsage);
    if (*shots < 0 || *shots > 64) return fail("run", "--shots must be between 0 and 64", kExitUsage);
    if (*maxTokens < 0 || *maxTokens > 1'000'000) return fail("run", "--max-tokens must be between 0 and 1000000", kExitUsage);
    if (*ctx < 0) return fail("run", "--ctx must be positive", kExitUsage);
    const std::string mcMode = args->value("mc-mode").value_or("loglik");
    if (mcMode != "loglik" && mcMode != "generate") return fail("run", "--mc-mode must be loglik or generate", kExitUsage);
    const bool json = args->has("json");
    const bool resuming = args->has("resume");
    if (!resuming && args->positionals().empty()) return fail("run", "missing MODEL file (see --help)", kExitUsage);
    if (!resuming && !args->has("suite")) return fail("run", "missing --suite NAME", kExitUsage);

    std::string device;  // the spelling is checked before anything is opened
    if (int rc = readDeviceOption("run", *args, &device, false); rc != kExitOk) return rc;
    int gpuLayers = -1;
    if (int rc = readGpuLayersOption("run", *args, device, &gpuLayers); rc != kExitOk) return rc;

    auto db = core::openStore(args->value("db"));
    if (!db) return fail("run", db.error().message, kExitBadInput);
    core::SuiteRepository suites(*db);

    // What to run: from the options, or (--resume) from the stored run.
    std::string modelPath = args->positionals().empty() ? std::string() : args->positionals()[0];
    std::optional<core::SuiteRecord> suite;
    if (resuming) {
        auto run = core::RunRepository(*db).find(*resume);
        if (!run) return fail("run", run.error().message, kExitRuntime);
        if (!*run) return fail("run", "run " + std::to_string(*resume) + " does not exist", kExitBadInput);
        if (modelPath.empty()) modelPath = (*run)->modelPath;
        auto s = suites.findById((*run)->suiteId);
        if (!s) return fail("run", s.error().message, kExitRuntime);
        if (!*s) return fail("run", "the suite of run " + std::to_string(*resume) + " is missing", kExitBadInput);
        suite = **s;
    }
    if (auto name = args->value("suite")) {
        auto s = suites.find(*name);
        if (!s) return fail("run", s.error().message, kExitRuntime);
        if (!*s) return fail("run", "no suite named '" + *name + "' (verdict suite list)", kExitBadInput);
        if (suite && suite->id != (*s)->id)
            return fail("run", "run " + std::to_string(*resume) + " evaluated suite '" + suite->name + "', not '" + *name + "'",
                        kExitBadInput);
        suite = **s;
    }
    auto items = suites.items(suite->id);
    if (!items) return fail("run", items.error().message, kExitRuntime);

    // A GPU is checked once the model is known (it may come from the resumed run); an endpoint ignores it.
    if (int rc = readDeviceOption("run", *args, &device, !core::isEndpointRef(modelPath)); rc != kExitOk) return rc;

    SignalStop signals("run");  // before the engine starts its threads
    // A file (the engine) or an endpoint: "URL" from the command line, or "URL MODEL" as a run stores it.
    core::BackendOpenOptions bo;
    bo.threads = static_cast<int>(*threads);
    bo.nCtx = *ctx;
    bo.device = device;
    bo.gpuLayers = gpuLayers;
    bo.engineVersion = std::string("verdict ") + VERDICT_VERSION;
    bo.cancelLoad = signals.cancelFlag();
    bo.endpointModel = args->value("model").value_or("");
    if (const char* k = std::getenv(args->value("api-key-env").value_or("VERDICT_API_KEY").c_str())) bo.apiKey = k;
    auto opened = core::openModelBackend(modelPath, bo);
    if (!opened) {
        if (!core::isEndpointRef(modelPath) && signals.token().stop_requested())
            return fail("run", "cancelled while loading the model", 130);
        return fail("run", opened.error().message, core::isEndpointRef(modelPath) ? kExitBadInput : openFailureExitCode(device));
    }
    std::unique_ptr<core::ModelBackend> backend = std::move(*opened);

    core::RunRequest req;
    req.suite = *suite;
    req.items = std::move(*items);
    req.prompting.shots = static_cast<int>(*shots);
    req.prompting.useChatTemplate = !args->has("no-chat-template");
    req.prompting.system = args->value("system").value_or("");
    req.prompting.mcMode = mcMode;
    req.prompting.shape = suite->shape;
    req.prompting.templateText = args->value("template").value_or("");
    req.generation.maxTokens = static_cast<int32_t>(*maxTokens);
    req.generation.temperature = *temp;
    req.generation.topK = static_cast<int32_t>(*topK);
    req.generation.topP = *topP;
    req.generation.minP = *minP;
    req.generation.repeatPenalty = *rep;
    req.generation.seed = static_cast<uint64_t>(*seed);
    req.generation.stop = args->values("stop");
    if (args->has("limit")) req.limit = *limit;
    if (resuming) req.resumeRunId = *resume;
    req.autoResume = !args->has("new");

    core::ScorerOptions so;
    so.allowCodeExecution = args->has("allow-code-exec");
    core::SuiteRunner runner(*db, *backend, core::makeSuitePromptRenderer(), core::makeRegistryScorer(so));
    auto prepared = runner.prepare(req);
    if (!prepared) return fail("run", prepared.error().message, kExitBadInput);
    const int64_t runId = prepared->run.id;
    if (prepared->resumed)
        std::cerr << "verdict run: resuming run " << runId << " (" << prepared->storedBefore << "/"
                  << prepared->run.nPlanned << " items stored)\n";
    else
        std::cerr << "verdict run: run " << runId << ", " << prepared->run.nPlanned << " items of suite '" << suite->name
                  << "' (continue an interrupted run with --resume " << runId << ")\n";

    const bool tty = isatty(STDERR_FILENO);
    if (tty) {
        runner.setProgressCallback([](const core::RunProgress& p) {
            std::fprintf(stderr, "\r[run %lld] %lld/%lld items  %.2f items/s  ETA %s   ", static_cast<long long>(p.runId),
                         static_cast<long long>(p.done), static_cast<long long>(p.total), p.itemsPerSecond,
                         p.etaSeconds ? formatEta(*p.etaSeconds).c_str() : "?");
            std::fflush(stderr);
        });
    }
    auto outcome = runner.execute(*prepared, signals.token());
    if (tty) std::fprintf(stderr, "\n");
    if (!outcome) return fail("run", outcome.error().message, kExitRuntime);

    core::RunRepository runs(*db);
    auto stored = runs.items(runId);
    if (!stored) return fail("run", stored.error().message, kExitRuntime);
    const core::RunSummary sum = core::summarizeRun(*stored);
    const auto& acc = sum.accuracy;
    const bool cancelled = outcome->run.status == core::RunStatus::Cancelled;

    if (json) {
        nlohmann::json j = {
            {"run_id", runId},
            {"status", std::string(core::runStatusName(outcome->run.status))},
            {"resumed", prepared->resumed},
            {"suite", {{"id", suite->id}, {"name", suite->name}}},
            {"model", {{"path", outcome->run.modelPath}, {"sha256", outcome->run.modelSha256}, {"bytes", outcome->run.modelBytes}}},
            {"device", outcome->run.device},
            {"chat_template", outcome->run.chatTemplateMode},
            {"n_planned", outcome->run.nPlanned},
            {"n_items", sum.nStored},
            {"n_scored", acc.overall.n},
            {"n_errors", acc.nErrors},
            {"stored_now", outcome->storedNow},
            {"accuracy", acc.overall.n > 0 ? nlohmann::json(acc.overall.accuracy) : nlohmann::json(nullptr)},
            {"accuracy_ci", ciJson(acc.overall.ci)},
            {"by_category", core::byCategoryJson(acc)},
            {"mean_ttft_ms", sum.meanTtftMs ? nlohmann::json(*sum.meanTtftMs) : nlohmann::json(nullptr)},
            {"mean_decode_tps", sum.meanDecodeTps ? nlohmann::json(*sum.meanDecodeTps) : nlohmann::json(nullptr)},
            {"database", db->path()}};
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
        std::printf("run %lld %s: %lld/%lld items stored", static_cast<long long>(runId),
                    std::string(core::runStatusName(outcome->run.status)).c_str(), static_cast<long long>(sum.nStored),
                    static_cast<long long>(outcome->run.nPlanned));
        if (acc.overall.n > 0)
            std::printf("; accuracy %.1f%% (%lld/%lld, 95%% CI %.1f-%.1f%%)", 100 * acc.overall.accuracy,
                        static_cast<long long>(acc.overall.correct), static_cast<long long>(acc.overall.n),
                        100 * acc.overall.ci.lo, 100 * acc.overall.ci.hi);
        if (acc.nErrors > 0) std::printf("; %lld errors", static_cast<long long>(acc.nErrors));
        std::printf("\n");
        if (acc.byCategory.size() > 1)
            for (const auto& [name, c] : acc.byCategory)
                std::printf("  %-30s %6.1f%%  (%lld/%lld)\n", name.empty() ? "(none)" : name.c_str(), 100 * c.accuracy,
                            static_cast<long long>(c.correct), static_cast<long long>(c.n));
    }
    if (cancelled) {
        std::cerr << "verdict run: cancelled; continue with: verdict run --resume " << runId << "\n";
        return 130;
    }
    return kExitOk;
}

}  // namespace verdict::cli
