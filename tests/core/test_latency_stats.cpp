// Serving metrics (core/perf/latency_stats.h) against hand-computed values: numpy-style linear
// percentiles, TPOT per request, ITL pooled over requests, failed requests excluded, throughput
// over the window.
#include "core/perf/latency_stats.h"

#include <QtTest/QtTest>

using namespace verdict::core;

class TestLatencyStats : public QObject {
    Q_OBJECT
private slots:
    void percentilesInterpolateLinearly() {
        // numpy.percentile([1, 2, 3, 4], p): p50 = 2.5, p90 = 3.7, p99 = 3.97, p0 = 1, p100 = 4
        const std::vector<double> v{1, 2, 3, 4};
        QCOMPARE(percentileSorted(v, 50), 2.5);
        QVERIFY(std::abs(percentileSorted(v, 90) - 3.7) < 1e-12);
        QVERIFY(std::abs(percentileSorted(v, 99) - 3.97) < 1e-12);
        QCOMPARE(percentileSorted(v, 0), 1.0);
        QCOMPARE(percentileSorted(v, 100), 4.0);
        QCOMPARE(percentileSorted({7}, 99), 7.0);
        QCOMPARE(percentileSorted({}, 50), 0.0);
    }

    void distributionSortsAndDropsNonFinite() {
        const Distribution d = distributionOf({5, 1, std::nan(""), 3, INFINITY});
        QCOMPARE(d.n, int64_t(3));
        QCOMPARE(d.min, 1.0);
        QCOMPARE(d.max, 5.0);
        QCOMPARE(d.mean, 3.0);
        QCOMPARE(d.p50, 3.0);
        QCOMPARE(distributionOf({}).n, int64_t(0));
    }

    void loadMetricsByHand() {
        // Request A: 10 prompt tokens, TTFT 100 ms, 3 tokens at 100, 150, 250 ms -> E2E 250,
        //   TPOT (250 - 100) / 2 = 75, gaps 50 and 100.
        // Request B: 20 prompt tokens, starts at 50 ms, TTFT 200, 2 tokens at 200 and 230 ->
        //   E2E 230, TPOT 30, gap 30.
        // Request C: failed (not counted in latencies), D: a single token (no TPOT, no ITL).
        RequestTiming a{10, 3, 0, 100, 250, {50, 100}, ""};
        RequestTiming b{20, 2, 50, 200, 230, {30}, ""};
        RequestTiming c{5, 0, 0, 0, 0, {}, "HTTP 500"};
        RequestTiming d{4, 1, 0, 40, 40, {}, ""};
        const LoadMetrics m = summarizeLoad({a, b, c, d}, 0);
        QCOMPARE(m.requests, int64_t(3));
        QCOMPARE(m.failed, int64_t(1));
        QCOMPARE(m.promptTokens, int64_t(34));
        QCOMPARE(m.outputTokens, int64_t(6));
        // window: first start 0, last end max(250, 50 + 230, 40) = 280 ms
        QVERIFY(std::abs(m.durationS - 0.28) < 1e-12);
        QVERIFY(std::abs(m.requestsPerS - 3 / 0.28) < 1e-9);
        QVERIFY(std::abs(m.outputTokPerS - 6 / 0.28) < 1e-9);
        QVERIFY(std::abs(m.totalTokPerS - 40 / 0.28) < 1e-9);
        QCOMPARE(m.tpotMs.n, int64_t(2));
        QCOMPARE(m.tpotMs.mean, (75.0 + 30.0) / 2);
        QCOMPARE(m.itlMs.n, int64_t(3));  // pooled: 50, 100, 30
        QCOMPARE(m.itlMs.p50, 50.0);
        QCOMPARE(m.ttftMs.n, int64_t(3));
        QCOMPARE(m.ttftMs.p50, 100.0);  // 40, 100, 200
        QCOMPARE(m.e2eMs.max, 250.0);
        // prefill: mean of 10/0.1, 20/0.2, 4/0.04 = 100 tok/s each
        QVERIFY(std::abs(m.prefillTokPerS - 100.0) < 1e-9);
        // an explicit window wins
        QVERIFY(std::abs(summarizeLoad({a, b}, 2.0).requestsPerS - 1.0) < 1e-12);
    }

    void nothingCompleted() {
        const LoadMetrics m = summarizeLoad({{1, 0, 0, 0, 0, {}, "timeout"}}, 0);
        QCOMPARE(m.requests, int64_t(0));
        QCOMPARE(m.failed, int64_t(1));
        QCOMPARE(m.durationS, 0.0);
        QCOMPARE(m.requestsPerS, 0.0);
        QCOMPARE(m.e2eMs.n, int64_t(0));
    }

    void requestJsonRoundTrip() {
        RequestTiming r{12, 3, 5.5, 20, 40, {10, 10}, "partial"};
        const RequestTiming back = requestTimingFromJson(toJson(r));
        QCOMPARE(back.promptTokens, r.promptTokens);
        QCOMPARE(back.outputTokens, r.outputTokens);
        QCOMPARE(back.startMs, r.startMs);
        QCOMPARE(back.ttftMs, r.ttftMs);
        QCOMPARE(back.e2eMs, r.e2eMs);
        QCOMPARE(back.itlMs, r.itlMs);
        QCOMPARE(back.error, r.error);
        QCOMPARE(toJson(summarizeLoad({r}, 1))["tpot_ms"]["n"].get<int>(), 0);  // failed: excluded
    }
};

QTEST_APPLESS_MAIN(TestLatencyStats)
#include "test_latency_stats.moc"
