// verdict diff RUN_A RUN_B [--resamples N] [--seed S] [--json]: paired comparison of two runs of
// the same suite: accuracy of each, their difference with a paired bootstrap 95 % interval,
// McNemar's exact test on the discordant items, and the items one got right and the other wrong.
// JSON shape: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/stats/run_summary.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdio>
#include <iostream>
#include <limits>

namespace verdict::cli {
namespace {

// The paired bootstrap's settings (core/stats/paired_comparison.h comparePaired).
struct DiffOptions {
    int resamples = core::kBootstrapResamples;
    uint64_t seed = core::kBootstrapSeed;
};

const OptionTable<DiffOptions>& diffOptions() {
    using S = DiffOptions;
    static const OptionTable<S> table = {
        intOption<S>("resamples", "N", "bootstrap resamples", [](auto& s) -> auto& { return s.resamples; }, 1, 10'000'000),
        // Any integer, as always: a negative seed is taken modulo 2^64.
        intOption<S>("seed", "S", "bootstrap seed", [](auto& s) -> auto& { return s.seed; }, std::numeric_limits<long long>::min(),
                     std::numeric_limits<long long>::max()),
    };
    return table;
}

}  // namespace

int runDiff(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(diffOptions(), DiffOptions{});
    for (OptionSpec spec : {dbOption(), jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("diff", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict diff RUN_A RUN_B [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 2) return fail("diff", "expected two run ids: RUN_A RUN_B", kExitUsage);
    int64_t ids[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
        const std::string& p = args->positionals()[static_cast<size_t>(k)];
        auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), ids[k]);
        if (ec != std::errc() || end != p.data() + p.size() || ids[k] <= 0)
            return fail("diff", "'" + p + "' is not a run id", kExitUsage);
    }
    DiffOptions o;
    if (auto e = applyOptions(diffOptions(), *args, o)) return fail("diff", *e, kExitUsage);

    auto db = core::openStoreForReading(args->value("db"));
    if (!db) return fail("diff", db.error().message, kExitBadInput);
    core::RunRepository runs(*db);
    core::RunRecord rec[2];
    std::vector<core::RunItemRecord> items[2];
    for (int k = 0; k < 2; ++k) {
        auto r = runs.find(ids[k]);
        if (!r) return fail("diff", r.error().message, kExitRuntime);
        if (!*r) return fail("diff", "run " + std::to_string(ids[k]) + " does not exist", kExitBadInput);
        rec[k] = std::move(**r);
        auto it = runs.items(ids[k]);
        if (!it) return fail("diff", it.error().message, kExitRuntime);
        items[k] = std::move(*it);
    }
    if (rec[0].suiteId != rec[1].suiteId)
        return fail("diff", "runs " + std::to_string(ids[0]) + " and " + std::to_string(ids[1]) +
                                " evaluated different suites (" + std::to_string(rec[0].suiteId) + " and " +
                                std::to_string(rec[1].suiteId) + "); a paired comparison needs the same items",
                    kExitBadInput);

    const core::RunPairing pairing = core::pairRuns(items[0], items[1]);
    const core::PairedComparison c =
        core::comparePaired(pairing.pairs, o.resamples, o.seed);

    // Nothing paired: no accuracy was measured, so none is shown (null in JSON, a sentence in text).
    const bool scored = c.nPairs > 0;
    const std::string nothing = core::nothingScoredReason(pairing);
    auto measured = [&](double v) { return scored ? nlohmann::json(v) : nlohmann::json(nullptr); };
    if (args->has("json")) {
        nlohmann::json j = {{"run_a", ids[0]},
                            {"run_b", ids[1]},
                            {"suite_id", rec[0].suiteId},
                            {"n_pairs", c.nPairs},
                            {"only_in_a", pairing.onlyInA},
                            {"only_in_b", pairing.onlyInB},
                            {"unscored", pairing.unscored},
                            {"unscored_reasons", {{"no_scorer", pairing.unscoredNoScorer}, {"error", pairing.unscoredError}}},
                            {"nothing_scored", scored ? nlohmann::json(nullptr) : nlohmann::json(nothing)},
                            {"accuracy_a", measured(c.accuracyA)},
                            {"accuracy_b", measured(c.accuracyB)},
                            {"difference", measured(c.difference)},
                            {"difference_ci", scored ? nlohmann::json({c.differenceCi.lo, c.differenceCi.hi}) : nlohmann::json(nullptr)},
                            {"bootstrap", {{"resamples", c.resamples}, {"seed", c.seed}, {"method", "percentile"}}},
                            {"mcnemar", {{"b", c.aOnly}, {"c", c.bOnly}, {"p_value", measured(c.mcnemarP)}}},
                            {"both_right", c.bothRight},
                            {"both_wrong", c.bothWrong},
                            {"a_right_b_wrong", c.aRightBWrong},
                            {"b_right_a_wrong", c.bRightAWrong}};
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return kExitOk;
    }
    std::printf("run %lld vs run %lld: %lld paired items\n", static_cast<long long>(ids[0]), static_cast<long long>(ids[1]),
                static_cast<long long>(c.nPairs));
    if (pairing.onlyInA || pairing.onlyInB || pairing.unscored)
        std::printf("  left out: %lld only in A, %lld only in B, %lld unscored\n", static_cast<long long>(pairing.onlyInA),
                    static_cast<long long>(pairing.onlyInB), static_cast<long long>(pairing.unscored));
    if (!scored) {
        std::printf("  %s\n", nothing.c_str());
        return kExitOk;
    }
    std::printf("  accuracy A %.1f%%, B %.1f%%, A - B = %+.1f points (95%% bootstrap CI %+.1f to %+.1f)\n",
                100 * c.accuracyA, 100 * c.accuracyB, 100 * c.difference, 100 * c.differenceCi.lo, 100 * c.differenceCi.hi);
    std::printf("  McNemar exact: A right & B wrong %lld, B right & A wrong %lld, p = %.4g\n",
                static_cast<long long>(c.aOnly), static_cast<long long>(c.bOnly), c.mcnemarP);
    auto listIds = [](const char* title, const std::vector<std::string>& v) {
        if (v.empty()) return;
        std::printf("  %s:", title);
        for (size_t i = 0; i < v.size() && i < 20; ++i) std::printf(" %s", v[i].c_str());
        if (v.size() > 20) std::printf(" ... (%zu more; --json lists all)", v.size() - 20);
        std::printf("\n");
    };
    listIds("A right, B wrong", c.aRightBWrong);
    listIds("B right, A wrong", c.bRightAWrong);
    return kExitOk;
}

}  // namespace verdict::cli
