// Schema migrations: a database of every earlier version (with rows written by that version's
// own SQL, frozen here: v1 runs and items, v2 a sweep and its point, v3 a vote) upgrades to the current schema, keeps its rows and its audit chain, ends
// with exactly the schema of a fresh database, and migrating again changes nothing.
#include "core/store/audit_chain.h"
#include "core/store/database.h"
#include "core/store/migrations.h"
#include "core/store/store.h"

#include <QtTest/QtTest>

#include <atomic>
#include <mutex>
#include <thread>

using namespace verdict;
using namespace verdict::core;

namespace {

std::string schemaDump(Database& db) {
    auto st = db.prepare("SELECT type || ' ' || name || ': ' || ifnull(sql, '') FROM sqlite_master "
                         "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name");
    std::string out;
    while (st.ok() && *st->step()) out += st->columnText(0) + "\n";
    return out;
}

int64_t count(Database& db, const std::string& table) {
    auto st = db.prepare("SELECT count(*) FROM " + table);
    return st.ok() && *st->step() ? st->columnInt(0) : -1;
}

// ---- v1 rows, written with v1's column lists. Frozen: do not change when adding versions. ----
// (Their hash values are real ones — the suite's content_hash over its two stored items, a
// 64-digit model sha256 — because `verify` checks those too.)

void populateV1(Database& db) {
    QVERIFY(db.exec("INSERT INTO suites (id, name, content_hash, shape, source_path, source_sha256, imported_at, n_items) "
                    "VALUES (1, 'old', '2e8dceac2f9052004a07c4b4ffc403d60788f94f0bf384ebcf6cc5290a87d630', 'jsonl', '/old.jsonl', 'beef', '2024-01-01T00:00:00.000Z', 2);"
                    "INSERT INTO suite_items (suite_id, idx, item_id, category, item) VALUES "
                    "(1, 0, 'a', 'x', '{\"id\":\"a\",\"prompt\":\"1+1\",\"references\":[\"2\"]}'),"
                    "(1, 1, 'b', 'y', '{\"id\":\"b\",\"prompt\":\"2+2\",\"references\":[\"4\"]}');"
                    "INSERT INTO models (id, kind, path, bytes, mtime_ns, sha256, first_seen) VALUES "
                    "(1, 'file', '/m.gguf', 10, 5, 'abababababababababababababababababababababababababababababababab', '2024-01-01T00:00:00.000Z');")
                .ok());
    RunRecord run;
    run.id = 1;
    run.backend = "engine";
    run.modelId = 1;
    run.modelPath = "/m.gguf";
    run.modelSha256 = "abababababababababababababababababababababababababababababababab";
    run.modelBytes = 10;
    run.suiteId = 1;
    run.prompting = {{"shots", 0}};
    run.generation = {{"max_tokens", 8}};
    run.chatTemplateMode = "raw";
    run.seed = 3;
    run.nPlanned = 2;
    run.engineVersion = "verdict 0.0.1";
    run.device = "cpu";
    run.startedAt = "2024-01-01T00:00:01.000Z";
    run.resumeKey = "k";
    run.headerHash = runHeaderHash(run);
    auto ins = db.prepare(
        "INSERT INTO runs (id, backend, model_id, model_path, model_sha256, model_bytes, suite_id, prompting, "
        "generation, chat_template_mode, chat_template, chat_template_hash, seed, item_limit, n_planned, "
        "engine_version, device, started_at, resume_key, header_hash, sweep_id, status, finished_at, error, "
        "owner_pid, owner_host) VALUES (1, 'engine', 1, '/m.gguf', 'abababababababababababababababababababababababababababababababab', 10, 1, ?1, ?2, 'raw', '', '', 3, NULL, 2, "
        "'verdict 0.0.1', 'cpu', '2024-01-01T00:00:01.000Z', 'k', ?3, NULL, 'completed', "
        "'2024-01-01T00:00:09.000Z', '', NULL, NULL)");
    QVERIFY(ins.ok());
    ins->bind(1, run.prompting.dump()).bind(2, run.generation.dump()).bind(3, run.headerHash);
    QVERIFY(ins->run().ok());

    std::string prev(kGenesisHash);
    for (int i = 0; i < 2; ++i) {
        RunItemRecord it;
        it.runId = 1;
        it.itemIdx = i;
        it.itemId = i == 0 ? "a" : "b";
        it.category = i == 0 ? "x" : "y";
        it.prompt = i == 0 ? "1+1" : "2+2";
        it.output = i == 0 ? "2" : "5";
        it.tokensIn = 4;
        it.tokensOut = 1;
        it.ttftMs = 1.5;
        it.scores = nlohmann::json::array({{{"name", "exact"}, {"pass", i == 0}, {"score", i == 0 ? 1.0 : 0.0}}});
        it.correct = i == 0;
        it.details = {{"stop_reason", "eos"}};
        it.createdAt = "2024-01-01T00:00:0" + std::to_string(2 + i) + ".000Z";
        it.prevHash = prev;
        it.rowHash = chainHash(runItemContent(it, run.headerHash), prev);
        prev = it.rowHash;
        auto row = db.prepare(
            "INSERT INTO run_items (run_id, item_idx, item_id, category, prompt, output, tokens_in, tokens_out, "
            "ttft_ms, decode_tps, duration_ms, scores, correct, error, details, created_at, prev_hash, row_hash) "
            "VALUES (1, ?1, ?2, ?3, ?4, ?5, 4, 1, 1.5, NULL, NULL, ?6, ?7, '', ?8, ?9, ?10, ?11)");
        QVERIFY(row.ok());
        row->bind(1, int64_t{i}).bind(2, it.itemId).bind(3, it.category).bind(4, it.prompt).bind(5, it.output)
            .bind(6, it.scores.dump()).bind(7, int64_t{i == 0 ? 1 : 0}).bind(8, it.details.dump())
            .bind(9, it.createdAt).bind(10, it.prevHash).bind(11, it.rowHash);
        QVERIFY(row->run().ok());
    }
}

// ---- v2 rows: a latency sweep and one hash-chained point, with v2's columns. Frozen. ----

void populateV2(Database& db) {
    SweepRecord sw;
    sw.id = 1;
    sw.name = "old-sweep";
    sw.spec = {{"batch", {1}}, {"gen_tokens", {8}}, {"prompt_tokens", {16}}};
    sw.createdAt = "2024-02-01T00:00:00.000Z";
    sw.status = "completed";
    sw.backend = "engine";
    sw.modelPath = "/m.gguf";
    sw.modelSha256 = "abc";
    sw.modelBytes = 10;
    sw.device = "cpu";
    sw.engineVersion = "verdict 0.0.2";
    sw.environment = {{"threads", 2}};
    sw.headerHash = sweepHeaderHash(sw);
    auto ins = db.prepare(
        "INSERT INTO sweeps (id, name, spec, created_at, status, backend, model_path, model_sha256, model_bytes, device, "
        "engine_version, environment, header_hash, finished_at, error) VALUES (1, 'old-sweep', ?1, "
        "'2024-02-01T00:00:00.000Z', 'completed', 'engine', '/m.gguf', 'abc', 10, 'cpu', 'verdict 0.0.2', ?2, ?3, "
        "'2024-02-01T00:01:00.000Z', '')");
    QVERIFY(ins.ok());
    ins->bind(1, sw.spec.dump()).bind(2, sw.environment.dump()).bind(3, sw.headerHash);
    QVERIFY(ins->run().ok());

    SweepPointRecord pt;
    pt.sweepId = 1;
    pt.promptTokens = 16;
    pt.genTokens = 8;
    pt.batch = 1;
    pt.rate = 0.0;
    pt.metrics = {{"requests", 1}};
    pt.requests = nlohmann::json::array({{{"ttft_ms", 2.5}}});
    pt.createdAt = "2024-02-01T00:00:30.000Z";
    pt.prevHash = std::string(kGenesisHash);
    pt.rowHash = chainHash(sweepPointContent(pt, sw.headerHash), pt.prevHash);
    auto row = db.prepare(
        "INSERT INTO sweep_points (sweep_id, prompt_tokens, gen_tokens, batch, rate, metrics, requests, error, created_at, "
        "prev_hash, row_hash) VALUES (1, 16, 8, 1, 0, ?1, ?2, '', ?3, ?4, ?5)");
    QVERIFY(row.ok());
    row->bind(1, pt.metrics.dump()).bind(2, pt.requests.dump()).bind(3, pt.createdAt).bind(4, pt.prevHash)
        .bind(5, pt.rowHash);
    QVERIFY(row->run().ok());
}

// ---- v3 rows: one comparison vote, with v3's columns. Frozen. ----

void populateV3(Database& db) {
    QVERIFY(db.exec("INSERT INTO votes (id, created_at, model_a, model_b, sha_a, sha_b, prompt, answer_a, answer_b, "
                    "winner, blind, settings) VALUES (1, '2024-03-01T00:00:00.000Z', '/a.gguf', 'http://h:1/v1 m', "
                    "'aa', '', 'hi', 'hello', 'hey', 'b', 1, '{\"temperature\":0}')")
                .ok());
}

// ---- v4 rows: the v1 run deleted (hidden; its rows stay for the chain). Frozen. ----

void populateV4(Database& db) {
    QVERIFY(db.exec("UPDATE runs SET deleted_at = '2024-04-01T00:00:00.000Z' WHERE id = 1").ok());
}

// ---- v5 rows: a judge prompt and a rubric grade of the v1 run's first item. Frozen. ----

void populateV5(Database& db) {
    QVERIFY(db.exec("INSERT INTO judge_prompts (hash, name, mode, text, created_at) VALUES ('h5', 'builtin', 'rubric', "
                    "'grade {answer}', '2024-05-01T00:00:00.000Z')")
                .ok());
    QVERIFY(db.exec("INSERT INTO judgments (created_at, run_a, run_b, item_idx, judge, mode, position, prompt_hash, "
                    "judge_input, judge_output, verdict, score) VALUES ('2024-05-01T00:00:00.000Z', 1, NULL, 0, "
                    "'http://j/v1 m', 'rubric', '', 'h5', 'grade x', 'Rating: [[7]]', NULL, 7)")
                .ok());
}

// ---- v6 rows: a finished study (a quantization comparison). Frozen. ----

void populateV6(Database& db) {
    QVERIFY(db.exec("INSERT INTO studies (kind, name, subject, status, created_at, finished_at, result) VALUES "
                    "('quant_compare', 'm', 'm-f16.gguf', 'completed', '2024-06-01T00:00:00.000Z', "
                    "'2024-06-01T00:10:00.000Z', '{\"rows\":[]}')")
                .ok());
}

// Rows expected after migrating a database populated at `version` (cumulative).
struct Expected {
    int64_t suites = 0, suiteItems = 0, runs = 0, runItems = 0, sweeps = 0, sweepPoints = 0, votes = 0, deletedRuns = 0,
            judgments = 0, studies = 0;
};

void populate(Database& db, int version, Expected& e) {
    if (version >= 1) {
        populateV1(db);
        e.suites = 1;
        e.suiteItems = 2;
        e.runs = 1;
        e.runItems = 2;
    }
    if (version >= 2) {
        populateV2(db);
        e.sweeps = 1;
        e.sweepPoints = 1;
    }
    if (version >= 3) {
        populateV3(db);
        e.votes = 1;
    }
    if (version >= 4) {
        populateV4(db);
        e.deletedRuns = 1;
    }
    if (version >= 5) {
        populateV5(db);
        e.judgments = 1;
    }
    if (version >= 6) {
        populateV6(db);
        e.studies = 1;
    }
    // v7 and later: add populateV7() here, called for version >= 7.
}

}  // namespace

class TestStoreMigrations : public QObject {
    Q_OBJECT
private slots:
    void fromEveryEarlierVersion_data() {
        QTest::addColumn<int>("from");
        for (int v = 0; v <= kSchemaVersion; ++v) QTest::addRow("from v%d", v) << v;
    }
    void fromEveryEarlierVersion() {
        QFETCH(int, from);
        QTemporaryDir dir;
        const std::string freshPath = dir.filePath("fresh.db").toStdString();
        const std::string oldPath = dir.filePath("old.db").toStdString();
        std::string freshSchema;
        {
            auto fresh = openStore(freshPath);
            QVERIFY(fresh.ok());
            freshSchema = schemaDump(*fresh);
        }

        Expected expected;
        {
            auto db = Database::open(oldPath);
            QVERIFY(db.ok());
            QVERIFY(migrateTo(*db, from).ok());
            QCOMPARE(*schemaVersion(*db), from);
            populate(*db, from, expected);
        }
        auto db = openStore(oldPath);  // the upgrade, as any command performs it
        QVERIFY2(db.ok(), db.ok() ? "" : db.error().message.c_str());
        QCOMPARE(*schemaVersion(*db), kSchemaVersion);
        QCOMPARE(schemaDump(*db), freshSchema);
        QCOMPARE(count(*db, "suites"), expected.suites);
        QCOMPARE(count(*db, "suite_items"), expected.suiteItems);
        QCOMPARE(count(*db, "runs"), expected.runs);
        QCOMPARE(count(*db, "run_items"), expected.runItems);
        QCOMPARE(count(*db, "sweeps"), expected.sweeps);
        QCOMPARE(count(*db, "sweep_points"), expected.sweepPoints);
        QCOMPARE(count(*db, "votes"), expected.votes);  // a database older than v3 gains an empty table
        QCOMPARE(count(*db, "judgments"), expected.judgments);
        QCOMPARE(count(*db, "judge_prompts"), expected.judgments);
        QCOMPARE(count(*db, "studies"), expected.studies);
        // v6: a study's status is one of four.
        QVERIFY(!db->exec("INSERT INTO studies (kind, name, subject, status, created_at) VALUES ('soak', 'n', 'b', 'x', 't')")
                     .ok());
        // v5: a pair is stored with run_a < run_b, and a verdict must be one of four.
        QVERIFY(!db->exec("INSERT INTO judgments (created_at, run_a, run_b, item_idx, judge, mode, position) "
                          "VALUES ('t', 1, 1, 0, 'j', 'pairwise', 'ab')")
                     .ok());
        QVERIFY(!db->exec("INSERT INTO judgments (created_at, run_a, item_idx, judge, mode, position, verdict) "
                          "VALUES ('t', 1, 0, 'j', 'rubric', '', 'c')")
                     .ok());
        {
            // v4: every run and sweep gains deleted_at (NULL: not deleted); a deleted run keeps its rows.
            auto del = db->prepare("SELECT (SELECT COUNT(*) FROM runs WHERE deleted_at IS NOT NULL), "
                                   "(SELECT COUNT(*) FROM sweeps WHERE deleted_at IS NOT NULL)");
            QVERIFY(del.ok() && *del->step());
            QCOMPARE(del->columnInt(0), expected.deletedRuns);
            QCOMPARE(del->columnInt(1), int64_t(0));
        }
        if (from >= 3) {
            auto v = db->prepare("SELECT model_b, winner, blind, settings FROM votes WHERE id = 1");
            QVERIFY(v.ok() && *v->step());
            QCOMPARE(v->columnText(0), std::string("http://h:1/v1 m"));
            QCOMPARE(v->columnText(1), std::string("b"));
            QCOMPARE(v->columnInt(2), int64_t(1));
            QCOMPARE(v->columnText(3), std::string("{\"temperature\":0}"));
        }
        // The v3 table takes rows after any upgrade, and its CHECK refuses an unknown winner.
        QVERIFY(db->exec("INSERT INTO votes (created_at, model_a, model_b, prompt, answer_a, answer_b, winner, blind) "
                         "VALUES ('t', 'x', 'y', 'p', '1', '2', 'tie', 0)")
                    .ok());
        QVERIFY(!db->exec("INSERT INTO votes (created_at, model_a, model_b, prompt, answer_a, answer_b, winner, blind) "
                          "VALUES ('t', 'x', 'y', 'p', '1', '2', 'c', 0)")
                     .ok());
        QVERIFY(db->exec("DELETE FROM votes WHERE model_a = 'x'").ok());

        auto integrity = db->prepare("PRAGMA integrity_check");
        QVERIFY(integrity.ok() && *integrity->step());
        QCOMPARE(integrity->columnText(0), std::string("ok"));
        auto fk = db->prepare("PRAGMA foreign_key_check");
        QVERIFY(fk.ok());
        QVERIFY2(!*fk->step(), "foreign key violations after migration");

        auto chain = verifyChain(*db);
        QVERIFY(chain.ok());
        QVERIFY2(chain->ok(), chain->ok() ? "" : chain->breaks.front().reason.c_str());
        QCOMPARE(chain->rowsChecked, expected.runItems);
        QCOMPARE(chain->sweepsChecked, expected.sweeps);
        QCOMPARE(chain->pointsChecked, expected.sweepPoints);

        // Idempotent: migrating a current database again changes nothing.
        const std::string before = schemaDump(*db);
        QVERIFY(migrate(*db).ok());
        QVERIFY(migrate(*db).ok());
        QCOMPARE(schemaDump(*db), before);
        QCOMPARE(count(*db, "run_items"), expected.runItems);
        auto reopened = openStore(oldPath);
        QVERIFY(reopened.ok());
        QCOMPARE(*schemaVersion(*reopened), kSchemaVersion);
    }

    void newerDatabaseIsRefused() {
        QTemporaryDir dir;
        const std::string p = dir.filePath("new.db").toStdString();
        {
            auto db = openStore(p);
            QVERIFY(db.ok());
            QVERIFY(db->exec("PRAGMA user_version = 99").ok());
        }
        auto db = openStore(p);
        QVERIFY(!db.ok());
        QVERIFY2(db.error().message.find("newer") != std::string::npos, db.error().message.c_str());
        QVERIFY(db.error().message.find(p) != std::string::npos);
        auto raw = Database::open(p);
        QCOMPARE(*schemaVersion(*raw), 99);  // untouched
    }

    void failedStepRollsBack() {
        QTemporaryDir dir;
        const std::string p = dir.filePath("clash.db").toStdString();
        auto db = Database::open(p);
        QVERIFY(db.ok());
        QVERIFY(db->exec("CREATE TABLE suites (x INTEGER)").ok());  // v1's first table already exists
        auto r = migrate(*db);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("schema v1") != std::string::npos, r.error().message.c_str());
        QCOMPARE(*schemaVersion(*db), 0);
        QCOMPARE(count(*db, "runs"), int64_t(-1));  // nothing of v1 was left behind
    }

    // Two processes opening a brand-new file at the same moment: both must succeed, once migrated.
    void concurrentFirstOpen() {
        for (int round = 0; round < 10; ++round) {
            QTemporaryDir dir;
            const std::string p = dir.filePath("race.db").toStdString();
            std::atomic<int> ok{0};
            std::string err;
            std::mutex m;
            auto open = [&] {
                auto db = openStore(p);
                if (db) ++ok;
                else { std::lock_guard l(m); err = db.error().message; }
            };
            std::thread a(open), b(open), c(open);
            a.join();
            b.join();
            c.join();
            QVERIFY2(ok == 3, err.c_str());
            auto db = openStore(p);
            QCOMPARE(*schemaVersion(*db), kSchemaVersion);
        }
    }
};

QTEST_GUILESS_MAIN(TestStoreMigrations)
#include "test_store_migrations.moc"
