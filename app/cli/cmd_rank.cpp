// verdict rank RUN RUN [RUN...] [--judge NAME] [--resamples N] [--seed S] [--json]: Bradley-Terry
// strengths of several runs of one suite from their stored pairwise judgments (`verdict judge`
// between pairs of them), Elo scale with bootstrap intervals over items (core::rankRuns,
// docs/metrics.md "Preference"). JSON shape: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/judge/judge_runner.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <numeric>

namespace verdict::cli {
namespace {

// core::rankRuns' settings besides the runs.
struct RankOptions {
    std::optional<std::string> judge;  // unset: every judge
    int resamples = core::kBradleyTerryResamples;
    uint64_t seed = core::kBootstrapSeed;
};

const OptionTable<RankOptions>& rankOptions() {
    using S = RankOptions;
    static const OptionTable<S> table = {
        optionalTextOption<S>("judge", "NAME", "only this judge's verdicts: a judge model's reference or human:NAME (default: every judge)",
                              [](auto& s) -> auto& { return s.judge; }),
        intOption<S>("resamples", "N", "bootstrap resamples over items; 0: no intervals", [](auto& s) -> auto& { return s.resamples; }, 0,
                     100000),
        intOption<S>("seed", "S", "bootstrap seed", [](auto& s) -> auto& { return s.seed; }, 0, std::numeric_limits<long long>::max()),
    };
    return table;
}

}  // namespace

int runRank(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(rankOptions(), RankOptions{});
    for (OptionSpec spec : {dbOption(), jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("rank", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict rank RUN RUN [RUN...] [--judge NAME] [--resamples N] [--json]", formatOptions(specs));
        return kExitOk;
    }
    std::vector<int64_t> runs;
    for (const std::string& t : args->positionals()) {
        try {
            size_t used = 0;
            const long long v = std::stoll(t, &used);
            if (used != t.size() || v <= 0) throw std::invalid_argument(t);
            runs.push_back(v);
        } catch (const std::exception&) {
            return fail("rank", "run id '" + t + "' is not a positive number", kExitUsage);
        }
    }
    if (runs.size() < 2) return fail("rank", "give at least two run ids (see verdict results)", kExitUsage);
    RankOptions o;
    if (auto e = applyOptions(rankOptions(), *args, o)) return fail("rank", *e, kExitUsage);

    auto db = core::openStoreForReading(args->value("db"));
    if (!db) return fail("rank", db.error().message, kExitBadInput);
    auto ranked = core::rankRuns(*db, runs, o.judge, o.resamples, o.seed);
    if (!ranked) return fail("rank", ranked.error().message, kExitBadInput);
    const core::BradleyTerry& bt = ranked->strengths;
    std::vector<std::string> model(runs.size());
    core::RunRepository repo(*db);
    for (size_t i = 0; i < runs.size(); ++i)
        if (auto r = repo.find(runs[i]); r && *r) model[i] = (*r)->modelPath;
    std::vector<size_t> order(runs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    if (!bt.rating.empty())
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return bt.rating[x] > bt.rating[y]; });

    if (args->has("json")) {
        nlohmann::json list = nlohmann::json::array(), losing = nlohmann::json::array();
        for (size_t i : order) {
            nlohmann::json row = {{"run", runs[i]}, {"model", model[i]}, {"rating", nullptr}, {"ci", nullptr}};
            if (!bt.rating.empty()) row["rating"] = bt.rating[i];
            if (!bt.ci.empty()) row["ci"] = {bt.ci[i].lo, bt.ci[i].hi};
            list.push_back(row);
        }
        for (int g : bt.losingGroup) losing.push_back(runs[static_cast<size_t>(g)]);
        nlohmann::json j = {{"runs", list},
                            {"judges", ranked->judges},
                            {"comparisons", ranked->comparisons},
                            {"unreadable", ranked->unreadable},
                            {"not_estimable", bt.notEstimable.empty() ? nlohmann::json(nullptr) : nlohmann::json(bt.notEstimable)},
                            {"losing_group", losing},
                            {"resamples", bt.resamples},
                            {"resamples_without_estimate", bt.resamplesWithoutEstimate},
                            {"database", db->path()}};
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return kExitOk;
    }
    std::printf("%lld comparisons from %zu judge(s)%s\n", static_cast<long long>(ranked->comparisons), ranked->judges.size(),
                ranked->unreadable ? (", " + std::to_string(ranked->unreadable) + " unreadable left out").c_str() : "");
    if (!bt.notEstimable.empty()) {
        std::string group;
        for (int g : bt.losingGroup) group += (group.empty() ? "" : ", ") + std::to_string(runs[static_cast<size_t>(g)]);
        std::printf("no ratings: %s (runs %s)\n", bt.notEstimable.c_str(), group.c_str());
        return kExitOk;
    }
    std::printf("%4s  %6s  %8s  %-19s  %s\n", "rank", "run", "rating", "95% CI (bootstrap)", "model");
    for (size_t k = 0; k < order.size(); ++k) {
        const size_t i = order[k];
        char ci[64] = "-";
        if (!bt.ci.empty()) std::snprintf(ci, sizeof ci, "%.0f to %.0f", bt.ci[i].lo, bt.ci[i].hi);
        std::printf("%4zu  %6lld  %8.0f  %-19s  %s\n", k + 1, static_cast<long long>(runs[i]), bt.rating[i], ci,
                    std::filesystem::path(model[i]).filename().string().c_str());
    }
    if (bt.resamplesWithoutEstimate)
        std::printf("%d of %d resamples had no finite estimate and are left out of the intervals\n", bt.resamplesWithoutEstimate,
                    bt.resamples);
    return kExitOk;
}

}  // namespace verdict::cli
