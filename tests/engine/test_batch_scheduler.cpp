// Continuous batching (batch_scheduler.h): requests submitted at different times, with prompts
// of different lengths, each get exactly what Session::generate gives them alone (greedy);
// TTFT counts from submit(); cancel stops one request; bad prompts fail at submit; stopping the
// scheduler finishes every pending request with an error (never a lost callback).
#include "fixtures.h"
#include "verdict/engine/batch_scheduler.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <QtTest/QtTest>

#include <condition_variable>
#include <future>
#include <mutex>

using namespace verdict;

namespace {

std::shared_ptr<const Model> openModel(const char* file) {
    auto m = Model::open(verdict::test::fixture(file).string(), ModelOptions{});
    return m ? *m : nullptr;
}

GenerateConfig greedy(int n) {
    GenerateConfig c;
    c.maxTokens = n;
    c.sampling = SamplingParams::greedy();
    c.stopAtEos = false;
    return c;
}

// Submits and returns a future for the result.
std::future<Result<GenerateResult>> submit(BatchScheduler& s, std::vector<int32_t> prompt, GenerateConfig cfg,
                                           uint64_t* id = nullptr) {
    auto p = std::make_shared<std::promise<Result<GenerateResult>>>();
    auto f = p->get_future();
    BatchRequest r;
    r.prompt = std::move(prompt);
    r.cfg = std::move(cfg);
    r.onDone = [p](Result<GenerateResult> res) { p->set_value(std::move(res)); };
    auto sub = s.submit(std::move(r));
    if (!sub) {
        p->set_value(sub.error());
    } else if (id) {
        *id = *sub;
    }
    return f;
}

}  // namespace

class TestBatchScheduler : public QObject {
    Q_OBJECT
private slots:
    void matchesSessionGenerate_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("stories260K") << "models/stories260K.gguf";
        QTest::newRow("moe") << "models/synth-llama-moe-q8_0.gguf";
        QTest::newRow("qwen2") << "models/synth-qwen2-f16.gguf";
    }
    void matchesSessionGenerate() {
        QFETCH(QString, file);
        const auto path = verdict::test::fixture(file.toStdString());
        VERDICT_NEED_FIXTURE(path);
        auto model = openModel(file.toStdString().c_str());
        QVERIFY(model);
        const int64_t nVocab = model->shape().nVocab;
        std::vector<std::vector<int32_t>> prompts;
        for (int i = 0; i < 7; ++i) {
            std::vector<int32_t> p;
            for (int k = 0; k < 3 + 5 * i; ++k) p.push_back(static_cast<int32_t>((i * 131 + k * 17 + 1) % nVocab));
            prompts.push_back(p);
        }
        // Alone, one by one.
        std::vector<std::vector<int32_t>> alone;
        for (const auto& p : prompts) {
            SessionOptions so;
            so.nCtx = 128;
            auto s = Session::create(model, so);
            QVERIFY(s.ok());
            auto g = (*s)->generate(p, greedy(10 + static_cast<int>(p.size() % 5)));
            QVERIFY(g.ok());
            alone.push_back(g->tokens);
        }
        // Continuous batching with 3 slots: 7 requests, some submitted while others run.
        BatchSchedulerOptions o;
        o.maxSequences = 3;
        o.nCtx = 128;
        auto sched = BatchScheduler::create(model, o);
        QVERIFY2(sched.ok(), sched ? "" : sched.error().message.c_str());
        std::vector<std::future<Result<GenerateResult>>> futures;
        for (size_t i = 0; i < prompts.size(); ++i) {
            futures.push_back(submit(**sched, prompts[i], greedy(10 + static_cast<int>(prompts[i].size() % 5))));
            if (i % 2 == 1) QTest::qWait(2);
        }
        for (size_t i = 0; i < futures.size(); ++i) {
            auto r = futures[i].get();
            QVERIFY2(r.ok(), r ? "" : r.error().message.c_str());
            QCOMPARE(r->tokens, alone[i]);
            QCOMPARE(r->stopReason, StopReason::MaxTokens);
            QVERIFY(r->timings.ttftMs > 0);
            QCOMPARE(r->timings.stepMs.size(), r->tokens.size() - 1);
        }
        const BatchSchedulerStats st = (*sched)->stats();
        QCOMPARE(st.completed, uint64_t(7));
        QVERIFY(st.steps > 0);
        QVERIFY(st.steps < 7 * 14);  // sequences shared decode passes
    }

    void cancelErrorsAndShutdown() {
        const auto path = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(path);
        auto model = openModel("models/stories260K.gguf");
        QVERIFY(model);
        BatchSchedulerOptions o;
        o.maxSequences = 1;
        o.nCtx = 64;
        auto sched = BatchScheduler::create(model, o);
        QVERIFY(sched.ok());
        // bad input fails at submit
        BatchRequest empty;
        QVERIFY(!(*sched)->submit(std::move(empty)).ok());
        BatchRequest tooLong;
        tooLong.prompt.assign(65, 1);
        QVERIFY((*sched)->submit(std::move(tooLong)).error().message.find("does not fit") != std::string::npos);
        BatchRequest badId;
        badId.prompt = {1, static_cast<int32_t>(model->shape().nVocab)};
        QVERIFY((*sched)->submit(std::move(badId)).error().message.find("outside the vocabulary") != std::string::npos);

        // cancel a long request: it ends early with StopReason::Callback
        // (the second token's callback waits until cancel() was called, so the request is surely running)
        std::atomic<int> seen{0};
        std::promise<void> cancelled;
        std::shared_future<void> cancelledF = cancelled.get_future().share();
        GenerateConfig longCfg = greedy(60);
        longCfg.onToken = [&seen, cancelledF](int32_t, std::string_view) {
            if (++seen == 2) cancelledF.wait();
            return true;
        };
        uint64_t id = 0;
        auto f = submit(**sched, {1, 2, 3}, longCfg, &id);
        while (seen.load() < 2) QTest::qWait(1);
        (*sched)->cancel(id);
        cancelled.set_value();
        auto r = f.get();
        QVERIFY(r.ok());
        QCOMPARE(r->stopReason, StopReason::Callback);
        QVERIFY(r->tokens.size() < 60);
        // context full: generation stops there
        auto full = submit(**sched, std::vector<int32_t>(60, 5), greedy(50)).get();
        QVERIFY(full.ok());
        QCOMPARE(full->stopReason, StopReason::ContextFull);

        // destroying the scheduler finishes everything still queued, with an error
        std::vector<std::future<Result<GenerateResult>>> pending;
        for (int i = 0; i < 5; ++i) pending.push_back(submit(**sched, {1, 2, 3}, greedy(40)));
        sched->reset();
        int errors = 0, done = 0;
        for (auto& p : pending) {
            auto res = p.get();  // must not hang: every request gets its callback
            res.ok() ? ++done : ++errors;
        }
        QCOMPARE(done + errors, 5);
    }
};

QTEST_GUILESS_MAIN(TestBatchScheduler)
#include "test_batch_scheduler.moc"
