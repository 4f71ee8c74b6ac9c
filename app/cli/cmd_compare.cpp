// verdict compare A B --prompt TEXT [--system S] [--temp T] [--seed S] [--max-tokens N]
//                     [--no-chat-template] [--vote a|b|tie] [--device DEV] [--gpu-layers N] [--json]: asks two
// models the same prompt and shows both answers with their speed; --vote stores which answer was
// better (not blind: the caller saw which model wrote which) in the results database (`verdict votes`).
//
// A and B are model references (core/run/backend_factory.h): GGUF files or "http://host:port[/v1]
// [MODEL]" endpoints. They are opened one after the other (A is released before B loads) so two
// large models need not fit in memory together. JSON shape: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/endpoint_options.h"
#include "cli/options.h"
#include "core/run/backend_factory.h"
#include "core/services/compare.h"
#include "core/store/model_repository.h"
#include "core/store/store.h"
#include "core/store/vote_repository.h"
#include "core/version.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>

namespace verdict::cli {
namespace {

struct Side {
    std::string ref;         // normalized model reference
    core::BackendInfo info;
    core::Generation gen;
    double loadMs = 0;
};

nlohmann::json optNumber(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json sideJson(const Side& s) {
    return {{"model", s.ref},
            {"backend", s.info.backend},
            {"device", s.info.device},
            {"text", s.gen.text},
            {"template", s.gen.prompt.templateUsed},
            {"tokens_in", s.gen.tokensIn},
            {"tokens_out", s.gen.tokensOut},
            {"ttft_ms", optNumber(s.gen.ttftMs)},
            {"decode_tps", optNumber(s.gen.decodeTps)},
            {"stop_reason", s.gen.stopReason},
            {"load_ms", s.loadMs}};
}

// Stats of one side for the vote's settings (what the voter saw).
nlohmann::json sideStats(const Side& s) {
    return {{"backend", s.info.backend},     {"device", s.info.device},            {"template", s.gen.prompt.templateUsed},
            {"tokens_in", s.gen.tokensIn},   {"tokens_out", s.gen.tokensOut},      {"ttft_ms", optNumber(s.gen.ttftMs)},
            {"decode_tps", optNumber(s.gen.decodeTps)}, {"stop_reason", s.gen.stopReason}};
}

// The options of `verdict compare` bound to the compare service's settings (the Compare screen
// starts from the same defaults).
using core::CompareSettings;

const OptionTable<CompareSettings>& compareOptionTable() {
    using S = CompareSettings;
    static const OptionTable<S> table = {
        textOption<S>("system", "TEXT", "system message put before the prompt", [](auto& s) -> auto& { return s.system; }),
        temperatureOption<S>([](auto& s) -> auto& { return s.generation; }),
        intOption<S>("seed", "S", "sampling seed, the same for both models", [](auto& s) -> auto& { return s.generation.seed; }, 0,
                     std::numeric_limits<long long>::max()),
        intOption<S>("max-tokens", "N", "generated tokens per answer at most",
                     [](auto& s) -> auto& { return s.generation.maxTokens; }, 1, 1'000'000),
        flagOption<S>("no-chat-template", "send the plain prompt even when a model has a chat template",
                      [](S& s) { s.useChatTemplate = false; }),
        intOption<S>("threads", "N", kThreadsHelp, [](auto& s) -> auto& { return s.backend.threads; }, 0,
                     kMaxThreads, 't'),
        intOption<S>("ctx", "N", "context size in tokens; 0 = min(training context, 4096)",
                     [](auto& s) -> auto& { return s.backend.nCtx; }, 0, std::numeric_limits<int32_t>::max(), 'c'),
    };
    return table;
}

// The whole command line of `verdict compare` but the models, the device and the endpoint access:
// the prompt, the service's settings and the vote.
struct CompareOptions {
    std::string prompt;                 // required (checked apart: "missing -p/--prompt TEXT")
    CompareSettings settings;
    std::optional<core::VoteWinner> vote;  // unset: nothing stored
};

const OptionTable<CompareOptions>& compareOptions() {
    using S = CompareOptions;
    static const OptionTable<S> table = [] {
        BoundOption<S> vote;
        vote.spec = {"vote", true, "a|b|tie", "store which answer was better (verdict votes)"};
        vote.apply = [](const Args& args, S& s) -> std::optional<std::string> {
            const std::string v = args.value("vote").value_or("");
            s.vote = core::parseVoteWinner(v);
            if (!s.vote) return "--vote must be a, b or tie (got '" + v + "')";
            return std::nullopt;
        };
        vote.shownDefault = [](const S&) { return std::string(); };
        return concatOptions<S>({
            {textOption<S>("prompt", "TEXT", "the prompt both models answer (required)", [](auto& s) -> auto& { return s.prompt; }, {},
                           'p')},
            nestedOptions<S>(compareOptionTable(), [](auto& s) -> auto& { return s.settings; }),
            {std::move(vote)},
        });
    }();
    return table;
}

}  // namespace

int runCompare(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(compareOptions(), CompareOptions{});
    specs.insert(specs.end(), {
        deviceOptionSpec(true),
        gpuLayersOptionSpec(),
        dbOption("for --vote"),
        jsonOption(),
        helpOption(),
    });
    for (const OptionSpec& o : endpointOptionSpecs("endpoints")) specs.push_back(o);
    auto args = Args::parse(argv, specs);
    if (!args) return fail("compare", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict compare A B --prompt TEXT [--system S] [--temp T] [--seed S] [--max-tokens N] "
                  "[--no-chat-template] [--vote a|b|tie] [--device DEV] [--gpu-layers N] [--json]\n"
                  "  A, B: GGUF files or http://host:port[/v1] endpoints (\"URL MODEL\" names the served model)",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 2) return fail("compare", "expected two models A and B (see --help)", kExitUsage);
    if (!args->has("prompt")) return fail("compare", "missing -p/--prompt TEXT", kExitUsage);
    CompareOptions options;
    if (auto e = applyOptions(compareOptions(), *args, options)) return fail("compare", *e, kExitUsage);
    CompareSettings& settings = options.settings;
    const std::optional<core::VoteWinner>& vote = options.vote;
    const bool json = args->has("json");
    const std::string& prompt = options.prompt;
    EndpointAccess access;
    if (int rc = readEndpointOptions("compare", *args, &access); rc != kExitOk) return rc;
    std::string refs[2];
    for (size_t i = 0; i < 2; ++i) {
        auto ref = providerModelRef(access, args->positionals()[i]);  // --provider: a bare name is its model
        if (!ref) return fail("compare", ref.error().message, kExitUsage);
        refs[i] = *ref;
    }
    const bool anyLocal = !core::isEndpointRef(refs[0]) || !core::isEndpointRef(refs[1]);
    std::string device;
    if (int rc = readDeviceOption("compare", *args, &device, anyLocal); rc != kExitOk) return rc;
    int gpuLayers = -1;
    if (int rc = readGpuLayersOption("compare", *args, device, &gpuLayers); rc != kExitOk) return rc;

    // Open the database before generating: a vote must not be lost to a bad --db after the work.
    std::optional<core::Database> db;
    if (vote) {
        auto opened = core::openStore(args->value("db"));
        if (!opened) return fail("compare", opened.error().message, kExitBadInput);
        db.emplace(std::move(*opened));
    }

    core::BackendOpenOptions& bo = settings.backend;
    bo.device = device;
    bo.gpuLayers = gpuLayers;
    bo.engineVersion = core::toolVersion();
    bo.apiKey = access.apiKey;
    bo.caFile = access.caFile;
    bo.insecure = access.insecure;
    bo.endpointApi = access.api;

    const core::Prompt p = core::comparePrompt(settings, {}, prompt);
    const core::GenerationParams& gp = settings.generation;

    Side sides[2];
    const char* label[2] = {"A", "B"};
    for (int i = 0; i < 2; ++i) {
        Side& s = sides[i];
        s.ref = core::normalizeModelRef(refs[i]);
        const auto t0 = std::chrono::steady_clock::now();
        auto backend = core::openModelBackend(s.ref, bo);
        if (!backend)
            return fail("compare", std::string("model ") + label[i] + ": " + backend.error().message,
                        core::isEndpointRef(s.ref) ? kExitBadInput : openFailureExitCode(device));
        s.loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        s.info = (*backend)->info();
        auto gen = (*backend)->generate(p, gp, {});
        if (!gen) return fail("compare", std::string("model ") + label[i] + ": " + gen.error().message, kExitRuntime);
        s.gen = std::move(*gen);
        if (vote && s.info.backend == "engine" && !s.info.modelParts.empty() && s.info.modelSha256.empty()) {
            auto id = core::ModelRepository(*db).identifyFile(s.info.modelParts);
            if (!id) return fail("compare", std::string("model ") + label[i] + ": " + id.error().message, kExitRuntime);
            s.info.modelSha256 = id->sha256;
        }
    }  // each backend is released at the end of its iteration, before the next loads

    std::optional<int64_t> voteId;
    if (vote) {
        core::VoteRecord r;
        r.modelA = sides[0].ref;
        r.modelB = sides[1].ref;
        r.shaA = sides[0].info.modelSha256;
        r.shaB = sides[1].info.modelSha256;
        r.prompt = prompt;
        r.answerA = sides[0].gen.text;
        r.answerB = sides[1].gen.text;
        r.winner = *vote;
        r.blind = false;
        r.settings = core::compareVoteSettings(settings, settings, "cli", sideStats(sides[0]), sideStats(sides[1]));
        auto id = core::VoteRepository(*db).add(r);
        if (!id) return fail("compare", id.error().message, kExitRuntime);
        voteId = *id;
    }

    if (json) {
        nlohmann::json j = {{"prompt", prompt},
                            {"system", settings.system},
                            {"settings", {{"temperature", gp.temperature}, {"seed", gp.seed}, {"max_tokens", gp.maxTokens},
                                          {"chat_template", settings.useChatTemplate}}},
                            {"a", sideJson(sides[0])},
                            {"b", sideJson(sides[1])},
                            {"vote", voteId ? nlohmann::json{{"id", *voteId}, {"winner", std::string(core::voteWinnerName(*vote))}}
                                            : nlohmann::json(nullptr)}};
        if (db) j["database"] = db->path();
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return kExitOk;
    }
    for (int i = 0; i < 2; ++i) {
        const Side& s = sides[i];
        std::printf("== %s: %s\n%s\n", label[i], s.ref.c_str(), s.gen.text.c_str());
        std::printf("-- ttft %s, decode %s, %lld tokens in, %lld out (%s)\n\n",
                    s.gen.ttftMs ? (std::to_string(static_cast<long long>(*s.gen.ttftMs + 0.5)) + " ms").c_str() : "n/a",
                    s.gen.decodeTps ? (std::to_string(static_cast<long long>(*s.gen.decodeTps + 0.5)) + " tok/s").c_str() : "n/a",
                    static_cast<long long>(s.gen.tokensIn), static_cast<long long>(s.gen.tokensOut), s.gen.stopReason.c_str());
    }
    if (voteId)
        std::printf("vote %lld stored: winner %s (%s)\n", static_cast<long long>(*voteId),
                    std::string(core::voteWinnerName(*vote)).c_str(), db->path().c_str());
    return kExitOk;
}

}  // namespace verdict::cli
