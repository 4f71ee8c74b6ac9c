// Latency sweeps and their measured points (tables sweeps, sweep_points). Every point is
// appended in its own write transaction that also extends the sweep points' hash chain
// (audit_chain.h), so a process killed mid-sweep leaves every finished point stored.
#pragma once

#include "core/store/database.h"
#include "core/store/sweep_record.h"

#include <optional>
#include <vector>

namespace verdict::core {

class SweepRepository {
public:
    explicit SweepRepository(Database& db) : m_db(db) {}

    // Inserts a new sweep with status running; sets createdAt (when empty) and headerHash.
    Result<SweepRecord> create(SweepRecord sweep);
    Result<std::optional<SweepRecord>> find(int64_t id);
    // By id; sweeps deleted with remove() only when `includeDeleted` (the audit chain needs them).
    Result<std::vector<SweepRecord>> list(bool includeDeleted = false);
    // status: "completed", "cancelled" or "failed"; sets finished_at.
    Result<void> finish(int64_t sweepId, const std::string& status, const std::string& error);

    // Appends one point: links it to the chain head, hashes it, inserts. Fills seq, createdAt,
    // prevHash, rowHash. Fails (storing nothing) for a missing sweep or a point already stored.
    Result<SweepPointRecord> appendPoint(SweepPointRecord point);
    Result<std::vector<SweepPointRecord>> points(int64_t sweepId);  // by seq
    // Deletes a sweep: it disappears from list() (so reports and charts no longer pick it). Its
    // rows stay, because the sweep_points hash chain runs through them (schema v4). False when
    // no such sweep exists or it was already deleted.
    Result<bool> remove(int64_t sweepId);

private:
    Database& m_db;
};

// Shared with audit_chain.cpp.
extern const char* const kSweepColumns;
extern const char* const kSweepPointColumns;
SweepRecord readSweep(const Statement& st);
SweepPointRecord readSweepPoint(const Statement& st, std::string* parseError = nullptr);

}  // namespace verdict::core
