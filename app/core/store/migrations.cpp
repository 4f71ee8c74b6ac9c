#include "core/store/migrations.h"

#include <string>
#include <vector>

namespace verdict::core {
namespace {

// v1: the first schema. Column meanings are documented in docs/schema.md.
Result<void> migrateToV1(Database& db) {
    return db.exec(R"sql(
CREATE TABLE suites (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    content_hash  TEXT NOT NULL UNIQUE,
    shape         TEXT NOT NULL,
    source_path   TEXT NOT NULL,
    source_sha256 TEXT NOT NULL,
    imported_at   TEXT NOT NULL,
    n_items       INTEGER NOT NULL
);
CREATE TABLE suite_items (
    suite_id  INTEGER NOT NULL REFERENCES suites(id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL,
    item_id   TEXT NOT NULL,
    category  TEXT NOT NULL,
    item      TEXT NOT NULL,
    PRIMARY KEY (suite_id, idx)
) WITHOUT ROWID;
CREATE TABLE models (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('file', 'endpoint')),
    path        TEXT NOT NULL,
    bytes       INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    sha256      TEXT NOT NULL,
    first_seen  TEXT NOT NULL,
    UNIQUE (kind, path, bytes, mtime_ns)
);
CREATE TABLE sweeps (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    spec        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    status      TEXT NOT NULL
);
CREATE TABLE runs (
    id                  INTEGER PRIMARY KEY,
    backend             TEXT NOT NULL,
    model_id            INTEGER REFERENCES models(id),
    model_path          TEXT NOT NULL,
    model_sha256        TEXT NOT NULL,
    model_bytes         INTEGER NOT NULL,
    suite_id            INTEGER NOT NULL REFERENCES suites(id),
    prompting           TEXT NOT NULL,
    generation          TEXT NOT NULL,
    chat_template_mode  TEXT NOT NULL,
    chat_template       TEXT NOT NULL,
    chat_template_hash  TEXT NOT NULL,
    seed                INTEGER NOT NULL,
    item_limit          INTEGER,
    n_planned           INTEGER NOT NULL,
    engine_version      TEXT NOT NULL,
    device              TEXT NOT NULL,
    started_at          TEXT NOT NULL,
    resume_key          TEXT NOT NULL,
    header_hash         TEXT NOT NULL,
    sweep_id            INTEGER REFERENCES sweeps(id),
    status              TEXT NOT NULL CHECK (status IN ('running', 'completed', 'cancelled', 'failed')),
    finished_at         TEXT,
    error               TEXT NOT NULL DEFAULT '',
    owner_pid           INTEGER,
    owner_host          TEXT
);
CREATE INDEX runs_by_resume_key ON runs(resume_key, status);
CREATE INDEX runs_by_suite ON runs(suite_id);
CREATE TABLE run_items (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER NOT NULL REFERENCES runs(id),
    item_idx     INTEGER NOT NULL,
    item_id      TEXT NOT NULL,
    category     TEXT NOT NULL,
    prompt       TEXT NOT NULL,
    output       TEXT NOT NULL,
    tokens_in    INTEGER NOT NULL,
    tokens_out   INTEGER NOT NULL,
    ttft_ms      REAL,
    decode_tps   REAL,
    duration_ms  REAL,
    scores       TEXT NOT NULL,
    correct      INTEGER CHECK (correct IN (0, 1)),
    error        TEXT NOT NULL,
    details      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    prev_hash    TEXT NOT NULL,
    row_hash     TEXT NOT NULL UNIQUE,
    UNIQUE (run_id, item_idx)
);
)sql");
}

// v2: latency sweeps. v1's sweeps table gains the identity of what was measured and a header
// hash; each measured grid point is one hash-chained sweep_points row (its own chain, see
// audit_chain.h), appended in its own transaction.
Result<void> migrateToV2(Database& db) {
    return db.exec(R"sql(
ALTER TABLE sweeps ADD COLUMN backend        TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN model_path     TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN model_sha256   TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN model_bytes    INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sweeps ADD COLUMN device         TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN engine_version TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN environment    TEXT NOT NULL DEFAULT '{}';
ALTER TABLE sweeps ADD COLUMN header_hash    TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN finished_at    TEXT;
ALTER TABLE sweeps ADD COLUMN error          TEXT NOT NULL DEFAULT '';
CREATE TABLE sweep_points (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    sweep_id       INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
    prompt_tokens  INTEGER NOT NULL,
    gen_tokens     INTEGER NOT NULL,
    batch          INTEGER NOT NULL,
    rate           REAL NOT NULL DEFAULT 0,
    metrics        TEXT NOT NULL,
    requests       TEXT NOT NULL,
    error          TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    prev_hash      TEXT NOT NULL,
    row_hash       TEXT NOT NULL UNIQUE,
    UNIQUE (sweep_id, prompt_tokens, gen_tokens, batch, rate)
);
)sql");
}

// v3: blind-comparison votes (the Compare screen, `verdict compare --vote`). One row per vote,
// written in its own transaction; model_a / model_b are model references (file path or
// "URL MODEL"), sha_a / sha_b the files' SHA-256 ('' for endpoints or when not hashed).
Result<void> migrateToV3(Database& db) {
    return db.exec(R"sql(
CREATE TABLE votes (
    id          INTEGER PRIMARY KEY,
    created_at  TEXT NOT NULL,
    model_a     TEXT NOT NULL,
    model_b     TEXT NOT NULL,
    sha_a       TEXT NOT NULL DEFAULT '',
    sha_b       TEXT NOT NULL DEFAULT '',
    prompt      TEXT NOT NULL,
    answer_a    TEXT NOT NULL,
    answer_b    TEXT NOT NULL,
    winner      TEXT NOT NULL CHECK (winner IN ('a', 'b', 'tie')),
    blind       INTEGER NOT NULL CHECK (blind IN (0, 1)),
    settings    TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX votes_by_models ON votes(model_a, model_b);
)sql");
}

// v4: deleting a run or a sweep (History screen, `verdict delete`) hides it. Its rows stay,
// because the hash chains of run_items and sweep_points run through every row ever stored
// (audit_chain.h): removing them would make every later row fail `verdict verify`. deleted_at is
// not covered by the header hashes, like the other mutable columns (status, finished_at).
Result<void> migrateToV4(Database& db) {
    return db.exec(R"sql(
ALTER TABLE runs ADD COLUMN deleted_at TEXT;
ALTER TABLE sweeps ADD COLUMN deleted_at TEXT;
)sql");
}

// v5: judging (issue 21). judge_prompts keeps every judge prompt template by its SHA-256, so
// a judgment names exactly what the judge was asked; judgments holds one verdict per item, run
// pair, judge, mode and order (a pairwise judge answers each item twice, once per order). The
// pair is stored with run_a < run_b (JudgmentRepository swaps and maps the verdict); rubric
// grades name one run (run_b NULL); turn 0 is the item as a whole, k >= 1 the answers to turn k
// of a multi-turn item. verdict NULL = the judge's output could not be read.
Result<void> migrateToV5(Database& db) {
    return db.exec(R"sql(
CREATE TABLE judge_prompts (
    hash        TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    mode        TEXT NOT NULL CHECK (mode IN ('pairwise', 'rubric', 'reference')),
    text        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE TABLE judgments (
    id            INTEGER PRIMARY KEY,
    created_at    TEXT NOT NULL,
    run_a         INTEGER NOT NULL REFERENCES runs(id),
    run_b         INTEGER REFERENCES runs(id),
    item_idx      INTEGER NOT NULL,
    turn          INTEGER NOT NULL DEFAULT 0 CHECK (turn >= 0),
    judge         TEXT NOT NULL,
    mode          TEXT NOT NULL CHECK (mode IN ('human', 'pairwise', 'rubric', 'reference')),
    position      TEXT NOT NULL CHECK (position IN ('ab', 'ba', '')),
    prompt_hash   TEXT NOT NULL DEFAULT '',
    judge_input   TEXT NOT NULL DEFAULT '',
    judge_output  TEXT NOT NULL DEFAULT '',
    verdict       TEXT CHECK (verdict IN ('a', 'b', 'tie', 'both_bad')),
    score         REAL,
    error         TEXT NOT NULL DEFAULT '',
    details       TEXT NOT NULL DEFAULT '{}',
    CHECK (run_b IS NULL OR run_a < run_b)
);
CREATE UNIQUE INDEX judgments_once ON judgments(run_a, ifnull(run_b, 0), item_idx, turn, judge, mode, position, prompt_hash);
)sql");
}

// v6: studies (issue 22): measurements made of several runs and sweeps plus figures of their own —
// a quantization trade-off (`verdict quant-compare`), a soak test (`verdict soak`). One row per
// study; `result` holds the whole document as JSON (its shape per kind: docs/cli.md), rewritten
// after every measured step, so a killed process keeps what it measured. The runs and sweeps a
// study made are ordinary rows (their ids are in result).
Result<void> migrateToV6(Database& db) {
    return db.exec(R"sql(
CREATE TABLE studies (
    id           INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL,
    name         TEXT NOT NULL,
    subject      TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('running', 'completed', 'cancelled', 'failed')),
    created_at   TEXT NOT NULL,
    finished_at  TEXT,
    result       TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX studies_by_kind ON studies(kind, id);
)sql");
}

struct MigrationStep {
    int version;             // the version this step produces
    const char* what;        // one line, for error messages and docs/schema.md
    Result<void> (*apply)(Database&);
};

// One entry per schema version, in order. Append only.
const std::vector<MigrationStep>& steps() {
    static const std::vector<MigrationStep> kSteps = {
        {1, "initial schema: suites, runs, hash-chained run_items", migrateToV1},
        {2, "latency sweeps: sweep identity columns, hash-chained sweep_points", migrateToV2},
        {3, "blind-comparison votes: table votes", migrateToV3},
        {4, "deleting runs and sweeps: runs.deleted_at, sweeps.deleted_at (rows kept for the audit chains)", migrateToV4},
        {5, "judging: tables judge_prompts and judgments", migrateToV5},
        {6, "studies (quantization trade-offs, soak tests): table studies", migrateToV6},
    };
    return kSteps;
}

}  // namespace

Result<int> schemaVersion(Database& db) {
    auto st = db.prepare("PRAGMA user_version");
    if (!st) return st.error();
    auto row = st->step();
    if (!row) return row.error();
    return static_cast<int>(st->columnInt(0));
}

Error newerSchemaError(const Database& db, int version) {
    return Error{"database " + db.path() + ": schema version " + std::to_string(version) +
                 " is newer than this verdict understands (" + std::to_string(kSchemaVersion) + ")"};
}

Result<void> migrateTo(Database& db, int target) {
    if (target > kSchemaVersion)
        return Error{"database " + db.path() + ": cannot migrate to unknown schema version " + std::to_string(target)};
    // Quick check without the write lock: a current database needs no transaction at all.
    auto current = schemaVersion(db);
    if (!current) return current.error();
    if (*current > kSchemaVersion) return newerSchemaError(db, *current);
    if (*current >= target) return {};

    for (const MigrationStep& step : steps()) {
        if (step.version > target) break;
        auto tx = Transaction::begin(db);
        if (!tx) return tx.error();
        // Re-read under the lock: another process may have migrated meanwhile.
        auto now = schemaVersion(db);
        if (!now) return now.error();
        if (*now >= step.version) continue;  // rolled back by tx's destructor: nothing to undo
        if (*now != step.version - 1)
            return Error{"database " + db.path() + ": schema version " + std::to_string(*now) +
                         " has no migration step to " + std::to_string(step.version)};
        if (auto r = step.apply(db); !r)
            return Error{"migration to schema v" + std::to_string(step.version) + " (" + step.what +
                         ") failed: " + r.error().message};
        if (auto r = db.exec("PRAGMA user_version = " + std::to_string(step.version)); !r) return r.error();
        if (auto r = tx->commit(); !r) return r.error();
    }
    return {};
}

Result<void> migrate(Database& db) { return migrateTo(db, kSchemaVersion); }

}  // namespace verdict::core
