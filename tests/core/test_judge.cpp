// LLM-as-judge (core/judge/judge_runner.h) and its storage (core/store/judgment_repository.h)
// with a scripted judge: its verdicts follow a rule per item, including position bias and
// outputs without a verdict, so the flip rule, the counting of unreadable outputs, resuming and
// the summaries are checked against counts worked out by hand.
#include "core/judge/judge_runner.h"
#include "core/services/judge.h"
#include "core/store/judgment_repository.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/suite_repository.h"
#include "scripted_judge.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <atomic>
#include <cstdio>

using namespace verdict;
using namespace verdict::core;

namespace {

using verdict::test::between;

constexpr int kItems = 6;

int64_t saveSuite(Database& db, const std::string& name) {
    std::vector<SuiteItem> items;
    for (int i = 0; i < kItems; ++i) {
        SuiteItem it;
        it.id = name;  // the suite's name in the ids: two suites, two content hashes
        it.id += std::to_string(i);
        it.category = i < 3 ? "code" : "design";
        it.prompt = "question " + std::to_string(i);
        if (i != 2) it.references = {"reference " + std::to_string(i)};
        it.sourceLine = i + 1;
        items.push_back(it);
    }
    SuiteRecord m;
    m.name = name;
    m.shape = "jsonl";
    m.sourcePath = "/tmp/" + name + ".jsonl";
    auto s = SuiteRepository(db).save(m, items);
    return s ? s->suite.id : -1;
}

// A run whose answer to item i is answer(i).
int64_t saveRun(Database& db, int64_t suiteId, const std::string& model, const std::function<std::string(int)>& answer,
                int n = kItems) {
    RunRecord r;
    r.modelPath = model;
    r.modelSha256 = std::string(64, model.back());
    r.modelBytes = 1;
    r.suiteId = suiteId;
    r.chatTemplateMode = "raw";
    r.nPlanned = n;
    r.engineVersion = "verdict test";
    r.device = "cpu";
    RunRepository runs(db);
    auto created = runs.create(r);
    if (!created) return -1;
    for (int i = 0; i < n; ++i) {
        RunItemRecord it;
        it.runId = created->id;
        it.itemIdx = i;
        char id[16];
        std::snprintf(id, sizeof id, "q%d", i);  // not "q" + ...: GCC 12 warns falsely (-Wrestrict) on that
        it.itemId = id;
        it.category = i < 3 ? "code" : "design";
        it.prompt = "question " + std::to_string(i);
        it.output = answer(i);
        if (!runs.appendItem(it)) return -1;
    }
    if (!runs.finish(created->id, RunStatus::Completed, "")) return -1;
    return created->id;
}

// The scripted judge. Pairwise, item by item:
//   0, 1, 2  the answer containing "good" wins (in either order: consistent)
//   3        always "[[A]]": the answer shown first wins (a flip: a tie, favouring the first)
//   4        "I cannot decide." (no marker: unreadable in both orders)
//   5        the answer without "good" wins (consistent)
// Rubric: "Rating: [[8]]" for an answer with "good", "[[3]]" without; item 4 "[[11]]" (off scale).
class ScriptedJudge : public ModelBackend {
public:
    explicit ScriptedJudge(std::atomic<int>* calls) : m_calls(calls) {}
    BackendInfo info() const override { return {}; }
    Result<Generation> generate(const Prompt& prompt, const GenerationParams&, const TokenCallback& onToken) override {
        ++*m_calls;
        const std::string& p = prompt.text;
        const int item = std::stoi(between(p, "<|The Start of the Question|>\nquestion ", "\n"));
        Generation g;
        g.stopReason = "eos";
        g.tokensIn = static_cast<int64_t>(p.size() / 4);
        if (p.find("Assistant A's Answer|>") != std::string::npos) {
            const std::string first = between(p, "Assistant A's Answer|>\n", "\n<|The End");
            const bool firstGood = first.find("good") != std::string::npos;
            if (item <= 2) g.text = firstGood ? "A is right. [[A]]" : "B is right.\n[[B]]";
            else if (item == 3) g.text = "The first one. [[A]]";
            else if (item == 4) g.text = "I cannot decide.";
            else g.text = firstGood ? "[[B]]" : "[[A]]";
        } else {
            const std::string answer = between(p, "Assistant's Answer|>\n", "\n<|The End");
            if (item == 4) g.text = "Rating: [[11]]";
            else g.text = answer.find("good") != std::string::npos ? "Fine.\nRating: [[8]]" : "Weak.\nRating: [[3]]";
        }
        g.tokensOut = 5;
        if (onToken) onToken(g.text);
        return g;
    }
    Result<ContinuationScore> logprobs(const Prompt&, const std::string&) override { return Error{"not used"}; }

private:
    std::atomic<int>* m_calls;
};

struct Fixture {
    QTemporaryDir dir;
    std::optional<Database> db;
    int64_t suite = 0, runA = 0, runB = 0;
    std::atomic<int> calls{0};
    JudgeOpener opener() {
        return [this]() -> Result<std::unique_ptr<ModelBackend>> {
            return std::unique_ptr<ModelBackend>(std::make_unique<ScriptedJudge>(&calls));
        };
    }
    bool init() {
        auto d = openStore(dir.filePath("j.db").toStdString());
        if (!d) return false;
        db.emplace(std::move(*d));
        suite = saveSuite(*db, "open");
        runA = saveRun(*db, suite, "/m/a.gguf", [](int i) { return "good answer " + std::to_string(i); });
        runB = saveRun(*db, suite, "/m/b.gguf", [](int i) { return "plain answer " + std::to_string(i); });
        return suite > 0 && runA > 0 && runB > 0;
    }
};

}  // namespace

class TestJudge : public QObject {
    Q_OBJECT
private slots:
    void repositoryKeepsTheCallersOrientation() {
        Fixture f;
        QVERIFY(f.init());
        JudgmentRepository repo(*f.db);
        auto h1 = repo.addPrompt("p", JudgeMode::Pairwise, "judge {question}");
        auto h2 = repo.addPrompt("again", JudgeMode::Pairwise, "judge {question}");
        QVERIFY(h1.ok() && h2.ok());
        QCOMPARE(*h1, *h2);  // stored once, by content
        QCOMPARE(**repo.promptText(*h1), std::string("judge {question}"));
        QVERIFY(!*repo.promptText("nope"));

        // Stored from B's side: (runB, runA), B shown first, winner 'a' = run B won.
        JudgmentRecord j;
        j.runA = f.runB;
        j.runB = f.runA;
        j.itemIdx = 1;
        j.judge = "http://h/v1 judge";
        j.position = "ab";
        j.promptHash = *h1;
        j.winner = JudgedWinner::A;
        QVERIFY(repo.add(j).ok());
        QVERIFY(!repo.add(j).ok());  // the same judgment twice
        auto fromA = repo.list(f.runA, f.runB);
        QVERIFY(fromA.ok());
        QCOMPARE(fromA->size(), size_t(1));
        QCOMPARE(fromA->front().runA, f.runA);
        QVERIFY(fromA->front().winner == JudgedWinner::B);
        QCOMPARE(fromA->front().position, std::string("ba"));
        auto fromB = repo.list(f.runB, f.runA);
        QVERIFY(fromB->front().winner == JudgedWinner::A);

        // A person changes their mind: the later vote replaces the earlier.
        JudgmentRecord h;
        h.runA = f.runA;
        h.runB = f.runB;
        h.itemIdx = 0;
        h.judge = "human:ann";
        h.mode = JudgeMode::Human;
        h.position = "ba";
        h.winner = JudgedWinner::A;
        QVERIFY(repo.add(h).ok());
        h.winner = JudgedWinner::BothBad;
        QVERIFY(repo.add(h).ok());
        auto human = repo.list(f.runA, f.runB, JudgeMode::Human);
        QCOMPARE(human->size(), size_t(1));
        QVERIFY(human->front().winner == JudgedWinner::BothBad);

        // Refused: one run, a pairwise judgment of one run, a rubric grade of two, unknown runs.
        JudgmentRecord bad = j;
        bad.runB = bad.runA;
        QVERIFY(!repo.add(bad).ok());
        bad.runB.reset();
        QVERIFY(!repo.add(bad).ok());
        bad = j;
        bad.mode = JudgeMode::Rubric;
        QVERIFY(!repo.add(bad).ok());
        bad = j;
        bad.runB = 999;
        QVERIFY(!repo.add(bad).ok());  // foreign key
    }

    void pairwiseJudgingFollowsTheFlipRule() {
        Fixture f;
        QVERIFY(f.init());
        JudgeRunOptions o;
        o.judgeRef = "http://127.0.0.1:1/v1 scripted";
        std::vector<JudgeRunProgress> seen;
        auto rep = judgeRuns(*f.db, f.runA, f.runB, o, f.opener(), [&](const JudgeRunProgress& p) { seen.push_back(p); });
        QVERIFY2(rep.ok(), rep.ok() ? "" : rep.error().message.c_str());
        QCOMPARE(rep->items, 6);
        QCOMPARE(rep->calls, 12);       // both orders of 6 items
        QCOMPARE(rep->unreadable, 2);   // item 4, both orders
        QCOMPARE(rep->failedCalls, 0);
        QCOMPARE(f.calls.load(), 12);
        QCOMPARE(seen.back().done, 12);
        QCOMPARE(seen.back().total, 12);

        auto sum = summarizeJudgments(*f.db, f.runA, f.runB);
        QVERIFY(sum.ok());
        QCOMPARE(sum->pairwise.size(), size_t(1));
        const PairwiseJudgeSummary& s = sum->pairwise.front();
        QCOMPARE(s.judge, o.judgeRef);
        // Items 0-2: A; 3: a flip, so a tie; 4: error; 5: B.
        QCOMPARE(s.winRate.winsA, 3);
        QCOMPARE(s.winRate.winsB, 1);
        QCOMPARE(s.winRate.ties, 1);
        QCOMPARE(s.winRate.errors, 1);
        QVERIFY(qFuzzyCompare(*s.winRate.winRateA, 0.75));
        QCOMPARE(s.positionBias.usable, 5);
        QCOMPARE(s.positionBias.favoursFirst, 1);
        QCOMPARE(s.positionBias.favoursSecond, 0);
        QVERIFY(qFuzzyCompare(*s.positionBias.flipRate, 0.2));

        // Every output is kept whole, readable or not, with what the judge was sent.
        auto rows = JudgmentRepository(*f.db).list(f.runA, f.runB, JudgeMode::Pairwise);
        QCOMPARE(rows->size(), size_t(12));
        int unreadable = 0;
        for (const JudgmentRecord& j : *rows) {
            QVERIFY(j.judgeInput.find("question " + std::to_string(j.itemIdx)) != std::string::npos);
            QVERIFY(!j.judgeOutput.empty());
            QCOMPARE(j.promptHash, rep->promptHash);
            if (!j.winner) {
                ++unreadable;
                QCOMPARE(j.itemIdx, 4);
                QVERIFY(!j.error.empty());
            }
        }
        QCOMPARE(unreadable, 2);

        // Resumed: nothing is asked twice.
        auto again = judgeRuns(*f.db, f.runA, f.runB, o, f.opener());
        QVERIFY(again.ok());
        QCOMPARE(again->calls, 0);
        QCOMPARE(again->alreadyStored, 12);
        QCOMPARE(f.calls.load(), 12);
    }

    void concurrentJudgingGivesTheSameVerdicts() {
        Fixture f;
        QVERIFY(f.init());
        JudgeRunOptions o;
        o.judgeRef = "http://127.0.0.1:1/v1 scripted";
        o.concurrency = 4;
        auto rep = judgeRuns(*f.db, f.runA, f.runB, o, f.opener());
        QVERIFY(rep.ok());
        QCOMPARE(rep->calls, 12);
        auto sum = summarizeJudgments(*f.db, f.runA, f.runB);
        const PairwiseJudgeSummary& s = sum->pairwise.front();
        QCOMPARE(s.winRate.winsA, 3);
        QCOMPARE(s.winRate.winsB, 1);
        QCOMPARE(s.winRate.ties, 1);
        QCOMPARE(s.winRate.errors, 1);
    }

    void limitAndCancel() {
        Fixture f;
        QVERIFY(f.init());
        JudgeRunOptions o;
        o.judgeRef = "j";
        o.limit = 2;
        auto rep = judgeRuns(*f.db, f.runA, f.runB, o, f.opener());
        QCOMPARE(rep->items, 2);
        QCOMPARE(rep->calls, 4);
        // Cancelled after the third call: stops, keeps what it finished; the rest comes on resume.
        o.limit.reset();
        std::atomic<bool> cancel{false};
        auto stopped = judgeRuns(*f.db, f.runA, f.runB, o, f.opener(),
                                 [&](const JudgeRunProgress& p) { if (p.done >= 3) cancel = true; }, &cancel);
        QVERIFY(stopped.ok());
        QVERIFY(stopped->cancelled);
        QCOMPARE(stopped->calls, 3);
        auto rest = judgeRuns(*f.db, f.runA, f.runB, o, f.opener());
        QCOMPARE(rest->alreadyStored, 7);
        QCOMPARE(rest->calls, 5);
    }

    void rubricGradesEachRun() {
        Fixture f;
        QVERIFY(f.init());
        JudgeRunOptions o;
        o.judgeRef = "grader";
        o.mode = JudgeMode::Rubric;
        o.rubrics = {{"code", "Runs and is idiomatic."}, {"*", "Sound design."}};
        auto rep = judgeRuns(*f.db, f.runA, f.runB, o, f.opener());
        QVERIFY2(rep.ok(), rep.ok() ? "" : rep.error().message.c_str());
        QCOMPARE(rep->calls, 12);       // 6 items x 2 runs
        QCOMPARE(rep->unreadable, 2);   // item 4's [[11]] is off the scale
        auto rows = JudgmentRepository(*f.db).list(f.runA, std::nullopt, JudgeMode::Rubric);
        QCOMPARE(rows->size(), size_t(6));
        QVERIFY(rows->front().judgeInput.find("Runs and is idiomatic.") != std::string::npos);  // item 0: code
        QVERIFY(rows->back().judgeInput.find("Sound design.") != std::string::npos);            // item 5: design

        auto sum = summarizeJudgments(*f.db, f.runA, f.runB);
        QCOMPARE(sum->rubric.size(), size_t(1));
        const RubricJudgeSummary& s = sum->rubric.front();
        QCOMPARE(s.categories.size(), size_t(3));  // overall, code, design
        const RubricCategory& all = s.categories[0];
        QCOMPARE(all.category, std::string());
        QCOMPARE(all.pairs, 5);
        QCOMPARE(all.a.graded, 5);
        QCOMPARE(all.a.unreadable, 1);
        QVERIFY(qFuzzyCompare(*all.a.mean, 8.0));
        QVERIFY(qFuzzyCompare(*all.b.mean, 3.0));
        QVERIFY(qFuzzyCompare(*all.meanDifference, 5.0));
        QVERIFY(qFuzzyCompare(all.differenceCi.lo, 5.0) && qFuzzyCompare(all.differenceCi.hi, 5.0));
        QCOMPARE(s.categories[1].category, std::string("code"));
        QCOMPARE(s.categories[1].pairs, 3);
        QCOMPARE(s.categories[2].pairs, 2);  // design: items 3 and 5 (4 unreadable)

        // Reference mode skips the item without a reference (item 2).
        o.mode = JudgeMode::Reference;
        auto ref = judgeRuns(*f.db, f.runA, f.runB, o, f.opener());
        QCOMPARE(ref->calls, 10);
        auto refRows = JudgmentRepository(*f.db).list(f.runB, std::nullopt, JudgeMode::Reference);
        QVERIFY(refRows->front().judgeInput.find("reference 0") != std::string::npos);
    }

    void humanVotesAndAgreement() {
        Fixture f;
        QVERIFY(f.init());
        JudgeRunOptions o;
        o.judgeRef = "judge-model";
        QVERIFY(judgeRuns(*f.db, f.runA, f.runB, o, f.opener()).ok());
        JudgmentRepository repo(*f.db);
        const JudgedWinner votes[] = {JudgedWinner::A, JudgedWinner::B, JudgedWinner::Tie, JudgedWinner::BothBad};
        for (int i = 0; i < 4; ++i) {
            JudgmentRecord h;
            h.runA = f.runA;
            h.runB = f.runB;
            h.itemIdx = i;
            h.judge = "human:ann";
            h.mode = JudgeMode::Human;
            h.position = i % 2 ? "ab" : "ba";
            h.winner = votes[i];
            QVERIFY(repo.add(h).ok());
        }
        auto sum = summarizeJudgments(*f.db, f.runA, f.runB);
        QCOMPARE(sum->pairwise.size(), size_t(2));
        const PairwiseJudgeSummary* human = nullptr;
        for (const auto& s : sum->pairwise)
            if (s.judge == "human:ann") human = &s;
        QVERIFY(human);
        QCOMPARE(human->winRate.winsA, 1);
        QCOMPARE(human->winRate.winsB, 1);
        QCOMPARE(human->winRate.ties, 2);
        QCOMPARE(human->bothBad, 1);
        // Judge vs person over items 0-3: (A, A), (A, B), (A, tie), (tie, tie):
        // p_o = 2/4; judge's shares A 3/4, tie 1/4; ann's A 1/4, B 1/4, tie 2/4;
        // p_e = 3/16 + 2/16 = 5/16; kappa = (8/16 - 5/16) / (11/16) = 3/11.
        QCOMPARE(sum->agreement.size(), size_t(1));
        QCOMPARE(sum->agreement.front().kappa.n, 4);
        QVERIFY(qFuzzyCompare(*sum->agreement.front().kappa.kappa, 3.0 / 11.0));
    }

    void rankThreeRuns() {
        // A person's votes between three runs with records matching strengths 4 : 2 : 1 (A-B 2:1,
        // B-C 2:1, A-C 4:1): Bradley-Terry gives 1000 + 400 log10 2 * (1, 0, -1), as in
        // test_preference's three-player case, now through the stored judgments.
        Fixture f;
        QVERIFY(f.init());
        const int64_t runC = saveRun(*f.db, f.suite, "/m/c.gguf", [](int i) { return "c " + std::to_string(i); });
        JudgmentRepository repo(*f.db);
        auto vote = [&](int64_t x, int64_t y, int item, JudgedWinner w) {
            JudgmentRecord h;
            h.runA = x;
            h.runB = y;
            h.itemIdx = item;
            h.judge = "human:ann";
            h.mode = JudgeMode::Human;
            h.position = "ab";
            h.winner = w;
            return repo.add(h).ok();
        };
        const int64_t a = f.runA, b = f.runB, c = runC;
        QVERIFY(vote(a, b, 0, JudgedWinner::A) && vote(a, b, 1, JudgedWinner::A) && vote(a, b, 2, JudgedWinner::B));
        QVERIFY(vote(b, c, 0, JudgedWinner::A) && vote(c, b, 1, JudgedWinner::B) && vote(b, c, 2, JudgedWinner::B));
        for (int i = 0; i < 4; ++i) QVERIFY(vote(a, c, i, JudgedWinner::A));
        QVERIFY(vote(a, c, 4, JudgedWinner::B));
        auto r = rankRuns(*f.db, {a, b, c}, std::nullopt, 200);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->comparisons, 11);
        QCOMPARE(r->judges, std::vector<std::string>{"human:ann"});
        QVERIFY2(r->strengths.notEstimable.empty(), r->strengths.notEstimable.c_str());
        QVERIFY(std::abs(r->strengths.rating[0] - 1120.411998265592) < 1e-6);
        QVERIFY(std::abs(r->strengths.rating[1] - 1000.0) < 1e-6);
        QVERIFY(std::abs(r->strengths.rating[2] - 879.588001734408) < 1e-6);
        QCOMPARE(r->strengths.ci.size(), size_t(3));
        // Another judge's name: nothing to rank on.
        auto none = rankRuns(*f.db, {a, b, c}, std::string("human:bob"), 0);
        QVERIFY(none.ok());
        QCOMPARE(none->comparisons, 0);
        QVERIFY(!none->strengths.notEstimable.empty());
        // Refused: one run, a run twice, an unknown run.
        QVERIFY(!rankRuns(*f.db, {a}, std::nullopt).ok());
        QVERIFY(!rankRuns(*f.db, {a, a}, std::nullopt).ok());
        QVERIFY(!rankRuns(*f.db, {a, 999}, std::nullopt).ok());
    }

    void multiTurnItemsAreJudgedWhole() {
        // An MT-Bench item: the judge reads every user turn and each run's answer to each turn.
        Fixture f;
        auto d = openStore(f.dir.filePath("mt.db").toStdString());
        QVERIFY(d.ok());
        SuiteItem it;
        it.id = "81";
        it.turns = {"Invite a colleague.", "Now in rhyme."};
        it.prompt = it.turns[0];
        SuiteRecord m;
        m.name = "mt";
        m.shape = "mt_bench";
        m.sourcePath = "/tmp/mt.jsonl";
        auto suite = SuiteRepository(*d).save(m, {it});
        QVERIFY(suite.ok());
        int64_t runs[2] = {0, 0};
        for (int k = 0; k < 2; ++k) {
            RunRecord r;
            r.modelPath = k ? "/m/b.gguf" : "/m/a.gguf";
            r.modelSha256 = std::string(64, k ? 'b' : 'a');
            r.suiteId = suite->suite.id;
            r.chatTemplateMode = "raw";
            r.nPlanned = 1;
            auto created = RunRepository(*d).create(r);
            QVERIFY(created.ok());
            runs[k] = created->id;
            RunItemRecord item;
            item.runId = created->id;
            item.itemId = "81";
            item.output = k ? "b2" : "a2";
            item.details = {{"turns", {{{"turn", 1}, {"output", k ? "b1" : "a1"}}, {{"turn", 2}, {"output", item.output}}}}};
            QVERIFY(RunRepository(*d).appendItem(item).ok());
        }
        auto items = judgeableItems(*d, runs[0], runs[1]);
        QVERIFY(items.ok());
        QCOMPARE(items->items.size(), size_t(1));
        QCOMPARE(items->items[0].question, std::string("[Turn 1]\nInvite a colleague.\n\n[Turn 2]\nNow in rhyme."));
        QCOMPARE(items->items[0].answerA, std::string("[Turn 1]\na1\n\n[Turn 2]\na2"));
        QCOMPARE(items->items[0].answerB, std::string("[Turn 1]\nb1\n\n[Turn 2]\nb2"));
        QCOMPARE(items->items[0].turnAnswersA, (std::vector<std::string>{"a1", "a2"}));

        // Judged whole (turn 0) and turn by turn (MT-Bench's turn 2: the conversation so far, the
        // second answers judged). A judge that always says [[A]] flips every time: all ties.
        struct AlwaysA : ModelBackend {
            BackendInfo info() const override { return {}; }
            Result<Generation> generate(const Prompt&, const GenerationParams&, const TokenCallback&) override {
                Generation g;
                g.text = "[[A]]";
                g.stopReason = "eos";
                return g;
            }
            Result<ContinuationScore> logprobs(const Prompt&, const std::string&) override { return Error{"unused"}; }
        };
        JudgeRunOptions o;
        o.judgeRef = "always-a";
        auto rep = judgeRuns(*d, runs[0], runs[1], o, []() -> Result<std::unique_ptr<ModelBackend>> {
            return std::unique_ptr<ModelBackend>(std::make_unique<AlwaysA>());
        });
        QVERIFY2(rep.ok(), rep.ok() ? "" : rep.error().message.c_str());
        QCOMPARE(rep->calls, 6);  // (whole, turn 1, turn 2) x both orders
        auto rows = JudgmentRepository(*d).list(runs[0], runs[1], JudgeMode::Pairwise);
        QCOMPARE(rows->size(), size_t(6));
        for (const JudgmentRecord& j : *rows) {
            if (j.turn == 1) {
                QVERIFY(j.judgeInput.find("a1") != std::string::npos);
                QVERIFY(j.judgeInput.find("a2") == std::string::npos);
            } else if (j.turn == 2) {
                QVERIFY(j.judgeInput.find("(Judge the answers to turn 2; the earlier turns are context.)") != std::string::npos);
                QVERIFY(j.judgeInput.find("[Turn 1]\na1\n\n[Turn 2]\na2") != std::string::npos);
            }
        }
        auto sum = summarizeJudgments(*d, runs[0], runs[1]);
        QCOMPARE(sum->pairwise.size(), size_t(3));
        for (const auto& s : sum->pairwise) {
            QCOMPARE(s.winRate.ties, 1);
            QCOMPARE(s.positionBias.favoursFirst, 1);
        }
        QVERIFY2(describeJudgeSummaries(*sum).find("always-a (pairwise, turn 2): 1 items") != std::string::npos,
                 describeJudgeSummaries(*sum).c_str());
        // The whole-item verdicts are what ranking uses.
        QCOMPARE(rankRuns(*d, {runs[0], runs[1]}, std::nullopt, 0)->comparisons, 1);
    }

    void refusals() {
        Fixture f;
        QVERIFY(f.init());
        JudgeRunOptions o;
        o.judgeRef = "j";
        QVERIFY(!judgeRuns(*f.db, f.runA, f.runA, o, f.opener()).ok());
        QVERIFY(!judgeRuns(*f.db, f.runA, 999, o, f.opener()).ok());
        const int64_t other = saveSuite(*f.db, "other");
        const int64_t runC = saveRun(*f.db, other, "/m/c.gguf", [](int) { return "x"; });
        auto r = judgeRuns(*f.db, f.runA, runC, o, f.opener());
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("different suites") != std::string::npos, r.error().message.c_str());
        auto noJudge = judgeRuns(*f.db, f.runA, f.runB, o, []() -> Result<std::unique_ptr<ModelBackend>> {
            return Error{"connection refused"};
        });
        QVERIFY(!noJudge.ok());
        QVERIFY(noJudge.error().message.find("connection refused") != std::string::npos);
    }

    void serviceAssemblesTheJudge() {
        // core/services/judge.h: what `verdict judge` and the window's dialog both call. The
        // request's defaults are the runner's (greedy, 1024 tokens, the built-in prompt); the
        // service opens the judge (here an endpoint, two calls in flight) and stores; the same
        // request again finds everything stored.
        Fixture f;
        QVERIFY(f.init());
        std::atomic<int> requests{0};
        auto server = verdict::test::startScriptedJudge(requests);
        QVERIFY(server);
        JudgeRequest r;
        QCOMPARE(r.generation.maxTokens, JudgeRunOptions{}.generation.maxTokens);
        QCOMPARE(r.generation.temperature, 0.0);
        QCOMPARE(r.concurrency, 1);
        QVERIFY(r.mode == JudgeMode::Pairwise);
        r.judge = "http://127.0.0.1:" + std::to_string(server->port()) + "/v1 scripted-judge";
        r.concurrency = 2;
        int updates = 0;
        auto done = judgeRunPair(*f.db, f.runA, f.runB, r, [&](const JudgeRunProgress&) { ++updates; });
        QVERIFY2(done.ok(), done.ok() ? "" : done.error().message.c_str());
        QCOMPARE(done->options.judgeRef, r.judge);
        QCOMPARE(done->options.promptName, std::string("builtin"));
        QCOMPARE(done->options.generation.maxTokens, 1024);
        QCOMPARE(done->report.calls, int64_t(2 * kItems));
        QCOMPARE(requests.load(), 2 * kItems);
        QVERIFY(updates > 0);
        auto stored = JudgmentRepository(*f.db).list(f.runA, f.runB, JudgeMode::Pairwise);
        QCOMPARE(stored->size(), size_t(2 * kItems));
        for (const auto& j : *stored) {
            QCOMPARE(j.judge, r.judge);
            QCOMPARE(j.promptHash, done->report.promptHash);
        }
        auto again = judgeRunPair(*f.db, f.runA, f.runB, r);
        QVERIFY(again.ok());
        QCOMPARE(again->report.calls, int64_t(0));
        QCOMPARE(again->report.alreadyStored, int64_t(2 * kItems));
        QCOMPARE(again->report.promptHash, done->report.promptHash);

        // Refusals, typed: what the person chose is bad input, a judge that does not answer
        // is a model that does not open.
        auto kind = [&](const JudgeRequest& q, int64_t a, int64_t b) {
            auto x = judgeRunPair(*f.db, a, b, q);
            return x.ok() ? std::optional<ServiceFailure>() : x.error().kind;
        };
        JudgeRequest bad = r;
        bad.judge.clear();
        QVERIFY(kind(bad, f.runA, f.runB) == ServiceFailure::BadInput);
        bad = r;
        bad.mode = JudgeMode::Human;
        QVERIFY(kind(bad, f.runA, f.runB) == ServiceFailure::BadInput);
        bad = r;
        bad.concurrency = 0;
        QVERIFY(kind(bad, f.runA, f.runB) == ServiceFailure::BadInput);
        bad = r;
        bad.rubricFile = f.dir.filePath("r.json").toStdString();
        QVERIFY(kind(bad, f.runA, f.runB) == ServiceFailure::BadInput);  // rubrics with pairwise
        bad = r;
        bad.promptFile = f.dir.filePath("no-b.txt").toStdString();
        {
            QFile p(QString::fromStdString(bad.promptFile));
            QVERIFY(p.open(QIODevice::WriteOnly));
            p.write("Q {question} A {answer_a}");
        }
        auto noB = prepareJudgeRun(bad);
        QVERIFY(!noB.ok());
        QVERIFY2(noB.error().message.find("no-b.txt") != std::string::npos, noB.error().message.c_str());
        QVERIFY(kind(r, f.runA, 999) == ServiceFailure::BadInput);
        bad = r;
        bad.judge = "http://127.0.0.1:1/v1 nobody";
        QVERIFY(kind(bad, f.runA, f.runB) == ServiceFailure::ModelOpen);

        // A person, blind: the vote as pressed comes back as pressed, a later one replaces it.
        QVERIFY(!humanJudging(*f.db, f.runA, f.runB, "").ok());
        QVERIFY(!validJudgeName(std::string(kMaxJudgeNameBytes + 1, 'x')));
        auto vote = storeHumanVote(*f.db, f.runA, f.runB, "ann", 1, HumanVote::Left);
        QVERIFY(vote.ok());
        QCOMPARE(vote->position, blindPosition("ann", f.runA, f.runB, 1));
        QVERIFY(vote->winner == (vote->position == "ab" ? JudgedWinner::A : JudgedWinner::B));
        QVERIFY(storeHumanVote(*f.db, f.runA, f.runB, "ann", 2, HumanVote::Right).ok());
        QVERIFY(storeHumanVote(*f.db, f.runA, f.runB, "ann", 2, HumanVote::BothBad).ok());
        auto session = humanJudging(*f.db, f.runA, f.runB, "ann");
        QVERIFY(session.ok());
        QCOMPARE(session->items.size(), size_t(kItems));
        QCOMPARE(session->votes.size(), size_t(2));
        QVERIFY(humanVoteOf(session->votes.at(1)) == HumanVote::Left);
        QVERIFY(humanVoteOf(session->votes.at(2)) == HumanVote::BothBad);
        QVERIFY(humanJudging(*f.db, f.runA, f.runB, "bob")->votes.empty());
    }

    void promptFillingAndRubricFiles() {
        // One pass: text that looks like a placeholder inside a value stays as written.
        QCOMPARE(fillJudgePrompt("Q: {question} A: {answer_a} {unknown}", {{"question", "{answer_a}"}, {"answer_a", "x"}}),
                 std::string("Q: {answer_a} A: x {unknown}"));
        QTemporaryDir dir;
        const std::string json = dir.filePath("r.json").toStdString(), text = dir.filePath("r.txt").toStdString();
        QFile fj(QString::fromStdString(json));
        QVERIFY(fj.open(QIODevice::WriteOnly));
        fj.write(R"({"code": "compiles", "*": "clear"})");
        fj.close();
        auto r = loadRubrics(json);
        QVERIFY(r.ok());
        QCOMPARE(rubricFor(*r, "code"), std::string("compiles"));
        QCOMPARE(rubricFor(*r, "design"), std::string("clear"));
        QFile ft(QString::fromStdString(text));
        QVERIFY(ft.open(QIODevice::WriteOnly));
        ft.write("Be strict.\n");
        ft.close();
        QCOMPARE(rubricFor(*loadRubrics(text), "x"), std::string("Be strict.\n"));
        auto missing = loadRubrics(dir.filePath("none").toStdString());
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.find("none") != std::string::npos);
        QVERIFY(!rubricFor({}, "x").empty());
    }
};

QTEST_GUILESS_MAIN(TestJudge)
#include "test_judge.moc"
