// The suite runner over a deterministic fake backend: storing, scoring, log-likelihood items,
// progress, cancellation (between items and mid-generation), resuming, and the run record.
#include "core/run/suite_runner.h"
#include "core/stats/accuracy.h"
#include "core/store/audit_chain.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/suite_repository.h"

#include <QtTest/QtTest>

#include <unistd.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>

using namespace verdict;
using namespace verdict::core;

namespace {

SuiteRecord meta(const std::string& name, const std::string& source) {
    SuiteRecord m;
    m.name = name;
    m.shape = "jsonl";
    m.sourcePath = source;
    return m;
}

// Answers "What is A + B?" correctly unless A is a multiple of 3 (then it answers A + B + 1).
// Streams its answer one character per token through onToken. Log-likelihood: the choice whose
// text is the right sum gets -1, every other choice -5 - its length.
class FakeBackend : public ModelBackend {
public:
    std::string chatTemplate;
    std::function<std::string(int call)> reasoning;  // text put before the answer (a thinking model)
    std::string file;                 // model file to hash ("" -> a fixed sha)
    int generateCalls = 0;
    int logprobCalls = 0;
    std::vector<uint64_t> seeds;
    std::function<void(int call, int token)> onEachToken;  // test hook (e.g. request a stop)
    std::set<std::string> failPrompts;  // generate() fails for these prompt texts
    std::function<double(const std::string&)> logprobOf;  // overrides the log-likelihood rule
    std::string device = "test";      // BackendInfo::device ("cpu (NAME, N threads)", "cuda:0 (NAME)")

    BackendInfo info() const override {
        BackendInfo i;
        i.backend = "engine";
        i.modelPath = file.empty() ? "/fake/model.gguf" : file;
        if (file.empty()) {
            i.modelSha256 = std::string(64, '5');
            i.modelBytes = 42;
        } else {
            i.modelParts = {file};
        }
        i.engineVersion = "fake 1";
        i.device = device;
        i.chatTemplate = chatTemplate;
        return i;
    }

    static std::string answer(const std::string& prompt) {
        int a = 0, b = 0;
        if (std::sscanf(prompt.c_str(), "What is %d + %d?", &a, &b) != 2) return "?";
        return std::to_string(a % 3 == 0 ? a + b + 1 : a + b);
    }

    Result<Generation> generate(const Prompt& prompt, const GenerationParams& params, const TokenCallback& onToken) override {
        const int call = generateCalls++;
        seeds.push_back(params.seed);
        if (failPrompts.count(prompt.text)) return Error{"prompt does not fit in the context (fake)"};
        Generation g;
        const bool templated = prompt.useChatTemplate && !chatTemplate.empty();
        g.prompt.text = templated ? "<chat>" + prompt.messages.back().content + "</chat>" : prompt.text;
        g.prompt.templateUsed = templated ? "model" : "raw";
        const std::string full = (reasoning ? reasoning(call) : std::string()) + answer(prompt.text);
        g.tokensIn = static_cast<int64_t>(prompt.text.size());
        g.stopReason = "eos";
        for (size_t i = 0; i < full.size(); ++i) {
            if (onEachToken) onEachToken(call, static_cast<int>(i));
            g.text += full[i];
            ++g.tokensOut;
            if (onToken && !onToken(std::string_view(&full[i], 1))) {
                g.stopReason = "callback";
                break;
            }
        }
        g.ttftMs = 5.0;
        g.decodeTps = 100.0;
        return g;
    }

    Result<ContinuationScore> logprobs(const Prompt& context, const std::string& continuation) override {
        ++logprobCalls;
        ContinuationScore s;
        s.context.text = context.text;
        s.context.templateUsed = "raw";
        s.contextTokens = static_cast<int64_t>(context.text.size());
        s.continuationTokens = static_cast<int64_t>(continuation.size());
        const bool right = continuation == " " + answer(context.text);
        s.logprob = right ? -1.0 : -5.0 - static_cast<double>(continuation.size());
        if (logprobOf) s.logprob = logprobOf(continuation);
        s.greedy = right;
        return s;
    }
};

SuiteItem genItem(int a, int b) {
    SuiteItem it;
    it.id = "g" + std::to_string(a);
    it.category = a % 2 ? "odd" : "even";
    it.prompt = "What is " + std::to_string(a) + " + " + std::to_string(b) + "?";
    it.references = {std::to_string(a + b)};
    return it;
}

SuiteItem mcItem(int a, int b, int gold) {
    SuiteItem it = genItem(a, b);
    it.id = "m" + std::to_string(a);
    it.category = "mc";
    for (int k = 0; k < 3; ++k) it.choices.push_back(std::to_string(a + b - gold + k));
    it.gold = gold;
    return it;
}

Result<ItemPrompt> renderPlain(const SuiteItem& item, size_t, const std::vector<SuiteItem>&, const PromptingOptions& o) {
    ItemPrompt p;
    p.prompt.text = item.prompt;
    p.prompt.messages = {{"user", item.prompt}};
    p.prompt.useChatTemplate = o.useChatTemplate;
    return p;
}

Result<std::vector<ItemScore>> scoreExact(const SuiteItem& item, const std::string& output) {
    if (item.metadata.contains("bad_scorer")) return Error{"unknown scorer 'nope'"};
    if (item.references.empty()) return std::vector<ItemScore>{};
    const bool pass = output == item.references.front();
    return std::vector<ItemScore>{{"exact", pass ? 1.0 : 0.0, pass, {{"expected", item.references.front()}}}};
}

struct Env {
    QTemporaryDir dir;
    Database db;
    SuiteRecord suite;
    std::vector<SuiteItem> items;

    explicit Env(std::vector<SuiteItem> its)
        : db(openStore(dir.filePath("v.db").toStdString()).value()), items(std::move(its)) {
        suite = SuiteRepository(db).save(meta("arith", "/arith.jsonl"), items)->suite;
    }
    RunRequest request() const {
        RunRequest r;
        r.suite = suite;
        r.items = items;
        r.generation.maxTokens = 8;
        r.generation.temperature = 0;
        r.generation.seed = 100;
        return r;
    }
};

std::vector<SuiteItem> genItems(int n) {
    std::vector<SuiteItem> v;
    for (int i = 0; i < n; ++i) v.push_back(genItem(i, 10));
    return v;
}

}  // namespace

class TestRunner : public QObject {
    Q_OBJECT
private slots:
    void reasoningIsNotTheAnswer() {
        // A thinking model: the answer after "</think>" (or a harmony "final" channel) is scored and
        // stored as the output; the reasoning goes to details.reasoning; reasoning that never ended
        // leaves no answer.
        Env env(genItems(4));  // item 0 and 3: the fake answers wrong (a multiple of 3)
        FakeBackend fake;
        fake.reasoning = [](int call) -> std::string {
            switch (call) {
            case 0: return "<think>\nadd 0 and 10: 10... or 11?\n</think>\n\n";
            case 1: return "<|channel|>analysis<|message|>1 + 10 = 11<|end|><|start|>assistant<|channel|>final<|message|>";
            case 2: return "<think>2 + 10 is 12, let me check the 12 carefully";  // out of tokens: no answer
            default: return "";
            }
        };
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        auto prepared = runner.prepare(env.request());
        QVERIFY(prepared.ok());
        auto out = runner.execute(*prepared, std::stop_token());
        QVERIFY(out.ok());
        auto items = RunRepository(env.db).items(prepared->run.id);
        QVERIFY(items.ok());
        QCOMPARE(items->size(), size_t(4));
        const RunItemRecord& think = (*items)[0];
        QCOMPARE(think.output, std::string("11"));  // a multiple of 3: wrong, but scored on the answer
        QCOMPARE(think.correct, std::optional<bool>(false));
        QCOMPARE(think.details.value("reasoning", ""), std::string("<think>\nadd 0 and 10: 10... or 11?\n</think>"));
        const RunItemRecord& harmony = (*items)[1];
        QCOMPARE(harmony.output, std::string("11"));
        QCOMPARE(harmony.correct, std::optional<bool>(true));
        QVERIFY(harmony.details.value("reasoning", "").find("analysis") != std::string::npos);
        const RunItemRecord& unended = (*items)[2];
        QCOMPARE(unended.output, std::string());
        QCOMPARE(unended.correct, std::optional<bool>(false));
        QCOMPARE(unended.details.value("reasoning_unended", false), true);
        QVERIFY(unended.details.value("reasoning", "").find("carefully") != std::string::npos);
        const RunItemRecord& plain = (*items)[3];
        QCOMPARE(plain.output, std::string("14"));  // no reasoning: the whole output, no details.reasoning
        QVERIFY(!plain.details.contains("reasoning"));
    }

    void completeRun() {
        Env env(genItems(9));
        FakeBackend fake;
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        std::vector<RunProgress> progress;
        runner.setProgressCallback([&](const RunProgress& p) { progress.push_back(p); });
        auto prepared = runner.prepare(env.request());
        QVERIFY2(prepared.ok(), prepared.ok() ? "" : prepared.error().message.c_str());
        QVERIFY(!prepared->resumed);
        QCOMPARE(prepared->run.nPlanned, int64_t(9));
        QCOMPARE(prepared->run.modelSha256, std::string(64, '5'));
        QCOMPARE(prepared->run.chatTemplateMode, std::string("raw"));
        QCOMPARE(prepared->run.ownerPid, std::optional<int64_t>(getpid()));
        auto out = runner.execute(*prepared, std::stop_token());
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
        QCOMPARE(out->run.status, RunStatus::Completed);
        QCOMPARE(out->storedNow, int64_t(9));
        QVERIFY(!out->run.finishedAt.empty());
        QVERIFY(!out->run.ownerPid);

        // Progress: once before the first item, then once per item; done counts up to 9.
        QCOMPARE(progress.size(), size_t(10));
        QCOMPARE(progress.front().done, int64_t(0));
        QCOMPARE(progress.back().done, int64_t(9));
        QCOMPARE(progress.back().total, int64_t(9));
        QVERIFY(progress.back().itemsPerSecond > 0);
        QCOMPARE(*progress.back().etaSeconds, 0.0);

        auto items = RunRepository(env.db).items(out->run.id);
        QVERIFY(items.ok());
        QCOMPARE(items->size(), size_t(9));
        std::vector<ItemOutcome> outcomes;
        for (const RunItemRecord& r : *items) {
            // Wrong exactly when the item index is a multiple of 3 (the fake's rule).
            QCOMPARE(r.correct, std::optional<bool>(r.itemIdx % 3 != 0));
            QCOMPARE(r.output, FakeBackend::answer(env.items[static_cast<size_t>(r.itemIdx)].prompt));
            QCOMPARE(r.prompt, env.items[static_cast<size_t>(r.itemIdx)].prompt);
            QCOMPARE(r.scores[0]["name"].get<std::string>(), std::string("exact"));
            QCOMPARE(r.tokensOut, int64_t(r.output.size()));
            QCOMPARE(*r.ttftMs, 5.0);
            QCOMPARE(*r.decodeTps, 100.0);
            QVERIFY(r.durationMs.has_value());
            QCOMPARE(r.details["stop_reason"].get<std::string>(), std::string("eos"));
            QCOMPARE(r.details["template"].get<std::string>(), std::string("raw"));
            outcomes.push_back({r.itemId, r.category, r.correct, !r.error.empty()});
        }
        // Per-item seeds: run seed + item index.
        QCOMPARE(fake.seeds, (std::vector<uint64_t>{100, 101, 102, 103, 104, 105, 106, 107, 108}));
        const AccuracySummary acc = summarizeAccuracy(outcomes);
        QCOMPARE(acc.overall.correct, int64_t(6));  // indices 0, 3, 6 wrong
        auto chain = verifyChain(env.db);
        QVERIFY(chain.ok() && chain->ok());

        // The same experiment again: nothing unfinished, so a new run.
        auto second = runner.prepare(env.request());
        QVERIFY(second.ok());
        QVERIFY(!second->resumed);
        QVERIFY(second->run.id != out->run.id);
    }

    void multiTurnItems() {
        // An MT-Bench item: the second turn is asked after the model's own first answer, in one
        // conversation; the output is the last answer and every turn is in details.turns.
        struct Echo : ModelBackend {
            BackendInfo info() const override {
                BackendInfo i;
                i.modelPath = "/fake/echo.gguf";
                i.modelSha256 = std::string(64, 'e');
                i.modelBytes = 1;
                return i;
            }
            Result<Generation> generate(const Prompt& p, const GenerationParams&, const TokenCallback&) override {
                Generation g;
                g.prompt.text = p.text;
                g.text = "A" + std::to_string(p.messages.size()) + ": " + p.messages.back().content;
                g.tokensIn = static_cast<int64_t>(p.messages.size());
                g.tokensOut = 3;
                g.stopReason = "eos";
                g.ttftMs = 7.0 + static_cast<double>(p.messages.size());
                return g;
            }
            Result<ContinuationScore> logprobs(const Prompt&, const std::string&) override { return Error{"unused"}; }
        } echo;
        // The conversation as text, one "role: content" line per turn.
        auto renderChat = [](const SuiteItem& item, size_t, const std::vector<SuiteItem>&, const PromptingOptions&) -> Result<ItemPrompt> {
            ItemPrompt p;
            p.prompt.messages = item.messages.empty() ? std::vector<ChatTurn>{{"user", item.prompt}} : item.messages;
            for (const ChatTurn& t : p.prompt.messages) p.prompt.text += t.role + ": " + t.content + "\n";
            return p;
        };
        SuiteItem mt;
        mt.id = "mt1";
        mt.turns = {"Write a haiku.", "Now make it rhyme."};
        mt.prompt = mt.turns[0];
        Env env({mt, genItem(1, 2)});
        SuiteRunner runner(env.db, echo, renderChat, scoreExact);
        auto prepared = runner.prepare(env.request());
        QVERIFY(prepared.ok());
        auto outcome = runner.execute(*prepared, {});
        QVERIFY(outcome.ok());
        auto items = RunRepository(env.db).items(prepared->run.id);
        QCOMPARE(items->size(), size_t(2));
        const RunItemRecord& r = (*items)[0];
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.output, std::string("A3: Now make it rhyme."));  // user, assistant, user
        QCOMPARE(r.details["turns"].size(), size_t(2));
        QCOMPARE(r.details["turns"][0]["output"].get<std::string>(), std::string("A1: Write a haiku."));
        QCOMPARE(r.details["turns"][1]["turn"].get<int>(), 2);
        // The second prompt holds the model's own first answer.
        QVERIFY2(r.prompt == "user: Write a haiku.\nassistant: A1: Write a haiku.\nuser: Now make it rhyme.\n", r.prompt.c_str());
        QCOMPARE(r.tokensIn, 1 + 3);
        QCOMPARE(r.tokensOut, 6);
        QCOMPARE(*r.ttftMs, 8.0);  // the first turn's
        // A single-turn item is as before: no turns in its details.
        QVERIFY(!(*items)[1].details.contains("turns"));
        QCOMPARE((*items)[1].output, std::string("A1: What is 1 + 2?"));

        // Multi-turn consistency: turns with references are scored one by one (turn 1 has none,
        // turn 2 is right, turn 3 wrong); the item is right only when every scored turn is.
        SuiteItem mc;
        mc.id = "mc1";
        mc.turns = {"My name is Ada.", "What is my name?", "And my name again?"};
        mc.prompt = mc.turns[0];
        mc.metadata["turn_references"] = {nullptr, "A3: What is my name?", {"Ada", "ada"}};
        Env env2({mc});
        SuiteRunner runner2(env2.db, echo, renderChat, scoreExact);
        auto prepared2 = runner2.prepare(env2.request());
        QVERIFY(prepared2.ok());
        QVERIFY(runner2.execute(*prepared2, {}).ok());
        auto items2 = RunRepository(env2.db).items(prepared2->run.id);
        const RunItemRecord& c = (*items2)[0];
        QVERIFY2(c.error.empty(), c.error.c_str());
        const auto& t = c.details["turns"];
        QCOMPARE(t.size(), size_t(3));
        QVERIFY(!t[0].contains("correct"));
        QCOMPARE(t[1]["correct"].get<bool>(), true);
        QCOMPARE(t[2]["correct"].get<bool>(), false);
        QCOMPARE(t[2]["references"], nlohmann::json({"Ada", "ada"}));
        QCOMPARE(c.correct, std::optional<bool>(false));
        QCOMPARE(c.scores.size(), size_t(1));
        QCOMPARE(c.scores[0]["name"].get<std::string>(), std::string("turns"));
        QCOMPARE(c.scores[0]["score"].get<double>(), 0.5);
    }

    void loglikItems() {
        std::vector<SuiteItem> items = {mcItem(1, 1, 0), mcItem(2, 5, 2), mcItem(3, 4, 1)};
        Env env(items);
        FakeBackend fake;
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        auto p = runner.prepare(env.request());
        QVERIFY(p.ok());
        auto out = runner.execute(*p, {});
        QVERIFY(out.ok());
        QCOMPARE(fake.generateCalls, 0);
        QCOMPARE(fake.logprobCalls, 9);
        auto stored = RunRepository(env.db).items(out->run.id);
        QCOMPARE(stored->size(), size_t(3));
        // Item 0: 1 + 1 = 2, choices {2, 3, 4}, gold 0 -> right.
        QCOMPARE((*stored)[0].output, std::string("2"));
        QCOMPARE((*stored)[0].correct, std::optional<bool>(true));
        // Item 2: the fake believes 3 + 4 = 8 (3 is a multiple of 3): choices {6, 7, 8}, gold 1 -> picks 8, wrong.
        QCOMPARE((*stored)[2].output, std::string("8"));
        QCOMPARE((*stored)[2].correct, std::optional<bool>(false));
        const auto& s = (*stored)[2].scores[0];
        QCOMPARE(s["name"].get<std::string>(), std::string("mc_loglik"));
        QCOMPARE(s["detail"]["choice"].get<int>(), 2);
        QCOMPARE(s["detail"]["gold"].get<int>(), 1);
        QCOMPARE((*stored)[2].details["logprobs"].size(), size_t(3));
        QCOMPARE((*stored)[2].details["logprobs"][2].get<double>(), -1.0);
        QCOMPARE((*stored)[0].tokensOut, int64_t(2 + 2 + 2));  // " 2", " 3", " 4"
        QVERIFY(!(*stored)[0].ttftMs);

        // mc_mode "generate": the same items are generated and scored by the scorer instead.
        FakeBackend fake2;
        SuiteRunner gen(env.db, fake2, renderPlain, scoreExact);
        RunRequest r = env.request();
        r.prompting.mcMode = "generate";
        auto p2 = gen.prepare(r);
        QVERIFY(p2.ok());
        QVERIFY(gen.execute(*p2, {}).ok());
        QCOMPARE(fake2.generateCalls, 3);
        QCOMPARE(fake2.logprobCalls, 0);
    }

    void loglikNormalised() {
        // Sums: " a" -3, " bbbbbbbbbb" -10 -> acc picks "a" (index 0).
        // Per character (lm-eval acc_norm): -3 / 1 = -3, -10 / 10 = -1 -> picks index 1 (gold).
        SuiteItem plain;
        plain.id = "n0";
        plain.prompt = "pick";
        plain.choices = {"a", "bbbbbbbbbb"};
        plain.gold = 1;
        plain.scorers = {{"mc_loglik", nlohmann::json::object()}};
        SuiteItem norm = plain;
        norm.id = "n1";
        norm.prompt = "pick again";
        norm.scorers = {{"mc_loglik", {{"norm", true}}}};
        Env env({plain, norm});
        FakeBackend fake;
        fake.logprobOf = [](const std::string& c) { return c == " a" ? -3.0 : -10.0; };
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        auto p = runner.prepare(env.request());
        auto out = runner.execute(*p, {});
        QVERIFY(out.ok());
        auto stored = RunRepository(env.db).items(out->run.id);
        QCOMPARE((*stored)[0].output, std::string("a"));
        QCOMPARE((*stored)[0].correct, std::optional<bool>(false));
        QCOMPARE((*stored)[1].output, std::string("bbbbbbbbbb"));
        QCOMPARE((*stored)[1].correct, std::optional<bool>(true));
        QCOMPARE((*stored)[1].scores[0]["detail"]["pred"].get<int>(), 0);
        QCOMPARE((*stored)[1].scores[0]["detail"]["pred_norm"].get<int>(), 1);
    }

    void errorsAreStored() {
        std::vector<SuiteItem> items = genItems(4);
        items[2].metadata = {{"bad_scorer", true}};
        Env env(items);
        FakeBackend fake;
        fake.failPrompts = {items[1].prompt};
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        auto p = runner.prepare(env.request());
        auto out = runner.execute(*p, {});
        QVERIFY(out.ok());
        QCOMPARE(out->run.status, RunStatus::Completed);
        QCOMPARE(out->errorsNow, int64_t(2));
        auto stored = RunRepository(env.db).items(out->run.id);
        QCOMPARE(stored->size(), size_t(4));
        // Model failure: stored with the error, counted wrong.
        QVERIFY((*stored)[1].error.find("does not fit") != std::string::npos);
        QCOMPARE((*stored)[1].correct, std::optional<bool>(false));
        QCOMPARE((*stored)[1].prompt, items[1].prompt);
        // Scorer failure: stored with the output, unscored.
        QVERIFY((*stored)[2].error.find("scoring: unknown scorer") != std::string::npos);
        QCOMPARE((*stored)[2].correct, std::optional<bool>());
        QVERIFY(!(*stored)[2].output.empty());
    }

    void cancelBetweenItemsAndResume() {
        Env env(genItems(8));
        FakeBackend fake;
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        std::stop_source stop;
        runner.setProgressCallback([&](const RunProgress& p) {
            if (p.done == 3) stop.request_stop();
        });
        auto p = runner.prepare(env.request());
        auto out = runner.execute(*p, stop.get_token());
        QVERIFY(out.ok());
        QCOMPARE(out->run.status, RunStatus::Cancelled);
        QCOMPARE(out->storedNow, int64_t(3));
        QCOMPARE(fake.generateCalls, 3);

        // Same request again: continues the cancelled run with the 5 remaining items.
        runner.setProgressCallback({});
        auto again = runner.prepare(env.request());
        QVERIFY(again.ok());
        QVERIFY(again->resumed);
        QCOMPARE(again->run.id, p->run.id);
        QCOMPARE(again->storedBefore, int64_t(3));
        auto done = runner.execute(*again, {});
        QVERIFY(done.ok());
        QCOMPARE(done->run.status, RunStatus::Completed);
        QCOMPARE(done->storedNow, int64_t(5));
        QCOMPARE(fake.generateCalls, 8);  // nothing evaluated twice
        auto idx = RunRepository(env.db).storedItemIndices(p->run.id);
        QCOMPARE(*idx, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
        auto chain = verifyChain(env.db);
        QVERIFY(chain.ok() && chain->ok());
    }

    void cancelMidGeneration() {
        std::vector<SuiteItem> items = genItems(5);
        Env env(items);
        FakeBackend fake;
        std::stop_source stop;
        // Stop while the 3rd generation (item 2) is streaming its first token.
        fake.onEachToken = [&](int call, int token) {
            if (call == 2 && token == 0) stop.request_stop();
        };
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        auto p = runner.prepare(env.request());
        auto out = runner.execute(*p, stop.get_token());
        QVERIFY(out.ok());
        QCOMPARE(out->run.status, RunStatus::Cancelled);
        QCOMPARE(out->storedNow, int64_t(2));  // the interrupted item is not stored
        auto idx = RunRepository(env.db).storedItemIndices(p->run.id);
        QCOMPARE(*idx, (std::vector<int64_t>{0, 1}));

        fake.onEachToken = {};
        auto again = runner.prepare(env.request());
        QVERIFY(again.ok() && again->resumed);
        QVERIFY(runner.execute(*again, {}).ok());
        auto stored = RunRepository(env.db).items(p->run.id);
        QCOMPARE(stored->size(), size_t(5));
        QCOMPARE((*stored)[2].output, FakeBackend::answer(items[2].prompt));  // complete, not cut
    }

    void explicitResumeUsesStoredSettings() {
        Env env(genItems(6));
        FakeBackend fake;
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        std::stop_source stop;
        runner.setProgressCallback([&](const RunProgress& p) { if (p.done == 2) stop.request_stop(); });
        RunRequest first = env.request();
        first.generation.maxTokens = 5;
        first.generation.seed = 7;
        first.prompting.shots = 2;
        first.limit = 4;
        auto p = runner.prepare(first);
        QVERIFY(runner.execute(*p, stop.get_token()).ok());
        runner.setProgressCallback({});

        RunRequest resume = env.request();  // other settings: the stored ones win
        resume.resumeRunId = p->run.id;
        auto r = runner.prepare(resume);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QVERIFY(r->resumed);
        QCOMPARE(r->generation.maxTokens, 5);
        QCOMPARE(r->generation.seed, uint64_t(7));
        QCOMPARE(r->prompting.shots, 2);
        QCOMPARE(r->run.nPlanned, int64_t(4));
        auto out = runner.execute(*r, {});
        QVERIFY(out.ok());
        QCOMPARE(out->storedNow, int64_t(2));
        QCOMPARE(fake.seeds, (std::vector<uint64_t>{7, 8, 9, 10}));

        // Completed, missing, other suite, other model: refused with a reason.
        auto completed = runner.prepare(resume);
        QVERIFY(!completed.ok());
        QVERIFY(completed.error().message.find("completed") != std::string::npos);
        resume.resumeRunId = 999;
        QVERIFY(!runner.prepare(resume).ok());

        RunRequest cancelledAgain = env.request();
        auto p3 = runner.prepare(cancelledAgain);
        std::stop_source s3;
        s3.request_stop();
        QVERIFY(runner.execute(*p3, s3.get_token()).ok());
        FakeBackend other;
        other.file = env.dir.filePath("other.gguf").toStdString();
        std::ofstream(other.file) << "different weights";
        SuiteRunner otherRunner(env.db, other, renderPlain, scoreExact);
        RunRequest wrongModel = env.request();
        wrongModel.resumeRunId = p3->run.id;
        auto refused = otherRunner.prepare(wrongModel);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("was made with") != std::string::npos, refused.error().message.c_str());
        SuiteRecord otherSuite = SuiteRepository(env.db).save(meta("other", "/o"), genItems(2))->suite;
        RunRequest wrongSuite = env.request();
        wrongSuite.suite = otherSuite;
        wrongSuite.items = genItems(2);
        wrongSuite.resumeRunId = p3->run.id;
        auto refused2 = runner.prepare(wrongSuite);
        QVERIFY(!refused2.ok());
        QVERIFY(refused2.error().message.find("evaluated suite") != std::string::npos);
    }

    void autoResumeNeedsSameSettings() {
        Env env(genItems(4));
        FakeBackend fake;
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        std::stop_source stop;
        stop.request_stop();
        auto p = runner.prepare(env.request());
        QVERIFY(runner.execute(*p, stop.get_token()).ok());  // cancelled before any item

        RunRequest hotter = env.request();
        hotter.generation.temperature = 0.7;
        auto q = runner.prepare(hotter);
        QVERIFY(q.ok());
        QVERIFY(!q->resumed);  // different experiment
        RunRequest noResume = env.request();
        noResume.autoResume = false;
        auto n = runner.prepare(noResume);
        QVERIFY(n.ok() && !n->resumed);
        auto same = runner.prepare(env.request());
        QVERIFY(same.ok());
        QVERIFY(same->resumed);
        QCOMPARE(same->run.id, n->run.id);  // the newest unfinished run with that key
    }

    // A run's timings come from one device: it continues on that device (other thread counts are
    // fine), an explicit resume elsewhere is refused naming both, an automatic one starts afresh.
    void resumeNeedsSameDevice() {
        Env env(genItems(4));
        FakeBackend fake;
        fake.device = "cpu (Test CPU, 2 threads)";
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        std::stop_source stop;
        stop.request_stop();
        auto p = runner.prepare(env.request());
        QVERIFY(p.ok());
        QVERIFY(runner.execute(*p, stop.get_token()).ok());  // cancelled before any item

        fake.device = "cuda:0 (Test GPU)";
        RunRequest explicitResume = env.request();
        explicitResume.resumeRunId = p->run.id;
        auto refused = runner.prepare(explicitResume);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("was measured on cpu (Test CPU, 2 threads), this is cuda:0 (Test GPU)") !=
                     std::string::npos,
                 refused.error().message.c_str());
        auto fresh = runner.prepare(env.request());
        QVERIFY(fresh.ok());
        QVERIFY(!fresh->resumed);
        QVERIFY(fresh->run.id != p->run.id);

        fake.device = "cpu (Test CPU, 8 threads)";
        auto resumed = runner.prepare(explicitResume);
        QVERIFY2(resumed.ok(), resumed.ok() ? "" : resumed.error().message.c_str());
        QVERIFY(resumed->resumed);
        QCOMPARE(resumed->run.id, p->run.id);

        // Auto-resume keys: one per GPU, the CPU's whatever its thread count (and as before).
        RunRecord a = p->run;
        RunRecord b = a, g0 = a, g1 = a;
        a.device = "cpu (Test CPU, 2 threads)";
        b.device = "cpu (Other CPU, 8 threads)";
        g0.device = "cuda:0 (Test GPU)";
        g1.device = "cuda:1 (Test GPU, 4/8 layers; rest on cpu)";
        QCOMPARE(resumeKeyOf(a), resumeKeyOf(b));
        QCOMPARE(resumeKeyOf(a), p->run.resumeKey);
        QVERIFY(resumeKeyOf(g0) != resumeKeyOf(a));
        QVERIFY(resumeKeyOf(g1) != resumeKeyOf(g0));
    }

    void liveOwnerBlocksResume() {
        Env env(genItems(3));
        FakeBackend fake;
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        auto p = runner.prepare(env.request());
        QVERIFY(p.ok());
        // Pretend another live process on this host executes it.
        auto upd = env.db.prepare("UPDATE runs SET owner_pid = ?1 WHERE id = ?2");
        upd->bind(1, static_cast<int64_t>(getppid())).bind(2, p->run.id);
        QVERIFY(upd->run().ok());
        auto blocked = runner.prepare(env.request());
        QVERIFY(!blocked.ok());
        QVERIFY2(blocked.error().message.find("being executed") != std::string::npos, blocked.error().message.c_str());
    }

    void recordsModelAndTemplate() {
        Env env(genItems(2));
        FakeBackend fake;
        fake.file = env.dir.filePath("m.gguf").toStdString();
        std::ofstream(fake.file) << "weights";
        fake.chatTemplate = "{{ messages }}";
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        auto p = runner.prepare(env.request());
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().message.c_str());
        // SHA-256("weights"), computed with Qt's independent implementation.
        QCOMPARE(p->run.modelSha256,
                 QCryptographicHash::hash("weights", QCryptographicHash::Sha256).toHex().toStdString());
        QCOMPARE(p->run.modelBytes, int64_t(7));
        QVERIFY(p->run.modelId.has_value());
        QCOMPARE(p->run.chatTemplateMode, std::string("model"));
        QCOMPARE(p->run.chatTemplate, fake.chatTemplate);
        QCOMPARE(p->run.chatTemplateHash,
                 QCryptographicHash::hash("{{ messages }}", QCryptographicHash::Sha256).toHex().toStdString());
        QCOMPARE(p->run.prompting["chat_template"].get<bool>(), true);
        QCOMPARE(p->run.generation["max_tokens"].get<int>(), 8);
        QCOMPARE(p->run.engineVersion, std::string("fake 1"));
        auto out = runner.execute(*p, {});
        QVERIFY(out.ok());
        auto stored = RunRepository(env.db).items(out->run.id);
        QCOMPARE((*stored)[0].prompt, "<chat>" + env.items[0].prompt + "</chat>");
        QCOMPARE((*stored)[0].details["template"].get<std::string>(), std::string("model"));

        RunRequest raw = env.request();
        raw.prompting.useChatTemplate = false;
        auto q = runner.prepare(raw);
        QVERIFY(q.ok());
        QCOMPARE(q->run.chatTemplateMode, std::string("raw"));
        QVERIFY(q->run.chatTemplate.empty());
        QVERIFY(q->run.resumeKey != p->run.resumeKey);
    }

    void limitAndValidation() {
        Env env(genItems(5));
        FakeBackend fake;
        SuiteRunner runner(env.db, fake, renderPlain, scoreExact);
        RunRequest r = env.request();
        r.limit = 2;
        auto p = runner.prepare(r);
        QCOMPARE(p->run.nPlanned, int64_t(2));
        QCOMPARE(p->run.itemLimit, std::optional<int64_t>(2));
        auto out = runner.execute(*p, {});
        QCOMPARE(out->storedNow, int64_t(2));
        r.limit = 0;
        QVERIFY(!runner.prepare(r).ok());
        RunRequest empty = env.request();
        empty.items.clear();
        QVERIFY(!runner.prepare(empty).ok());
        r.limit = 50;  // more than the suite: all 5
        auto all = runner.prepare(r);
        QCOMPARE(all->run.nPlanned, int64_t(5));
    }
};

QTEST_GUILESS_MAIN(TestRunner)
#include "test_runner.moc"
