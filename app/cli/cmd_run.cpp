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
#include "cli/endpoint_options.h"
#include "cli/options.h"
#include "cli/signal_stop.h"
#include "core/run/backend_factory.h"
#include "core/services/suite_run.h"
#include "core/stats/run_summary.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/suite_repository.h"
#include "core/version.h"

#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <limits>
#include <thread>
#include <unistd.h>

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

// The options of `verdict run`, bound to the settings of the suite-run service: one declaration
// each, the defaults are SuiteRunSettings' own (the window starts from the same ones).
using core::SuiteRunSettings;

const OptionTable<SuiteRunSettings>& runOptionTable() {
    using S = SuiteRunSettings;
    const auto generation = [](auto& s) -> auto& { return s.generation; };
    static const OptionTable<S> table = concatOptions<S>({{
        textOption<S>("suite", "NAME", "stored suite to evaluate (name or #ID; see verdict suite list)",
                      [](auto& s) -> auto& { return s.suite; }),
        optionalIntOption<S>("limit", "N", "evaluate the first N items only", [](auto& s) -> auto& { return s.limit; }, 1,
                             std::numeric_limits<long long>::max()),
        intOption<S>("shots", "K", "few-shot examples before each item, drawn from the suite",
                     [](auto& s) -> auto& { return s.prompting.shots; }, 0, 64),
        temperatureOption<S>(generation),
        intOption<S>("seed", "S", "sampling seed; item i uses S + i", [](auto& s) -> auto& { return s.generation.seed; }, 0,
                     std::numeric_limits<long long>::max()),
        intOption<S>("max-tokens", "N", "generated tokens per item at most",
                     [](auto& s) -> auto& { return s.generation.maxTokens; }, 0, 1'000'000),
    }, samplingOptions<S>(generation), {
        textOption<S>("system", "TEXT", "system message put before every item", [](auto& s) -> auto& { return s.prompting.system; }),
        flagOption<S>("no-chat-template", "send plain prompts even when the model has a chat template",
                      [](S& s) { s.prompting.useChatTemplate = false; }),
        textOption<S>("mc-mode", "MODE", "multiple-choice items: loglik or generate",
                      [](auto& s) -> auto& { return s.prompting.mcMode; }, {"loglik", "generate"}),
        intOption<S>("tool-retries", "N", "function-calling items: after a wrong call, send the reason back up to N times "
                     "for the model to correct it (graded on the first attempt; recovery recorded)",
                     [](auto& s) -> auto& { return s.prompting.toolRetries; }, 0, 5),
        textOption<S>("template", "TEXT", "prompt template with {{field}} placeholders (default: the suite shape's)",
                      [](auto& s) -> auto& { return s.prompting.templateText; }),
        optionalIntOption<S>("resume", "RUN", "continue this run with its stored settings",
                             [](auto& s) -> auto& { return s.resumeRunId; }, 1, std::numeric_limits<long long>::max()),
        flagOption<S>("new", "start a new run even if an unfinished one with the same settings exists",
                      [](S& s) { s.autoResume = false; }),
        flagOption<S>("allow-code-exec", "let code_exec scorers run the generated programs (HumanEval, MBPP)",
                      [](S& s) { s.allowCodeExecution = true; }),
        textOption<S>("model", "NAME", "endpoint runs: the served model (default: the first of GET /v1/models)",
                      [](auto& s) -> auto& { return s.backend.endpointModel; }, {}, 'm'),
        intOption<S>("parallel", "N", "items in flight at once (engine: continuous batching; endpoint: requests); 0 = "
                     "chosen from the device's free memory (CPU at most 4, GPU 16; endpoint 1)",
                     [](auto& s) -> auto& { return s.parallel; }, 0, 64, 'P'),
        intOption<S>("threads", "N", kThreadsHelp, [](auto& s) -> auto& { return s.backend.threads; }, 0,
                     kMaxThreads, 't'),
        intOption<S>("ctx", "N", "context size in tokens; 0 = min(training context, 4096)",
                     [](auto& s) -> auto& { return s.backend.nCtx; }, 0, std::numeric_limits<int32_t>::max(), 'c'),
    }});
    return table;
}

}  // namespace

int runRun(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(runOptionTable(), SuiteRunSettings{});
    for (const OptionSpec& o : endpointOptionSpecs("endpoint runs")) specs.push_back(o);
    specs.insert(specs.end(), {
        deviceOptionSpec(true),
        gpuLayersOptionSpec(),
        dbOption(),
        jsonOption("print one JSON object at the end (shape: docs/cli.md)"),
        helpOption(),
    });
    auto args = Args::parse(argv, specs);
    if (!args) return fail("run", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict run MODEL.gguf|URL|--provider ID MODEL --suite NAME [--limit N] [--shots K] [--temp T] [--seed S] "
                  "[--parallel N] [--resume RUN] [--json]",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() > 1) return fail("run", "expected one MODEL file (see --help)", kExitUsage);
    SuiteRunSettings settings;
    if (auto e = applyOptions(runOptionTable(), *args, settings)) return fail("run", *e, kExitUsage);
    const bool json = args->has("json");
    const bool resuming = settings.resumeRunId.has_value();
    if (!resuming && args->positionals().empty()) return fail("run", "missing MODEL file (see --help)", kExitUsage);
    if (!resuming && settings.suite.empty()) return fail("run", "missing --suite NAME", kExitUsage);
    if (!args->positionals().empty()) settings.modelRef = args->positionals()[0];
    // Endpoint options first: --provider turns a bare model name into the provider's endpoint.
    EndpointAccess access;
    if (int rc = readEndpointOptions("run", *args, &access); rc != kExitOk) return rc;
    if (auto ref = providerModelRef(access, settings.modelRef)) settings.modelRef = *ref;
    else return fail("run", ref.error().message, kExitUsage);

    std::string device;  // the spelling is checked before anything is opened
    if (int rc = readDeviceOption("run", *args, &device, false); rc != kExitOk) return rc;
    int gpuLayers = -1;
    if (int rc = readGpuLayersOption("run", *args, device, &gpuLayers); rc != kExitOk) return rc;

    auto db = core::openStore(args->value("db"));
    if (!db) return fail("run", db.error().message, kExitBadInput);
    auto exitCodeOf = [&](const core::ServiceError& e) {
        switch (e.kind) {
        case core::ServiceFailure::BadInput: return kExitBadInput;
        case core::ServiceFailure::Storage:
        case core::ServiceFailure::Runtime: return kExitRuntime;
        case core::ServiceFailure::Cancelled: return 130;
        case core::ServiceFailure::ModelOpen: break;
        }
        return core::isEndpointRef(settings.modelRef) ? kExitBadInput : openFailureExitCode(device);
    };

    // What to run: from the options, or (--resume) from the stored run.
    auto plan = core::planSuiteRun(*db, settings);
    if (!plan) return fail("run", plan.error().message, exitCodeOf(plan.error()));
    settings.modelRef = plan->modelRef;

    // A GPU is checked once the model is known (it may come from the resumed run); an endpoint ignores it.
    if (int rc = readDeviceOption("run", *args, &device, !core::isEndpointRef(settings.modelRef)); rc != kExitOk) return rc;

    SignalStop signals("run");  // before the engine starts its threads
    settings.backend.device = device;
    settings.backend.gpuLayers = gpuLayers;
    settings.backend.engineVersion = core::toolVersion();
    settings.backend.cancelLoad = signals.cancelFlag();
    settings.backend.apiKey = access.apiKey;
    settings.backend.caFile = access.caFile;
    settings.backend.insecure = access.insecure;
    settings.backend.endpointApi = access.api;

    core::SuiteRunEvents events;
    events.prepared = [&](const core::PreparedRun& p) {
        if (p.resumed)
            std::cerr << "verdict run: resuming run " << p.run.id << " (" << p.storedBefore << "/" << p.run.nPlanned
                      << " items stored)\n";
        else
            std::cerr << "verdict run: run " << p.run.id << ", " << p.run.nPlanned << " items of suite '" << plan->suite.name
                      << "' (continue an interrupted run with --resume " << p.run.id << ")\n";
    };
    const bool tty = isatty(STDERR_FILENO);
    if (tty) {
        events.progress = [](const core::RunProgress& p) {
            std::fprintf(stderr, "\r[run %lld] %lld/%lld items  %.2f items/s  ETA %s   ", static_cast<long long>(p.runId),
                         static_cast<long long>(p.done), static_cast<long long>(p.total), p.itemsPerSecond,
                         p.etaSeconds ? formatEta(*p.etaSeconds).c_str() : "?");
            std::fflush(stderr);
        };
    }
    auto done = core::executeSuiteRun(*db, settings, *plan, events, signals.token());
    if (tty) std::fprintf(stderr, "\n");
    if (!done) return fail("run", done.error().message, exitCodeOf(done.error()));
    const core::PreparedRun* prepared = &done->prepared;
    const core::RunOutcome* outcome = &done->outcome;
    const core::SuiteRecord* suite = &done->suite;
    const int64_t runId = prepared->run.id;
    const core::RunSummary& sum = done->summary;
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
