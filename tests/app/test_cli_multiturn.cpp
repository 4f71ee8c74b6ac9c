// Multi-turn consistency end to end (issue 22): a conversation suite whose later turns ask about
// facts given in the first, run against the fake OpenAI server (its answer chosen by the last
// user message), `verdict results` by turn, and the decision report's section.
#include "cli_process.h"
#include "fake_openai_server.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

using nlohmann::json;

namespace {

using Run = verdict::test::CliRun;
Run runVerdict(const QStringList& args, const QTemporaryDir& dir) { return verdict::test::runVerdictIn(args, dir.path()); }

}  // namespace

class TestCliMultiTurn : public QObject {
    Q_OBJECT
private slots:
    void byTurn() {
        // Turn 2 asks about turn 1 (remembered in both conversations); turn 4 asks again after a
        // distraction (remembered in one of two).
        verdict::test::FakeOpenAiServer s({.answer = "Sure.",
                                           .answerFor = {{"Where do I live?", "You live in Oslo."},
                                                         {"What is my dog called?", "Your dog is Rex."},
                                                         {"Remind me where I live.", "You live in Oslo."},
                                                         {"Remind me of my dog's name.", "I do not remember."}}});
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        {
            std::ofstream f(dir.filePath("c.jsonl").toStdString());
            f << "{\"id\": \"c1\", \"turns\": [\"I live in Oslo.\", \"Where do I live?\", \"Tell me a joke.\", "
                 "\"Remind me where I live.\"], \"turn_references\": [null, \"Oslo\", null, \"Oslo\"]}\n"
              << "{\"id\": \"c2\", \"turns\": [\"My dog is called Rex.\", \"What is my dog called?\", \"Tell me a joke.\", "
                 "\"Remind me of my dog's name.\"], \"turn_references\": [null, \"Rex\", null, \"Rex\"]}\n";
        }
        Run imp = runVerdict({"suite", "import", dir.filePath("c.jsonl"), "--name", "c"}, dir);
        QVERIFY2(imp.exitCode == 0, imp.err.constData());
        Run r = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "c", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.json()["n_scored"], json(2));
        QCOMPARE(r.json()["accuracy"], json(0.5));  // c1 right at every scored turn, c2 not
        const QString id = QString::number(r.json()["run_id"].get<long long>());
        const json res = runVerdict({"results", id, "--json"}, dir).json();
        const json t = res["runs"][0]["by_turn"];
        QVERIFY2(t.is_object(), res.dump().c_str());
        QCOMPARE(t["conversations"], json(2));
        QCOMPARE(t["by_turn"].size(), size_t(2));
        QCOMPARE(t["by_turn"][0]["turn"], json(2));
        QCOMPARE(t["by_turn"][0]["correct"], json(2));
        QCOMPARE(t["by_turn"][1]["turn"], json(4));
        QCOMPARE(t["by_turn"][1]["n"], json(2));
        QCOMPARE(t["by_turn"][1]["correct"], json(1));
        QCOMPARE(t["by_range"][0]["from"], json(1));
        QCOMPARE(t["by_range"][0]["to"], json(5));
        Run text = runVerdict({"results", id}, dir);
        QVERIFY2(text.out.contains("multi-turn consistency (2 conversations)") && text.out.contains("turn 4"),
                 text.out.constData());

        // Side by side in the report (the same run twice is enough for the section).
        Run r2 = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "c", "--new", "--json"}, dir);
        QVERIFY2(r2.exitCode == 0, r2.err.constData());
        const QString id2 = QString::number(r2.json()["run_id"].get<long long>());
        Run rep = runVerdict({"report", "--run", id, "--run", id2, "-o", dir.filePath("r.md"), "--format", "md",
                              "--data-json", dir.filePath("r.json")},
                             dir);
        QVERIFY2(rep.exitCode == 0, rep.err.constData());
        std::ifstream dataFile(dir.filePath("r.json").toStdString());
        const json data = json::parse(dataFile, nullptr, false);
        QCOMPARE(data["accuracy"]["by_turn"]["a"]["by_range"][0]["correct"], json(3));
        std::ifstream md(dir.filePath("r.md").toStdString());
        const std::string mdText((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
        QVERIFY2(mdText.find("Multi-turn consistency") != std::string::npos, mdText.c_str());
    }

    // `suite make conversation`: generated conversations of 3 and 8 turns (two each), answered by a
    // fake model that gets the sums of turns 2-4 right and later ones wrong, and recalls the fact
    // in the first conversation of each length only; the accuracy by turn, worked out by hand.
    void generatedConversations() {
        QTemporaryDir dir;
        Run made = runVerdict({"suite", "make", "conversation", "--turns", "3,8", "--conversations", "2", "--name", "g", "--json"}, dir);
        QVERIFY2(made.exitCode == 0, made.err.constData());
        QCOMPARE(made.json()["n_items"], json(4));
        QCOMPARE(made.json()["turns"], json({3, 8}));
        const json shown = runVerdict({"suite", "show", "g", "--json", "--limit", "10"}, dir).json();
        QCOMPARE(shown["items"].size(), size_t(4));
        verdict::test::FakeOpenAiOptions fo;
        fo.answer = "OK.";
        for (const json& it : shown["items"]) {
            const json& turns = it["turns"];
            const json& refs = it["metadata"]["turn_references"];
            QCOMPARE(refs.size(), turns.size());
            QVERIFY(refs[0].is_null());
            for (size_t k = 1; k + 1 < turns.size(); ++k) {
                const std::string q = turns[k].get<std::string>();
                const std::string a = k + 1 <= 4 ? refs[k].get<std::string>() : std::string("0");
                QVERIFY2(!fo.answerFor.count(q) || fo.answerFor[q] == a, q.c_str());  // the seed's sums do not collide
                fo.answerFor[q] = a;
            }
            const bool first = it["id"].get<std::string>().back() == '1';
            fo.answerFor[turns.back().get<std::string>()] = first ? "It is " + refs.back().get<std::string>() + "." : "No idea.";
        }
        verdict::test::FakeOpenAiServer s(fo);
        QVERIFY2(s.ok(), s.error().c_str());
        Run r = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "g", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.json()["accuracy"], json(0.25));  // right when every scored turn is: conv-3-1 only
        const json t = runVerdict({"results", QString::number(r.json()["run_id"].get<long long>()), "--json"}, dir).json()["runs"][0]["by_turn"];
        QVERIFY2(t.is_object(), t.dump().c_str());
        // turn 2: 4 sums right; 3: two questions (one recalled) and two sums (right); 4: two sums
        // right; 5-7: two sums wrong each; 8: two questions, one recalled.
        const std::map<int, std::pair<int, int>> want = {{2, {4, 4}}, {3, {4, 3}}, {4, {2, 2}}, {5, {2, 0}},
                                                         {6, {2, 0}}, {7, {2, 0}}, {8, {2, 1}}};
        QCOMPARE(t["by_turn"].size(), want.size());
        for (const json& c : t["by_turn"]) {
            const auto& [n, correct] = want.at(c["turn"].get<int>());
            QCOMPARE(c["n"], json(n));
            QCOMPARE(c["correct"], json(correct));
        }
        QCOMPARE(t["by_range"][0]["n"], json(12));        // turns 1-5: 4 + 4 + 2 + 2
        QCOMPARE(t["by_range"][0]["correct"], json(9));
        QCOMPARE(t["by_range"][1]["n"], json(6));         // turns 6-10
        QCOMPARE(t["by_range"][1]["correct"], json(1));

        Run bad = runVerdict({"suite", "make", "conversation", "--turns", "2"}, dir);
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains("--turns: '2'"), bad.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliMultiTurn)
#include "test_cli_multiturn.moc"
