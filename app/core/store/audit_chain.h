// Tamper evidence for stored results: a SHA-256 hash chain over run_items.
//
//   row_hash(n) = SHA-256( canonical(n) + prev_hash(n) ),   prev_hash(n) = row_hash(n-1)
//
// in run_items.seq order over the whole database (genesis prev_hash: 64 zeros). canonical(n) is
// the compact JSON array of the row's stored values (see runItemContent) and includes its run's
// header_hash, the SHA-256 of the run's immutable columns, so editing a run's model, suite or
// parameters is caught as well. Rows are appended under the write lock (BEGIN IMMEDIATE), so
// two processes writing at once still extend one chain.
//
// What it catches: an edited value in any row or run header, a removed or reordered row (the
// next row's prev_hash no longer matches). What it cannot: removing the newest rows, or someone
// who rewrites every hash after an edit (there is no external anchor; docs/schema.md).
#pragma once

#include "core/store/database.h"
#include "core/store/run_record.h"
#include "core/store/sweep_record.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

inline constexpr std::string_view kGenesisHash =
    "0000000000000000000000000000000000000000000000000000000000000000";

// Canonical text of a run's immutable columns, and its SHA-256 (runs.header_hash).
std::string runHeaderContent(const RunRecord& run);
std::string runHeaderHash(const RunRecord& run);

// Canonical text of one result row, bound to its run's header hash.
std::string runItemContent(const RunItemRecord& item, std::string_view runHeaderHash);

// The same for latency sweeps: sweep_points form a second chain, in seq order, bound to their
// sweep's header hash (the sweep's identity, spec and environment).
std::string sweepHeaderContent(const SweepRecord& sweep);
std::string sweepHeaderHash(const SweepRecord& sweep);
std::string sweepPointContent(const SweepPointRecord& point, std::string_view sweepHeaderHash);

// SHA-256(content + prevHash), 64 lower-case hex digits.
std::string chainHash(std::string_view content, std::string_view prevHash);

struct ChainBreak {
    // "sqlite" (PRAGMA integrity_check), "runs", "run_items", "sweeps", "sweep_points", "suites"
    // (a suite's items against its content_hash and n_items) or "models" (sha256 values)
    std::string table;
    int64_t seq = 0;       // run_items.seq / sweep_points.seq (0 for a header)
    int64_t runId = 0;     // the run's, sweep's, suite's or model's id
    int64_t itemIdx = -1;  // -1 for a run header
    std::string reason;
};

struct ChainReport {
    int64_t runsChecked = 0;
    int64_t rowsChecked = 0;
    int64_t sweepsChecked = 0;
    int64_t pointsChecked = 0;
    int64_t suitesChecked = 0;
    int64_t suiteItemsChecked = 0;
    int64_t modelsChecked = 0;
    int64_t modelsRehashed = 0;  // model files read again (VerifyOptions::rehashModels)
    std::vector<ChainBreak> breaks;  // in walk order (run headers first, then rows by seq); at most 100
    bool ok() const { return breaks.empty(); }
};

struct VerifyOptions {
    // Read every model file again whose size and mtime still match its models row, and compare
    // its SHA-256 with the stored one (slow: the whole file is read).
    bool rehashModels = false;
};

// First SQLite's own PRAGMA integrity_check (a damaged page, index or row is a "sqlite" finding),
// then recomputes every run and sweep header hash and walks run_items and sweep_points by seq;
// then every suite's items (the gold answers) against its content_hash and n_items, and every
// models.sha256 (64 hex digits; the same as the model_sha256 its runs recorded).
// Database errors are returned as errors; broken rows are findings in the report.
Result<ChainReport> verifyChain(Database& db, const VerifyOptions& options = {});

}  // namespace verdict::core
