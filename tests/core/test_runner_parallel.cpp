// Suite runs with several items in flight (SuiteRunner::setParallel over the engine's continuous
// batching, issue 23) on real models: every stored item — output, scores, token counts, stop
// reason, prompt — equals the one-at-a-time run's, greedy and sampled, with few-shot prompts that
// share prefixes, multi-turn and log-likelihood items mixed in; a parallel run stopped half-way
// and resumed stores every item exactly once and still equals the sequential run.
#include "core/run/engine_backend.h"
#include "core/run/suite_bindings.h"
#include "core/run/suite_runner.h"
#include "core/store/audit_chain.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/suite_repository.h"
#include "fixtures.h"

#include <QtTest/QtTest>

#include <atomic>
#include <map>
#include <memory>
#include <stop_token>

using namespace verdict;
using namespace verdict::core;

namespace {

const char* kWords[] = {"cat", "dog", "tree", "ball", "girl", "boy", "sun", "fish", "bird", "cake", "park", "box"};

// Story openings of different lengths (so sequences join and leave the batch at different steps),
// a few multi-turn ones and a few multiple-choice ones scored by log-likelihood.
std::vector<SuiteItem> makeItems() {
    std::vector<SuiteItem> items;
    for (int i = 0; i < 22; ++i) {
        SuiteItem it;
        it.id = "s" + std::to_string(i);
        it.category = i % 2 ? "odd" : "even";
        it.prompt = "Once upon a time there was a " + std::string(kWords[i % 12]);
        for (int k = 0; k < i % 5; ++k) it.prompt += std::string(" and a ") + kWords[(i + k + 3) % 12];
        it.prompt += ".";
        it.references = {std::string(kWords[(i + 1) % 12])};
        it.scorers = {{"contains", nlohmann::json::object()}};
        if (i % 7 == 3) it.turns = {it.prompt, "Then the " + std::string(kWords[i % 12]) + " went home."};
        items.push_back(std::move(it));
    }
    for (int i = 0; i < 4; ++i) {
        SuiteItem it;
        it.id = "m" + std::to_string(i);
        it.category = "mc";
        it.prompt = "The " + std::string(kWords[i]) + " was";
        it.choices = {"happy", "sad", "big", "small"};
        it.gold = i % 4;
        items.push_back(std::move(it));
    }
    return items;
}

// Multiple-choice items only, scored by log-likelihood: 2 to 5 choices (so the rounds of a group
// differ in size), openings of different lengths, some items with the acc_norm scorer.
std::vector<SuiteItem> makeMcItems() {
    const char* adjectives[] = {"happy", "sad", "big", "small", "red"};
    std::vector<SuiteItem> items;
    for (int i = 0; i < 13; ++i) {
        SuiteItem it;
        it.id = "mc" + std::to_string(i);
        it.category = i % 3 ? "a" : "b";
        it.prompt = "One day the " + std::string(kWords[i % 12]);
        for (int k = 0; k < i % 4; ++k) it.prompt += std::string(" and the ") + kWords[(i + k + 5) % 12];
        it.prompt += i % 2 ? " felt" : " was very";
        for (int k = 0; k < 2 + i % 4; ++k) it.choices.push_back(adjectives[(i + k) % 5]);
        it.gold = i % static_cast<int>(it.choices.size());
        if (i % 4 == 1) it.scorers = {{"mc_loglik", {{"norm", true}}}};
        items.push_back(std::move(it));
    }
    return items;
}

struct Db {
    QTemporaryDir dir;
    Database db;
    SuiteRecord suite;
    std::vector<SuiteItem> items;
    explicit Db(std::vector<SuiteItem> suiteItems = makeItems())
        : db(openStore(dir.filePath("v.db").toStdString()).value()), items(std::move(suiteItems)) {
        SuiteRecord m;
        m.name = "stories";
        m.shape = "";
        m.sourcePath = "/stories.jsonl";
        suite = SuiteRepository(db).save(m, items)->suite;
    }
};

RunRequest request(const Db& d, double temperature, int shots) {
    RunRequest r;
    r.suite = d.suite;
    r.items = d.items;
    r.prompting.shots = shots;
    r.generation.maxTokens = 24;
    r.generation.temperature = temperature;
    r.generation.seed = 7;
    return r;
}

// Every stored item of the run, by item index, as the fields a result consists of.
std::map<int64_t, nlohmann::json> storedItems(Database& db, int64_t runId) {
    std::map<int64_t, nlohmann::json> out;
    auto items = RunRepository(db).items(runId);
    if (!items) return out;
    for (const RunItemRecord& r : *items) {
        out[r.itemIdx] = {{"id", r.itemId},         {"output", r.output},       {"prompt", r.prompt},
                          {"correct", r.correct ? nlohmann::json(*r.correct) : nlohmann::json(nullptr)},
                          {"scores", r.scores},     {"tokens_in", r.tokensIn},  {"tokens_out", r.tokensOut},
                          {"error", r.error},       {"stop", r.details.value("stop_reason", "")},
                          {"turns", r.details.value("turns", nlohmann::json())},
                          {"logprobs", r.details.value("logprobs", nlohmann::json())},
                          {"continuation_tokens", r.details.value("continuation_tokens", nlohmann::json())},
                          {"greedy", r.details.value("greedy", nlohmann::json())}};
    }
    return out;
}

std::unique_ptr<EngineBackend> openEngine(const std::string& path, int parallel) {
    EngineBackendOptions o;
    o.threads = 2;
    o.nCtx = 512;
    o.engineVersion = "test";
    o.parallel = parallel;
    auto b = EngineBackend::open(path, o);
    return b ? std::move(*b) : nullptr;
}

// Runs the whole suite with `parallel` items in flight; stops it after `stopAfter` stored items
// when > 0. Returns the run id (0 on failure, with a QtTest failure recorded by the caller).
int64_t runSuite(Db& d, ModelBackend& backend, int parallel, double temperature, int shots, int stopAfter = 0,
                 RunStatus* status = nullptr) {
    SuiteRunner runner(d.db, backend, makeSuitePromptRenderer(), makeRegistryScorer({}));
    runner.setParallel(parallel);
    std::stop_source stop;
    if (stopAfter > 0)
        runner.setProgressCallback([&](const RunProgress& p) {
            if (p.doneNow >= stopAfter) stop.request_stop();
        });
    auto prepared = runner.prepare(request(d, temperature, shots));
    if (!prepared) return 0;
    auto out = runner.execute(*prepared, stop.get_token());
    if (!out) return 0;
    if (status) *status = out->run.status;
    return out->run.id;
}

}  // namespace

class TestRunnerParallel : public QObject {
    Q_OBJECT
private slots:
    void parallelEqualsSequential_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("temperature");
        QTest::addColumn<int>("shots");
        QTest::newRow("stories260K greedy") << "models/stories260K.gguf" << 0.0 << 0;
        QTest::newRow("stories260K sampled, 2-shot") << "models/stories260K.gguf" << 0.8 << 2;
        QTest::newRow("qwen2 greedy, 3-shot") << "models/synth-qwen2-f16.gguf" << 0.0 << 3;
    }
    void parallelEqualsSequential() {
        QFETCH(QString, file);
        QFETCH(double, temperature);
        QFETCH(int, shots);
        const std::string path = verdict::test::fixture(file.toStdString()).string();
        VERDICT_NEED_FIXTURE(path);

        Db seq;
        auto one = openEngine(path, 1);
        QVERIFY(one);
        QCOMPARE(one->maxConcurrentCalls(), 1);
        const int64_t a = runSuite(seq, *one, 1, temperature, shots);
        QVERIFY(a > 0);
        const auto expected = storedItems(seq.db, a);
        QCOMPARE(expected.size(), seq.items.size());

        Db par;
        auto four = openEngine(path, 4);
        QVERIFY(four);
        QCOMPARE(four->maxConcurrentCalls(), 4);
        const int64_t b = runSuite(par, *four, 4, temperature, shots);
        QVERIFY(b > 0);
        const auto got = storedItems(par.db, b);
        QCOMPARE(got.size(), expected.size());
        int generated = 0;
        for (const auto& [idx, item] : expected) {
            QVERIFY2(got.count(idx), qPrintable(QString("item %1 missing").arg(idx)));
            QVERIFY2(got.at(idx) == item, qPrintable(QString("item %1:\n sequential %2\n parallel   %3")
                                                         .arg(idx)
                                                         .arg(QString::fromStdString(item.dump()))
                                                         .arg(QString::fromStdString(got.at(idx).dump()))));
            generated += !item["output"].get<std::string>().empty() && item["logprobs"].is_null();
        }
        QVERIFY(generated >= 20);  // the comparison is about generated text, not empty outputs
        {
            auto chain = verifyChain(par.db);
            QVERIFY(chain.ok() && chain->ok());
        }
    }

    // Log-likelihood items scored in groups (the engine packs a group's rows into shared forward
    // passes) store exactly what scoring them one at a time stores: every choice's log-probability
    // bit for bit, token counts, greedy flags, the chosen answer.
    void loglikBatchedEqualsSequential_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("shots");
        QTest::newRow("stories260K") << "models/stories260K.gguf" << 0;
        QTest::newRow("stories260K 2-shot") << "models/stories260K.gguf" << 2;
        QTest::newRow("qwen2 f16") << "models/synth-qwen2-f16.gguf" << 0;
    }
    void loglikBatchedEqualsSequential() {
        QFETCH(QString, file);
        QFETCH(int, shots);
        const std::string path = verdict::test::fixture(file.toStdString()).string();
        VERDICT_NEED_FIXTURE(path);
        Db seq(makeMcItems());
        auto one = openEngine(path, 1);
        QVERIFY(one);
        const int64_t a = runSuite(seq, *one, 1, 0.0, shots);
        QVERIFY(a > 0);
        const auto expected = storedItems(seq.db, a);
        QCOMPARE(expected.size(), seq.items.size());
        int scored = 0;
        for (const auto& [idx, item] : expected) scored += item["error"] == "" && item["logprobs"].size() >= 2;
        QCOMPARE(scored, static_cast<int>(seq.items.size()));
        for (int parallel : {4, 16}) {
            Db par(makeMcItems());
            auto many = openEngine(path, parallel);
            QVERIFY(many);
            const int64_t b = runSuite(par, *many, parallel, 0.0, shots);
            QVERIFY(b > 0);
            const auto got = storedItems(par.db, b);
            QCOMPARE(got.size(), expected.size());
            for (const auto& [idx, item] : expected)
                QVERIFY2(got.count(idx) && got.at(idx) == item,
                         qPrintable(QString("parallel %1, item %2:\n sequential %3\n batched    %4")
                                        .arg(parallel)
                                        .arg(idx)
                                        .arg(QString::fromStdString(item.dump()))
                                        .arg(QString::fromStdString(got.count(idx) ? got.at(idx).dump() : ""))));
        }
    }

    void stoppedParallelRunResumes() {
        const std::string path = verdict::test::fixture("models/stories260K.gguf").string();
        VERDICT_NEED_FIXTURE(path);
        Db seq;
        auto one = openEngine(path, 1);
        QVERIFY(one);
        const int64_t a = runSuite(seq, *one, 1, 0.0, 1);
        QVERIFY(a > 0);
        const auto expected = storedItems(seq.db, a);

        Db par;
        auto four = openEngine(path, 4);
        QVERIFY(four);
        RunStatus status = RunStatus::Running;
        const int64_t b = runSuite(par, *four, 4, 0.0, 1, 9, &status);
        QVERIFY(b > 0);
        QCOMPARE(status, RunStatus::Cancelled);
        const size_t storedAtStop = storedItems(par.db, b).size();
        QVERIFY2(storedAtStop >= 9 && storedAtStop < expected.size(), qPrintable(QString::number(storedAtStop)));

        // Preparing the same request again continues that run; nothing is stored twice.
        const int64_t c = runSuite(par, *four, 4, 0.0, 1, 0, &status);
        QCOMPARE(c, b);
        QCOMPARE(status, RunStatus::Completed);
        auto indices = RunRepository(par.db).storedItemIndices(b);
        QVERIFY(indices.ok());
        QCOMPARE(indices->size(), expected.size());
        QCOMPARE(storedItems(par.db, b), expected);
        {
            auto chain = verifyChain(par.db);
            QVERIFY(chain.ok() && chain->ok());
        }
    }
};

QTEST_GUILESS_MAIN(TestRunnerParallel)
#include "test_runner_parallel.moc"
