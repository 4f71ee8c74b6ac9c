#include "core/store/sweep_repository.h"

#include "core/store/audit_chain.h"
#include "core/store/store.h"

#include <sqlite3.h>

namespace verdict::core {
namespace {

std::string compact(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

nlohmann::json parseOr(const std::string& text, nlohmann::json fallback, const char* column, std::string* parseError) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) {
        if (parseError && parseError->empty()) *parseError = std::string(column) + " is not valid JSON";
        return fallback;
    }
    return j;
}

}  // namespace

const char* const kSweepColumns =
    "id, name, spec, created_at, status, backend, model_path, model_sha256, model_bytes, device, engine_version, "
    "environment, header_hash, finished_at, error";

const char* const kSweepPointColumns =
    "seq, sweep_id, prompt_tokens, gen_tokens, batch, rate, metrics, requests, error, created_at, prev_hash, row_hash";

SweepRecord readSweep(const Statement& st) {
    SweepRecord s;
    int c = 0;
    s.id = st.columnInt(c++);
    s.name = st.columnText(c++);
    s.spec = parseOr(st.columnText(c++), nlohmann::json::object(), "spec", nullptr);
    s.createdAt = st.columnText(c++);
    s.status = st.columnText(c++);
    s.backend = st.columnText(c++);
    s.modelPath = st.columnText(c++);
    s.modelSha256 = st.columnText(c++);
    s.modelBytes = st.columnInt(c++);
    s.device = st.columnText(c++);
    s.engineVersion = st.columnText(c++);
    s.environment = parseOr(st.columnText(c++), nlohmann::json::object(), "environment", nullptr);
    s.headerHash = st.columnText(c++);
    s.finishedAt = st.columnText(c++);
    s.error = st.columnText(c++);
    return s;
}

nlohmann::json pointMetrics(const SweepPointRecord& p) {
    const nlohmann::json& m = p.metrics;
    if (!m.is_object() || !m.contains("mode") || !m.contains("metrics") || !m["metrics"].is_object()) return m;
    nlohmann::json flat = m["metrics"];
    for (const auto& [k, v] : m.items())
        if (k != "metrics" && !flat.contains(k)) flat[k] = v;
    return flat;
}

SweepPointRecord readSweepPoint(const Statement& st, std::string* parseError) {
    SweepPointRecord p;
    int c = 0;
    p.seq = st.columnInt(c++);
    p.sweepId = st.columnInt(c++);
    p.promptTokens = st.columnInt(c++);
    p.genTokens = st.columnInt(c++);
    p.batch = st.columnInt(c++);
    p.rate = st.columnDouble(c++);
    p.metrics = parseOr(st.columnText(c++), nullptr, "metrics", parseError);
    p.requests = parseOr(st.columnText(c++), nullptr, "requests", parseError);
    p.error = st.columnText(c++);
    p.createdAt = st.columnText(c++);
    p.prevHash = st.columnText(c++);
    p.rowHash = st.columnText(c++);
    return p;
}

Result<SweepRecord> SweepRepository::create(SweepRecord s) {
    if (s.createdAt.empty()) s.createdAt = utcTimestamp();
    s.status = "running";
    s.spec = nlohmann::json::parse(compact(s.spec), nullptr, false);
    s.environment = nlohmann::json::parse(compact(s.environment), nullptr, false);
    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    auto ins = m_db.prepare(
        "INSERT INTO sweeps (name, spec, created_at, status, backend, model_path, model_sha256, model_bytes, device, "
        "engine_version, environment, header_hash) VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9, ?10, '')");
    if (!ins) return ins.error();
    ins->bind(1, s.name).bind(2, compact(s.spec)).bind(3, s.createdAt).bind(4, s.backend).bind(5, s.modelPath)
        .bind(6, s.modelSha256).bind(7, s.modelBytes).bind(8, s.device).bind(9, s.engineVersion)
        .bind(10, compact(s.environment));
    if (auto r = ins->run(); !r) return r.error();
    s.id = m_db.lastInsertRowid();
    s.headerHash = sweepHeaderHash(s);
    auto upd = m_db.prepare("UPDATE sweeps SET header_hash = ?1 WHERE id = ?2");
    if (!upd) return upd.error();
    upd->bind(1, s.headerHash).bind(2, s.id);
    if (auto r = upd->run(); !r) return r.error();
    if (auto r = tx->commit(); !r) return r.error();
    return s;
}

Result<std::optional<SweepRecord>> SweepRepository::find(int64_t id) {
    auto st = m_db.prepare(std::string("SELECT ") + kSweepColumns + " FROM sweeps WHERE id = ?1");
    if (!st) return st.error();
    st->bind(1, id);
    auto row = st->step();
    if (!row) return row.error();
    if (!*row) return std::optional<SweepRecord>{};
    return std::optional<SweepRecord>{readSweep(*st)};
}

Result<std::vector<SweepRecord>> SweepRepository::list(bool includeDeleted) {
    auto st = m_db.prepare(std::string("SELECT ") + kSweepColumns + " FROM sweeps " +
                           (includeDeleted ? "ORDER BY id" : "WHERE deleted_at IS NULL ORDER BY id"));
    if (!st) return st.error();
    std::vector<SweepRecord> out;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        out.push_back(readSweep(*st));
    }
    return out;
}

Result<void> SweepRepository::finish(int64_t sweepId, const std::string& status, const std::string& error) {
    if (status != "completed" && status != "cancelled" && status != "failed")
        return Error{"sweep status must be completed, cancelled or failed, not '" + status + "'"};
    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    auto upd = m_db.prepare("UPDATE sweeps SET status = ?1, finished_at = ?2, error = ?3 WHERE id = ?4");
    if (!upd) return upd.error();
    upd->bind(1, status).bind(2, utcTimestamp()).bind(3, error).bind(4, sweepId);
    if (auto r = upd->run(); !r) return r.error();
    return tx->commit();
}

Result<SweepPointRecord> SweepRepository::appendPoint(SweepPointRecord p) {
    // Normalise the JSON to what reading it back yields (NaN -> null), so the hash matches.
    p.metrics = nlohmann::json::parse(compact(p.metrics), nullptr, false);
    p.requests = nlohmann::json::parse(compact(p.requests), nullptr, false);

    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    auto head = m_db.prepare("SELECT header_hash FROM sweeps WHERE id = ?1");
    if (!head) return head.error();
    head->bind(1, p.sweepId);
    auto hr = head->step();
    if (!hr) return hr.error();
    if (!*hr) return Error{"sweep " + std::to_string(p.sweepId) + " does not exist"};
    const std::string headerHash = head->columnText(0);

    auto dup = m_db.prepare(
        "SELECT 1 FROM sweep_points WHERE sweep_id = ?1 AND prompt_tokens = ?2 AND gen_tokens = ?3 AND batch = ?4 "
        "AND rate = ?5");
    if (!dup) return dup.error();
    dup->bind(1, p.sweepId).bind(2, p.promptTokens).bind(3, p.genTokens).bind(4, p.batch).bind(5, p.rate);
    auto dr = dup->step();
    if (!dr) return dr.error();
    if (*dr)
        return Error{"point prompt=" + std::to_string(p.promptTokens) + " gen=" + std::to_string(p.genTokens) +
                     " batch=" + std::to_string(p.batch) +
                     (p.rate > 0 ? " rate=" + std::to_string(p.rate) : std::string()) + " of sweep " + std::to_string(p.sweepId) + " is already stored"};

    auto last = m_db.prepare("SELECT row_hash FROM sweep_points ORDER BY seq DESC LIMIT 1");
    if (!last) return last.error();
    auto lr = last->step();
    if (!lr) return lr.error();
    p.prevHash = *lr ? last->columnText(0) : std::string(kGenesisHash);
    p.createdAt = utcTimestamp();
    p.rowHash = chainHash(sweepPointContent(p, headerHash), p.prevHash);

    auto ins = m_db.prepare(
        "INSERT INTO sweep_points (sweep_id, prompt_tokens, gen_tokens, batch, rate, metrics, requests, error, "
        "created_at, prev_hash, row_hash) VALUES (?1, ?2, ?3, ?4, ?11, ?5, ?6, ?7, ?8, ?9, ?10)");
    if (!ins) return ins.error();
    ins->bind(1, p.sweepId).bind(2, p.promptTokens).bind(3, p.genTokens).bind(4, p.batch).bind(5, compact(p.metrics))
        .bind(6, compact(p.requests)).bind(7, p.error).bind(8, p.createdAt).bind(9, p.prevHash).bind(10, p.rowHash).bind(11, p.rate);
    if (auto r = ins->run(); !r) return r.error();
    p.seq = m_db.lastInsertRowid();
    if (auto r = tx->commit(); !r) return r.error();
    return p;
}

Result<std::vector<SweepPointRecord>> SweepRepository::points(int64_t sweepId) {
    auto st = m_db.prepare(std::string("SELECT ") + kSweepPointColumns + " FROM sweep_points WHERE sweep_id = ?1 ORDER BY seq");
    if (!st) return st.error();
    st->bind(1, sweepId);
    std::vector<SweepPointRecord> out;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        out.push_back(readSweepPoint(*st));
    }
    return out;
}

Result<bool> SweepRepository::remove(int64_t sweepId) {
    auto st = m_db.prepare("UPDATE sweeps SET deleted_at = ?1 WHERE id = ?2 AND deleted_at IS NULL");
    if (!st) return st.error();
    st->bind(1, utcTimestamp()).bind(2, sweepId);
    if (auto r = st->run(); !r) return r.error();
    return sqlite3_changes(m_db.handle()) > 0;
}

}  // namespace verdict::core
