// Needle in a haystack end to end (issue 22, long context): `verdict suite make needle`, a run
// against the fake OpenAI server that finds the needles at depth 0 and misses those at 100 %,
// and `verdict results` with the heat map; a local model whose context cannot hold the prompts
// gets its cells marked, with the reason and the KV cache each length needs.
#include "cli_process.h"
#include "fake_openai_server.h"
#include "fixtures.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

using Run = verdict::test::CliRun;

Run runVerdict(const QStringList& args, const QTemporaryDir& dir) { return verdict::test::runVerdictIn(args, dir.path()); }

}  // namespace

class TestCliNeedle : public QObject {
    Q_OBJECT
private slots:
    void makeRunAndHeatMap() {
        QTemporaryDir dir;
        Run made = runVerdict({"suite", "make", "needle", "--lengths", "128,512", "--depths", "0,100", "--needles", "2",
                               "--name", "n", "--json"},
                              dir);
        QVERIFY2(made.exitCode == 0, made.err.constData());
        QCOMPARE(made.json()["n_items"], json(8));
        QCOMPARE(made.json()["token_count"], json("estimate"));
        QCOMPARE(made.json()["suite"]["shape"], json("needle"));

        // The fake model knows the needles at depth 0 (its answer keyed by the question's subject).
        const json shown = runVerdict({"suite", "show", "n", "--json", "--limit", "100"}, dir).json();
        QCOMPARE(shown["items"].size(), size_t(8));
        std::map<std::string, int> subjects;
        auto subjectOf = [](const std::string& prompt) {
            const size_t q = prompt.rfind("What is the secret code of ");
            return prompt.substr(q, prompt.find('?', q) - q);
        };
        for (const auto& it : shown["items"]) ++subjects[subjectOf(it["prompt"].get<std::string>())];
        verdict::test::FakeOpenAiOptions fo;
        fo.answer = "I do not know.";
        std::map<int64_t, std::pair<int, int>> expectedAtDepth0;  // length -> (right, n)
        for (const auto& it : shown["items"]) {
            const std::string subject = subjectOf(it["prompt"].get<std::string>());
            const int64_t len = it["metadata"]["needle"]["context_tokens"].get<int64_t>();
            if (it["metadata"]["needle"]["depth_pct"].get<double>() != 0) continue;
            auto& e = expectedAtDepth0[len];
            ++e.second;
            if (subjects[subject] != 1) continue;  // a subject twice in the suite: left unanswered
            fo.answerFor[subject] = "The code is " + it["references"][0].get<std::string>() + ".";
            ++e.first;
        }
        QVERIFY(!fo.answerFor.empty());  // some needle is found: the accuracy below is not vacuous
        verdict::test::FakeOpenAiServer s(fo);
        QVERIFY2(s.ok(), s.error().c_str());
        Run r = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "n", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString id = QString::number(r.json()["run_id"].get<long long>());
        const json res = runVerdict({"results", id, "--json"}, dir).json();
        const json g = res["runs"][0]["needle"];
        QVERIFY2(g.is_object(), res.dump().c_str());
        QCOMPARE(g["lengths"], json({128, 512}));
        QCOMPARE(g["depths"], json({0.0, 100.0}));
        QVERIFY(g["kv_bytes_per_token"].is_null());  // an endpoint: its cache is not ours to know
        QCOMPARE(g["cells"].size(), size_t(4));
        for (const auto& c : g["cells"]) {
            QCOMPARE(c["n"], json(2));
            QVERIFY(c["held"].get<bool>());
            const int64_t len = c["context_tokens"].get<int64_t>();
            const double want = c["depth_pct"].get<double>() == 0
                                    ? double(expectedAtDepth0[len].first) / expectedAtDepth0[len].second
                                    : 0.0;
            QCOMPARE(c["accuracy"].get<double>(), want);
        }
        Run text = runVerdict({"results", id}, dir);
        QVERIFY2(text.out.contains("needle in a haystack: accuracy by prompt length"), text.out.constData());

        // A local model with a 128-token context: every cell marked, the reason and the KV cache given.
        const auto model = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model);
        Run local = runVerdict({"run", QString::fromStdString(model.string()), "--suite", "n", "--max-tokens", "4", "--json"}, dir);
        QVERIFY2(local.exitCode == 0, local.err.constData());
        const QString lid = QString::number(local.json()["run_id"].get<long long>());
        const json lg = runVerdict({"results", lid, "--json"}, dir).json()["runs"][0]["needle"];
        QVERIFY(lg["kv_bytes_per_token"].get<uint64_t>() > 0);
        for (const auto& c : lg["cells"]) {
            QVERIFY(!c["held"].get<bool>());
            QVERIFY2(c["error"].get<std::string>().find("does not fit") != std::string::npos, c.dump().c_str());
            QCOMPARE(c["kv_bytes"].get<uint64_t>(), lg["kv_bytes_per_token"].get<uint64_t>() * c["context_tokens"].get<uint64_t>());
        }
        Run ltext = runVerdict({"results", lid}, dir);
        QVERIFY2(ltext.out.contains("n/a") && ltext.out.contains("KV cache") && ltext.out.contains("failed: "),
                 ltext.out.constData());
    }

    // Any suite at several context lengths: `suite make padded`, a run against the fake server
    // that answers the short prompts right and gets lost in the long ones, the same heat map.
    void anySuiteAtSeveralLengths() {
        QTemporaryDir dir;
        const QString file = dir.filePath("qa.jsonl");
        {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"question\": \"What is two plus two?\", \"answer\": \"4\"}\n"
                    "{\"question\": \"What is three plus three?\", \"answer\": \"6\"}\n");
        }
        Run imported = runVerdict({"suite", "import", file, "--name", "qa", "--json"}, dir);
        QCOMPARE(imported.exitCode, 0);
        Run made = runVerdict({"suite", "make", "padded", "--suite", "qa", "--lengths", "128,1k", "--json"}, dir);
        QVERIFY2(made.exitCode == 0, made.err.constData());
        QCOMPARE(made.json()["suite"]["name"], json("qa@128,1k"));
        QCOMPARE(made.json()["suite"]["shape"], imported.json()["suite"]["shape"]);  // the prompts keep their layout
        QCOMPARE(made.json()["n_items"], json(4));
        QCOMPARE(made.json()["lengths"], json({128, 1024}));
        QVERIFY(made.json()["prompt_tokens"]["max"].get<int64_t>() <= 1024);
        QVERIFY(made.json()["prompt_tokens"]["max"].get<int64_t>() > 900);
        const json shown = runVerdict({"suite", "show", "qa@128,1k", "--json", "--limit", "10"}, dir).json();
        QCOMPARE(shown["items"][0]["id"], json("1@128"));
        QCOMPARE(shown["items"][3]["metadata"]["padded"]["item"], json("2"));

        // The fake model answers each question by its subject only in the short prompts.
        verdict::test::FakeOpenAiOptions fo;
        fo.answer = "I am not sure.";
        fo.answerFor["What is two plus two?"] = "4";
        fo.answerFor["What is three plus three?"] = "6";
        verdict::test::FakeOpenAiServer s(fo);
        QVERIFY2(s.ok(), s.error().c_str());
        Run r = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "qa@128,1k", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json res = runVerdict({"results", QString::number(r.json()["run_id"].get<long long>()), "--json"}, dir).json();
        const json g = res["runs"][0]["needle"];
        QVERIFY2(g.is_object(), res.dump().c_str());
        QCOMPARE(g["lengths"], json({128, 1024}));
        QCOMPARE(g["depths"], json({100.0}));
        QCOMPARE(g["cells"].size(), size_t(2));
        for (const auto& c : g["cells"]) {
            QCOMPARE(c["n"], json(2));
            QCOMPARE(c["accuracy"].get<double>(), 1.0);  // the fake model finds the question at the end at any length
        }

        // Bad input: no --suite, no such suite, a conversation suite.
        Run noSuite = runVerdict({"suite", "make", "padded", "--lengths", "1k"}, dir);
        QCOMPARE(noSuite.exitCode, 1);
        QVERIFY2(noSuite.err.contains("--suite is required"), noSuite.err.constData());
        Run missing = runVerdict({"suite", "make", "padded", "--suite", "nope", "--lengths", "1k"}, dir);
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains("no suite 'nope'"), missing.err.constData());
        const QString chat = dir.filePath("chat.jsonl");
        {
            QFile f(chat);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"answer\": \"hello\"}\n");
        }
        QCOMPARE(runVerdict({"suite", "import", chat, "--name", "chat"}, dir).exitCode, 0);
        Run conv = runVerdict({"suite", "make", "padded", "--suite", "chat", "--lengths", "1k"}, dir);
        QCOMPARE(conv.exitCode, 2);
        QVERIFY2(conv.err.contains("conversation"), conv.err.constData());
    }

    void badOptions() {
        QTemporaryDir dir;
        Run none = runVerdict({"suite", "make", "needle"}, dir);
        QCOMPARE(none.exitCode, 1);  // usage
        QVERIFY2(none.err.contains("--lengths is required"), none.err.constData());
        Run depth = runVerdict({"suite", "make", "needle", "--lengths", "1k", "--depths", "0,120"}, dir);
        QCOMPARE(depth.exitCode, 1);
        QVERIFY2(depth.err.contains("'120'"), depth.err.constData());
        Run kind = runVerdict({"suite", "make", "haystack"}, dir);
        QCOMPARE(kind.exitCode, 1);
        Run hay = runVerdict({"suite", "make", "needle", "--lengths", "1k", "--haystack", dir.filePath("missing.txt")}, dir);
        QCOMPARE(hay.exitCode, 2);  // bad input
        QVERIFY2(hay.err.contains("cannot open"), hay.err.constData());
        Run tok = runVerdict({"suite", "make", "needle", "--lengths", "1k", "--tokenizer", dir.filePath("missing.gguf")}, dir);
        QCOMPARE(tok.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestCliNeedle)
#include "test_cli_needle.moc"
