#include "core/store/run_repository.h"

#include "core/store/audit_chain.h"
#include "core/store/store.h"
#include "util/sha256.h"

#include <cerrno>
#include <cmath>
#include <csignal>
#include <sqlite3.h>
#include <unistd.h>

namespace verdict::core {
namespace {

constexpr const char* kRunColumns =
    "id, backend, model_id, model_path, model_sha256, model_bytes, suite_id, prompting, generation, "
    "chat_template_mode, chat_template, chat_template_hash, seed, item_limit, n_planned, engine_version, device, "
    "started_at, resume_key, header_hash, sweep_id, status, finished_at, error, owner_pid, owner_host";

nlohmann::json parseJsonColumn(const std::string& text, const char* column, std::string* parseError) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) {
        if (parseError && parseError->empty()) *parseError = std::string("column ") + column + " is not valid JSON";
        return nullptr;
    }
    return j;
}

RunRecord readRun(const Statement& st) {
    RunRecord r;
    int c = 0;
    r.id = st.columnInt(c++);
    r.backend = st.columnText(c++);
    r.modelId = st.columnOptInt(c++);
    r.modelPath = st.columnText(c++);
    r.modelSha256 = st.columnText(c++);
    r.modelBytes = st.columnInt(c++);
    r.suiteId = st.columnInt(c++);
    r.prompting = parseJsonColumn(st.columnText(c++), "prompting", nullptr);
    r.generation = parseJsonColumn(st.columnText(c++), "generation", nullptr);
    r.chatTemplateMode = st.columnText(c++);
    r.chatTemplate = st.columnText(c++);
    r.chatTemplateHash = st.columnText(c++);
    r.seed = st.columnInt(c++);
    r.itemLimit = st.columnOptInt(c++);
    r.nPlanned = st.columnInt(c++);
    r.engineVersion = st.columnText(c++);
    r.device = st.columnText(c++);
    r.startedAt = st.columnText(c++);
    r.resumeKey = st.columnText(c++);
    r.headerHash = st.columnText(c++);
    r.sweepId = st.columnOptInt(c++);
    r.status = parseRunStatus(st.columnText(c++)).value_or(RunStatus::Failed);
    r.finishedAt = st.columnText(c++);
    r.error = st.columnText(c++);
    r.ownerPid = st.columnOptInt(c++);
    r.ownerHost = st.columnText(c++);
    return r;
}

std::string compact(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<double> finiteOrNone(std::optional<double> v) {
    if (v && !std::isfinite(*v)) return std::nullopt;
    return v;
}

Result<std::vector<RunRecord>> queryRuns(Database& db, const std::string& tail, auto bindFn) {
    auto st = db.prepare(std::string("SELECT ") + kRunColumns + " FROM runs " + tail);
    if (!st) return st.error();
    bindFn(*st);
    std::vector<RunRecord> out;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        out.push_back(readRun(*st));
    }
    return out;
}

}  // namespace

const char* const kRunItemColumns =
    "seq, run_id, item_idx, item_id, category, prompt, output, tokens_in, tokens_out, ttft_ms, decode_tps, "
    "duration_ms, scores, correct, error, details, created_at, prev_hash, row_hash";

RunItemRecord readRunItem(const Statement& st, std::string* parseError) {
    RunItemRecord it;
    int c = 0;
    it.seq = st.columnInt(c++);
    it.runId = st.columnInt(c++);
    it.itemIdx = st.columnInt(c++);
    it.itemId = st.columnText(c++);
    it.category = st.columnText(c++);
    it.prompt = st.columnText(c++);
    it.output = st.columnText(c++);
    it.tokensIn = st.columnInt(c++);
    it.tokensOut = st.columnInt(c++);
    it.ttftMs = st.columnOptDouble(c++);
    it.decodeTps = st.columnOptDouble(c++);
    it.durationMs = st.columnOptDouble(c++);
    it.scores = parseJsonColumn(st.columnText(c++), "scores", parseError);
    if (auto v = st.columnOptInt(c++)) it.correct = *v != 0;
    it.error = st.columnText(c++);
    it.details = parseJsonColumn(st.columnText(c++), "details", parseError);
    it.createdAt = st.columnText(c++);
    it.prevHash = st.columnText(c++);
    it.rowHash = st.columnText(c++);
    return it;
}

std::string_view runStatusName(RunStatus status) {
    switch (status) {
    case RunStatus::Running: return "running";
    case RunStatus::Completed: return "completed";
    case RunStatus::Cancelled: return "cancelled";
    case RunStatus::Failed: return "failed";
    }
    return "failed";
}

std::optional<RunStatus> parseRunStatus(std::string_view name) {
    for (RunStatus s : {RunStatus::Running, RunStatus::Completed, RunStatus::Cancelled, RunStatus::Failed})
        if (runStatusName(s) == name) return s;
    return std::nullopt;
}

std::string resumeKeyOf(const RunRecord& r) {
    const nlohmann::json key = {"resume/v1",
                                r.backend,
                                r.modelSha256,
                                r.backend == "endpoint" ? nlohmann::json(r.modelPath) : nlohmann::json(r.modelBytes),
                                r.suiteId,
                                compact(r.prompting),
                                compact(r.generation),
                                r.chatTemplateMode,
                                r.chatTemplateHash,
                                r.seed,
                                r.itemLimit ? nlohmann::json(*r.itemLimit) : nlohmann::json(nullptr),
                                r.engineVersion};
    // A run on a GPU is its own experiment: its timings belong to that device. (CPU and endpoint
    // keys stay as they were, so stored runs keep resuming.)
    nlohmann::json k = key;
    const std::string device = r.device.substr(0, r.device.find(' '));
    if (device.rfind("cuda", 0) == 0) k.push_back(device);
    return util::sha256Hex(compact(k));
}

bool processAlive(int64_t pid) {
    if (pid <= 0) return false;
    // EPERM: the process exists but belongs to someone else, which still means alive.
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string hostName() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return {};
    return buf;
}

Result<RunRecord> RunRepository::create(RunRecord run) {
    if (run.startedAt.empty()) run.startedAt = utcTimestamp();
    run.status = RunStatus::Running;
    run.finishedAt.clear();
    run.error.clear();
    run.resumeKey = resumeKeyOf(run);

    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    // The id is part of the header hash, so insert first, then hash and store the hash.
    auto ins = m_db.prepare(std::string("INSERT INTO runs (") + kRunColumns +
                            ") VALUES (NULL, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                            "?17, ?18, '', ?19, ?20, NULL, '', ?21, ?22)");
    if (!ins) return ins.error();
    ins->bind(1, run.backend).bind(2, run.modelId).bind(3, run.modelPath).bind(4, run.modelSha256)
        .bind(5, run.modelBytes).bind(6, run.suiteId).bind(7, compact(run.prompting)).bind(8, compact(run.generation))
        .bind(9, run.chatTemplateMode).bind(10, run.chatTemplate).bind(11, run.chatTemplateHash).bind(12, run.seed)
        .bind(13, run.itemLimit).bind(14, run.nPlanned).bind(15, run.engineVersion).bind(16, run.device)
        .bind(17, run.startedAt).bind(18, run.resumeKey).bind(19, run.sweepId)
        .bind(20, runStatusName(run.status)).bind(21, run.ownerPid).bind(22, run.ownerHost);
    if (auto r = ins->run(); !r) return r.error();
    run.id = m_db.lastInsertRowid();
    run.headerHash = runHeaderHash(run);
    auto upd = m_db.prepare("UPDATE runs SET header_hash = ?1 WHERE id = ?2");
    if (!upd) return upd.error();
    upd->bind(1, run.headerHash).bind(2, run.id);
    if (auto r = upd->run(); !r) return r.error();
    if (auto r = tx->commit(); !r) return r.error();
    return run;
}

Result<std::optional<RunRecord>> RunRepository::find(int64_t id) {
    auto runs = queryRuns(m_db, "WHERE id = ?1", [&](Statement& s) { s.bind(1, id); });
    if (!runs) return runs.error();
    if (runs->empty()) return std::optional<RunRecord>();
    return std::optional<RunRecord>(std::move(runs->front()));
}

Result<std::vector<RunRecord>> RunRepository::list(bool includeDeleted) {
    return queryRuns(m_db, includeDeleted ? "ORDER BY id" : "WHERE deleted_at IS NULL ORDER BY id", [](Statement&) {});
}

Result<std::optional<RunRecord>> RunRepository::findUnfinished(const std::string& resumeKey) {
    auto runs = queryRuns(m_db, "WHERE resume_key = ?1 AND status != 'completed' AND deleted_at IS NULL ORDER BY id DESC LIMIT 1",
                          [&](Statement& s) { s.bind(1, resumeKey); });
    if (!runs) return runs.error();
    if (runs->empty()) return std::optional<RunRecord>();
    return std::optional<RunRecord>(std::move(runs->front()));
}

Result<void> RunRepository::claim(int64_t runId, int64_t pid, const std::string& host, bool force) {
    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    auto run = find(runId);
    if (!run) return run.error();
    if (!*run) return Error{"run " + std::to_string(runId) + " does not exist"};
    const RunRecord& r = **run;
    if (r.status == RunStatus::Completed) return Error{"run " + std::to_string(runId) + " is already completed"};
    if (!force && r.status == RunStatus::Running && r.ownerPid && *r.ownerPid != pid) {
        if (r.ownerHost != host)
            return Error{"run " + std::to_string(runId) + " is marked running by process " +
                         std::to_string(*r.ownerPid) + " on host '" + r.ownerHost + "'"};
        if (processAlive(*r.ownerPid))
            return Error{"run " + std::to_string(runId) + " is being executed by process " + std::to_string(*r.ownerPid)};
    }
    auto upd = m_db.prepare(
        "UPDATE runs SET status = 'running', finished_at = NULL, error = '', owner_pid = ?1, owner_host = ?2 WHERE id = ?3");
    if (!upd) return upd.error();
    upd->bind(1, pid).bind(2, host).bind(3, runId);
    if (auto res = upd->run(); !res) return res.error();
    return tx->commit();
}

Result<void> RunRepository::finish(int64_t runId, RunStatus status, const std::string& error) {
    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    auto upd = m_db.prepare(
        "UPDATE runs SET status = ?1, finished_at = ?2, error = ?3, owner_pid = NULL, owner_host = NULL WHERE id = ?4");
    if (!upd) return upd.error();
    upd->bind(1, runStatusName(status)).bind(2, utcTimestamp()).bind(3, error).bind(4, runId);
    if (auto r = upd->run(); !r) return r.error();
    return tx->commit();
}

Result<bool> RunRepository::remove(int64_t runId) {
    auto run = find(runId);
    if (!run) return run.error();
    if (!*run) return false;
    if ((*run)->ownerPid && (*run)->ownerHost == hostName() && processAlive(*(*run)->ownerPid) &&
        *(*run)->ownerPid != static_cast<int64_t>(::getpid()))
        return Error{"run " + std::to_string(runId) + " is being executed by process " + std::to_string(*(*run)->ownerPid) +
                     "; stop it first"};
    auto st = m_db.prepare("UPDATE runs SET deleted_at = ?1 WHERE id = ?2 AND deleted_at IS NULL");
    if (!st) return st.error();
    st->bind(1, utcTimestamp()).bind(2, runId);
    if (auto r = st->run(); !r) return r.error();
    return sqlite3_changes(m_db.handle()) > 0;
}

Result<std::vector<int64_t>> RunRepository::storedItemIndices(int64_t runId) {
    auto st = m_db.prepare("SELECT item_idx FROM run_items WHERE run_id = ?1 ORDER BY item_idx");
    if (!st) return st.error();
    st->bind(1, runId);
    std::vector<int64_t> out;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        out.push_back(st->columnInt(0));
    }
    return out;
}

Result<RunItemRecord> RunRepository::appendItem(RunItemRecord item) {
    item.ttftMs = finiteOrNone(item.ttftMs);
    item.decodeTps = finiteOrNone(item.decodeTps);
    item.durationMs = finiteOrNone(item.durationMs);
    // Normalise the JSON columns to what reading them back yields, so the hash computed here is
    // the one verifyChain recomputes (e.g. a NaN inside scores is stored as null).
    item.scores = nlohmann::json::parse(compact(item.scores), nullptr, false);
    item.details = nlohmann::json::parse(compact(item.details), nullptr, false);

    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    auto head = m_db.prepare("SELECT header_hash FROM runs WHERE id = ?1");
    if (!head) return head.error();
    head->bind(1, item.runId);
    auto hr = head->step();
    if (!hr) return hr.error();
    if (!*hr) return Error{"run " + std::to_string(item.runId) + " does not exist"};
    const std::string headerHash = head->columnText(0);

    auto last = m_db.prepare("SELECT row_hash FROM run_items ORDER BY seq DESC LIMIT 1");
    if (!last) return last.error();
    auto lr = last->step();
    if (!lr) return lr.error();
    item.prevHash = *lr ? last->columnText(0) : std::string(kGenesisHash);
    item.createdAt = utcTimestamp();
    item.rowHash = chainHash(runItemContent(item, headerHash), item.prevHash);

    auto dup = m_db.prepare("SELECT 1 FROM run_items WHERE run_id = ?1 AND item_idx = ?2");
    if (!dup) return dup.error();
    dup->bind(1, item.runId).bind(2, item.itemIdx);
    auto dr = dup->step();
    if (!dr) return dr.error();
    if (*dr)
        return Error{"item " + std::to_string(item.itemIdx) + " of run " + std::to_string(item.runId) +
                     " is already stored"};

    auto ins = m_db.prepare(
        "INSERT INTO run_items (run_id, item_idx, item_id, category, prompt, output, tokens_in, tokens_out, ttft_ms, "
        "decode_tps, duration_ms, scores, correct, error, details, created_at, prev_hash, row_hash) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)");
    if (!ins) return ins.error();
    ins->bind(1, item.runId).bind(2, item.itemIdx).bind(3, item.itemId).bind(4, item.category).bind(5, item.prompt)
        .bind(6, item.output).bind(7, item.tokensIn).bind(8, item.tokensOut).bind(9, item.ttftMs)
        .bind(10, item.decodeTps).bind(11, item.durationMs).bind(12, compact(item.scores));
    if (item.correct) ins->bind(13, int64_t{*item.correct ? 1 : 0});
    else ins->bindNull(13);
    ins->bind(14, item.error).bind(15, compact(item.details)).bind(16, item.createdAt).bind(17, item.prevHash)
        .bind(18, item.rowHash);
    if (auto r = ins->run(); !r) return r.error();
    item.seq = m_db.lastInsertRowid();
    if (auto r = tx->commit(); !r) return r.error();
    return item;
}

Result<std::vector<RunItemRecord>> RunRepository::items(int64_t runId) {
    auto st = m_db.prepare(std::string("SELECT ") + kRunItemColumns + " FROM run_items WHERE run_id = ?1 ORDER BY item_idx");
    if (!st) return st.error();
    st->bind(1, runId);
    std::vector<RunItemRecord> out;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        out.push_back(readRunItem(*st));
    }
    return out;
}

}  // namespace verdict::core
