// The load generator's event loop (core/perf/load_runner.cpp, LevelLoop) against the fake OpenAI
// server: open-loop arrivals with burstiness and a ramp-up, a replayed trace (each request leaves
// no earlier than its row's time and asks for its row's output length), scheduling delay and the
// client's CPU time recorded, the idle timeout and cancel inside the loop, and trace files that
// are wrong named by line. Speed (a thousand streams) is a benchmark: tests/bench/load_generator.
#include "core/perf/load_runner.h"
#include "core/report/report_perf_cost.h"
#include "core/run/endpoint_backend.h"
#include "core/store/store.h"
#include "core/store/sweep_repository.h"
#include "fake_openai_server.h"
#include "tiny_model.h"
#include "verdict/engine/text_tokenizer.h"

#include <QtTest/QtTest>

#include <fstream>

using namespace verdict;

namespace {

core::EndpointConfig endpointOf(const test::FakeOpenAiServer& s) {
    core::EndpointConfig e;
    e.baseUrl = s.baseUrl();
    e.model = "fake-model";
    return e;
}

QString writeFile(const QTemporaryDir& dir, const char* name, const std::string& text) {
    const QString path = dir.filePath(name);
    std::ofstream(path.toStdString()) << text;
    return path;
}

}  // namespace

class TestLoadGenerator : public QObject {
    Q_OBJECT
private slots:
    void openLoopWithBurstinessAndRampUp() {
        test::FakeOpenAiServer s({.exactTokens = true, .threads = 32});
        QVERIFY2(s.ok(), s.error().c_str());
        core::LoadSpec spec;
        spec.rates = {200};
        spec.requests = 60;
        spec.maxTokens = 5;
        spec.promptWords = 8;
        spec.burstiness = 0.5;
        spec.rampUpS = 0.1;
        auto r = core::runLoad(endpointOf(s), spec);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->size(), size_t(1));
        const core::LoadLevelResult& l = (*r)[0];
        QCOMPARE(l.mode, std::string("rate"));
        QCOMPARE(l.metrics.requests, int64_t(60));
        QCOMPARE(l.metrics.failed, int64_t(0));
        QCOMPARE(l.metrics.outputTokens, int64_t(300));
        QCOMPARE(l.scheduleDelay.n, int64_t(60));
        QVERIFY(l.scheduleDelay.min >= 0);
        QVERIFY(l.clientCpuMs > 0);
        QCOMPARE(s.completions(), int64_t(60));
        // arrivals are sorted by when they left; the seed fixes them
        for (size_t i = 1; i < l.requests.size(); ++i) QVERIFY(l.requests[i].startMs >= l.requests[i - 1].startMs);
        const auto j = core::toJson(l, false);
        QVERIFY(j.contains("schedule_delay_ms") && j.contains("behind_schedule") && j.contains("client_cpu_us_per_request"));
    }

    // Token accounting: the server's usage is kept apart from the client's own count with the
    // model's tokenizer (here a synthetic model's generated vocabulary), the difference is
    // computed from both, and a server that streamed past max_tokens is caught — by its usage,
    // and without usage by the chunk count. Without usage the count replaces the chunk count.
    void tokenAccountingAgainstTheServer() {
        QTemporaryDir dir;
        const std::string model = dir.filePath("tok.gguf").toStdString();
        QVERIFY(test::writeTinyModel(model).ok());
        auto counter = core::TokenCounter::open(model);
        QVERIFY2(counter.ok(), counter.ok() ? "" : counter.error().message.c_str());
        auto tok = TextTokenizer::open(model);
        QVERIFY(tok.ok());
        std::string sixPieces;
        for (int i = 0; i < 6; ++i) sixPieces += " t";
        const auto expectOut = static_cast<int64_t>((*tok)->encode(sixPieces, false, false).size());
        QVERIFY(expectOut > 0);

        // max_tokens 5, the server streams 6 pieces and reports 6 + 2 in usage.
        test::FakeOpenAiServer s({.exactTokens = true, .usageOutputOffset = 2, .ignoreMaxTokensBy = 1, .threads = 8});
        QVERIFY2(s.ok(), s.error().c_str());
        core::LoadSpec spec;
        spec.concurrency = {2};
        spec.requests = 4;
        spec.maxTokens = 5;
        spec.promptWords = 8;
        spec.tokenCounter = *counter;
        auto r = core::runLoad(endpointOf(s), spec);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        const core::LoadLevelResult& l = (*r)[0];
        QCOMPARE(l.metrics.requests, int64_t(4));
        for (const auto& t : l.requests) {
            QCOMPARE(t.tokens.usageOutput, int64_t(8));
            QCOMPARE(t.tokens.chunks, int64_t(6));
            QCOMPARE(t.tokens.maxTokens, int64_t(5));
            QCOMPARE(t.tokens.countedOutput, expectOut);
            QVERIFY(t.tokens.countedPrompt > 8);  // eight words and the prompt's lead-in
            QCOMPARE(t.outputTokens, int64_t(8));  // the server's figure is the one used
        }
        QCOMPARE(l.tokens.requests, int64_t(4));
        QCOMPARE(l.tokens.withUsage, int64_t(4));
        QCOMPARE(l.tokens.counted, int64_t(4));
        QCOMPARE(l.tokens.exceededMaxTokens, int64_t(4));
        QCOMPARE(*l.tokens.outputDiffPct, 100.0 * double(8 - expectOut) / double(expectOut));
        QCOMPARE(l.tokens.tokenizer, model);
        const auto j = core::toJson(l, true);
        QCOMPARE(j["token_accounting"]["exceeded_max_tokens"].get<int64_t>(), int64_t(4));
        QCOMPARE(j["requests"][0]["usage_output_tokens"].get<int64_t>(), int64_t(8));
        // The stored form reads back.
        const core::RequestTiming back = core::requestTimingFromJson(j["requests"][0]);
        QCOMPARE(back.tokens.countedOutput, expectOut);
        QCOMPARE(back.tokens.usageOutput, int64_t(8));

        // No usage at all: the count is the figure, max_tokens still caught by the chunks.
        test::FakeOpenAiServer quiet({.exactTokens = true, .ignoreMaxTokensBy = 1, .sendUsage = false, .threads = 8});
        QVERIFY2(quiet.ok(), quiet.error().c_str());
        auto q = core::runLoad(endpointOf(quiet), spec);
        QVERIFY(q.ok());
        const core::LoadLevelResult& lq = (*q)[0];
        QCOMPARE(lq.tokens.withUsage, int64_t(0));
        QCOMPARE(lq.tokens.counted, int64_t(4));
        QCOMPARE(lq.tokens.exceededMaxTokens, int64_t(4));
        QVERIFY(!lq.tokens.outputDiffPct);
        for (const auto& t : lq.requests) {
            QCOMPARE(t.tokens.usageOutput, int64_t(-1));
            QCOMPARE(t.outputTokens, expectOut);
        }

        // Without a tokenizer: usage only, nothing counted.
        spec.tokenCounter.reset();
        auto u = core::runLoad(endpointOf(s), spec);
        QVERIFY(u.ok());
        QCOMPARE((*u)[0].tokens.counted, int64_t(0));
        QCOMPARE((*u)[0].tokens.exceededMaxTokens, int64_t(4));
        QVERIFY((*u)[0].tokens.tokenizer.empty());
    }

    // A stored load level reads back with its figures (the flat shape of docs/schema.md): the
    // report, `verdict sweep show` and the window read TTFT, throughput and the token accounting
    // of an endpoint sweep; rows of the older nested shape read the same through pointMetrics.
    void storedLoadPointsReadBack() {
        test::FakeOpenAiServer s({.exactTokens = true, .ignoreMaxTokensBy = 1, .threads = 8});
        QVERIFY2(s.ok(), s.error().c_str());
        core::LoadSpec spec;
        spec.concurrency = {2};
        spec.requests = 4;
        spec.maxTokens = 5;
        spec.promptWords = 8;
        auto r = core::runLoad(endpointOf(s), spec);
        QVERIFY(r.ok());
        QTemporaryDir dir;
        auto db = core::openStore(dir.filePath("l.db").toStdString());
        QVERIFY(db.ok());
        auto stored = core::storeLoadResults(*db, endpointOf(s), spec, *r, "", "test", false);
        QVERIFY2(stored.ok(), stored.ok() ? "" : stored.error().message.c_str());
        auto points = core::SweepRepository(*db).points(stored->id);
        QVERIFY(points.ok());
        QCOMPARE(points->size(), size_t(1));
        const core::ReportPerfPoint p = core::perfPointFromRecord((*points)[0]);
        QCOMPARE(p.requests, int64_t(4));
        QCOMPARE(p.ttftP50, (*r)[0].metrics.ttftMs.p50);
        QVERIFY(p.outputTokPerS > 0);
        QCOMPARE((*points)[0].metrics["token_accounting"]["exceeded_max_tokens"].get<int64_t>(), int64_t(4));
        core::ReportPerf perf;
        QVERIFY(core::loadSweepPerformance(*db, stored->id, &perf, nullptr).ok());
        QCOMPARE(perf.tokenNotes.size(), size_t(1));
        QVERIFY(perf.tokenNotes[0].find("4 request(s) got more tokens than max_tokens") != std::string::npos);

        core::SweepPointRecord legacy = (*points)[0];
        legacy.metrics = core::toJson((*r)[0], false);  // {mode, level, metrics: {...}, ...}
        QVERIFY(legacy.metrics.contains("metrics"));
        const core::ReportPerfPoint q = core::perfPointFromRecord(legacy);
        QCOMPARE(q.requests, int64_t(4));
        QCOMPARE(q.ttftP50, p.ttftP50);
        QCOMPARE(core::pointMetrics(legacy)["mode"].get<std::string>(), std::string("concurrency"));
    }

    // The endpoint's concurrency cap (a preset's max_concurrency, or --max-concurrency): a
    // closed-loop level above it is refused naming the cap, open-loop arrivals beyond it are
    // client_overload (never sent), and a suite run's calls at once are bounded by it.
    void concurrencyCap() {
        test::FakeOpenAiServer s({.exactTokens = true, .interTokenDelayMs = 20, .threads = 8});
        QVERIFY2(s.ok(), s.error().c_str());
        core::EndpointConfig e = endpointOf(s);
        e.api.maxConcurrency = 2;
        core::LoadSpec spec;
        spec.concurrency = {4};
        spec.requests = 4;
        spec.maxTokens = 5;
        auto refused = core::runLoad(e, spec);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("cap of 2") != std::string::npos, refused.error().message.c_str());
        QCOMPARE(s.completions(), int64_t(0));

        spec.concurrency = {2};
        auto closed = core::runLoad(e, spec);
        QVERIFY(closed.ok());
        QCOMPARE((*closed)[0].metrics.requests, int64_t(4));

        // 20 arrivals in ~20 ms, each request ~80 ms long: at most 2 in flight, the rest refused.
        core::LoadSpec open;
        open.rates = {1000};
        open.requests = 20;
        open.maxTokens = 5;
        open.maxRetries = 0;
        auto o = core::runLoad(e, open);
        QVERIFY(o.ok());
        const core::LoadLevelResult& l = (*o)[0];
        QVERIFY(l.errors.count("client_overload") == 1 && l.errors.at("client_overload") > 0);
        QCOMPARE(l.metrics.requests + l.errors.at("client_overload"), int64_t(20));
        QCOMPARE(s.completions(), int64_t(4) + l.metrics.requests);

        auto backend = core::EndpointBackend::open(e, "test", 8);
        QVERIFY2(backend.ok(), backend.ok() ? "" : backend.error().message.c_str());
        QCOMPARE((*backend)->maxConcurrentCalls(), 2);
        e.api.maxConcurrency = 0;
        QCOMPARE((*core::EndpointBackend::open(e, "test", 8))->maxConcurrentCalls(), 8);
    }

    void traceIsReplayedOnTime() {
        test::FakeOpenAiServer s({.exactTokens = true});
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        const QString path = writeFile(dir, "t.jsonl",
                                       "{\"timestamp\": 0, \"input_length\": 4, \"output_length\": 3, \"hash_ids\": [1]}\n"
                                       "{\"timestamp\": 150, \"input_length\": 40, \"output_length\": 4}\n"
                                       "\n"
                                       "{\"timestamp\": 300, \"input_length\": 8, \"output_length\": 5}\n");
        auto trace = core::loadTrace(path.toStdString());
        QVERIFY2(trace.ok(), trace.ok() ? "" : trace.error().message.c_str());
        QCOMPARE(trace->size(), size_t(3));
        core::LoadSpec spec;
        spec.trace = *trace;
        spec.durationS = 0.01;  // ignored by a trace level: the trace is its budget
        auto r = core::runLoad(endpointOf(s), spec);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        const core::LoadLevelResult& l = r->back();
        QCOMPARE(l.mode, std::string("trace"));
        QCOMPARE(l.metrics.requests, int64_t(3));
        QCOMPARE(l.metrics.outputTokens, int64_t(3 + 4 + 5));
        const double rows[] = {0, 150, 300};
        for (size_t i = 0; i < 3; ++i) {
            QVERIFY2(l.requests[i].startMs >= rows[i] - 0.5, qPrintable(QString::number(l.requests[i].startMs)));
            QCOMPARE(l.requests[i].outputTokens, int64_t(3 + i));
        }
    }

    void badTracesAreNamedByLine() {
        QTemporaryDir dir;
        struct Case {
            const char* text;
            const char* expect;
        } cases[] = {
            {"{\"timestamp\": 0, \"input_length\": 4, \"output_length\": 3}\n[1]\n", "t.jsonl:2: not a JSON object"},
            {"{\"timestamp\": 0, \"input_length\": 4}\n", "t.jsonl:1: needs numbers"},
            {"{\"timestamp\": 5, \"input_length\": 4, \"output_length\": 3}\n{\"timestamp\": 1, \"input_length\": 4, \"output_length\": 3}\n",
             "t.jsonl:2: timestamps must not go back"},
            {"{\"timestamp\": 0, \"input_length\": 4, \"output_length\": 0}\n", "t.jsonl:1: timestamp must be"},
            {"\n\n", "the trace has no rows"},
        };
        for (const Case& c : cases) {
            const QString path = writeFile(dir, "t.jsonl", c.text);
            auto r = core::loadTrace(path.toStdString());
            QVERIFY(!r.ok());
            QVERIFY2(r.error().message.find(c.expect) != std::string::npos, r.error().message.c_str());
        }
        QVERIFY(!core::loadTrace(dir.filePath("missing.jsonl").toStdString()).ok());
    }

    void idleTimeoutAndCancelInsideTheLoop() {
        test::FakeOpenAiServer s({.firstByteDelayMs = 1500});
        QVERIFY2(s.ok(), s.error().c_str());
        core::EndpointConfig e = endpointOf(s);
        e.timeoutMs = 200;
        core::LoadSpec spec;
        spec.concurrency = {2};
        spec.requests = 2;
        spec.maxRetries = 0;
        auto r = core::runLoad(e, spec);
        QVERIFY(r.ok());
        QCOMPARE((*r)[0].metrics.failed, int64_t(2));
        QCOMPARE((*r)[0].errors.at("timeout"), int64_t(2));

        std::atomic<bool> cancel{false};
        e.timeoutMs = 60000;
        spec.requests = 0;
        spec.durationS = 60;
        std::thread stopper([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            cancel = true;
        });
        QElapsedTimer t;
        t.start();
        auto c = core::runLoad(e, spec, {}, &cancel);
        stopper.join();
        QVERIFY(c.ok());
        QVERIFY2(t.elapsed() < 30000, "cancel was not seen");
        QCOMPARE((*c)[0].errors.at("cancelled"), int64_t(2));
    }
};

QTEST_GUILESS_MAIN(TestLoadGenerator)
#include "test_load_generator.moc"
