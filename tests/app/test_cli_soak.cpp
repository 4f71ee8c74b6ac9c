// Soak tests end to end (issue 22, stability under load): `verdict soak` against the fake OpenAI
// server of this process, made to leak 1 MiB per request and to answer 4 ms later with every
// request — the drift must show both, with the leak's size — then bursts, a local GGUF served
// in-process, what is stored, and bad input.
#include "cli_process.h"
#include "fake_openai_server.h"
#include "fixtures.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

using Run = verdict::test::CliRun;

Run runVerdict(const QStringList& args, const QTemporaryDir& dir) { return verdict::test::runVerdictIn(args, dir.path(), 300000); }

double num(const json& j) { return j.get<double>(); }

}  // namespace

class TestCliSoak : public QObject {
    Q_OBJECT
private slots:
    void aLeakAndLatencyCreepShowAsDrift() {
        verdict::test::FakeOpenAiOptions fo;
        fo.exactTokens = true;
        fo.leakBytesPerCompletion = 1 << 20;
        fo.firstByteDelayGrowthMs = 4;
        verdict::test::FakeOpenAiServer s(fo);
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        Run r = runVerdict({"soak", QString::fromStdString(s.baseUrl()), "--duration", "5s", "--window", "1s", "--rate", "10",
                            "--max-tokens", "4", "--prompt-words", "8", "--warmup-windows", "0", "--pid",
                            QString::number(QCoreApplication::applicationPid()), "--json"},
                           dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json soak = r.json();
        QCOMPARE(soak["status"], json("completed"));
        QCOMPARE(soak["rss_source"], json("/proc/" + std::to_string(QCoreApplication::applicationPid()) + "/status"));
        const json& windows = soak["windows"];
        QCOMPARE(windows.size(), size_t(5));
        int64_t requests = 0;
        for (const json& w : windows) {
            QCOMPARE(w["phase"], json("steady"));
            QCOMPARE(num(w["rate"]), 10.0);
            QVERIFY(w["requests"].get<int64_t>() > 0);
            QCOMPARE(w["failed"], json(0));
            QVERIFY(w["rss_bytes"].is_number());
            requests += w["requests"].get<int64_t>();
        }
        QCOMPARE(soak["summary"]["requests"], json(requests));
        QCOMPARE(s.completions(), requests);

        // Memory: the leak, 1 MiB per completed request, over the soak's time — the slope within
        // a third of that (the rest of the process allocates a little too), its interval above 0.
        const json& m = soak["summary"]["drift"]["rss_bytes"];
        QCOMPARE(m["n"], json(5));
        QVERIFY2(m["drifting"].get<bool>(), m.dump().c_str());
        QVERIFY(num(m["ci"][0]) > 0);
        const double hours = (num(windows.back()["end_s"]) - num(windows.front()["start_s"])) / 3600.0;
        const double leakPerHour = double(requests) * (1 << 20) / hours;
        QVERIFY2(std::abs(num(m["slope_per_hour"]) / leakPerHour - 1) < 0.34,
                 qPrintable(QString("slope %1 B/h, leak %2 B/h").arg(num(m["slope_per_hour"])).arg(leakPerHour)));
        // Latency: every request answers 4 ms later than the one before: TTFT creeps up.
        const json& t = soak["summary"]["drift"]["ttft_p99_ms"];
        QVERIFY2(t["drifting"].get<bool>() && num(t["ci"][0]) > 0, t.dump().c_str());
        QVERIFY(num(t["last"]) > num(t["first"]) + 50);
        QVERIFY(!soak["summary"]["drift"]["error_rate"]["drifting"].get<bool>());

        // Stored after every window: listed and shown as printed.
        Run list = runVerdict({"soak", "list", "--json"}, dir);
        QVERIFY2(list.exitCode == 0, list.err.constData());
        QCOMPARE(list.json().size(), size_t(1));
        QCOMPARE(list.json()[0]["windows"], json(5));
        const QString id = QString::number(soak["id"].get<long long>());
        Run shown = runVerdict({"soak", "show", id, "--json"}, dir);
        QCOMPARE(shown.json()["windows"], windows);
        QCOMPARE(shown.json()["summary"], soak["summary"]);
        Run text = runVerdict({"soak", "show", id}, dir);
        QVERIFY2(text.out.contains("DRIFTING") && text.out.contains("memory (RSS)"), text.out.constData());

        // The decision report of two runs on that endpoint shows the soak under Performance.
        const QString suite = dir.filePath("s.jsonl");
        {
            QFile f(suite);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"question\": \"Say A\", \"answer\": \"A\"}\n{\"question\": \"Say B\", \"answer\": \"B\"}\n");
        }
        QCOMPARE(runVerdict({"suite", "import", suite, "--name", "s"}, dir).exitCode, 0);
        QString runs[2];
        for (int k = 0; k < 2; ++k) {
            Run run = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "s", "--seed", QString::number(k), "--json"}, dir);
            QVERIFY2(run.exitCode == 0, run.err.constData());
            runs[k] = QString::number(run.json()["run_id"].get<long long>());
        }
        const QString md = dir.filePath("r.md"), data = dir.filePath("r.json");
        Run rep = runVerdict({"report", "--run", runs[0], "--run", runs[1], "-o", md, "--data-json", data}, dir);
        QVERIFY2(rep.exitCode == 0, rep.err.constData());
        QFile dataFile(data);
        QVERIFY(dataFile.open(QIODevice::ReadOnly));
        const json reportData = json::parse(dataFile.readAll().toStdString(), nullptr, false);
        QCOMPARE(reportData["stability"]["a"]["id"], soak["id"]);
        QVERIFY(reportData["stability"]["b"].is_null());  // one soak: it goes to the first run of that endpoint
        QFile mdFile(md);
        QVERIFY(mdFile.open(QIODevice::ReadOnly));
        const QString report = QString::fromUtf8(mdFile.readAll());
        QVERIFY2(report.contains("Stability under load") && report.contains("drifting"), qPrintable(report.left(4000)));
        Run off = runVerdict({"report", "--run", runs[0], "--run", runs[1], "-o", md, "--no-auto-soak", "--data-json", data}, dir);
        QVERIFY2(off.exitCode == 0, off.err.constData());
        dataFile.close();
        QVERIFY(dataFile.open(QIODevice::ReadOnly));
        QVERIFY(json::parse(dataFile.readAll().toStdString(), nullptr, false)["stability"]["a"].is_null());
        QCOMPARE(runVerdict({"report", "--run", runs[0], "--run", runs[1], "-o", md, "--soak", "77"}, dir).exitCode, 2);
    }

    void burstsAlternateAndTheirJitterIsReported() {
        verdict::test::FakeOpenAiOptions fo;
        fo.exactTokens = true;
        verdict::test::FakeOpenAiServer s(fo);
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        Run r = runVerdict({"soak", QString::fromStdString(s.baseUrl()), "--duration", "4s", "--window", "1s", "--rate", "4",
                            "--burst-rate", "20", "--max-tokens", "4", "--prompt-words", "8", "--json"},
                           dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json soak = r.json();
        const json& w = soak["windows"];
        QCOMPARE(w.size(), size_t(4));
        const char* phases[] = {"low", "high", "low", "high"};
        for (size_t k = 0; k < 4; ++k) {
            // Each window lasts its second, even when its last arrival was answered early.
            QVERIFY2(num(w[k]["end_s"]) - num(w[k]["start_s"]) >= 0.99, w[k].dump().c_str());
            QCOMPARE(w[k]["phase"], json(phases[k]));
            QCOMPARE(num(w[k]["rate"]), k % 2 ? 20.0 : 4.0);
            QCOMPARE(w[k]["warmup"], json(k == 0));
        }
        // More arrivals in the high windows (Poisson at 20/s against 4/s over one second each).
        QVERIFY(w[1]["requests"].get<int64_t>() + w[3]["requests"].get<int64_t>() >
                w[0]["requests"].get<int64_t>() + w[2]["requests"].get<int64_t>());
        const json& b = soak["summary"]["bursts"];
        QCOMPARE(b["high"]["e2e_p99_ms"]["n"], json(2));  // windows 1 and 3
        QCOMPARE(b["low"]["e2e_p99_ms"]["n"], json(1));   // window 2 (0 is the warm-up)
        const double p1 = num(w[1]["e2e_ms"]["p99"]), p3 = num(w[3]["e2e_ms"]["p99"]);
        QVERIFY(std::abs(num(b["high"]["e2e_p99_ms"]["mean"]) - (p1 + p3) / 2) < 1e-9);
        QVERIFY(std::abs(num(b["high"]["e2e_p99_ms"]["stddev"]) - std::abs(p1 - p3) / std::sqrt(2.0)) < 1e-9);
        QCOMPARE(soak["summary"]["latency_fit"], json("low_rate"));
        QCOMPARE(soak["summary"]["drift"]["e2e_p99_ms"]["n"], json(1));  // the low windows after the warm-up
        QCOMPARE(soak["summary"]["drift"]["rss_bytes"]["n"], json(0));  // the fake server exports no memory
        QVERIFY(soak["rss_source"].is_null());
    }

    void aLocalModelIsServedHere() {
        const auto model = verdict::test::fixture("models/synth-llama-q8_0.gguf");
        VERDICT_NEED_FIXTURE(model);
        QTemporaryDir dir;
        Run r = runVerdict({"soak", QString::fromStdString(model.string()), "--duration", "2s", "--window", "1s", "--rate", "4",
                            "--max-tokens", "4", "--prompt-words", "8", "--threads", "2", "--json"},
                           dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json soak = r.json();
        QCOMPARE(soak["endpoint"]["served_here"], json(true));
        QVERIFY(soak["rss_source"].get<std::string>().rfind("/proc/", 0) == 0);
        QCOMPARE(soak["windows"].size(), size_t(2));
        for (const json& w : soak["windows"]) {
            QVERIFY(w["requests"].get<int64_t>() > 0);
            QCOMPARE(w["failed"], json(0));
            QVERIFY(num(w["rss_bytes"]) > 1e6);
        }
    }

    void badInput() {
        QTemporaryDir dir;
        struct Case {
            QStringList args;
            int exit;
            const char* says;
        };
        const std::vector<Case> cases = {
            {{"http://127.0.0.1:9", "--duration", "1s", "--window", "2s"}, 1, "duration"},
            {{"http://127.0.0.1:9", "--window", "1x"}, 1, "unknown unit"},
            {{"http://127.0.0.1:9", "--rate", "-2"}, 1, "--rate"},
            {{"m.gguf", "--pid", "7"}, 1, "pid"},
            {{dir.filePath("none.gguf"), "--duration", "1s", "--window", "1s"}, 2, "none.gguf"},
            {{"http://127.0.0.1:9", "--duration", "1s", "--window", "1s"}, 2, "127.0.0.1:9"},
        };
        for (const Case& k : cases) {
            Run r = runVerdict(QStringList{"soak"} + k.args, dir);
            QVERIFY2(r.exitCode == k.exit, (k.args.join(' ') + " -> " + QString::number(r.exitCode) + " " + r.err).toUtf8().constData());
            QVERIFY2(r.err.contains(k.says), r.err.constData());
        }
        verdict::test::FakeOpenAiServer s({});
        QVERIFY2(s.ok(), s.error().c_str());
        Run pid = runVerdict({"soak", QString::fromStdString(s.baseUrl()), "--duration", "1s", "--window", "1s", "--pid", "999999999"}, dir);
        QCOMPARE(pid.exitCode, 2);
        QVERIFY2(pid.err.contains("no such process"), pid.err.constData());
        QCOMPARE(runVerdict({"soak", "show", "5"}, dir).exitCode, 2);
        QCOMPARE(runVerdict({"soak", "list", "--json"}, dir).json().size(), size_t(0));
    }
};

QTEST_MAIN(TestCliSoak)
#include "test_cli_soak.moc"
