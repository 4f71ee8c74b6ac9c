// The load generator's event loop (core/perf/load_runner.cpp, LevelLoop) against the fake OpenAI
// server: open-loop arrivals with burstiness and a ramp-up, a replayed trace (each request leaves
// no earlier than its row's time and asks for its row's output length), scheduling delay and the
// client's CPU time recorded, the idle timeout and cancel inside the loop, and trace files that
// are wrong named by line. Speed (a thousand streams) is a benchmark: tests/bench/load_generator.
#include "core/perf/load_runner.h"
#include "fake_openai_server.h"

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
