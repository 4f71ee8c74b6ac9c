// A classification suite end to end (issue 22): imported with the "label" scorer, run against
// the fake OpenAI server (whose answer depends on the prompt), and read back by `verdict results`
// with the confusion matrix and per-label precision / recall / F1 worked out by hand.
#include "cli_process.h"
#include "fake_openai_server.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

using nlohmann::json;

namespace {

using Run = verdict::test::CliRun;

Run runVerdict(const QStringList& args, const QTemporaryDir& dir) { return verdict::test::runVerdictIn(args, dir.path()); }

bool near(const json& v, double x) { return v.is_number() && std::fabs(v.get<double>() - x) < 1e-9; }

}  // namespace

class TestCliClassification : public QObject {
    Q_OBJECT
private slots:
    void runAndResults() {
        // Gold: spam, ham, spam, ham, ham. Answers: Spam., ham, Spam., "I think it is spam", no label.
        verdict::test::FakeOpenAiServer s({.answer = "no idea",
                                           .answerFor = {{"lottery", "Spam."}, {"Lunch", "ham"}, {"Meeting", "I think it is spam"}}});
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        const std::string scorer = ", \"scorer\": {\"name\": \"label\", \"params\": {\"labels\": [\"ham\", \"spam\"]}}}\n";
        {
            std::ofstream f(dir.filePath("c.jsonl").toStdString());
            f << "{\"id\": \"q1\", \"prompt\": \"Win the lottery now\", \"reference\": \"spam\"" << scorer
              << "{\"id\": \"q2\", \"prompt\": \"Lunch at noon?\", \"reference\": \"ham\"" << scorer
              << "{\"id\": \"q3\", \"prompt\": \"Cheap pills, lottery\", \"reference\": \"spam\"" << scorer
              << "{\"id\": \"q4\", \"prompt\": \"Meeting notes\", \"reference\": \"ham\"" << scorer
              << "{\"id\": \"q5\", \"prompt\": \"Hello there\", \"reference\": \"ham\"" << scorer;
        }
        Run imp = runVerdict({"suite", "import", dir.filePath("c.jsonl"), "--name", "c"}, dir);
        QVERIFY2(imp.exitCode == 0, imp.err.constData());
        Run r = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "c", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString id = QString::number(r.json()["run_id"].get<long long>());

        Run res = runVerdict({"results", id, "--json"}, dir);
        QVERIFY2(res.exitCode == 0, res.err.constData());
        const json c = res.json()["runs"][0]["classification"];
        QVERIFY2(c.is_object(), res.out.constData());
        QCOMPARE(c["n"], json(5));
        QCOMPARE(c["correct"], json(3));
        QCOMPARE(c["no_label"], json(1));
        QCOMPARE(c["labels"], json({"ham", "spam"}));
        QCOMPARE(c["confusion"], json({{1, 1, 1}, {0, 2, 0}}));
        const json& ham = c["per_label"][0];
        const json& spam = c["per_label"][1];
        QVERIFY(near(ham["precision"], 1.0) && near(ham["recall"], 1.0 / 3.0) && near(ham["f1"], 0.5));
        QVERIFY(near(spam["precision"], 2.0 / 3.0) && near(spam["recall"], 1.0) && near(spam["f1"], 0.8));
        QVERIFY(near(c["macro_f1"], 0.65));
        QVERIFY(c["macro_f1_ci"][0].get<double>() <= 0.65 && c["macro_f1_ci"][1].get<double>() >= 0.65);
        // accuracy agrees with the run's own figure
        QVERIFY(near(res.json()["runs"][0]["accuracy"], 0.6));

        Run text = runVerdict({"results", id}, dir);
        QVERIFY2(text.exitCode == 0, text.err.constData());
        QVERIFY2(text.out.contains("classification: 5 items, macro-F1  65.0%"), text.out.constData());
        QVERIFY2(text.out.contains("confusion (rows gold, columns predicted)"), text.out.constData());

        // A second model that always answers "ham": the report puts both side by side.
        verdict::test::FakeOpenAiServer s2({.answer = "ham"});
        QVERIFY2(s2.ok(), s2.error().c_str());
        Run r2 = runVerdict({"run", QString::fromStdString(s2.baseUrl()), "--suite", "c", "--json"}, dir);
        QVERIFY2(r2.exitCode == 0, r2.err.constData());
        const QString id2 = QString::number(r2.json()["run_id"].get<long long>());
        Run rep = runVerdict({"report", "--run", id, "--run", id2, "-o", dir.filePath("r.md"), "--format", "md",
                              "--data-json", dir.filePath("r.json")},
                             dir);
        QVERIFY2(rep.exitCode == 0, rep.err.constData());
        std::ifstream dataFile(dir.filePath("r.json").toStdString());
        const json data = json::parse(dataFile, nullptr, false);
        const json rc = data["accuracy"]["classification"];
        QVERIFY2(rc.is_object(), data.dump().substr(0, 2000).c_str());
        QVERIFY(near(rc["a"]["macro_f1"], 0.65));
        // B: every item "ham": ham P 3/5, R 1, F1 0.75; spam R 0, F1 0; macro 0.375.
        QCOMPARE(rc["b"]["confusion"], json({{3, 0, 0}, {2, 0, 0}}));
        QVERIFY(near(rc["b"]["macro_f1"], 0.375));
        std::ifstream md(dir.filePath("r.md").toStdString());
        const std::string mdText((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
        QVERIFY2(mdText.find("Classification") != std::string::npos && mdText.find("macro-F1") != std::string::npos &&
                     mdText.find("(no label)") != std::string::npos,
                 mdText.c_str());

        // A run of a suite without "label" scores has no classification block.
        {
            std::ofstream f(dir.filePath("p.jsonl").toStdString());
            f << "{\"id\": \"p1\", \"prompt\": \"Say A\", \"answer\": \"A\"}\n";
        }
        QCOMPARE(runVerdict({"suite", "import", dir.filePath("p.jsonl"), "--name", "p"}, dir).exitCode, 0);
        Run plain = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "p", "--json"}, dir);
        QVERIFY2(plain.exitCode == 0, plain.err.constData());
        const QString pid = QString::number(plain.json()["run_id"].get<long long>());
        QCOMPARE(runVerdict({"results", pid, "--json"}, dir).json()["runs"][0]["classification"], json(nullptr));
    }

    // Bad scorer params reject the record at import, naming its line, the scorer and the param
    // (not an error of every item of every run later).
    void badLabelsFailClearly() {
        QTemporaryDir dir;
        {
            std::ofstream f(dir.filePath("b.jsonl").toStdString());
            f << "{\"id\": \"b1\", \"prompt\": \"x\", \"reference\": \"spam\", \"scorer\": {\"name\": \"label\", \"params\": {}}}\n";
        }
        Run r = runVerdict({"suite", "import", dir.filePath("b.jsonl"), "--name", "b"}, dir);
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains("line 1") && r.err.contains("label: param 'labels'"), r.err.constData());
        {
            std::ofstream f(dir.filePath("b2.jsonl").toStdString());
            f << "{\"id\": \"b1\", \"prompt\": \"x\", \"reference\": \"spam\", \"scorer\": {\"name\": \"label\", \"params\": {\"labels\": [\"spam\", \"Spam\"]}}}\n"
              << "{\"id\": \"b2\", \"prompt\": \"y\", \"reference\": \"spam\", \"scorer\": {\"name\": \"label\", \"params\": {\"labels\": [\"spam\", \"ham\"]}}}\n";
        }
        Run partial = runVerdict({"suite", "import", dir.filePath("b2.jsonl"), "--name", "b2", "--json"}, dir);
        QVERIFY2(partial.exitCode == 0, partial.err.constData());
        const json p = partial.json();
        QVERIFY2(p.dump().find("twice") != std::string::npos, p.dump().c_str());
    }
};

QTEST_GUILESS_MAIN(TestCliClassification)
#include "test_cli_classification.moc"
