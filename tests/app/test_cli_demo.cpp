// `verdict demo --quick` end to end, as the README's headless run does it: finds the bundled
// demo models and suites from the build tree, imports, runs both models on every suite, sweeps
// both, writes the report PDF, and stores it all in the database — within the CI time budget.
// A second demo reuses the imported suites.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <chrono>

class TestCliDemo : public QObject {
    Q_OBJECT
private slots:
    void quickDemo() {
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        const auto t0 = std::chrono::steady_clock::now();
        QProcess p;
        p.start(VERDICT_BINARY, {"demo", "--quick", "--out", dir.filePath("out"), "--db", db, "--json"});
        QVERIFY(p.waitForFinished(300000));
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY2(secs < 300, std::to_string(secs).c_str());
        const auto j = nlohmann::json::parse(p.readAllStandardOutput().toStdString(), nullptr, false);
        QVERIFY(j.is_object());
        QVERIFY(j["suites"].size() >= 2);
        for (const auto& suite : j["suites"]) {
            const auto& r = j["runs"][suite.get<std::string>()];
            for (const char* m : {"demo-large", "demo-small"}) {
                QVERIFY2(r.contains(m), m);
                QVERIFY(r[m]["run_id"].get<int>() > 0);
                QVERIFY(r[m]["n_items"].get<int>() >= 50);
            }
        }
        for (const char* m : {"demo-large", "demo-small"}) QVERIFY(j["sweeps"][m]["best_output_tok_per_s"].get<double>() > 0);
        // the smaller model is the faster one: the trade-off the demo exists to show
        QVERIFY(j["sweeps"]["demo-small"]["best_output_tok_per_s"].get<double>() >
                j["sweeps"]["demo-large"]["best_output_tok_per_s"].get<double>());
        QVERIFY(j["report"].is_object());
        QFileInfo pdf(dir.filePath("out/verdict-demo-report.pdf"));
        QVERIFY(pdf.exists());
        QVERIFY(pdf.size() > 10000);

        QProcess again;
        again.start(VERDICT_BINARY, {"suite", "list", "--json", "--db", db});
        QVERIFY(again.waitForFinished(60000));
        const auto suites = nlohmann::json::parse(again.readAllStandardOutput().toStdString(), nullptr, false);
        QCOMPARE(suites["suites"].size(), j["suites"].size());
    }
};

QTEST_GUILESS_MAIN(TestCliDemo)
#include "test_cli_demo.moc"
