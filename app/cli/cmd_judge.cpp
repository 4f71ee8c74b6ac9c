// verdict judge RUN_A RUN_B [--judge MODEL|URL [--mode pairwise|rubric|reference] [--prompt FILE]
//               [--rubric FILE] [--limit N] [--concurrency N]] [--human NAME] [--json]
// Judges two stored runs of one suite item by item and prints what every judge stored so far:
// with --judge a judge model (a GGUF file or an endpoint) gives its verdicts (core/judge/
// judge_runner.h: pairwise in both orders, or rubric grades), resumably; with --human NAME a
// person votes blind in the terminal (1, 2, 3 = tie, 4 = both bad, s skip, q quit); with neither,
// only the summary. JSON shape: docs/cli.md. The judging itself, the judge's backend and the
// person's votes are the service's (core/services/judge.h), shared with the window's dialog.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/endpoint_options.h"
#include "cli/options.h"
#include "cli/signal_stop.h"
#include "core/judge/judge_runner.h"
#include "core/run/backend_factory.h"
#include "core/services/judge.h"
#include "core/store/store.h"
#include "util/quote.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <limits>

namespace verdict::cli {
namespace {

using nlohmann::json;

json optNumber(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json summariesJson(const core::JudgeSummaries& s) {
    json pairwise = json::array(), rubric = json::array(), agreement = json::array();
    for (const auto& p : s.pairwise) {
        const core::WinRate& w = p.winRate;
        const core::PositionBias& b = p.positionBias;
        pairwise.push_back({{"judge", p.judge},
                            {"mode", std::string(core::judgeModeName(p.mode))},
                            {"turn", p.turn},
                            {"items", w.items},
                            {"wins_a", w.winsA},
                            {"wins_b", w.winsB},
                            {"ties", w.ties},
                            {"both_bad", p.bothBad},
                            {"unreadable", w.errors},
                            {"decided", w.decided},
                            {"win_rate_a", optNumber(w.winRateA)},
                            {"win_rate_a_ci", {w.winRateACi.lo, w.winRateACi.hi}},
                            {"position_bias",
                             {{"usable", b.usable},
                              {"consistent", b.consistent},
                              {"favours_first", b.favoursFirst},
                              {"favours_second", b.favoursSecond},
                              {"flip_rate", optNumber(b.flipRate)}}}});
    }
    auto runScore = [](const core::RubricRunScore& r) {
        return json{{"graded", r.graded}, {"unreadable", r.unreadable}, {"mean", optNumber(r.mean)}};
    };
    for (const auto& r : s.rubric) {
        json cats = json::array();
        for (const auto& c : r.categories)
            cats.push_back({{"category", c.category},
                            {"pairs", c.pairs},
                            {"a", runScore(c.a)},
                            {"b", runScore(c.b)},
                            {"mean_difference", optNumber(c.meanDifference)},
                            {"difference_ci", {c.differenceCi.lo, c.differenceCi.hi}}});
        rubric.push_back({{"judge", r.judge}, {"mode", std::string(core::judgeModeName(r.mode))}, {"turn", r.turn}, {"categories", cats}});
    }
    for (const auto& a : s.agreement)
        agreement.push_back({{"judge_1", a.judge1},
                             {"judge_2", a.judge2},
                             {"turn", a.turn},
                             {"n", a.kappa.n},
                             {"observed", a.kappa.observed},
                             {"expected", a.kappa.expected},
                             {"kappa", optNumber(a.kappa.kappa)},
                             {"kappa_ci", {a.kappa.ci.lo, a.kappa.ci.hi}}});
    return {{"pairwise", pairwise}, {"rubric", rubric}, {"agreement", agreement}};
}

// The terminal walk-through: each item not yet voted by `person`, sides shuffled, names hidden.
int humanWalkthrough(core::Database& db, int64_t runA, int64_t runB, const std::string& person) {
    auto session = core::humanJudging(db, runA, runB, person);
    if (!session) return failService("judge", session.error(), "cpu");  // bad runs: 2, an unreadable store: 3
    const auto& items = session->items;
    size_t todo = 0;
    for (const auto& it : items) todo += session->votes.count(it.itemIdx) ? 0 : 1;
    std::printf("%zu of %zu items left for %s. Keys: 1 = left better, 2 = right better, 3 = tie, 4 = both bad, "
                "s = skip, q = quit (votes are saved as you go).\n", todo, items.size(), person.c_str());
    size_t n = 0;
    for (const auto& it : items) {
        if (session->votes.count(it.itemIdx)) continue;
        ++n;
        const std::string pos = core::blindPosition(person, runA, runB, it.itemIdx);
        const std::string& left = pos == "ab" ? it.answerA : it.answerB;
        const std::string& right = pos == "ab" ? it.answerB : it.answerA;
        std::printf("\n=== item %lld (%zu/%zu)%s%s ===\n%s\n\n--- 1: left ---\n%s\n\n--- 2: right ---\n%s\n\n> ",
                    static_cast<long long>(it.itemIdx), n, todo, it.category.empty() ? "" : ", ", it.category.c_str(),
                    it.question.c_str(), left.c_str(), right.c_str());
        std::fflush(stdout);
        std::string line;
        for (;;) {
            if (!std::getline(std::cin, line)) return kExitOk;  // end of input: what was voted is kept
            if (line == "q") return kExitOk;
            if (line == "s" || line == "1" || line == "2" || line == "3" || line == "4") break;
            std::printf("1, 2, 3, 4, s or q > ");
            std::fflush(stdout);
        }
        if (line == "s") continue;
        const core::HumanVote vote = line == "1" ? core::HumanVote::Left
                                   : line == "2" ? core::HumanVote::Right
                                   : line == "3" ? core::HumanVote::Tie
                                                 : core::HumanVote::BothBad;
        if (auto r = core::storeHumanVote(db, runA, runB, person, it.itemIdx, vote); !r)
            return fail("judge", r.error().message, kExitRuntime);
    }
    return kExitOk;
}

// The judge's options bound to the service's request (core/services/judge.h JudgeRequest: greedy,
// 1024 tokens, one call in flight; the local judge's engine settings): the defaults shown in
// --help are JudgeRequest's, the ones the window's judging dialog starts from. --mode, --prompt
// and --rubric come first (their place in --help), the numbers after the common options.
const OptionTable<core::JudgeRequest>& judgeChoiceOptions() {
    using S = core::JudgeRequest;
    static const OptionTable<S> table = [] {
        BoundOption<S> mode;
        mode.spec = {"mode", true, "MODE", "pairwise (default: both orders per item), rubric (each answer 1-10), reference (rubric + the item's reference)"};
        mode.apply = [](const Args& args, S& s) -> std::optional<std::string> {
            const std::string m = args.value("mode").value_or("");
            auto parsed = core::parseJudgeMode(m);
            if (!parsed || *parsed == core::JudgeMode::Human) return "--mode must be pairwise, rubric or reference (got '" + m + "')";
            s.mode = *parsed;
            return std::nullopt;
        };
        mode.shownDefault = [](const S&) { return std::string(); };  // said in the help text
        return OptionTable<S>{
            std::move(mode),
            textOption<S>("prompt", "FILE", "judge prompt template ({question} {answer_a} {answer_b} / {answer} {rubric} {reference}); default: built in",
                          [](auto& s) -> auto& { return s.promptFile; }),
            textOption<S>("rubric", "FILE", "rubric/reference modes: a JSON object {\"category\": \"text\", \"*\": \"default\"} or one text for all",
                          [](auto& s) -> auto& { return s.rubricFile; }),
        };
    }();
    return table;
}

const OptionTable<core::JudgeRequest>& judgeNumberOptions() {
    using S = core::JudgeRequest;
    static const OptionTable<S> table = {
        optionalIntOption<S>("limit", "N", "judge the first N items both runs answered", [](auto& s) -> auto& { return s.limit; },
                             1, std::numeric_limits<int64_t>::max()),
        intOption<S>("concurrency", "N", "judge calls in flight (endpoints; a local judge uses 1)",
                     [](auto& s) -> auto& { return s.concurrency; }, 1, core::kMaxJudgeConcurrency),
        intOption<S>("max-tokens", "N", "judge's output limit", [](auto& s) -> auto& { return s.generation.maxTokens; }, 1,
                     1'000'000),
        intOption<S>("threads", "N", std::string("local judge: ") + kThreadsHelp, [](auto& s) -> auto& { return s.backend.threads; }, 0,
                     kMaxThreads, 't'),
        intOption<S>("ctx", "N", "local judge: context tokens; 0 = min(training context, 4096)",
                     [](auto& s) -> auto& { return s.backend.nCtx; }, 0, std::numeric_limits<int32_t>::max(), 'c'),
    };
    return table;
}

// Who judges, and the request. --judge and --human are kept as given (a judge model is resolved
// against --provider once the endpoint options are read); unset: only the summary is printed.
struct JudgeOptions {
    std::optional<std::string> judge;  // a GGUF file or an endpoint ("URL MODEL"), or a --provider model name
    std::optional<std::string> human;  // the person who votes in the terminal
    core::JudgeRequest request;
};

// --judge, --mode, --prompt, --rubric, --human: their place in --help, before the common options.
const OptionTable<JudgeOptions>& judgeWhoOptions() {
    using S = JudgeOptions;
    static const OptionTable<S> table = concatOptions<S>({
        {optionalTextOption<S>("judge", "MODEL|URL", "the judge: a GGUF file or an OpenAI-compatible endpoint (\"URL MODEL\")",
                               [](auto& s) -> auto& { return s.judge; })},
        nestedOptions<S>(judgeChoiceOptions(), [](auto& s) -> auto& { return s.request; }),
        {optionalTextOption<S>("human", "NAME", "vote yourself in the terminal, blind (your NAME is stored with each vote)",
                               [](auto& s) -> auto& { return s.human; })},
    });
    return table;
}

// The numbers, after the common options.
const OptionTable<JudgeOptions>& judgeLimitOptions() {
    static const OptionTable<JudgeOptions> table =
        nestedOptions<JudgeOptions>(judgeNumberOptions(), [](auto& s) -> auto& { return s.request; });
    return table;
}

}  // namespace

int runJudge(const std::vector<std::string>& argv) {
    const JudgeOptions defaults;
    std::vector<OptionSpec> specs = specsOf(judgeWhoOptions(), defaults);
    for (OptionSpec o : {deviceOptionSpec(true), gpuLayersOptionSpec(), dbOption(), jsonOption(), helpOption()})
        specs.push_back(std::move(o));
    for (const OptionSpec& o : specsOf(judgeLimitOptions(), defaults)) specs.push_back(o);
    for (const OptionSpec& o : endpointOptionSpecs("endpoint judge")) specs.push_back(o);
    auto args = Args::parse(argv, specs);
    if (!args) return fail("judge", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict judge RUN_A RUN_B [--judge MODEL|URL [--mode pairwise|rubric|reference] [--rubric FILE]] "
                  "[--human NAME] [--json]\n  without --judge or --human: the summary of what is stored",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 2) return fail("judge", "expected two run ids RUN_A RUN_B (see verdict results)", kExitUsage);
    int64_t runs[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
        const std::string& t = args->positionals()[static_cast<size_t>(i)];
        try {
            size_t used = 0;
            runs[i] = std::stoll(t, &used);
            if (used != t.size() || runs[i] <= 0) throw std::invalid_argument(t);
        } catch (const std::exception&) {
            return fail("judge", "run id '" + t + "' is not a positive number", kExitUsage);
        }
    }
    if (args->has("judge") && args->has("human")) return fail("judge", "use either --judge or --human", kExitUsage);
    const bool json = args->has("json");
    if (json && args->has("human")) return fail("judge", "--human is interactive; --json prints only summaries", kExitUsage);
    JudgeOptions options;
    for (const auto* table : {&judgeLimitOptions(), &judgeWhoOptions()})
        if (auto e = applyOptions(*table, *args, options)) return fail("judge", *e, kExitUsage);
    core::JudgeRequest& request = options.request;
    if (args->has("mode") && !options.judge) return fail("judge", "--mode needs --judge", kExitUsage);
    if (args->has("rubric") && request.mode == core::JudgeMode::Pairwise)
        return fail("judge", "--rubric goes with --mode rubric or reference", kExitUsage);
    // The prompt and rubric files are read now (with --human too), before the runs are looked at.
    if (auto prepared = core::prepareJudgeRun(request); !prepared) return fail("judge", prepared.error().message, kExitBadInput);

    const bool localJudge = options.judge && !core::isEndpointRef(*options.judge);
    std::string& device = request.backend.device;
    if (int rc = readDeviceOption("judge", *args, &device, localJudge); rc != kExitOk) return rc;
    if (int rc = readGpuLayersOption("judge", *args, device, &request.backend.gpuLayers); rc != kExitOk) return rc;

    SignalStop signals("judge");  // before any thread starts
    auto db = options.judge || options.human ? core::openStore(args->value("db")) : core::openStoreForReading(args->value("db"));
    if (!db) return fail("judge", db.error().message, kExitBadInput);
    // Check the runs before a judge model is loaded.
    if (auto items = core::judgeableItems(*db, runs[0], runs[1]); !items) return fail("judge", items.error().message, kExitBadInput);

    std::optional<core::JudgeDone> done;
    if (options.human) {
        const std::string& person = *options.human;
        // Checked here, after the runs (a bad run is bad input whatever the name), as always.
        if (!core::validJudgeName(person)) return fail("judge", "--human needs a name (up to 200 bytes)", kExitUsage);
        if (int rc = humanWalkthrough(*db, runs[0], runs[1], person); rc != kExitOk) return rc;
    } else if (options.judge) {
        EndpointAccess access;
        if (int rc = readEndpointOptions("judge", *args, &access); rc != kExitOk) return rc;
        auto judgeRef = providerModelRef(access, *options.judge);  // --provider: a bare name is its model
        if (!judgeRef) return fail("judge", judgeRef.error().message, kExitUsage);
        request.judge = *judgeRef;
        request.backend.apiKey = access.apiKey;
        request.backend.caFile = access.caFile;
        request.backend.insecure = access.insecure;
        request.backend.endpointApi = access.api;
        auto r = core::judgeRunPair(*db, runs[0], runs[1], request,
                                    [json](const core::JudgeRunProgress& p) {
                                        if (json || p.total == 0) return;
                                        std::fprintf(stderr, "\rjudged %lld/%lld (%lld unreadable, %lld stored before)",
                                                     static_cast<long long>(p.done), static_cast<long long>(p.total),
                                                     static_cast<long long>(p.unreadable), static_cast<long long>(p.skipped));
                                        if (p.done == p.total) std::fprintf(stderr, "\n");
                                    },
                                    signals.cancelFlag());
        // Whatever failed before judging (the judge did not open, the store refused): a local
        // judge's exit status is that of a model that does not open, an endpoint's bad input.
        if (!r) return fail("judge", r.error().message, localJudge ? openFailureExitCode(device) : kExitBadInput);
        done = std::move(*r);
    }
    const core::JudgeRunReport* report = done ? &done->report : nullptr;
    const core::JudgeRunOptions* o = done ? &done->options : nullptr;

    auto sum = core::summarizeJudgments(*db, runs[0], runs[1]);
    if (!sum) return fail("judge", sum.error().message, kExitRuntime);
    const bool failed = report && report->failedCalls > 0;
    if (json) {
        nlohmann::json j = {{"run_a", runs[0]}, {"run_b", runs[1]}, {"judged", nullptr}, {"database", db->path()}};
        if (report)
            j["judged"] = {{"judge", o->judgeRef},
                           {"mode", std::string(core::judgeModeName(o->mode))},
                           {"prompt_hash", report->promptHash},
                           {"items", report->items},
                           {"items_missing", report->itemsMissing},
                           {"calls", report->calls},
                           {"already_stored", report->alreadyStored},
                           {"unreadable", report->unreadable},
                           {"failed_calls", report->failedCalls},
                           {"first_failure", report->firstFailure},
                           {"cancelled", report->cancelled}};
        j.update(summariesJson(*sum));
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
        if (report) {
            std::printf("judged runs %lld and %lld with %s: %lld calls (%lld stored before), %lld unreadable", static_cast<long long>(runs[0]),
                        static_cast<long long>(runs[1]), o->judgeRef.c_str(), static_cast<long long>(report->calls),
                        static_cast<long long>(report->alreadyStored), static_cast<long long>(report->unreadable));
            if (report->itemsMissing) std::printf(", %lld items not judged (a run lacks or failed them)", static_cast<long long>(report->itemsMissing));
            std::printf("\n");
            if (report->failedCalls)
                std::printf("%lld judge calls failed (not stored: run the command again to retry them); the first: %s\n",
                            static_cast<long long>(report->failedCalls), util::oneLine(report->firstFailure).c_str());
            if (report->cancelled) std::printf("cancelled: what was judged is kept; run the command again to go on\n");
        }
        std::fputs(core::describeJudgeSummaries(*sum).c_str(), stdout);
    }
    if (report && report->cancelled) return 130;
    return failed ? kExitRuntime : kExitOk;
}

}  // namespace verdict::cli
