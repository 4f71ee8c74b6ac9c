// `verdict judge` end to end, on the three-line suite without reference answers: import,
// two runs of the stories260K fixture, then a scripted judge endpoint (scripted_judge.h: the
// longer answer wins, the Transformer item gets no verdict, the database item always "[[A]]" =
// position bias), the decision report, a local judge model (the plumbing with a model that cannot
// write verdicts), the blind terminal walk-through, the summary and bad input.
#include "cli_process.h"
#include "fixtures.h"
#include "scripted_judge.h"

#include <QtTest/QtTest>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {

using verdict::test::CliRun;
using verdict::test::runVerdict;
using nlohmann::json;

const char* kSuite =
    "{\"prompt\": \"用Python写一个函数，计算斐波那契数列的第n项。\", \"category\": \"code_python\"}\n"
    "{\"prompt\": \"解释Transformer模型中的多头注意力机制。\", \"category\": \"nlp_theory\"}\n"
    "{\"prompt\": \"给定以下需求，设计一个数据库表结构：用户、订单、商品。\", \"category\": \"system_design\"}\n";

int64_t runId(const CliRun& r) { return r.json().value("run_id", int64_t{-1}); }

}  // namespace

class TestCliJudge : public QObject {
    Q_OBJECT
private slots:
    void judgeTwoRunsOfAnOpenSuite() {
        const auto model = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model);
        QTemporaryDir dir;
        const QString db = dir.filePath("judge.db");
        const std::string suite = dir.filePath("open.jsonl").toStdString();
        std::ofstream(suite) << kSuite;
        CliRun r = runVerdict({"suite", "import", QString::fromStdString(suite), "--name", "open", "--json"}, db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString m = QString::fromStdString(model.string());
        CliRun ra = runVerdict({"run", m, "--suite", "open", "--max-tokens", "12", "-t", "1", "--json"}, db);
        QVERIFY2(ra.exitCode == 0, ra.err.constData());
        CliRun rb = runVerdict({"run", m, "--suite", "open", "--max-tokens", "24", "--temp", "0.8", "--seed", "5", "-t", "1", "--json"}, db);
        QVERIFY2(rb.exitCode == 0, rb.err.constData());
        const QString a = QString::number(runId(ra)), b = QString::number(runId(rb));
        QVERIFY(a != b);

        // Nothing judged yet: the summary is empty.
        r = runVerdict({"judge", a, b, "--json"}, db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.json()["judged"].is_null());
        QVERIFY(r.json()["pairwise"].empty());

        // The scripted judge over HTTP (the engine's OpenAI-compatible stream format).
        std::atomic<int> requests{0};
        auto server = verdict::test::startScriptedJudge(requests);
        QVERIFY(server);
        const QString judge = QString("http://127.0.0.1:%1/v1 scripted-judge").arg(server->port());
        r = runVerdict({"judge", a, b, "--judge", judge, "--concurrency", "2", "--json"}, db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        json j = r.json();
        QCOMPARE(j["judged"]["calls"].get<int>(), 6);
        QCOMPARE(j["judged"]["unreadable"].get<int>(), 2);
        QCOMPARE(requests.load(), 6);
        QCOMPARE(j["pairwise"].size(), size_t(1));
        json p = j["pairwise"][0];
        QCOMPARE(p["items"].get<int>(), 3);
        QCOMPARE(p["unreadable"].get<int>(), 1);
        QCOMPARE(p["wins_a"].get<int>() + p["wins_b"].get<int>() + p["ties"].get<int>(), 2);
        QVERIFY(p["ties"].get<int>() >= 1);  // the design item flipped with the order
        QCOMPARE(p["position_bias"]["favours_first"].get<int>(), 1);
        QCOMPARE(p["position_bias"]["flip_rate"].get<double>(), 0.5);

        // Again: everything is stored, nothing is asked.
        r = runVerdict({"judge", a, b, "--judge", judge, "--json"}, db);
        QCOMPARE(r.json()["judged"]["calls"].get<int>(), 0);
        QCOMPARE(r.json()["judged"]["already_stored"].get<int>(), 6);
        QCOMPARE(requests.load(), 6);
        // From B's side the same verdicts, mirrored.
        r = runVerdict({"judge", b, a, "--json"}, db);
        QCOMPARE(r.json()["pairwise"][0]["wins_a"], p["wins_b"]);
        // The text summary names the win rate's basis and the position bias.
        r = runVerdict({"judge", a, b}, db);
        QVERIFY2(r.out.contains("position bias: 50.0% of 2 items flipped"), r.out.constData());

        // The decision report carries the preference criterion with its interval.
        const QString md = dir.filePath("report.md");
        r = runVerdict({"report", "--run", a, "--run", b, "-o", md, "--data-json", dir.filePath("report.json")}, db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QFile mdFile(md);
        QVERIFY(mdFile.open(QIODevice::ReadOnly));
        const QByteArray report = mdFile.readAll();
        QVERIFY2(report.contains("Preference (judge http://127.0.0.1:"), report.left(3000).constData());
        QVERIFY(report.contains("Judged preference"));
        std::ifstream dataFile(dir.filePath("report.json").toStdString());
        const json data = json::parse(dataFile, nullptr, false);
        QVERIFY(!data.is_discarded());
        QCOMPARE(data["preference"]["judges"].size(), size_t(1));
        bool row = false;
        for (const auto& c : data["decision"])
            if (c["criterion"] == "preference") {
                row = true;
                QVERIFY2(c["note"].get<std::string>().find("3 items") != std::string::npos, c.dump().c_str());
            }
        QVERIFY(row);

        // Bradley-Terry over the stored verdicts (two runs here; test_judge ranks three by hand).
        r = runVerdict({"rank", a, b, "--judge", judge, "--json"}, db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.json()["runs"].size(), size_t(2));
        QCOMPARE(r.json()["comparisons"].get<int>(), 2);  // the code item and the flipped one (a tie)
        QCOMPARE(r.json()["unreadable"].get<int>(), 1);
        r = runVerdict({"rank", a}, db);
        QCOMPARE(r.exitCode, 1);

        // A local judge model: the same plumbing; a 260K-parameter model writes no verdicts. Its
        // 512-token context cannot hold the built-in prompt: a failed call is reported, not stored.
        r = runVerdict({"judge", a, b, "--judge", m, "--limit", "1", "--max-tokens", "4", "-t", "1", "--json"}, db);
        QCOMPARE(r.exitCode, 3);
        QCOMPARE(r.json()["judged"]["failed_calls"].get<int>(), 2);
        QVERIFY2(!r.json()["judged"]["first_failure"].get<std::string>().empty(), r.out.constData());
        QCOMPARE(r.json()["pairwise"].size(), size_t(1));
        // With a short prompt of one's own it judges.
        const QString shortPrompt = dir.filePath("short.txt");
        std::ofstream(shortPrompt.toStdString()) << "Q: {question}\nA: {answer_a}\nB: {answer_b}\nBetter:";
        r = runVerdict({"judge", a, b, "--judge", m, "--prompt", shortPrompt, "--limit", "1", "--max-tokens", "4", "-t", "1", "--json"}, db);
        QVERIFY2(r.exitCode == 0, r.out.constData());
        QCOMPARE(r.json()["judged"]["calls"].get<int>(), 2);
        QCOMPARE(r.json()["judged"]["failed_calls"].get<int>(), 0);
        QCOMPARE(r.json()["pairwise"].size(), size_t(2));
        QVERIFY(r.json()["agreement"].empty());  // no item where both judges have a verdict

        // A person, blind, in the terminal: left better, tie, then quit.
        QProcess human;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("VERDICT_DB", db);
        human.setProcessEnvironment(env);
        human.start(VERDICT_BINARY, {"judge", a, b, "--human", "ann"});
        QVERIFY(human.waitForStarted());
        human.write("x\n1\n3\nq\n");
        human.closeWriteChannel();
        QVERIFY(human.waitForFinished(60000));
        QCOMPARE(human.exitCode(), 0);
        const QByteArray shown = human.readAllStandardOutput();
        QVERIFY(shown.contains("--- 1: left ---"));
        QVERIFY(shown.contains("1, 2, 3, 4, s or q"));  // "x" is asked again
        QVERIFY(!shown.left(shown.lastIndexOf("> ")).contains("stories260K"));  // blind: no model names while voting
        r = runVerdict({"judge", a, b, "--json"}, db);
        json ann;
        const json all = r.json();
        for (const auto& s : all["pairwise"])
            if (s["judge"] == "human:ann") ann = s;
        QVERIFY2(!ann.is_null(), (r.out + "\n--- walk-through:\n" + shown).constData());
        QCOMPARE(ann["items"].get<int>(), 2);
        QCOMPARE(ann["ties"].get<int>(), 1);
        QCOMPARE(ann["wins_a"].get<int>() + ann["wins_b"].get<int>(), 1);
    }

    void badInput() {
        QTemporaryDir dir;
        const QString db = dir.filePath("j.db");
        CliRun r = runVerdict({"judge", "1"}, db);
        QCOMPARE(r.exitCode, 1);
        r = runVerdict({"judge", "1", "x"}, db);
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("'x'"));
        r = runVerdict({"judge", "1", "2", "--judge", "http://127.0.0.1:1/v1", "--mode", "best"}, db);
        QCOMPARE(r.exitCode, 1);
        r = runVerdict({"judge", "1", "2", "--judge", "http://127.0.0.1:1/v1", "--rubric", "r.json"}, db);
        QCOMPARE(r.exitCode, 1);
        r = runVerdict({"judge", "1", "2", "--judge", "http://127.0.0.1:1/v1", "--human", "ann"}, db);
        QCOMPARE(r.exitCode, 1);
        r = runVerdict({"judge", "1", "2", "--judge", "http://127.0.0.1:1/v1"}, db);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("no run 1"), r.err.constData());
        const QString noAnswerB = dir.filePath("no-b.txt");
        std::ofstream(noAnswerB.toStdString()) << "Q {question} A {answer_a}";
        r = runVerdict({"judge", "1", "2", "--judge", "http://127.0.0.1:1/v1", "--prompt", noAnswerB}, db);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("no-b.txt") && r.err.contains("{answer_b}"), r.err.constData());
        r = runVerdict({"judge", "1", "2", "--judge", "http://127.0.0.1:1/v1", "--mode", "rubric", "--rubric",
                        dir.filePath("missing.json")}, db);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.err.contains("missing.json"));
    }
};

QTEST_GUILESS_MAIN(TestCliJudge)
#include "test_cli_judge.moc"
