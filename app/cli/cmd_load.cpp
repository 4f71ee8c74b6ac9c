// verdict load URL [--concurrency 1,8,32] [--rate 2,5] [--duration 60s | --requests N] [--json]
// Load test of an OpenAI-compatible endpoint (core/perf/load_runner.h); every level is stored as
// a point of a sweep with backend "endpoint" (docs/schema.md), so `verdict sweep show/export`
// and the report read it like a local sweep. The API key comes from an environment variable
// (--api-key-env, default VERDICT_API_KEY) and is never stored. Shapes: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/endpoint_options.h"
#include "core/run/backend_factory.h"
#include "cli/signal_stop.h"
#include "core/perf/load_runner.h"
#include "core/store/store.h"
#include "core/version.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <cstdlib>
#include <optional>
#include <iostream>
#include <unistd.h>

namespace verdict::cli {

int runLoad(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = endpointOptionSpecs("the endpoint");
    specs.insert(specs.end(), {
        {"model", true, "NAME", "model name (default: the first of GET /v1/models)", false, 'm'},
        {"header", true, "K:V", "extra request header (repeatable)", true},
        {"concurrency", true, "N,N", "closed-loop levels: concurrent clients (default 1,8 unless --rate)", false, 'c'},
        {"rate", true, "R,R", "open-loop levels: requests/s with Poisson arrivals"},
        {"burstiness", true, "B", "open loop: gamma shape of the gaps between arrivals (default 1 = Poisson; < 1 burstier)"},
        {"ramp-up", true, "T", "clients start spread over T; rates rise linearly from 0 over T (default 0)"},
        {"trace", true, "FILE", "one more level replaying a JSONL trace of {timestamp (ms), input_length, output_length}"},
        {"duration", true, "T", "per level: 60s, 2m, 500ms (default 60s)", false, 'd'},
        {"requests", true, "N", "per level: this many requests instead of a duration", false, 'n'},
        {"prompt-words", true, "N", "prompt length in words (default 64)"},
        {"max-tokens", true, "N", "tokens per request (default 128; ignore_eos is sent)"},
        {"completions", false, "", "use /v1/completions instead of /v1/chat/completions"},
        {"no-stream", false, "", "non-streaming requests (TTFT = E2E)"},
        {"slo", true, "SPEC", "goodput bounds, e.g. ttft=500ms,tpot=50ms"},
        {"retries", true, "N", "retries for 429/5xx/timeouts (default 3; other 4xx never retried)"},
        {"timeout", true, "T", "per request read timeout (default 60s)"},
        {"seed", true, "N", "seed of prompts and arrivals (default 1)"},
        {"tokenizer", true, "GGUF", "count prompts and outputs with this model's tokenizer too (a model or a vocab-only GGUF): "
                                    "the server's usage against it, and max_tokens ignored"},
        {"name", true, "NAME", "name of the stored sweep (default: the URL)"},
        {"no-store", false, "", "do not store the results"},
        {"db", true, "PATH", "results database (default: $VERDICT_DB, else the XDG data dir)"},
        {"json", false, "", "print one JSON object (shape: docs/cli.md)"},
        {"help", false, "", "show this help", false, 'h'},
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

    core::EndpointConfig ep;
    ep.model = args->value("model").value_or("");
    if (noUrl || !core::isEndpointRef(args->positionals()[0])) {
        // With --provider: no URL, or a model name in its place.
        if (!noUrl && access.provider.empty())
            return fail("load", "'" + args->positionals()[0] + "' is not an http:// or https:// URL", kExitUsage);
        if (!noUrl) ep.model = args->positionals()[0];
        if (access.providerBaseUrl.empty()) return fail("load", access.providerBaseUrlError, kExitUsage);
        ep.baseUrl = access.providerBaseUrl;
    } else {
        ep.baseUrl = args->positionals()[0];
    }
    ep.apiKey = access.apiKey;
    ep.caFile = access.caFile;
    ep.insecure = access.insecure;
    ep.api = access.api;
    for (const std::string& h : args->values("header")) {
        const size_t colon = h.find(':');
        if (colon == std::string::npos || colon == 0) return fail("load", "--header '" + h + "' is not K:V", kExitUsage);
        std::string v = h.substr(colon + 1);
        while (!v.empty() && v.front() == ' ') v.erase(0, 1);
        ep.headers[h.substr(0, colon)] = v;
    }
    ep.chat = !args->has("completions");
    ep.stream = !args->has("no-stream");

    core::LoadSpec spec;
    auto conc = args->integerList("concurrency", {});
    if (!conc) return fail("load", conc.error().message, kExitUsage);
    for (long long c : *conc) spec.concurrency.push_back(static_cast<int>(c));
    if (auto r = args->value("rate")) {
        size_t pos = 0;
        while (pos <= r->size()) {
            const size_t comma = r->find(',', pos);
            const std::string part = r->substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            char* end = nullptr;
            const double v = std::strtod(part.c_str(), &end);
            if (part.empty() || *end != '\0') return fail("load", "--rate: '" + part + "' is not a number", kExitUsage);
            spec.rates.push_back(v);
            if (comma == std::string::npos) break;
            pos = comma + 1;
        }
    }
    if (auto b = args->value("burstiness")) {
        char* end = nullptr;
        spec.burstiness = std::strtod(b->c_str(), &end);
        if (b->empty() || *end != '\0' || !(spec.burstiness > 0) || spec.burstiness > 1000)
            return fail("load", "--burstiness must be a number in (0, 1000] (got '" + *b + "')", kExitUsage);
    }
    if (auto r = args->value("ramp-up")) {
        auto ramp = parseDuration(*r, "ramp-up");
        if (!ramp) return fail("load", ramp.error().message, kExitUsage);
        spec.rampUpS = *ramp;
    }
    if (auto t = args->value("trace")) {
        auto rows = core::loadTrace(*t);
        if (!rows) return fail("load", rows.error().message, kExitBadInput);
        spec.trace = std::move(*rows);
    }
    if (spec.concurrency.empty() && spec.rates.empty() && spec.trace.empty()) spec.concurrency = {1, 8};
    auto duration = parseDuration(args->value("duration").value_or("60s"), "duration");
    if (!duration) return fail("load", duration.error().message, kExitUsage);
    spec.durationS = *duration;
    auto timeout = parseDuration(args->value("timeout").value_or("60s"), "timeout");
    if (!timeout) return fail("load", timeout.error().message, kExitUsage);
    ep.timeoutMs = static_cast<int>(*timeout * 1000);
    auto requests = args->integer("requests", 0);
    auto words = args->integer("prompt-words", 64);
    auto maxTokens = args->integer("max-tokens", 128);
    auto retries = args->integer("retries", 3);
    auto seed = args->integer("seed", 1);
    for (const auto* r : {&requests, &words, &maxTokens, &retries, &seed})
        if (!*r) return fail("load", r->error().message, kExitUsage);
    if (*requests < 0 || *words < 1 || *maxTokens < 1 || *retries < 0)
        return fail("load", "--requests, --prompt-words, --max-tokens and --retries must be positive", kExitUsage);
    spec.requests = *requests;
    spec.promptWords = static_cast<int>(*words);
    spec.maxTokens = static_cast<int>(*maxTokens);
    spec.maxRetries = static_cast<int>(*retries);
    spec.seed = static_cast<uint64_t>(*seed);
    if (auto slo = args->value("slo"))
        if (auto r = core::parseSlo(*slo, spec); !r) return fail("load", r.error().message, kExitUsage);
    if (auto t = args->value("tokenizer")) {
        auto counter = core::TokenCounter::open(*t);
        if (!counter) return fail("load", counter.error().message, kExitBadInput);
        spec.tokenCounter = std::move(*counter);
    }

    auto resolved = core::resolveEndpoint(ep);
    if (!resolved) return fail("load", resolved.error().message, kExitBadInput);
    ep = *resolved;

    std::optional<core::Database> db;
    if (!args->has("no-store")) {
        auto opened = core::openStore(args->value("db"));
        if (!opened) return fail("load", opened.error().message, kExitBadInput);
        db.emplace(std::move(*opened));
    }

    SignalStop signals("load");
    const bool tty = isatty(STDERR_FILENO);
    auto results = core::runLoad(ep, spec, [tty](const core::LoadProgress& p) {
        if (!tty) return;
        std::fprintf(stderr, "\r[load] %s %g: %lld done, %lld failed, %.0fs   ", p.mode.c_str(), p.level,
                     static_cast<long long>(p.completed), static_cast<long long>(p.failed), p.elapsedS);
        std::fflush(stderr);
    }, signals.cancelFlag());
    if (tty) std::fprintf(stderr, "\n");
    if (!results) return fail("load", results.error().message, kExitUsage);
    for (const auto& r : *results)
        if (r.behindSchedule)
            std::fprintf(stderr,
                         "verdict load: WARNING: %s %g: the client fell behind its schedule (scheduling delay p99 %.1f ms, "
                         "max %.1f ms): the load it sent is lower than asked, and this machine, not the server, set the pace\n",
                         r.mode.c_str(), r.level, r.scheduleDelay.p99, r.scheduleDelay.max);

    // Not one request answered: nothing was measured. Say why (the error kinds and the first
    // error) and exit non-zero, storing nothing, instead of a table of zeros.
    {
        int64_t completed = 0, failed = 0;
        std::map<std::string, int64_t> kinds;
        std::string first;
        for (const auto& r : *results) {
            completed += r.metrics.requests;
            failed += r.metrics.failed;
            for (const auto& [k, n] : r.errors) kinds[k] += n;
            for (const auto& t : r.requests)
                if (first.empty() && !t.error.empty()) first = t.error;
        }
        if (completed == 0 && failed > 0 && !signals.cancelFlag()->load()) {
            std::string why;
            for (const auto& [k, n] : kinds) why += (why.empty() ? "" : ", ") + k + " " + std::to_string(n);
            return fail("load",
                        "all " + std::to_string(failed) + " requests failed (" + why + "); nothing was measured or stored" +
                            (first.empty() ? std::string() : "; the first error: " + first),
                        kExitRuntime);
        }
    }
    nlohmann::json levels = nlohmann::json::array();
    for (const auto& r : *results) levels.push_back(core::toJson(r, false));
    nlohmann::json out = {{"endpoint", ep.baseUrl}, {"model", ep.model},   {"api", ep.chat ? "chat" : "completions"},
                          {"stream", ep.stream},    {"slo", {{"ttft_ms", spec.sloTtftMs}, {"tpot_ms", spec.sloTpotMs}}},
                          {"sweep_id", nullptr},    {"levels", levels}};
    if (db) {
        auto stored = core::storeLoadResults(*db, ep, spec, *results, args->value("name").value_or(""),
                                             core::toolVersion(), signals.cancelFlag()->load());
        if (!stored) return fail("load", stored.error().message, kExitRuntime);
        out["sweep_id"] = stored->id;
    }

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
        if (db) std::printf("stored as sweep %lld\n", static_cast<long long>(out["sweep_id"].get<int64_t>()));
    }
    return kExitOk;
}

}  // namespace verdict::cli
