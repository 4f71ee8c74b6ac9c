// `verdict delete run|sweep ID...`: what the History screen's Delete does, from the command line.
// A deleted run or sweep leaves every list (and auto-resume); its rows stay, so `verdict verify`
// still passes over the whole chain. Unknown ids and bad arguments are errors.
#include "cli_process.h"
#include "fixtures.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

namespace {

using verdict::test::CliRun;
using verdict::test::runVerdict;

}  // namespace

class TestCliDelete : public QObject {
    Q_OBJECT
private slots:
    void deletesRunsAndSweeps() {
        const auto model = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model);
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        const QString m = QString::fromStdString(model.string());
        const QString suite = dir.filePath("s.jsonl");
        QFile f(suite);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"prompt\": \"Once upon a time\", \"reference\": \"there\"}\n{\"prompt\": \"Lily\", \"reference\": \"dog\"}\n");
        f.close();
        QCOMPARE(runVerdict({"suite", "import", suite, "--name", "s"}, db).exitCode, 0);
        for (int i = 0; i < 2; ++i) {
            CliRun r = runVerdict({"run", m, "--suite", "s", "--max-tokens", "4", "--new", "--threads", "1"}, db);
            QVERIFY2(r.exitCode == 0, r.err.constData());
        }
        CliRun sw = runVerdict({"sweep", m, "--prompt", "8", "--gen", "2", "--batch", "1", "--reps", "1", "--warmup", "0",
                             "--threads", "1", "--bandwidth", "10", "--json"},
                            db);
        QVERIFY2(sw.exitCode == 0, sw.err.constData());

        CliRun del = runVerdict({"delete", "run", "1", "--json"}, db);
        QVERIFY2(del.exitCode == 0, del.err.constData());
        QCOMPARE(del.json()["kind"].get<std::string>(), std::string("run"));
        QCOMPARE(del.json()["deleted"], nlohmann::json::array({1}));
        QCOMPARE(del.json()["missing"], nlohmann::json::array());
        CliRun list = runVerdict({"results", "--json"}, db);
        QVERIFY2(list.exitCode == 0, list.err.constData());
        QVERIFY(!list.out.contains("\"run_id\": 1,"));
        QVERIFY(list.out.contains("\"run_id\": 2"));
        // The remaining chains still verify.
        CliRun verify = runVerdict({"verify"}, db);
        QVERIFY2(verify.exitCode == 0, verify.out.constData());

        CliRun again = runVerdict({"delete", "run", "1", "--json"}, db);
        QCOMPARE(again.exitCode, 2);  // nothing to delete: bad input
        QCOMPARE(again.json()["missing"], nlohmann::json::array({1}));

        CliRun sweepDel = runVerdict({"delete", "sweep", "1"}, db);
        QVERIFY2(sweepDel.exitCode == 0, sweepDel.err.constData());
        QVERIFY(sweepDel.out.contains("deleted sweep 1"));
        CliRun sweeps = runVerdict({"sweep", "list", "--json"}, db);
        QVERIFY2(sweeps.exitCode == 0, sweeps.err.constData());
        QVERIFY2(!sweeps.out.contains("\"sweep_id\": 1"), sweeps.out.constData());
        QCOMPARE(runVerdict({"verify"}, db).exitCode, 0);

        QCOMPARE(runVerdict({"delete", "run", "x"}, db).exitCode, 1);
        QCOMPARE(runVerdict({"delete", "model", "1"}, db).exitCode, 1);
        QCOMPARE(runVerdict({"delete"}, db).exitCode, 1);
    }
};

QTEST_MAIN(TestCliDelete)
#include "test_cli_delete.moc"
