// Drift statistics (stats/drift.h) and the soak summary built from them (services/soak.h), with
// hand-computed values.
#include "core/services/soak.h"
#include "core/stats/drift.h"

#include <QtTest/QtTest>

#include <cmath>

using nlohmann::json;
using namespace verdict::core;

class TestDrift : public QObject {
    Q_OBJECT
private slots:
    void studentQuantiles() {
        // Reference values: NIST/SEMATECH e-Handbook 1.3.6.7.2 (t at 0.975).
        const std::pair<int, double> ref[] = {{1, 12.706}, {2, 4.303}, {3, 3.182}, {5, 2.571}, {9, 2.262},
                                              {10, 2.228}, {20, 2.086}, {30, 2.042}, {100, 1.984}};
        for (auto [df, t] : ref) QVERIFY2(std::abs(studentT975(df) - t) < 6e-4, qPrintable(QString::number(df)));
        QVERIFY(std::abs(studentT975(1000000) - 1.959964) < 1e-5);
    }

    void slopeAndItsInterval() {
        // y = 2x + 1 exactly: slope 2, a zero-width interval, r2 1.
        const double x[] = {0, 1, 2, 3, 4}, exact[] = {1, 3, 5, 7, 9};
        LinearTrend e = linearTrend(x, exact);
        QCOMPARE(e.slope, 2.0);
        QCOMPARE(e.intercept, 1.0);
        QVERIFY(e.slopeCi && e.slopeCi->lo == 2.0 && e.slopeCi->hi == 2.0);
        QCOMPARE(e.r2, 1.0);
        QVERIFY(e.drifting());
        // By hand: mean x 2, mean y 2.8, Sxx 10, Sxy 10 -> slope 1, intercept 0.8; residuals
        // 0.2, 0.2, -0.8, 0.2, 0.2 -> SSE 0.8, se = sqrt(0.8 / 3 / 10) = 0.163299;
        // t(0.975, 3) = 3.182446 -> [0.480307, 1.519693]; Syy = 10.8 -> r2 = 1 - 0.8/10.8.
        const double y[] = {1, 2, 2, 4, 5};
        LinearTrend t = linearTrend(x, y);
        QCOMPARE(t.n, int64_t(5));
        QVERIFY(std::abs(t.slope - 1.0) < 1e-12);
        QVERIFY(std::abs(t.intercept - 0.8) < 1e-12);
        QVERIFY(t.slopeCi);
        QVERIFY(std::abs(t.slopeCi->lo - 0.480307) < 1e-5);
        QVERIFY(std::abs(t.slopeCi->hi - 1.519693) < 1e-5);
        QVERIFY(std::abs(t.r2 - (1 - 0.8 / 10.8)) < 1e-12);
        QVERIFY(t.drifting());
        // Flat with noise: the interval holds 0.
        const double flat[] = {5, 6, 5, 6, 5};
        QVERIFY(!linearTrend(x, flat).drifting());
        // Too few points for an interval; non-finite points are left out.
        const double two[] = {1, 3};
        QVERIFY(!linearTrend(std::span(x, 2), two).slopeCi);
        const double withNan[] = {1, NAN, 5, 7, 9};
        QCOMPARE(linearTrend(x, withNan).n, int64_t(4));
        QCOMPARE(linearTrend(x, withNan).slope, 2.0);
        const double same[] = {1, 1, 1};
        QCOMPARE(linearTrend(same, std::span(y, 3)).slope, 0.0);  // all x equal: no slope
    }

    void spread() {
        const double v[] = {100, 120, 110};
        Spread s = spreadOf(v);
        QCOMPARE(s.n, int64_t(3));
        QCOMPARE(s.mean, 110.0);
        QCOMPARE(s.stddev, 10.0);  // sample: sqrt((100 + 100 + 0) / 2)
        QVERIFY(std::abs(s.cv - 10.0 / 110.0) < 1e-12);
        QCOMPARE(s.min, 100.0);
        QCOMPARE(s.max, 120.0);
        QCOMPARE(spreadOf(std::span<const double>()).n, int64_t(0));
    }

    void soakSummaryByHand() {
        // Five one-hour windows; the first is a warm-up. RSS grows 100 MB per hour after it;
        // windows alternate low / high: latency fits use the low ones (2 and 4) only.
        json soak = {{"settings", {{"warmup_windows", 1}}}, {"windows", json::array()}};
        const double rss[] = {50e6, 100e6, 200e6, 300e6, 400e6};
        const double p99[] = {90, 200, 100, 220, 110};
        for (int k = 0; k < 5; ++k)
            soak["windows"].push_back({{"index", k},
                                       {"start_s", k * 3600.0},
                                       {"end_s", (k + 1) * 3600.0},
                                       {"phase", k % 2 ? "high" : "low"},
                                       {"requests", 10},
                                       {"failed", k == 4 ? 2 : 0},
                                       {"error_rate", k == 4 ? 2.0 / 12 : 0.0},
                                       {"ttft_ms", {{"p50", 10}, {"p99", p99[k] / 2}}},
                                       {"e2e_ms", {{"p50", 50}, {"p99", p99[k]}}},
                                       {"output_tok_per_s", 100},
                                       {"rss_bytes", rss[k]}});
        addSoakSummary(soak);
        const json& s = soak["summary"];
        QCOMPARE(s["requests"], json(50));
        QCOMPARE(s["failed"], json(2));
        QCOMPARE(s["error_rate"].get<double>(), 2.0 / 52);
        QCOMPARE(s["latency_fit"], json("low_rate"));
        const json& m = s["drift"]["rss_bytes"];
        QCOMPARE(m["n"], json(4));
        QVERIFY(std::abs(m["slope_per_hour"].get<double>() - 100e6) < 1e-3);
        QVERIFY(m["drifting"].get<bool>());
        QCOMPARE(m["first"].get<double>(), 100e6);
        QCOMPARE(m["last"].get<double>(), 400e6);
        // E2E P99 over the low windows 2 and 4 (midpoints 2.5 h and 4.5 h): (110 - 100) / 2 h.
        const json& e = s["drift"]["e2e_p99_ms"];
        QCOMPARE(e["n"], json(2));
        QVERIFY(std::abs(e["slope_per_hour"].get<double>() - 5.0) < 1e-9);
        QVERIFY(e["ci"].is_null());  // two points: no interval
        // Bursts (warm-up left out): the high windows' P99s 200 and 220, the low ones' 100 and 110.
        const json& hi = s["bursts"]["high"]["e2e_p99_ms"];
        QCOMPARE(hi["n"], json(2));
        QCOMPARE(hi["mean"].get<double>(), 210.0);
        QVERIFY(std::abs(hi["stddev"].get<double>() - std::sqrt(200.0)) < 1e-9);
        const json& lo = s["bursts"]["low"]["e2e_p99_ms"];
        QCOMPARE(lo["mean"].get<double>(), 105.0);
        QVERIFY(std::abs(lo["stddev"].get<double>() - std::sqrt(50.0)) < 1e-9);
        // A window cut short by a cancel is left out: the memory fit keeps windows 1-3.
        soak["windows"][4]["partial"] = true;
        addSoakSummary(soak);
        QCOMPARE(soak["summary"]["drift"]["rss_bytes"]["n"], json(3));
        QCOMPARE(soak["summary"]["bursts"]["low"]["e2e_p99_ms"]["n"], json(1));
        soak["windows"][4]["partial"] = false;
        // Without bursts every window after the warm-up is fitted, and there is no burst block.
        for (auto& w : soak["windows"]) w["phase"] = "steady";
        addSoakSummary(soak);
        QCOMPARE(soak["summary"]["drift"]["e2e_p99_ms"]["n"], json(4));
        QVERIFY(soak["summary"]["bursts"].is_null());
    }

    void residentMemoryFromMetrics() {
        QCOMPARE(*residentBytesFromMetrics("# HELP x\nprocess_resident_memory_bytes 1.5e+09\n"), 1.5e9);
        QCOMPARE(*residentBytesFromMetrics("process_resident_memory_bytes{pid=\"7\"} 4096\n"), 4096.0);
        QVERIFY(!residentBytesFromMetrics("process_resident_memory_bytes_total 5\n"));
        QVERIFY(!residentBytesFromMetrics("vllm:num_requests_running 3\n"));
        QVERIFY(!residentBytesFromMetrics("process_resident_memory_bytes NaN\n"));
        QVERIFY(residentBytesOfPid(getpid()).value_or(0) > 1e6);
        QVERIFY(!residentBytesOfPid(999999999));
    }

    void requestChecks() {
        SoakRequest ok;
        ok.target = "http://127.0.0.1:1";
        QVERIFY(validateSoakRequest(ok).ok());
        auto says = [](SoakRequest r, const char* what) {
            auto v = validateSoakRequest(r);
            QVERIFY(!v.ok());
            QVERIFY2(v.error().message.find(what) != std::string::npos, v.error().message.c_str());
        };
        SoakRequest r = ok;
        r.windowS = 0.1;
        says(r, "window");
        r = ok;
        r.durationS = 30;
        says(r, "duration");
        r = ok;
        r.durationS = 1e7;
        r.windowS = 1;
        says(r, "10000 windows");
        r = ok;
        r.rate = 0;
        says(r, "rate");
        r = ok;
        r.target = "m.gguf";
        r.pid = 5;
        says(r, "pid");
    }
};

QTEST_MAIN(TestDrift)
#include "test_drift.moc"
