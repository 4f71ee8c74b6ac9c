// Schema versions of the results database (PRAGMA user_version) and the steps between them.
//
// Schema history (keep in step with docs/schema.md):
//   v0  empty file (fresh database)
//   v1  suites, suite_items, models, sweeps (room for issue 7), runs, run_items with the SHA-256
//       hash chain (prev_hash, row_hash) and runs.header_hash
//   v2  latency sweeps: sweeps gains backend, model, device, environment, header_hash,
//       finished_at, error; new table sweep_points (its own hash chain)
//   v3  votes (blind comparisons: two models' answers to one prompt and the winner)
//   v4  runs.deleted_at, sweeps.deleted_at (deleting hides; the rows stay for the hash chains)
//   v5  judge_prompts, judgments (human and LLM-as-judge verdicts per item of two runs)
//   v6  studies (`verdict quant-compare`, `verdict soak`: one JSON document per study)
//
// Adding v7: write `Result<void> migrateToV7(Database&)` in migrations.cpp (DDL/data changes
// from v6 only), append {7, "what changed", migrateToV7} to the step table there, bump
// kSchemaVersion, document the step in docs/schema.md, and extend test_store_migrations with
// a v6 fixture row set. Never edit an earlier step: databases in the field already ran it.
#pragma once

#include "core/store/database.h"

namespace verdict::core {

constexpr int kSchemaVersion = 6;

// PRAGMA user_version of an open database (0 for a new file).
Result<int> schemaVersion(Database& db);

// "database PATH: schema version N is newer than this verdict understands (M)".
Error newerSchemaError(const Database& db, int version);

// Brings the database from its version to kSchemaVersion, one step per version, each step in
// its own write transaction that re-reads the version first (two processes opening a fresh
// file at once migrate it once). Idempotent: a current database is left untouched.
// Fails, changing nothing, for a database newer than this build ("schema version N is newer
// than this verdict understands (M)") or when a step fails (the step is rolled back).
Result<void> migrate(Database& db);

// Migrates up to `target` only (tests build databases of every earlier version with it).
Result<void> migrateTo(Database& db, int target);

}  // namespace verdict::core
