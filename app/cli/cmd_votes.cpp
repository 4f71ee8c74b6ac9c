// verdict votes [--a A --b B] [--model M] [--json]: the stored comparison votes (verdict compare
// --vote, the Compare screen) and, for a pair of models, the head-to-head: wins, ties and A's win
// rate over the decided votes with a 95 % Wilson interval. JSON shape: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/run/backend_factory.h"
#include "core/store/store.h"
#include "core/store/vote_repository.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace verdict::cli {
namespace {

nlohmann::json voteJson(const core::VoteRecord& v) {
    return {{"id", v.id},
            {"created_at", v.createdAt},
            {"model_a", v.modelA},
            {"model_b", v.modelB},
            {"sha_a", v.shaA},
            {"sha_b", v.shaB},
            {"prompt", v.prompt},
            {"answer_a", v.answerA},
            {"answer_b", v.answerB},
            {"winner", std::string(core::voteWinnerName(v.winner))},
            {"blind", v.blind},
            {"settings", v.settings}};
}

std::string oneLine(std::string s, size_t max) {
    for (char& c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (s.size() > max) s = s.substr(0, max - 3) + "...";
    return s;
}

// Which votes: all of them, a head-to-head (a and b), or those of one model; references as given.
struct VotesOptions {
    std::optional<std::string> a, b, model;
};

const OptionTable<VotesOptions>& votesOptions() {
    using S = VotesOptions;
    static const OptionTable<S> table = {
        optionalTextOption<S>("a", "A", "model A of a head-to-head (with --b): votes between A and B and the summary",
                              [](auto& s) -> auto& { return s.a; }),
        optionalTextOption<S>("b", "B", "model B of a head-to-head (with --a)", [](auto& s) -> auto& { return s.b; }),
        optionalTextOption<S>("model", "M", "only votes where M is one of the two models", [](auto& s) -> auto& { return s.model; }),
    };
    return table;
}

}  // namespace

int runVotes(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(votesOptions(), VotesOptions{});
    for (OptionSpec spec : {dbOption(), jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("votes", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict votes [--a A --b B] [--model M] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (!args->positionals().empty()) return fail("votes", "unexpected argument '" + args->positionals()[0] + "'", kExitUsage);
    VotesOptions o;
    if (auto e = applyOptions(votesOptions(), *args, o)) return fail("votes", *e, kExitUsage);
    if (o.a.has_value() != o.b.has_value()) return fail("votes", "--a and --b go together", kExitUsage);
    if (o.a && o.model) return fail("votes", "use either --model or --a/--b", kExitUsage);
    const bool json = args->has("json");

    auto db = core::openStoreForReading(args->value("db"));
    if (!db) return fail("votes", db.error().message, kExitBadInput);
    core::VoteRepository repo(*db);

    // References as compare stores them (absolute file paths), so "./m.gguf" finds its votes.
    std::optional<std::string> a, b, model;
    if (o.a) {
        a = core::normalizeModelRef(*o.a);
        b = core::normalizeModelRef(*o.b);
        if (*a == *b) return fail("votes", "--a and --b name the same model", kExitUsage);
    }
    if (o.model) model = core::normalizeModelRef(*o.model);

    auto votes = repo.list(a ? a : model);
    if (!votes) return fail("votes", votes.error().message, kExitRuntime);
    std::vector<core::VoteRecord> shown;
    for (auto& v : *votes)
        if (!a || (v.modelA == *a && v.modelB == *b) || (v.modelA == *b && v.modelB == *a)) shown.push_back(std::move(v));
    std::optional<core::VoteSummary> sum;
    if (a) {
        auto s = repo.summary(*a, *b);
        if (!s) return fail("votes", s.error().message, kExitRuntime);
        sum = *s;
    }

    if (json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& v : shown) list.push_back(voteJson(v));
        nlohmann::json j = {{"votes", list}, {"summary", nullptr}, {"database", db->path()}};
        if (sum)
            j["summary"] = {{"model_a", sum->modelA},
                            {"model_b", sum->modelB},
                            {"votes", sum->votes},
                            {"wins_a", sum->winsA},
                            {"wins_b", sum->winsB},
                            {"ties", sum->ties},
                            {"decided", sum->decided},
                            {"win_rate_a", sum->winRateA ? nlohmann::json(*sum->winRateA) : nlohmann::json(nullptr)},
                            {"win_rate_a_ci", {sum->winRateACi.lo, sum->winRateACi.hi}}};
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return kExitOk;
    }
    if (shown.empty()) std::printf("no votes%s\n", a || model ? " for these models" : " yet (verdict compare A B -p TEXT --vote a|b|tie)");
    for (const auto& v : shown)
        std::printf("%5lld  %s  %-3s %s  A=%s  B=%s  \"%s\"\n", static_cast<long long>(v.id), v.createdAt.c_str(),
                    std::string(core::voteWinnerName(v.winner)).c_str(), v.blind ? "blind" : "open ", v.modelA.c_str(),
                    v.modelB.c_str(), oneLine(v.prompt, 40).c_str());
    if (sum) {
        std::printf("\nA %s\nB %s\n%lld votes: A won %lld, B won %lld, %lld ties", sum->modelA.c_str(), sum->modelB.c_str(),
                    static_cast<long long>(sum->votes), static_cast<long long>(sum->winsA),
                    static_cast<long long>(sum->winsB), static_cast<long long>(sum->ties));
        if (sum->winRateA)
            std::printf("; A's win rate %.1f%% of %lld decided votes (95%% CI %.1f-%.1f%%, ties excluded)\n", 100 * *sum->winRateA,
                        static_cast<long long>(sum->decided), 100 * sum->winRateACi.lo, 100 * sum->winRateACi.hi);
        else
            std::printf("; no decided votes yet\n");
    }
    return kExitOk;
}

}  // namespace verdict::cli
