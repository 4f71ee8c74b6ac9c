// verdict load URL [--concurrency 1,8,32] [--rate 2,5] [--duration 60s | --requests N] [--json]
// Load test of an OpenAI-compatible endpoint (core/perf/load_runner.h); every level is stored as
// a point of a sweep with backend "endpoint" (docs/schema.md), so `verdict sweep show/export`
// and the report read it like a local sweep. The API key comes from an environment variable
// (--api-key-env, default VERDICT_API_KEY) and is never stored. Shapes: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/endpoint_options.h"
#include "cli/options.h"
#include "cli/signal_stop.h"
#include "core/perf/load_runner.h"
#include "core/run/backend_factory.h"
#include "core/services/load.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <unistd.h>

namespace verdict::cli {

namespace {

// The options bound to the service's settings (core/services/load.h): the defaults shown are
// LoadSpec's (core/perf/load_runner.h), the level limits validateLoadSpec's.
const OptionTable<core::LoadSettings>& loadSettingsOptions() {
    using S = core::LoadSettings;
    constexpr long long kInt = std::numeric_limits<int32_t>::max();
    static const OptionTable<S> table = {
        intListOption<S>("concurrency", "N,N", "closed-loop levels: concurrent clients (1,8 when no --rate or --trace)",
                         [](auto& s) -> auto& { return s.spec.concurrency; }, -kInt, kInt, 'c'),
        numberListOption<S>("rate", "R,R", "open-loop levels: requests/s with Poisson arrivals",
                            [](auto& s) -> auto& { return s.spec.rates; }, -1e12, 1e12),
        numberOption<S>("burstiness", "B", "open loop: gamma shape of the gaps between arrivals (1 = Poisson; < 1 burstier)",
                        [](auto& s) -> auto& { return s.spec.burstiness; }, 0, 1e12),
        durationOption<S>("ramp-up", "clients start spread over T; rates rise linearly from 0 over T",
                          [](auto& s) -> auto& { return s.spec.rampUpS; }, 0, true),
        durationOption<S>("duration", "per level: 60s, 2m, 500ms", [](auto& s) -> auto& { return s.spec.durationS; }, 'd'),
        intOption<S>("requests", "N", "per level: this many requests instead of a duration; 0 = the duration",
                     [](auto& s) -> auto& { return s.spec.requests; }, 0, std::numeric_limits<int64_t>::max(), 'n'),
        intOption<S>("prompt-words", "N", "prompt length in words", [](auto& s) -> auto& { return s.spec.promptWords; }, 1, kInt),
        intOption<S>("max-tokens", "N", "tokens per request (ignore_eos is sent)", [](auto& s) -> auto& { return s.spec.maxTokens; },
                     1, kInt),
        intOption<S>("retries", "N", "retries for 429/5xx/timeouts (other 4xx never retried)",
                     [](auto& s) -> auto& { return s.spec.maxRetries; }, 0, 100),
        intOption<S>("seed", "N", "seed of prompts and arrivals", [](auto& s) -> auto& { return s.spec.seed; }, 0,
                     std::numeric_limits<int64_t>::max()),
        textOption<S>("name", "NAME", "name of the stored sweep (default: the URL and model)", [](auto& s) -> auto& { return s.name; }),
    };
    return table;
}

// The whole command line of `verdict load` but the URL and the endpoint access (cli/endpoint_options.h):
// the request side of the endpoint (the defaults shown are EndpointConfig's), the files read once
// the options are (a trace, a tokenizer), the service's settings.
struct LoadOptions {
    core::EndpointConfig endpoint;        // model, headers, API, streaming, timeout; the URL and key: below
    std::optional<std::string> trace;     // JSONL trace replayed as one more level
    std::optional<std::string> tokenizer; // GGUF whose tokenizer counts the tokens too
    bool store = true;
    core::LoadSettings settings;
};

// --header K:V (repeatable): an extra request header; spaces after the colon are dropped.
BoundOption<LoadOptions> headerOption() {
    BoundOption<LoadOptions> o;
    o.spec = {"header", true, "K:V", "extra request header (repeatable)", true};
    o.apply = [](const Args& args, LoadOptions& s) -> std::optional<std::string> {
        for (const std::string& h : args.values("header")) {
            const size_t colon = h.find(':');
            if (colon == std::string::npos || colon == 0) return "--header '" + h + "' is not K:V";
            std::string v = h.substr(colon + 1);
            while (!v.empty() && v.front() == ' ') v.erase(0, 1);
            s.endpoint.headers[h.substr(0, colon)] = v;
        }
        return std::nullopt;
    };
    o.shownDefault = [](const LoadOptions&) { return std::string(); };
    return o;
}

// --slo ttft=500ms,tpot=50ms: goodput bounds (core::parseSlo); none by default.
BoundOption<LoadOptions> sloOption() {
    BoundOption<LoadOptions> o;
    o.spec = {"slo", true, "SPEC", "goodput bounds, e.g. ttft=500ms,tpot=50ms"};
    o.apply = [](const Args& args, LoadOptions& s) -> std::optional<std::string> {
        if (auto r = core::parseSlo(args.value("slo").value_or(""), s.settings.spec); !r) return r.error().message;
        return std::nullopt;
    };
    o.shownDefault = [](const LoadOptions&) { return std::string(); };
    return o;
}

const OptionTable<LoadOptions>& loadOptions() {
    using S = LoadOptions;
    static const OptionTable<S> table = concatOptions<S>({
        {
            textOption<S>("model", "NAME", "model name (default: the first of GET /v1/models)",
                          [](auto& s) -> auto& { return s.endpoint.model; }, {}, 'm'),
            headerOption(),
            optionalTextOption<S>("trace", "FILE", "one more level replaying a JSONL trace of {timestamp (ms), input_length, output_length}",
                                  [](auto& s) -> auto& { return s.trace; }),
            flagOption<S>("completions", "use /v1/completions instead of /v1/chat/completions", [](S& s) { s.endpoint.chat = false; }),
            flagOption<S>("no-stream", "non-streaming requests (TTFT = E2E)", [](S& s) { s.endpoint.stream = false; }),
            sloOption(),
            millisecondsOption<S>("timeout", "per request read timeout", [](auto& s) -> auto& { return s.endpoint.timeoutMs; }),
            optionalTextOption<S>("tokenizer", "GGUF", "count prompts and outputs with this model's tokenizer too (a model or a vocab-only GGUF): "
                                                       "the server's usage against it, and max_tokens ignored",
                                  [](auto& s) -> auto& { return s.tokenizer; }),
            flagOption<S>("no-store", "do not store the results", [](S& s) { s.store = false; }),
        },
        nestedOptions<S>(loadSettingsOptions(), [](auto& s) -> auto& { return s.settings; }),
    });
    return table;
}

}  // namespace

int runLoad(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = endpointOptionSpecs("the endpoint");
    for (OptionSpec spec : specsOf(loadOptions(), LoadOptions{})) specs.push_back(std::move(spec));
    specs.insert(specs.end(), {
        dbOption(),
        jsonOption(),
        helpOption(),
    });
    auto args = Args::parse(argv, specs);
    if (!args) return fail("load", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict load URL [--concurrency 1,8,32,100] [--rate R,R] [--duration 60s | --requests N] "
                  "[--slo ttft=500ms,tpot=50ms] [--json]",
                  formatOptions(specs));
        return kExitOk;
    }
    EndpointAccess access;
    if (int rc = readEndpointOptions("load", *args, &access); rc != kExitOk) return rc;
    const bool noUrl = args->positionals().empty() && !access.provider.empty();  // --provider ID --model NAME
    if (args->positionals().size() != 1 && !noUrl)
        return fail("load", "expected one endpoint URL (http://host:port), or --provider ID", kExitUsage);

    std::string baseUrl;
    std::optional<std::string> urlSlotModel;  // with --provider: a model name given in the URL's place
    if (noUrl || !core::isEndpointRef(args->positionals()[0])) {
        // With --provider: no URL, or a model name in its place.
        if (!noUrl && access.provider.empty())
            return fail("load", "'" + args->positionals()[0] + "' is not an http:// or https:// URL", kExitUsage);
        if (!noUrl) urlSlotModel = args->positionals()[0];
        if (access.providerBaseUrl.empty()) return fail("load", access.providerBaseUrlError, kExitUsage);
        baseUrl = access.providerBaseUrl;
    } else {
        baseUrl = args->positionals()[0];
    }

    LoadOptions options;
    if (auto e = applyOptions(loadOptions(), *args, options)) return fail("load", *e, kExitUsage);
    core::EndpointConfig& ep = options.endpoint;
    ep.baseUrl = baseUrl;
    if (urlSlotModel) ep.model = *urlSlotModel;  // over --model
    ep.apiKey = access.apiKey;
    ep.caFile = access.caFile;
    ep.insecure = access.insecure;
    ep.api = access.api;

    core::LoadSettings& settings = options.settings;
    core::LoadSpec& spec = settings.spec;
    if (options.trace) {
        auto rows = core::loadTrace(*options.trace);
        if (!rows) return fail("load", rows.error().message, kExitBadInput);
        spec.trace = std::move(*rows);
    }
    if (spec.concurrency.empty() && spec.rates.empty() && spec.trace.empty()) spec.concurrency = {1, 8};
    if (options.tokenizer) {
        auto counter = core::TokenCounter::open(*options.tokenizer);
        if (!counter) return fail("load", counter.error().message, kExitBadInput);
        spec.tokenCounter = std::move(*counter);
    }

    if (auto r = core::validateLoadSpec(ep, spec); !r) return fail("load", r.error().message, kExitUsage);

    std::optional<core::Database> db;
    if (options.store) {
        auto opened = core::openStore(args->value("db"));
        if (!opened) return fail("load", opened.error().message, kExitBadInput);
        db.emplace(std::move(*opened));
    }

    SignalStop signals("load");
    const bool tty = isatty(STDERR_FILENO);
    auto done = core::runEndpointLoad(db ? &*db : nullptr, ep, settings, [tty](const core::LoadProgress& p) {
        if (!tty) return;
        std::fprintf(stderr, "\r[load] %s %g: %lld done, %lld failed, %.0fs   ", p.mode.c_str(), p.level,
                     static_cast<long long>(p.completed), static_cast<long long>(p.failed), p.elapsedS);
        std::fflush(stderr);
    }, signals.cancelFlag());
    if (tty) std::fprintf(stderr, "\n");
    // An endpoint that does not answer (ModelOpen) is bad input, exit 2: failService's code for a
    // model that cannot be opened off a GPU.
    if (!done) return failService("load", done.error(), "cpu");
    ep = done->endpoint;
    const std::vector<core::LoadLevelResult>* results = &done->levels;
    for (const auto& r : *results)
        if (r.behindSchedule)
            std::fprintf(stderr,
                         "verdict load: WARNING: %s %g: the client fell behind its schedule (scheduling delay p99 %.1f ms, "
                         "max %.1f ms): the load it sent is lower than asked, and this machine, not the server, set the pace\n",
                         r.mode.c_str(), r.level, r.scheduleDelay.p99, r.scheduleDelay.max);

    nlohmann::json levels = nlohmann::json::array();
    for (const auto& r : *results) levels.push_back(core::toJson(r, false));
    nlohmann::json out = {{"endpoint", ep.baseUrl}, {"model", ep.model},   {"api", ep.chat ? "chat" : "completions"},
                          {"stream", ep.stream},
                          {"slo", {{"ttft_ms", settings.spec.sloTtftMs}, {"tpot_ms", settings.spec.sloTpotMs}}},
                          {"sweep_id", nullptr},    {"levels", levels}};
    if (done->stored) out["sweep_id"] = done->stored->id;

    if (args->has("json")) {
        std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
        std::printf("%s  model %s  (%s, %s)\n", ep.baseUrl.c_str(), ep.model.c_str(), ep.chat ? "chat" : "completions",
                    ep.stream ? "streaming" : "not streaming");
        std::printf("%-12s %6s %6s | %8s %8s | %8s %8s | %8s %8s | %9s %7s | %s\n", "level", "done", "failed", "TTFT p50",
                    "TTFT p99", "ITL p50", "ITL p99", "E2E p50", "E2E p99", "out tok/s", "good/s", "errors");
        for (const auto& r : *results) {
            const auto& m = r.metrics;
            std::string errs;
            for (const auto& [k, n] : r.errors) errs += (errs.empty() ? "" : ",") + k + "=" + std::to_string(n);
            char level[32];
            std::snprintf(level, sizeof level, "%s %g", r.mode == "rate" ? "rate" : r.mode == "trace" ? "trace" : "conc", r.level);
            std::printf("%-12s %6lld %6lld | %6.0fms %6.0fms | %6.1fms %6.1fms | %6.0fms %6.0fms | %9.1f %7.2f | %s\n", level,
                        static_cast<long long>(m.requests), static_cast<long long>(m.failed), m.ttftMs.p50, m.ttftMs.p99,
                        m.itlMs.p50, m.itlMs.p99, m.e2eMs.p50, m.e2eMs.p99, m.outputTokPerS, r.goodputPerS,
                        errs.empty() ? "-" : errs.c_str());
        }
        for (const auto& r : *results)
            std::printf("tokens %s %g: %s\n", r.mode == "rate" ? "rate" : r.mode == "trace" ? "trace" : "conc", r.level,
                        core::describe(r.tokens).c_str());
        if (done->stored) std::printf("stored as sweep %lld\n", static_cast<long long>(done->stored->id));
    }
    return kExitOk;
}

}  // namespace verdict::cli
