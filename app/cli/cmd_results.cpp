// verdict results [RUN...] [--json]: stored runs with their accuracy (Wilson 95 % interval),
// per category, timing means and settings. Without RUN: every run. A run made through a provider
// preset (--provider) also gets its cost from the preset's prices and its stored token counts
// (core/endpoints/endpoint_cost.h). JSON shape: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/endpoints/endpoint_cost.h"
#include "core/endpoints/provider_catalog.h"
#include "core/stats/classification.h"
#include "core/stats/tool_call_stats.h"
#include "core/stats/needle_grid.h"
#include "core/stats/turn_accuracy.h"
#include "core/stats/run_summary.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/suite_repository.h"
#include "util/quote.h"

#include <nlohmann/json.hpp>
#include <verdict/engine/model_card.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

namespace verdict::cli {
namespace {

nlohmann::json optJson(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json runJson(const core::RunRecord& r, const std::string& suiteName, const core::RunSummary& s,
                       const std::optional<nlohmann::json>& cost,
                       const std::optional<core::ClassificationSummary>& classification,
                       const nlohmann::json& needle, const std::optional<core::TurnAccuracy>& turns,
                       const std::optional<core::ToolCallStats>& tools) {
    const auto& acc = s.accuracy;
    return {{"run_id", r.id},
            {"status", std::string(core::runStatusName(r.status))},
            {"model", {{"path", r.modelPath}, {"sha256", r.modelSha256}, {"bytes", r.modelBytes}, {"backend", r.backend}}},
            {"suite", {{"id", r.suiteId}, {"name", suiteName}}},
            {"started_at", r.startedAt},
            {"finished_at", r.finishedAt.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.finishedAt)},
            {"n_planned", r.nPlanned},
            {"n_items", s.nStored},
            {"n_scored", acc.overall.n},
            {"n_errors", acc.nErrors},
            {"accuracy", acc.overall.n > 0 ? nlohmann::json(acc.overall.accuracy) : nlohmann::json(nullptr)},
            {"accuracy_ci", {acc.overall.ci.lo, acc.overall.ci.hi}},
            {"by_category", core::byCategoryJson(acc)},
            {"mean_ttft_ms", optJson(s.meanTtftMs)},
            {"mean_decode_tps", optJson(s.meanDecodeTps)},
            {"tokens_in", s.tokensIn},
            {"tokens_out", s.tokensOut},
            {"prompting", r.prompting},
            {"generation", r.generation},
            {"seed", r.seed},
            {"chat_template", {{"mode", r.chatTemplateMode}, {"sha256", r.chatTemplateHash}}},
            {"engine_version", r.engineVersion},
            {"device", r.device},
            {"error", r.error},
            {"cost", cost ? *cost : nlohmann::json(nullptr)},
            {"classification", classification ? core::classificationJson(*classification) : nlohmann::json(nullptr)},
            {"needle", needle},
            {"by_turn", turns ? core::turnAccuracyJson(*turns) : nlohmann::json(nullptr)},
            {"function_calling", tools ? core::toolCallStatsJson(*tools) : nlohmann::json(nullptr)}};
}

// Function calling: the error rate and each error class's, with intervals.
void printToolCalls(const core::ToolCallStats& t) {
    std::printf("       function calling: %lld items, error rate %.1f%% [%.1f, %.1f]\n", static_cast<long long>(t.items),
                100 * t.errorRate, 100 * t.errorCi.lo, 100 * t.errorCi.hi);
    for (const auto& c : t.byClass)
        if (c.count > 0)
            std::printf("       %-18s %6.1f%% [%.1f, %.1f]  (%lld)\n", c.name.c_str(), 100 * c.rate, 100 * c.ci.lo, 100 * c.ci.hi,
                        static_cast<long long>(c.count));
    if (t.retried > 0)
        std::printf("       retries: %lld of %lld retried calls corrected (%.1f%% [%.1f, %.1f]); error rate after retries %.1f%% "
                    "[%.1f, %.1f]\n",
                    static_cast<long long>(t.recovered), static_cast<long long>(t.retried), 100 * t.recoveryRate,
                    100 * t.recoveryCi.lo, 100 * t.recoveryCi.hi, 100 * t.errorRateAfterRetries, 100 * t.errorAfterRetriesCi.lo,
                    100 * t.errorAfterRetriesCi.hi);
}

// Multi-turn consistency: accuracy by range of turn indices (and per turn for short conversations).
void printTurns(const core::TurnAccuracy& t) {
    std::printf("       multi-turn consistency (%lld conversations): accuracy by turn\n", static_cast<long long>(t.conversations));
    const bool perTurn = t.byTurn.size() <= 12;
    for (const auto& c : perTurn ? t.byTurn : t.byRange) {
        char label[32];
        if (c.first == c.last) std::snprintf(label, sizeof label, "turn %d", c.first);
        else std::snprintf(label, sizeof label, "turns %d-%d", c.first, c.last);
        std::printf("       %-16s %6.1f%% [%.1f, %.1f]  (%lld/%lld)\n", label, 100 * c.acc.accuracy, 100 * c.acc.ci.lo,
                    100 * c.acc.ci.hi, static_cast<long long>(c.acc.correct), static_cast<long long>(c.acc.n));
    }
}

// The heat map of a needle-in-a-haystack run: accuracy per length (rows) and depth (columns);
// "n/a" where no item of the cell could run (the first error says why), "." where none was run.
void printNeedle(const core::NeedleGrid& g, std::optional<uint64_t> kvPerToken) {
    std::printf("       needle in a haystack: accuracy by prompt length (rows) and needle depth (columns)\n       %12s", "tokens");
    for (double d : g.depths) std::printf(" %6g%%", d);
    if (kvPerToken) std::printf("   KV cache");
    std::printf("\n");
    std::vector<std::string> errors;
    for (size_t li = 0; li < g.lengths.size(); ++li) {
        std::printf("       %12lld", static_cast<long long>(g.lengths[li]));
        for (size_t di = 0; di < g.depths.size(); ++di) {
            const core::NeedleCell& c = g.at(li, di);
            if (c.n == 0) std::printf(" %7s", ".");
            else if (!c.held()) std::printf(" %7s", "n/a");
            else std::printf(" %6.0f%%", 100 * *c.accuracy());
            if (!c.error.empty() && std::find(errors.begin(), errors.end(), c.error) == errors.end()) errors.push_back(c.error);
        }
        if (kvPerToken) std::printf("   %.1f MiB", double(*kvPerToken * uint64_t(g.lengths[li])) / (1024.0 * 1024.0));
        std::printf("\n");
    }
    for (size_t i = 0; i < errors.size() && i < 3; ++i) std::printf("       failed: %s\n", util::oneLine(errors[i], 300).c_str());
}

// The per-label table and the confusion matrix of a classification run.
void printClassification(const core::ClassificationSummary& c) {
    auto pct = [](const std::optional<double>& v) {
        char b[16] = "     -";
        if (v) std::snprintf(b, sizeof b, "%5.1f%%", 100 * *v);
        return std::string(b);
    };
    std::printf("       classification: %lld items, macro-F1 %s [%.1f, %.1f], %lld without a label\n",
                static_cast<long long>(c.n), pct(c.macroF1).c_str(), 100 * c.macroF1Ci.lo, 100 * c.macroF1Ci.hi,
                static_cast<long long>(c.noLabel));
    std::printf("       %-20s %7s %7s %-18s %-18s %-18s\n", "label", "support", "pred", "precision (95% CI)",
                "recall (95% CI)", "F1 (95% CI)");
    for (const auto& m : c.perLabel) {
        auto cell = [&](const std::optional<double>& v, const core::Interval& i) {
            char b[40];
            if (!v) return std::string("-");
            std::snprintf(b, sizeof b, "%.1f [%.1f, %.1f]", 100 * *v, 100 * i.lo, 100 * i.hi);
            return std::string(b);
        };
        std::printf("       %-20s %7lld %7lld %-18s %-18s %-18s\n", util::oneLine(m.label, 20).c_str(),
                    static_cast<long long>(m.support), static_cast<long long>(m.predicted),
                    cell(m.precision, m.precisionCi).c_str(), cell(m.recall, m.recallCi).c_str(),
                    cell(m.f1, m.f1Ci).c_str());
    }
    std::printf("       confusion (rows gold, columns predicted):\n       %-20s", "");
    for (const auto& l : c.labels) std::printf(" %8s", util::oneLine(l, 8).c_str());
    std::printf(" %8s\n", "(none)");
    for (size_t g = 0; g < c.labels.size(); ++g) {
        std::printf("       %-20s", util::oneLine(c.labels[g], 20).c_str());
        for (int64_t v : c.confusion[g]) std::printf(" %8lld", static_cast<long long>(v));
        std::printf("\n");
    }
}

void printCost(const nlohmann::json& c) {
    if (c["usd_total"].is_null()) {
        std::printf("       cost (%s %s): unknown: %s\n", c["provider"].get<std::string>().c_str(),
                    c["model"].get<std::string>().c_str(),
                    c.contains("reason") ? c["reason"].get<std::string>().c_str() : "a price is missing");
        return;
    }
    const auto& t = c["tokens"];
    std::printf("       cost (%s %s): $%.6f for %lld prompt (%lld cached) + %lld output tokens (%lld reasoning); "
                "$%.4f per 1M output tokens, $%.4f per 1M tokens\n",
                c["provider"].get<std::string>().c_str(), c["model"].get<std::string>().c_str(), c["usd_total"].get<double>(),
                t["prompt"].get<long long>(), t["cached_prompt"].get<long long>(), t["output"].get<long long>(),
                t["reasoning"].get<long long>(), c["usd_per_mtok_output"].is_null() ? 0.0 : c["usd_per_mtok_output"].get<double>(),
                c["usd_per_mtok_all"].is_null() ? 0.0 : c["usd_per_mtok_all"].get<double>());
    for (const auto& n : c["notes"]) std::printf("       note: %s\n", n.get<std::string>().c_str());
}

struct ResultsOptions {
    std::optional<std::string> providersFile;  // unset: the XDG one (core::loadProviderCatalog)
};

const OptionTable<ResultsOptions>& resultsOptions() {
    using S = ResultsOptions;
    static const OptionTable<S> table = {
        optionalTextOption<S>("providers-file", "PATH",
                              "user provider catalog with the prices of provider runs (default: $XDG_CONFIG_HOME/verdict/providers.json)",
                              [](auto& s) -> auto& { return s.providersFile; }),
    };
    return table;
}

}  // namespace

int runResults(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = {dbOption()};
    for (OptionSpec spec : specsOf(resultsOptions(), ResultsOptions{})) specs.push_back(std::move(spec));
    for (OptionSpec spec : {jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("results", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict results [RUN...] [--json]", formatOptions(specs));
        return kExitOk;
    }
    ResultsOptions o;
    if (auto e = applyOptions(resultsOptions(), *args, o)) return fail("results", *e, kExitUsage);
    std::vector<int64_t> wanted;
    for (const std::string& p : args->positionals()) {
        int64_t id = 0;
        auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), id);
        if (ec != std::errc() || end != p.data() + p.size() || id <= 0)
            return fail("results", "'" + p + "' is not a run id", kExitUsage);
        wanted.push_back(id);
    }
    auto db = core::openStoreForReading(args->value("db"));
    if (!db) return fail("results", db.error().message, kExitBadInput);
    core::RunRepository runs(*db);
    std::vector<core::RunRecord> list;
    if (wanted.empty()) {
        auto all = runs.list();
        if (!all) return fail("results", all.error().message, kExitRuntime);
        list = std::move(*all);
    } else {
        for (int64_t id : wanted) {
            auto r = runs.find(id);
            if (!r) return fail("results", r.error().message, kExitRuntime);
            if (!*r) return fail("results", "run " + std::to_string(id) + " does not exist", kExitBadInput);
            list.push_back(std::move(**r));
        }
    }
    std::map<int64_t, std::string> suiteNames, suiteShapes;
    if (auto suites = core::SuiteRepository(*db).list())
        for (const auto& s : *suites) {
            suiteNames[s.id] = s.name;
            suiteShapes[s.id] = s.shape;
        }
    // A needle (or padded) suite's heat map needs its items' metadata (lengths, depths): read once
    // per suite, and only for suites whose first item carries metadata.needle.
    std::map<int64_t, std::optional<std::vector<core::SuiteItem>>> needleSuites;
    const auto needleOf = [&](const core::RunRecord& r, const std::vector<core::RunItemRecord>& items)
        -> Result<std::optional<core::NeedleGrid>> {
        auto it = needleSuites.find(r.suiteId);
        if (it == needleSuites.end()) {
            core::SuiteRepository suites(*db);
            auto first = suites.items(r.suiteId, 1);
            if (!first) return first.error();
            std::optional<std::vector<core::SuiteItem>> all;
            if (!first->empty() && first->front().metadata.contains("needle")) {
                auto si = suites.items(r.suiteId);
                if (!si) return si.error();
                all = std::move(*si);
            }
            it = needleSuites.emplace(r.suiteId, std::move(all)).first;
        }
        if (!it->second) return std::optional<core::NeedleGrid>();
        return core::needleGridOfRun(*it->second, items);
    };
    // KV cache per token of a local model file (the memory each length needs); none for endpoints.
    const auto kvPerTokenOf = [](const core::RunRecord& r) -> std::optional<uint64_t> {
        std::error_code ec;
        if (r.backend == "endpoint" || !std::filesystem::is_regular_file(r.modelPath, ec)) return std::nullopt;
        auto card = describeModelFile(r.modelPath);
        if (!card) return std::nullopt;
        return card->memoryTrained.kvBytesPerToken;
    };

    // Prices for runs made through a provider preset; read only when such a run is listed.
    std::optional<core::ProviderCatalog> providers;
    const auto costOf = [&](const core::RunRecord& r, const std::vector<core::RunItemRecord>& items)
        -> Result<std::optional<nlohmann::json>> {
        if (!r.generation.is_object() || !r.generation.contains("provider")) return std::optional<nlohmann::json>();
        if (!providers) {
            auto c = core::loadProviderCatalog(o.providersFile);
            if (!c) return c.error();
            providers.emplace(std::move(*c));
        }
        return core::runCostJson(r, items, *providers);
    };

    nlohmann::json out = nlohmann::json::array();
    if (!args->has("json") && !list.empty())
        std::printf("%5s  %-10s %-26s %-18s %11s  %-19s %s\n", "run", "status", "model", "suite", "items", "accuracy (95% CI)",
                    "started");
    for (const auto& r : list) {
        auto items = runs.items(r.id);
        if (!items) return fail("results", items.error().message, kExitRuntime);
        const core::RunSummary s = core::summarizeRun(*items);
        const auto classification = core::classificationOfRun(*items);
        auto cost = costOf(r, *items);
        if (!cost) return fail("results", cost.error().message, kExitBadInput);
        auto needle = needleOf(r, *items);
        if (!needle) return fail("results", needle.error().message, kExitRuntime);
        const std::optional<uint64_t> kvPerToken = *needle ? kvPerTokenOf(r) : std::nullopt;
        const auto turns = core::turnAccuracyOfRun(*items);
        const auto tools = core::toolCallStatsOfRun(*items);
        if (args->has("json")) {
            out.push_back(runJson(r, suiteNames[r.suiteId], s, *cost, classification,
                                  *needle ? core::needleGridJson(**needle, kvPerToken) : nlohmann::json(nullptr), turns, tools));
            continue;
        }
        const auto& a = s.accuracy;
        char acc[64] = "-";
        if (a.overall.n > 0)
            std::snprintf(acc, sizeof acc, "%.1f%% [%.1f, %.1f]", 100 * a.overall.accuracy, 100 * a.overall.ci.lo,
                          100 * a.overall.ci.hi);
        char count[32];
        std::snprintf(count, sizeof count, "%lld/%lld", static_cast<long long>(s.nStored), static_cast<long long>(r.nPlanned));
        std::printf("%5lld  %-10s %-26s %-18s %11s  %-19s %s\n", static_cast<long long>(r.id),
                    std::string(core::runStatusName(r.status)).c_str(),
                    std::filesystem::path(r.modelPath).filename().string().substr(0, 26).c_str(),
                    suiteNames[r.suiteId].substr(0, 18).c_str(), count, acc, r.startedAt.c_str());
        if (!wanted.empty()) {
            if (a.nErrors > 0) std::printf("       %lld item(s) with errors\n", static_cast<long long>(a.nErrors));
            if (s.meanTtftMs)
                std::printf("       mean TTFT %.1f ms, mean decode %.1f tok/s\n", *s.meanTtftMs, s.meanDecodeTps.value_or(0));
            if (*cost) printCost(**cost);
            if (classification) printClassification(*classification);
            if (*needle) printNeedle(**needle, kvPerToken);
            if (turns) printTurns(*turns);
            if (tools) printToolCalls(*tools);
            for (const auto& [name, c] : a.byCategory)
                std::printf("       %-28s %6.1f%% [%.1f, %.1f]  (%lld/%lld)\n", name.empty() ? "(none)" : name.c_str(),
                            100 * c.accuracy, 100 * c.ci.lo, 100 * c.ci.hi, static_cast<long long>(c.correct),
                            static_cast<long long>(c.n));
        }
    }
    if (args->has("json")) {
        std::cout << nlohmann::json({{"runs", out}}).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else if (list.empty()) {
        std::cout << "no runs yet (verdict run MODEL --suite NAME)\n";
    }
    return kExitOk;
}

}  // namespace verdict::cli
