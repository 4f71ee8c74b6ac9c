// `verdict compare` and `verdict votes` end to end: the real binary asks the stories260K fixture
// (as A, and through a symlink as B: two references, one set of bytes) the same prompt, stores a
// vote, and reads it back with its summary; bad models and bad options give their exit codes.
#include "cli_process.h"
#include "fixtures.h"

#include <QtTest/QtTest>

#include <QCryptographicHash>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace {

using verdict::test::CliRun;
using verdict::test::runVerdict;

std::string sha256Of(const std::filesystem::path& path) {
    QFile f(QString::fromStdString(path.string()));
    if (!f.open(QIODevice::ReadOnly)) return {};
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(&f);
    return h.result().toHex().toStdString();
}

}  // namespace

class TestCliCompare : public QObject {
    Q_OBJECT
private slots:
    void compareVoteAndSummary() {
        const auto model = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model);
        QTemporaryDir dir;
        const QString db = dir.filePath("votes.db");
        const std::string a = std::filesystem::absolute(model).lexically_normal().string();
        const std::string b = dir.filePath("b.gguf").toStdString();
        std::filesystem::create_symlink(a, b);
        const QStringList common = {"compare", QString::fromStdString(a), QString::fromStdString(b), "--prompt",
                                    "Once upon a time", "--max-tokens", "8", "--seed", "1", "--threads", "1", "--json"};

        // Without --vote: both answers, nothing stored.
        CliRun r = runVerdict(common, db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        nlohmann::json j = r.json();
        QVERIFY2(!j.is_discarded(), r.out.constData());
        QCOMPARE(j["prompt"].get<std::string>(), std::string("Once upon a time"));
        QVERIFY(j["vote"].is_null());
        for (const char* side : {"a", "b"}) {
            const auto& s = j[side];
            QCOMPARE(s["backend"].get<std::string>(), std::string("engine"));
            QVERIFY(s["tokens_in"].get<int64_t>() > 0);
            QVERIFY(s["tokens_out"].get<int64_t>() > 0);
            QVERIFY(s["tokens_out"].get<int64_t>() <= 8);
            QVERIFY(s["ttft_ms"].is_number() && s["ttft_ms"].get<double>() > 0);
            QVERIFY(s["decode_tps"].is_null() || s["decode_tps"].get<double>() > 0);
            QVERIFY(!s["stop_reason"].get<std::string>().empty());
            QVERIFY(s["load_ms"].get<double>() >= 0);
        }
        QCOMPARE(j["a"]["model"].get<std::string>(), a);
        QCOMPARE(j["b"]["model"].get<std::string>(), b);
        // Same bytes, greedy: the same answer.
        QCOMPARE(j["a"]["text"].get<std::string>(), j["b"]["text"].get<std::string>());
        CliRun none = runVerdict({"votes", "--json"}, db);
        QVERIFY2(none.exitCode == 0, none.err.constData());
        QVERIFY(none.json()["votes"].empty());

        // With --vote b: stored, with both files' SHA-256.
        CliRun v = runVerdict(QStringList(common) << "--vote" << "b", db);
        QVERIFY2(v.exitCode == 0, v.err.constData());
        const nlohmann::json vj = v.json();
        QVERIFY(vj["vote"].is_object());
        const int64_t id = vj["vote"]["id"].get<int64_t>();
        QVERIFY(id > 0);
        QCOMPARE(vj["vote"]["winner"].get<std::string>(), std::string("b"));

        CliRun list = runVerdict({"votes", "--json"}, db);
        QVERIFY2(list.exitCode == 0, list.err.constData());
        const nlohmann::json lj = list.json();
        QCOMPARE(lj["votes"].size(), size_t(1));
        const auto& vote = lj["votes"][0];
        QCOMPARE(vote["id"].get<int64_t>(), id);
        QCOMPARE(vote["model_a"].get<std::string>(), a);
        QCOMPARE(vote["model_b"].get<std::string>(), b);
        const std::string sha = sha256Of(model);
        QCOMPARE(vote["sha_a"].get<std::string>(), sha);
        QCOMPARE(vote["sha_b"].get<std::string>(), sha);
        QCOMPARE(vote["prompt"].get<std::string>(), std::string("Once upon a time"));
        QCOMPARE(vote["answer_a"].get<std::string>(), vj["a"]["text"].get<std::string>());
        QCOMPARE(vote["winner"].get<std::string>(), std::string("b"));
        QCOMPARE(vote["blind"].get<bool>(), false);
        QCOMPARE(vote["settings"]["max_tokens"].get<int64_t>(), int64_t(8));
        QCOMPARE(vote["settings"]["seed"].get<int64_t>(), int64_t(1));
        QVERIFY(lj["summary"].is_null());

        // The head-to-head, asked from B's side: B won the one decided vote.
        // Wilson for 1/1: lo = 1/(1 + z^2) = 0.206549, hi = 1.
        CliRun s = runVerdict({"votes", "--a", QString::fromStdString(b), "--b", QString::fromStdString(a), "--json"}, db);
        QVERIFY2(s.exitCode == 0, s.err.constData());
        const nlohmann::json sj = s.json()["summary"];
        QCOMPARE(sj["votes"].get<int64_t>(), int64_t(1));
        QCOMPARE(sj["wins_a"].get<int64_t>(), int64_t(1));
        QCOMPARE(sj["wins_b"].get<int64_t>(), int64_t(0));
        QCOMPARE(sj["ties"].get<int64_t>(), int64_t(0));
        QCOMPARE(sj["decided"].get<int64_t>(), int64_t(1));
        QCOMPARE(sj["win_rate_a"].get<double>(), 1.0);
        QVERIFY(std::abs(sj["win_rate_a_ci"][0].get<double>() - 0.206549) < 1e-5);
        QCOMPARE(sj["win_rate_a_ci"][1].get<double>(), 1.0);
        QCOMPARE(s.json()["votes"].size(), size_t(1));

        // Text output mentions the stored vote.
        CliRun text = runVerdict({"votes", "--a", QString::fromStdString(a), "--b", QString::fromStdString(b)}, db);
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("B won 1"), text.out.constData());
    }

    void badInput() {
        const auto model = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model);
        QTemporaryDir dir;
        const QString db = dir.filePath("votes.db");
        const QString missing = dir.filePath("no-such-model.gguf");
        CliRun r = runVerdict({"compare", QString::fromStdString(model.string()), missing, "-p", "hi", "--max-tokens", "2"}, db);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(missing.toUtf8()), r.err.constData());
        QVERIFY2(r.err.contains("model B"), r.err.constData());

        CliRun badVote = runVerdict({"compare", QString::fromStdString(model.string()), missing, "-p", "hi", "--vote", "c"}, db);
        QCOMPARE(badVote.exitCode, 1);
        CliRun noPrompt = runVerdict({"compare", QString::fromStdString(model.string()), missing}, db);
        QCOMPARE(noPrompt.exitCode, 1);
        CliRun oneModel = runVerdict({"compare", QString::fromStdString(model.string()), "-p", "hi"}, db);
        QCOMPARE(oneModel.exitCode, 1);
        CliRun halfPair = runVerdict({"votes", "--a", "x.gguf"}, db);
        QCOMPARE(halfPair.exitCode, 1);
    }
};

QTEST_GUILESS_MAIN(TestCliCompare)
#include "test_cli_compare.moc"
