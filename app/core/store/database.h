// RAII wrappers over SQLite's C API: a connection (Database), a prepared statement (Statement)
// and a write transaction (Transaction). Nothing here throws; every failure is a verdict::Error
// whose message names the database file and SQLite's own reason.
//
// Connection settings applied by Database::open (why):
//   journal_mode=WAL      readers never block the writer; two processes can share the file
//   foreign_keys=ON       run_items cannot point at a missing run, runs at a missing suite
//   busy_timeout          a second writer waits (default 10 s) instead of failing with BUSY
//   synchronous=FULL      a committed item survives a crash or power loss (one fsync per item)
//
// Writers must use Transaction (BEGIN IMMEDIATE): a deferred transaction that upgrades from read
// to write can fail with SQLITE_BUSY without waiting, which is the classic WAL deadlock.
#pragma once

#include "verdict/engine/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace verdict::core {

class Statement;

class Database {
public:
    struct Options {
        int busyTimeoutMs = 10000;  // how long a writer waits for another connection's lock
        bool create = true;         // create the file when missing (false: fail instead)
        // Read only: no write, no WAL switch (a WAL file keeps its mode). When the -shm file
        // cannot be made (a read-only directory or medium), the file is opened as immutable.
        bool readOnly = false;
    };

    // Opens (or creates) the file and applies the settings above. Does not migrate the schema
    // (see migrations.h / openStore in store.h). Fails when the file cannot be opened, is not a
    // database, or WAL cannot be enabled.
    static Result<Database> open(const std::string& path, const Options& options);
    static Result<Database> open(const std::string& path) { return open(path, Options{}); }

    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    // Runs one or more ';'-separated statements without results (DDL, pragmas).
    Result<void> exec(std::string_view sql);
    // Compiles one statement. Fails with SQLite's message and the start of the SQL text.
    Result<Statement> prepare(std::string_view sql);

    // Resets every read-only statement of this connection that is stepped but not finished (what
    // Transaction::commit does before COMMIT; see there).
    void resetPendingStatements();
    int64_t lastInsertRowid() const;
    int64_t changes() const;  // rows the last INSERT/UPDATE/DELETE changed
    const std::string& path() const { return m_path; }
    bool readOnly() const { return m_readOnly; }
    sqlite3* handle() const { return m_db; }

    // "database PATH: <what>: <sqlite message>" for the connection's last error.
    Error error(std::string_view what) const;

private:
    Database(sqlite3* db, std::string path) : m_db(db), m_path(std::move(path)) {}
    static Result<Database> openReadOnly(const std::string& path, const Options& options);
    sqlite3* m_db = nullptr;
    std::string m_path;
    bool m_readOnly = false;
};

// A prepared statement. Parameters are 1-based like SQLite's; columns are 0-based.
// Bind failures are remembered and reported by the next step()/run().
class Statement {
public:
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    Statement& bind(int index, int64_t value);
    Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, double value);  // non-finite values are stored as NULL
    Statement& bind(int index, std::string_view text);
    Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
    Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
    Statement& bindNull(int index);
    template <class T>
    Statement& bind(int index, const std::optional<T>& value) {
        return value ? bind(index, *value) : bindNull(index);
    }

    // Advances: true when a row is available, false when the statement is done.
    Result<bool> step();
    // Steps until done (INSERT/UPDATE/DELETE).
    Result<void> run();
    // Back to the start with the bindings kept (for re-running in a loop).
    void reset();

    bool isNull(int column) const;
    int64_t columnInt(int column) const;
    double columnDouble(int column) const;
    std::string columnText(int column) const;  // "" for NULL
    std::optional<int64_t> columnOptInt(int column) const;
    std::optional<double> columnOptDouble(int column) const;

private:
    friend class Database;
    Statement(sqlite3_stmt* stmt, const Database* db) : m_stmt(stmt), m_db(db) {}
    void noteBind(int rc, int index);

    sqlite3_stmt* m_stmt = nullptr;
    const Database* m_db = nullptr;
    std::optional<Error> m_bindError;
};

// BEGIN IMMEDIATE ... COMMIT. Rolled back by the destructor unless commit() succeeded, so an
// early `return` on error leaves the database as it was.
class Transaction {
public:
    // Takes the write lock (waiting up to the busy timeout). Fails when the lock is not granted.
    static Result<Transaction> begin(Database& db);

    Transaction(Transaction&& other) noexcept;
    Transaction& operator=(Transaction&&) = delete;
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();

    // Resets this connection's read statements that are still stepping first (so SQLite's
    // commit-time WAL checkpoint is not held back by their snapshot): read what a transaction
    // needs before committing it, never iterate a SELECT across commits of the same connection.
    Result<void> commit();

private:
    explicit Transaction(Database* db) : m_db(db) {}
    Database* m_db = nullptr;  // null once committed or rolled back
};

}  // namespace verdict::core
