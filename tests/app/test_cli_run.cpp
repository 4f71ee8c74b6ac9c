// The suite/run/results/diff/export/verify commands end to end: the real binary on the
// stories260K fixture model and a results database in a temporary directory. Includes the
// crash test: `verdict run` is killed with SIGKILL while it stores items, then resumed; every
// item must end up stored exactly once, scored, with the hash chain intact.
#include "fixtures.h"

#include <QtTest/QtTest>

#include <sqlite3.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
    nlohmann::json json() const { return nlohmann::json::parse(out.toStdString(), nullptr, false); }
};

Run runVerdict(const QStringList& args, const QString& db, int timeoutMs = 300000) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("VERDICT_DB", db);
    p.setProcessEnvironment(env);
    p.start(VERDICT_BINARY, args);
    p.waitForFinished(timeoutMs);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

// One scalar from the database, read with SQLite directly (as a second, independent reader).
long long queryInt(const QString& db, const std::string& sql) {
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        sqlite3_close(h);
        return -1;
    }
    sqlite3_busy_timeout(h, 5000);
    sqlite3_stmt* st = nullptr;
    long long v = -1;
    if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

bool execSql(const QString& db, const std::string& sql) {
    sqlite3* h = nullptr;
    sqlite3_open(db.toUtf8().constData(), &h);
    const bool ok = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_close(h);
    return ok;
}

// A generation suite in the "prompt" shape: story openings; the reference is what a tiny story
// model plausibly continues with (scored with exact/contains by the importer's defaults).
QString writeStorySuite(const QTemporaryDir& dir, int n, const QString& name = "stories.jsonl") {
    const QString path = dir.filePath(name);
    std::ofstream f(path.toStdString());
    const char* openings[] = {"Once upon a time", "One day, a little girl", "The cat", "Tom and his dog",
                              "There was a big tree", "Lily wanted to"};
    for (int i = 0; i < n; ++i) {
        std::string id = "s";  // appended, not "s" + ...: GCC 12 warns falsely (-Wrestrict) on that
        id += std::to_string(i);
        nlohmann::json line = {{"id", id},
                               {"prompt", std::string(openings[i % 6]) + " (" + std::to_string(i) + ")"},
                               {"reference", "there"},
                               {"category", i % 2 ? "odd" : "even"}};
        f << line.dump() << "\n";
    }
    return path;
}

QString writeMcSuite(const QTemporaryDir& dir) {
    const QString path = dir.filePath("mc.jsonl");
    std::ofstream f(path.toStdString());
    const nlohmann::json lines[] = {
        {{"question", "Once upon a time there was a little"}, {"choices", {"girl", "refrigerator", "theorem"}}, {"answer", 0}},
        {{"question", "The sun was"}, {"choices", {"algebra", "shining", "seventeen"}}, {"answer", 1}},
        {{"question", "She went to the"}, {"choices", {"park", "of", "quickly"}}, {"answer", 0}},
        {{"question", "Tom was very"}, {"choices", {"the", "happy", "and"}}, {"answer", 1}},
        {{"question", "This is a line with a bad answer"}, {"choices", {"a", "b"}}, {"answer", 7}},
    };
    for (const auto& l : lines) f << l.dump() << "\n";
    return path;
}

}  // namespace

class TestCliRun : public QObject {
    Q_OBJECT

    QString model() const { return QString::fromStdString(verdict::test::fixture("models/stories260K.gguf").string()); }

private slots:
    void suiteImportListShow() {
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        Run imp = runVerdict({"suite", "import", writeMcSuite(dir), "--name", "tiny-mc", "--json"}, db);
        QVERIFY2(imp.exitCode == 0, imp.err.constData());
        auto j = imp.json();
        QCOMPARE(j["imported"].get<int>(), 4);
        QCOMPARE(j["rejected"].size(), size_t(1));
        QCOMPARE(j["rejected"][0]["line"].get<int>(), 5);
        QVERIFY(j["rejected"][0]["reason"].is_string());
        QCOMPARE(j["suite"]["name"].get<std::string>(), std::string("tiny-mc"));
        QCOMPARE(j["suite"]["n_items"].get<int>(), 4);
        QCOMPARE(j["suite"]["content_hash"].get<std::string>().size(), size_t(64));
        QVERIFY(!j["already_stored"].get<bool>());

        Run again = runVerdict({"suite", "import", writeMcSuite(dir), "--name", "whatever", "--json"}, db);
        QCOMPARE(again.exitCode, 0);
        QVERIFY(again.json()["already_stored"].get<bool>());

        Run list = runVerdict({"suite", "list", "--json"}, db);
        QCOMPARE(list.exitCode, 0);
        QCOMPARE(list.json()["suites"].size(), size_t(1));
        Run show = runVerdict({"suite", "show", "tiny-mc", "--json"}, db);
        QCOMPARE(show.exitCode, 0);
        QCOMPARE(show.json()["items"].size(), size_t(4));
        QCOMPARE(show.json()["items"][1]["gold"].get<int>(), 1);
        Run missing = runVerdict({"suite", "show", "nope"}, db);
        QCOMPARE(missing.exitCode, 2);
        QVERIFY(missing.err.startsWith("verdict suite show: "));
        Run text = runVerdict({"suite", "list"}, db);
        QVERIFY(text.out.contains("tiny-mc"));
        QCOMPARE(runVerdict({"suite", "frobnicate"}, db).exitCode, 1);
        QCOMPARE(runVerdict({"suite", "import", dir.filePath("absent.jsonl")}, db).exitCode, 2);
    }

    void runResultsDiffExportVerify() {
        const auto m = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(m);
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        QCOMPARE(runVerdict({"suite", "import", writeMcSuite(dir), "--name", "mc"}, db).exitCode, 0);
        QCOMPARE(runVerdict({"suite", "import", writeStorySuite(dir, 6), "--name", "stories"}, db).exitCode, 0);

        // Log-likelihood multiple choice.
        Run a = runVerdict({"run", model(), "--suite", "mc", "--json", "--threads", "1"}, db);
        QVERIFY2(a.exitCode == 0, a.err.constData());
        auto ja = a.json();
        QCOMPARE(ja["status"].get<std::string>(), std::string("completed"));
        QCOMPARE(ja["n_items"].get<int>(), 4);
        QCOMPARE(ja["n_errors"].get<int>(), 0);
        QVERIFY(ja["accuracy"].is_number());
        QVERIFY(ja["by_category"].is_object());
        QCOMPARE(ja["accuracy_ci"].size(), size_t(2));
        const int runA = ja["run_id"].get<int>();

        // The same suite by generation (letters scored by mc_letter): a second run to compare.
        Run b = runVerdict({"run", model(), "--suite", "mc", "--mc-mode", "generate", "--max-tokens", "4", "--json"}, db);
        QVERIFY2(b.exitCode == 0, b.err.constData());
        const int runB = b.json()["run_id"].get<int>();
        QVERIFY(runB != runA);

        // Generation with the default scorers, limited.
        Run g = runVerdict({"run", model(), "--suite", "stories", "--limit", "4", "--max-tokens", "8", "--json"}, db);
        QVERIFY2(g.exitCode == 0, g.err.constData());
        auto jg = g.json();
        QCOMPARE(jg["n_items"].get<int>(), 4);
        QCOMPARE(jg["n_planned"].get<int>(), 4);
        QVERIFY(jg["mean_decode_tps"].is_number() || jg["mean_ttft_ms"].is_number());
        const int runG = jg["run_id"].get<int>();

        Run res = runVerdict({"results", "--json"}, db);
        QCOMPARE(res.exitCode, 0);
        auto runs = res.json()["runs"];
        QCOMPARE(runs.size(), size_t(3));
        QCOMPARE(runs[0]["run_id"].get<int>(), runA);
        QCOMPARE(runs[0]["suite"]["name"].get<std::string>(), std::string("mc"));
        QCOMPARE(runs[0]["model"]["sha256"].get<std::string>().size(), size_t(64));
        QCOMPARE(runs[0]["accuracy"], ja["accuracy"]);
        Run one = runVerdict({"results", QString::number(runG), "--json"}, db);
        QCOMPARE(one.json()["runs"].size(), size_t(1));
        QCOMPARE(one.json()["runs"][0]["generation"]["max_tokens"].get<int>(), 8);
        QCOMPARE(runVerdict({"results", "999"}, db).exitCode, 2);
        QVERIFY(runVerdict({"results"}, db).out.contains("completed"));

        Run d = runVerdict({"diff", QString::number(runA), QString::number(runB), "--json"}, db);
        QVERIFY2(d.exitCode == 0, d.err.constData());
        auto jd = d.json();
        QCOMPARE(jd["n_pairs"].get<int>() + jd["unscored"].get<int>(), 4);
        const int bDisc = jd["mcnemar"]["b"].get<int>(), cDisc = jd["mcnemar"]["c"].get<int>();
        QCOMPARE(jd["a_right_b_wrong"].size(), size_t(bDisc));
        QCOMPARE(jd["b_right_a_wrong"].size(), size_t(cDisc));
        QVERIFY(jd["mcnemar"]["p_value"].get<double>() > 0 && jd["mcnemar"]["p_value"].get<double>() <= 1);
        QCOMPARE(jd["difference_ci"].size(), size_t(2));
        QCOMPARE(jd["bootstrap"]["resamples"].get<int>(), 10000);
        Run cross = runVerdict({"diff", QString::number(runA), QString::number(runG)}, db);
        QCOMPARE(cross.exitCode, 2);
        QVERIFY(cross.err.contains("different suites"));

        Run csv = runVerdict({"export", QString::number(runG), "--format", "csv"}, db);
        QCOMPARE(csv.exitCode, 0);
        QVERIFY(csv.out.startsWith("run_id,item_idx,item_id,category,correct,output,prompt"));
        Run ej = runVerdict({"export", QString::number(runA), "--format", "json"}, db);
        QCOMPARE(ej.exitCode, 0);
        auto je = ej.json();
        QCOMPARE(je["items"].size(), size_t(4));
        QCOMPARE(je["items"][0]["scores"][0]["name"].get<std::string>(), std::string("mc_loglik"));
        QCOMPARE(je["items"][0]["details"]["logprobs"].size(), size_t(3));
        QCOMPARE(je["run"]["chat_template_mode"].get<std::string>(), std::string("raw"));
        QCOMPARE(runVerdict({"export", QString::number(runA), "--format", "xml"}, db).exitCode, 1);

        Run v = runVerdict({"verify", "--json"}, db);
        QCOMPARE(v.exitCode, 0);
        QVERIFY(v.json()["ok"].get<bool>());
        QCOMPARE(v.json()["rows_checked"].get<int>(), 4 + 4 + 4);

        // Tamper with one stored output through raw SQL: verify names that row.
        const long long seq = queryInt(db, "SELECT seq FROM run_items WHERE run_id = " + std::to_string(runG) +
                                               " AND item_idx = 2");
        QVERIFY(seq > 0);
        QVERIFY(execSql(db, "UPDATE run_items SET output = 'there' WHERE seq = " + std::to_string(seq)));
        Run broken = runVerdict({"verify", "--db", db}, dir.filePath("ignored.db"));  // --db wins over VERDICT_DB
        QCOMPARE(broken.exitCode, 2);
        QVERIFY2(broken.out.contains(QByteArray("run_items seq ") + QByteArray::number(seq) + " (run " +
                                     QByteArray::number(runG) + ", item 2)"),
                 broken.out.constData());
        Run bj = runVerdict({"verify", "--json"}, db);
        QCOMPARE(bj.json()["first_broken"]["seq"].get<long long>(), seq);
        QCOMPARE(bj.json()["first_broken"]["item_idx"].get<int>(), 2);
    }

    // Open-ended prompts (no reference, no choices): nothing is scored, and diff must say so
    // instead of printing "accuracy A 0.0%, B 0.0%".
    void diffOfUnscoredRuns() {
        const auto m = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(m);
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        const QString suite = dir.filePath("open.jsonl");
        {
            std::ofstream f(suite.toStdString());
            f << R"({"prompt": "用Python写一个函数，计算斐波那契数列的第n项。", "category": "code_python"})" << "\n"
              << R"({"prompt": "解释Transformer模型中的多头注意力机制。", "category": "nlp_theory"})" << "\n"
              << R"({"prompt": "给定以下需求，设计一个数据库表结构：用户、订单、商品。", "category": "system_design"})" << "\n";
        }
        QCOMPARE(runVerdict({"suite", "import", suite, "--name", "open"}, db).exitCode, 0);
        Run a = runVerdict({"run", model(), "--suite", "open", "--max-tokens", "2", "--json"}, db);
        QVERIFY2(a.exitCode == 0, a.err.constData());
        Run b = runVerdict({"run", model(), "--suite", "open", "--max-tokens", "3", "--json"}, db);
        QVERIFY2(b.exitCode == 0, b.err.constData());
        const QString ra = QString::number(a.json()["run_id"].get<int>()), rb = QString::number(b.json()["run_id"].get<int>());
        QVERIFY(ra != rb);

        Run text = runVerdict({"diff", ra, rb}, db);
        QVERIFY2(text.exitCode == 0, text.err.constData());
        QVERIFY2(text.out.contains("nothing was scored"), text.out.constData());
        QVERIFY2(text.out.contains("no reference answer"), text.out.constData());
        QVERIFY2(text.out.contains("--vote"), text.out.constData());
        QVERIFY2(!text.out.contains("%"), text.out.constData());  // no unmeasured percentage

        Run js = runVerdict({"diff", ra, rb, "--json"}, db);
        QCOMPARE(js.exitCode, 0);
        auto j = js.json();
        QCOMPARE(j["n_pairs"].get<int>(), 0);
        QCOMPARE(j["unscored"].get<int>(), 3);
        QCOMPARE(j["unscored_reasons"]["no_scorer"].get<int>(), 3);
        QCOMPARE(j["unscored_reasons"]["error"].get<int>(), 0);
        QVERIFY(j["accuracy_a"].is_null());
        QVERIFY(j["accuracy_b"].is_null());
        QVERIFY(j["difference"].is_null());
        QVERIFY(j["mcnemar"]["p_value"].is_null());
        QVERIFY(j["nothing_scored"].is_string());
    }

    // verify says what is wrong with a file instead of "ok: 0 runs": empty, cut, not SQLite, or a
    // damaged page (SQLite's integrity_check).
    void verifyDamagedFiles() {
        QTemporaryDir dir;
        auto write = [&](const QString& name, const QByteArray& bytes) {
            QFile f(dir.filePath(name));
            f.open(QIODevice::WriteOnly);
            f.write(bytes);
            return dir.filePath(name);
        };
        const QString unused = dir.filePath("unused.db");
        Run empty = runVerdict({"verify", "--db", write("empty.db", {})}, unused);
        QCOMPARE(empty.exitCode, 2);
        QVERIFY2(empty.err.contains("is empty (0 bytes)"), empty.err.constData());
        QCOMPARE(QFileInfo(dir.filePath("empty.db")).size(), 0);  // not turned into a fresh database
        Run cut = runVerdict({"verify", "--db", write("cut.db", QByteArray("SQLite format 3\0", 16) + QByteArray(84, '\0'))}, unused);
        QCOMPARE(cut.exitCode, 2);
        QVERIFY2(cut.err.contains("is truncated (100 bytes"), cut.err.constData());
        Run other = runVerdict({"verify", "--db", write("other.db", QByteArray(8192, 'x'))}, unused);
        QCOMPARE(other.exitCode, 2);
        QVERIFY2(other.err.contains("not an SQLite database"), other.err.constData());

        // A real database with one page of an index overwritten.
        const QString db = dir.filePath("v.db");
        QCOMPARE(runVerdict({"suite", "import", writeStorySuite(dir, 40), "--name", "s"}, db).exitCode, 0);
        QCOMPARE(runVerdict({"verify"}, db).exitCode, 0);
        const long long page = queryInt(db, "PRAGMA page_size");
        const long long root = queryInt(db, "SELECT rootpage FROM sqlite_master WHERE type = 'index' AND rootpage > 1 "
                                            "ORDER BY rootpage DESC LIMIT 1");
        QVERIFY(page > 0 && root > 1);
        {
            QFile f(db);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.seek((root - 1) * page));
            f.write(QByteArray(int(page), char(0xff)));
        }
        Run damaged = runVerdict({"verify", "--json"}, db);
        QCOMPARE(damaged.exitCode, 2);
        const auto j = damaged.json();
        QVERIFY2(j.is_object() && !j["ok"].get<bool>(), damaged.out.constData());
        QCOMPARE(j["first_broken"]["table"].get<std::string>(), std::string("sqlite"));
        QVERIFY(damaged.err.contains("damaged"));
    }

    void usageErrors() {
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        QCOMPARE(runVerdict({"run"}, db).exitCode, 1);
        QCOMPARE(runVerdict({"run", model()}, db).exitCode, 1);  // no --suite
        QCOMPARE(runVerdict({"run", model(), "--suite", "x", "--limit", "0"}, db).exitCode, 1);
        QCOMPARE(runVerdict({"run", model(), "--suite", "x", "--mc-mode", "dice"}, db).exitCode, 1);
        Run noSuite = runVerdict({"run", model(), "--suite", "absent"}, db);
        QCOMPARE(noSuite.exitCode, 2);
        QVERIFY(noSuite.err.contains("no suite named 'absent'"));
        QCOMPARE(runVerdict({"run", "--resume", "42"}, db).exitCode, 2);
        QCOMPARE(runVerdict({"diff", "1"}, db).exitCode, 1);
        QCOMPARE(runVerdict({"verify", "extra"}, db).exitCode, 1);
        Run absent = runVerdict({"verify", "--db", dir.filePath("nothing-here.db")}, db);
        QCOMPARE(absent.exitCode, 2);
        QVERIFY(absent.err.contains("no database at"));
        QVERIFY(!QFile::exists(dir.filePath("nothing-here.db")));
        QCOMPARE(runVerdict({"export", "abc", "--format", "csv"}, db).exitCode, 1);
    }

    // kill -9 in the middle of a run, then resume: every item stored exactly once, all scored.
    void killAndResume() {
        const auto m = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(m);
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        constexpr int kItems = 60;
        QCOMPARE(runVerdict({"suite", "import", writeStorySuite(dir, kItems), "--name", "stories"}, db).exitCode, 0);
        const QStringList runArgs = {"run", model(), "--suite", "stories", "--max-tokens", "48", "--threads", "1", "--json"};

        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("VERDICT_DB", db);
        p.setProcessEnvironment(env);
        p.start(VERDICT_BINARY, runArgs);
        QVERIFY(p.waitForStarted());
        // Wait until some items are stored, then kill without warning.
        QElapsedTimer t;
        t.start();
        long long stored = 0;
        while (t.elapsed() < 120000 && p.state() == QProcess::Running) {
            stored = queryInt(db, "SELECT count(*) FROM run_items");
            if (stored >= 5) break;
            QThread::msleep(5);
        }
        QVERIFY2(p.state() == QProcess::Running, "the run finished before it could be killed; make the suite larger");
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitStatus(), QProcess::CrashExit);
        const long long afterKill = queryInt(db, "SELECT count(*) FROM run_items");
        QVERIFY2(afterKill >= 5 && afterKill < kItems, qPrintable(QString::number(afterKill)));
        QCOMPARE(queryInt(db, "SELECT count(*) FROM runs WHERE status = 'running'"), 1LL);
        const long long runId = queryInt(db, "SELECT id FROM runs");

        // Resume: here explicitly by id (the same command without --resume also resumes, below).
        Run r = runVerdict({"run", "--resume", QString::number(runId), "--json"}, db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.err.contains("resuming run"));
        auto j = r.json();
        QCOMPARE(j["run_id"].get<long long>(), runId);
        QVERIFY(j["resumed"].get<bool>());
        QCOMPARE(j["n_items"].get<int>(), kItems);
        QCOMPARE(j["stored_now"].get<long long>(), kItems - afterKill);
        QCOMPARE(j["status"].get<std::string>(), std::string("completed"));

        QCOMPARE(queryInt(db, "SELECT count(*) FROM run_items"), (long long)kItems);
        QCOMPARE(queryInt(db, "SELECT count(DISTINCT item_idx) FROM run_items"), (long long)kItems);
        QCOMPARE(queryInt(db, "SELECT min(item_idx) FROM run_items"), 0LL);
        QCOMPARE(queryInt(db, "SELECT max(item_idx) FROM run_items"), (long long)kItems - 1);
        QCOMPARE(queryInt(db, "SELECT count(*) FROM run_items WHERE scores = '[]' OR correct IS NULL"), 0LL);
        QCOMPARE(queryInt(db, "SELECT count(*) FROM run_items WHERE error != ''"), 0LL);
        QCOMPARE(queryInt(db, "SELECT count(*) FROM runs"), 1LL);
        Run v = runVerdict({"verify"}, db);
        QVERIFY2(v.exitCode == 0, v.out.constData());

        // Greedy decoding with a per-item seed: a killed-and-resumed run equals an uninterrupted one.
        Run fresh = runVerdict({"run", model(), "--suite", "stories", "--max-tokens", "48", "--threads", "1", "--json"}, db);
        QCOMPARE(fresh.exitCode, 0);
        const long long freshId = fresh.json()["run_id"].get<long long>();
        QVERIFY(freshId != runId);  // the first run is completed: a new run
        QCOMPARE(queryInt(db, "SELECT count(*) FROM run_items a JOIN run_items b ON a.item_idx = b.item_idx "
                              "WHERE a.run_id = " + std::to_string(runId) + " AND b.run_id = " +
                                  std::to_string(freshId) + " AND a.output = b.output"),
                 (long long)kItems);
    }

    // Automatic resume after a kill (same model, suite and settings), and two processes writing
    // the same database at once.
    void autoResumeAndConcurrentProcesses() {
        const auto m = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(m);
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        constexpr int kItems = 40;
        QCOMPARE(runVerdict({"suite", "import", writeStorySuite(dir, kItems), "--name", "s1"}, db).exitCode, 0);
        QCOMPARE(runVerdict({"suite", "import", writeStorySuite(dir, kItems / 2, "b.jsonl"), "--name", "s2"}, db).exitCode, 0);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("VERDICT_DB", db);

        // Two runs in two processes at once, on different suites.
        QProcess p1, p2;
        p1.setProcessEnvironment(env);
        p2.setProcessEnvironment(env);
        p1.start(VERDICT_BINARY, {"run", model(), "--suite", "s1", "--max-tokens", "32", "--threads", "1", "--json"});
        p2.start(VERDICT_BINARY, {"run", model(), "--suite", "s2", "--max-tokens", "32", "--threads", "1", "--json"});
        QVERIFY(p1.waitForFinished(300000));
        QVERIFY(p2.waitForFinished(300000));
        QCOMPARE(p1.exitCode(), 0);
        QCOMPARE(p2.exitCode(), 0);
        QCOMPARE(queryInt(db, "SELECT count(*) FROM run_items"), (long long)(kItems + kItems / 2));
        QCOMPARE(runVerdict({"verify"}, db).exitCode, 0);

        // Kill a run of s2 with other settings, then run the same command again: it continues.
        const QStringList args = {"run", model(), "--suite", "s1", "--max-tokens", "40", "--threads", "1", "--json"};
        QProcess k;
        k.setProcessEnvironment(env);
        k.start(VERDICT_BINARY, args);
        QVERIFY(k.waitForStarted());
        QElapsedTimer t;
        t.start();
        const std::string countNew = "SELECT count(*) FROM run_items WHERE run_id = (SELECT max(id) FROM runs)";
        while (t.elapsed() < 120000 && k.state() == QProcess::Running) {
            if (queryInt(db, "SELECT count(*) FROM runs") == 3 && queryInt(db, countNew) >= 3) break;
            QThread::msleep(5);
        }
        QVERIFY(k.state() == QProcess::Running);
        ::kill(static_cast<pid_t>(k.processId()), SIGKILL);
        QVERIFY(k.waitForFinished(10000));
        const long long killedRun = queryInt(db, "SELECT max(id) FROM runs");
        Run again = runVerdict(args, db);
        QVERIFY2(again.exitCode == 0, again.err.constData());
        QCOMPARE(again.json()["run_id"].get<long long>(), killedRun);
        QVERIFY(again.json()["resumed"].get<bool>());
        QCOMPARE(queryInt(db, "SELECT count(*) FROM run_items WHERE run_id = " + std::to_string(killedRun)),
                 (long long)kItems);
        QCOMPARE(runVerdict({"verify"}, db).exitCode, 0);
    }
};

QTEST_GUILESS_MAIN(TestCliRun)
#include "test_cli_run.moc"
