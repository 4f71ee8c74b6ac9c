#include "core/store/database.h"

#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <utility>

namespace verdict::core {
namespace {

std::string sqlHead(std::string_view sql) {
    std::string s(sql.substr(0, 60));
    for (char& c : s)
        if (c == '\n' || c == '\t') c = ' ';
    if (sql.size() > 60) s += "...";
    return s;
}

}  // namespace

// ---- Database ---------------------------------------------------------------------------------

Result<Database> Database::openReadOnly(const std::string& path, const Options& options) {
    // First as an ordinary reader (sees a live writer's WAL); when SQLite cannot open the -shm
    // file next to it (read-only directory or medium), as immutable: nobody can be writing then.
    std::string lastError;
    for (const bool immutable : {false, true}) {
        sqlite3* raw = nullptr;
        const std::string name = immutable ? "file:" + path + "?immutable=1" : path;
        int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX | (immutable ? SQLITE_OPEN_URI : 0);
        int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
        if (rc == SQLITE_OK) {
            sqlite3_extended_result_codes(raw, 1);
            sqlite3_busy_timeout(raw, options.busyTimeoutMs);
            rc = sqlite3_exec(raw, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
        }
        if (rc == SQLITE_OK) {
            Database db(raw, path);
            db.m_readOnly = true;
            if (auto r = db.exec("PRAGMA foreign_keys=ON;"); !r) return r.error();
            return db;
        }
        lastError = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
        sqlite3_close(raw);
        const int primary = rc & 0xff;
        if (primary != SQLITE_CANTOPEN && primary != SQLITE_READONLY) break;
    }
    return Error{"database " + path + ": cannot open read-only: " + lastError};
}

Result<Database> Database::open(const std::string& path, const Options& options) {
    if (options.readOnly) return openReadOnly(path, options);
    sqlite3* raw = nullptr;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX;
    if (options.create) flags |= SQLITE_OPEN_CREATE;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
        sqlite3_close(raw);
        return Error{"database " + path + ": cannot open: " + msg};
    }
    Database db(raw, path);
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, options.busyTimeoutMs);

    // journal_mode answers with the mode in effect; anything but "wal" (e.g. a read-only medium)
    // is refused because the concurrency guarantees above depend on it. Switching a new file to
    // WAL while another connection opens it can answer SQLITE_BUSY without consulting the busy
    // handler, so that case is retried here until the busy timeout has passed.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.busyTimeoutMs);
    std::string mode;
    for (;;) {
        mode.clear();
        char* err = nullptr;
        const int prc = sqlite3_exec(
            raw, "PRAGMA journal_mode=WAL",
            [](void* out, int n, char** values, char**) {
                if (n > 0 && values[0]) *static_cast<std::string*>(out) = values[0];
                return 0;
            },
            &mode, &err);
        const std::string msg = err ? err : sqlite3_errstr(prc);
        sqlite3_free(err);
        if (prc == SQLITE_OK) break;
        const int primary = prc & 0xff;
        if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || std::chrono::steady_clock::now() >= deadline)
            return Error{"database " + path + ": cannot enable WAL journal mode: " + msg};
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (mode != "wal")
        return Error{"database " + path + ": cannot enable WAL journal mode (got '" + mode + "')"};
    if (auto r = db.exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL;"); !r) return r.error();
    return db;
}

Database::Database(Database&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)), m_path(std::move(other.m_path)), m_readOnly(other.m_readOnly) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        if (m_db) sqlite3_close_v2(m_db);
        m_db = std::exchange(other.m_db, nullptr);
        m_path = std::move(other.m_path);
        m_readOnly = other.m_readOnly;
    }
    return *this;
}

Database::~Database() {
    // close_v2: statements still alive (a bug elsewhere) keep the connection until they finish,
    // instead of the close failing and leaking the handle.
    if (m_db) sqlite3_close_v2(m_db);
}

Result<void> Database::exec(std::string_view sql) {
    std::string text(sql);
    char* err = nullptr;
    const int rc = sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errstr(rc);
        sqlite3_free(err);
        return Error{"database " + m_path + ": " + msg + " (in: " + sqlHead(sql) + ")"};
    }
    return {};
}

Result<Statement> Database::prepare(std::string_view sql) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        return Error{"database " + m_path + ": " + sqlite3_errmsg(m_db) + " (in: " + sqlHead(sql) + ")"};
    }
    return Statement(stmt, this);
}

int64_t Database::lastInsertRowid() const { return sqlite3_last_insert_rowid(m_db); }

int64_t Database::changes() const { return sqlite3_changes(m_db); }

void Database::resetPendingStatements() {
    for (sqlite3_stmt* st = sqlite3_next_stmt(m_db, nullptr); st; st = sqlite3_next_stmt(m_db, st))
        if (sqlite3_stmt_busy(st) && sqlite3_stmt_readonly(st)) sqlite3_reset(st);
}

Error Database::error(std::string_view what) const {
    return Error{"database " + m_path + ": " + std::string(what) + ": " + sqlite3_errmsg(m_db)};
}

// ---- Statement --------------------------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept
    : m_stmt(std::exchange(other.m_stmt, nullptr)), m_db(other.m_db), m_bindError(std::move(other.m_bindError)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(m_stmt);
        m_stmt = std::exchange(other.m_stmt, nullptr);
        m_db = other.m_db;
        m_bindError = std::move(other.m_bindError);
    }
    return *this;
}

Statement::~Statement() { sqlite3_finalize(m_stmt); }

void Statement::noteBind(int rc, int index) {
    if (rc != SQLITE_OK && !m_bindError)
        m_bindError = m_db->error("cannot bind parameter " + std::to_string(index));
}

Statement& Statement::bind(int index, int64_t value) {
    noteBind(sqlite3_bind_int64(m_stmt, index, value), index);
    return *this;
}

Statement& Statement::bind(int index, double value) {
    // SQLite turns NaN into NULL anyway; do it explicitly so infinities behave the same.
    if (!std::isfinite(value)) return bindNull(index);
    noteBind(sqlite3_bind_double(m_stmt, index, value), index);
    return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
    noteBind(sqlite3_bind_text64(m_stmt, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8), index);
    return *this;
}

Statement& Statement::bindNull(int index) {
    noteBind(sqlite3_bind_null(m_stmt, index), index);
    return *this;
}

Result<bool> Statement::step() {
    if (m_bindError) return *m_bindError;
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    Error e = m_db->error(std::string("in: ") + sqlHead(sqlite3_sql(m_stmt)));
    sqlite3_reset(m_stmt);
    return e;
}

Result<void> Statement::run() {
    for (;;) {
        auto r = step();
        if (!r) return r.error();
        if (!*r) return {};
    }
}

void Statement::reset() { sqlite3_reset(m_stmt); }

bool Statement::isNull(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }
int64_t Statement::columnInt(int column) const { return sqlite3_column_int64(m_stmt, column); }
double Statement::columnDouble(int column) const { return sqlite3_column_double(m_stmt, column); }

std::string Statement::columnText(int column) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
    if (!p) return {};
    return std::string(p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column)));
}

std::optional<int64_t> Statement::columnOptInt(int column) const {
    if (isNull(column)) return std::nullopt;
    return columnInt(column);
}

std::optional<double> Statement::columnOptDouble(int column) const {
    if (isNull(column)) return std::nullopt;
    return columnDouble(column);
}

// ---- Transaction ------------------------------------------------------------------------------

Result<Transaction> Transaction::begin(Database& db) {
    if (auto r = db.exec("BEGIN IMMEDIATE"); !r) return r.error();
    return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : m_db(std::exchange(other.m_db, nullptr)) {}

Transaction::~Transaction() {
    if (m_db) (void)m_db->exec("ROLLBACK");
}

Result<void> Transaction::commit() {
    if (!m_db) return Error{"transaction already finished"};
    // A statement stepped to a row and not yet finished (the SELECTs a transaction reads its
    // inputs with) keeps this connection's read snapshot open past COMMIT. The WAL checkpoint
    // that SQLite runs on commit cannot copy frames past an open snapshot, so the WAL grew by
    // every row of a run and the main file never did (a lost WAL lost the run). Their rows have
    // been read by now: reset them, so each commit's checkpoint can move the WAL into the file.
    m_db->resetPendingStatements();
    auto r = m_db->exec("COMMIT");
    if (!r) {
        (void)m_db->exec("ROLLBACK");
        m_db = nullptr;
        return r.error();
    }
    m_db = nullptr;
    return {};
}

}  // namespace verdict::core
