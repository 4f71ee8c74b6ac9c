// `verdict sweep` end to end: a small grid on the stories260K fixture stored in a temporary
// database, its JSON shape, list/show/export (CSV and JSON), verify over the sweep chain, and
// bad input (grid values, missing model, unknown sweep id).
#include "fixtures.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
    nlohmann::json json() const { return nlohmann::json::parse(out.toStdString(), nullptr, false); }
};

Run runVerdict(const QStringList& args, const QString& db) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("VERDICT_DB", db);
    p.setProcessEnvironment(env);
    p.start(VERDICT_BINARY, args);
    p.waitForFinished(300000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

}  // namespace

class TestCliSweep : public QObject {
    Q_OBJECT
private slots:
    void sweepStoresAndExports() {
        const auto model = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model);
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        const QString m = QString::fromStdString(model.string());
        Run r = runVerdict({"sweep", m, "--prompt", "8,24", "--gen", "4", "--batch", "1,2", "--reps", "2", "--threads",
                            "1", "--bandwidth", "10", "--json"},
                           db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto j = r.json();
        QVERIFY2(j.is_object(), r.out.constData());
        QCOMPARE(j["sweep_id"].get<int>(), 1);
        QCOMPARE(j["status"].get<std::string>(), std::string("completed"));
        QCOMPARE(j["backend"].get<std::string>(), std::string("engine"));
        QCOMPARE(j["model_sha256"].get<std::string>().size(), size_t(64));
        QCOMPARE(j["environment"]["bandwidth_gb_per_s"].get<double>(), 10.0);
        QVERIFY(j["cold_start"].is_object());
        QCOMPARE(j["points"].size(), size_t(4));
        for (const auto& p : j["points"]) {
            QVERIFY(p["error"].is_null());
            const auto& mt = p["metrics"];
            QCOMPARE(mt["requests"].get<int>(), 2 * p["batch"].get<int>());
            for (const char* k : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"})
                for (const char* q : {"n", "mean", "p50", "p90", "p95", "p99"}) QVERIFY2(mt[k].contains(q), k);
            QVERIFY(mt["output_tok_per_s"].get<double>() > 0);
            QVERIFY(mt["roofline"]["decode_tok_per_s_bound"].get<double>() > 0);
            QVERIFY(!p.contains("requests"));  // per-request timings only in the export
        }

        r = runVerdict({"sweep", "list", "--json"}, db);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.json()["sweeps"][0]["n_points"].get<int>(), 4);
        r = runVerdict({"sweep", "show", "1"}, db);
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("TTFT p50"));
        QVERIFY(r.out.contains("cold start"));

        r = runVerdict({"sweep", "export", "1", "--format", "csv"}, db);
        QCOMPARE(r.exitCode, 0);
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 5);  // header + 4 points
        QVERIFY(lines[0].startsWith("sweep_id,prompt_tokens,gen_tokens,batch,"));
        QCOMPARE(lines[1].split(',').size(), lines[0].split(',').size());
        const QString out = dir.filePath("sweep.json");
        r = runVerdict({"sweep", "export", "1", "--format", "json", "-o", out}, db);
        QCOMPARE(r.exitCode, 0);
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto ex = nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
        QCOMPARE(ex["points"][3]["requests"].size(), size_t(4));
        QCOMPARE(ex["points"][0]["row_hash"].get<std::string>().size(), size_t(64));

        r = runVerdict({"verify", "--json"}, db);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.json()["points_checked"].get<int>(), 4);

        // the cost of serving at the sweep's best rate: rent at $2/h, utilisation 0.5
        double best = 0;
        for (const auto& p : j["points"]) best = std::max(best, p["metrics"]["output_tok_per_s"].get<double>());
        r = runVerdict({"tco", "--sweep", "1", "--hardware", "this-machine", "--rent", "--cloud-usd-per-hour", "2", "--json"}, db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto t = r.json();
        QCOMPARE(t["throughput"]["source"].get<std::string>(), std::string("sweep"));
        QCOMPARE(t["throughput"]["sweep_id"].get<int>(), 1);
        const double expected = 2.0 / (best * 3600 * 0.5) * 1e6;
        QVERIFY2(std::abs(t["per_device"]["usd_per_mtok"].get<double>() - expected) < 1e-6 * expected, t.dump().substr(0, 800).c_str());
    }

    void badInput() {
        const auto model = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model);
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        const QString m = QString::fromStdString(model.string());
        Run r = runVerdict({"sweep", m, "--gen", "1"}, db);
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("at least 2 output tokens"));
        r = runVerdict({"sweep", m, "--batch", "0,4"}, db);
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("batch: 0"));
        r = runVerdict({"sweep", m, "--prompt", "abc"}, db);
        QCOMPARE(r.exitCode, 1);
        r = runVerdict({"sweep", dir.filePath("missing.gguf")}, db);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("missing.gguf"));
        r = runVerdict({"sweep", "show", "99"}, db);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("sweep 99 does not exist"));
        r = runVerdict({"sweep", "export", "1"}, db);
        QVERIFY(r.exitCode != 0);
    }
};

QTEST_GUILESS_MAIN(TestCliSweep)
#include "test_cli_sweep.moc"
