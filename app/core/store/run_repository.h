// Runs and their per-item results (tables runs, run_items). Every item is appended in its own
// write transaction that also extends the audit hash chain (audit_chain.h), so a process killed
// at any moment leaves every finished item stored and the chain intact.
#pragma once

#include "core/store/database.h"
#include "core/store/run_record.h"

#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// Identity of an experiment: SHA-256 over backend, model sha + bytes, suite, prompting,
// generation, chat template mode + hash, seed, item limit and engine version. An unfinished run
// with the same key is continued instead of starting over.
std::string resumeKeyOf(const RunRecord& run);

// True when `pid` names a live process on this machine (kill(pid, 0)).
bool processAlive(int64_t pid);
// This machine's host name ("" when unknown).
std::string hostName();

class RunRepository {
public:
    explicit RunRepository(Database& db) : m_db(db) {}

    // Inserts a new run with status running. Sets startedAt (when empty), resumeKey and
    // headerHash, and returns the stored record with its id.
    Result<RunRecord> create(RunRecord run);

    Result<std::optional<RunRecord>> find(int64_t id);
    // By id; runs deleted with remove() only when `includeDeleted` (the audit chain needs them).
    Result<std::vector<RunRecord>> list(bool includeDeleted = false);
    // The newest run with this key that is not completed, or nullopt.
    Result<std::optional<RunRecord>> findUnfinished(const std::string& resumeKey);

    // Marks the run as executed by (pid, host): status running, finished_at and error cleared.
    // Fails for a completed run, and for one still owned by another live process on this host
    // or owned by a process on another host (unless `force`).
    Result<void> claim(int64_t runId, int64_t pid, const std::string& host, bool force = false);
    // Sets the final status (completed / cancelled / failed), finished_at and error; clears the owner.
    Result<void> finish(int64_t runId, RunStatus status, const std::string& error);

    // item_idx of every stored item of the run, ascending.
    Result<std::vector<int64_t>> storedItemIndices(int64_t runId);

    // Appends one result in its own transaction: links it to the chain head, hashes it, inserts.
    // Fills seq, createdAt, prevHash, rowHash. Non-finite timings are stored as NULL. Fails
    // (storing nothing) when the run does not exist or this item index is already stored.
    Result<RunItemRecord> appendItem(RunItemRecord item);

    Result<std::vector<RunItemRecord>> items(int64_t runId);  // by item_idx
    // Deletes a run (the History screen, `verdict delete run`): it disappears from list(), from
    // auto-resume and from the report's choices. Its rows stay in the database, because the
    // run_items hash chain runs through them (schema v4). False when no such run exists or it
    // was already deleted. Fails for a run a live process on this host is executing.
    Result<bool> remove(int64_t runId);

private:
    Database& m_db;
};

// Shared with audit_chain.cpp: the run_items column list in readRunItem's order, and the reader.
// A JSON column that does not parse is read as null and described in *parseError when given.
extern const char* const kRunItemColumns;
RunItemRecord readRunItem(const Statement& st, std::string* parseError = nullptr);

}  // namespace verdict::core
