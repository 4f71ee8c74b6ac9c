// Which item ids a suite import has seen, kept in a temporary table of a database connection:
// SQLite keeps temp tables in a file of their own (TEMP_STORE=1, as Debian builds it), so checking
// millions of ids for repeats costs disk, not memory (issue 24, finding 4). The table belongs to
// the connection (no other connection sees it, nothing reaches the database file) and starts
// empty; rows claimed inside a transaction that rolls back vanish with it.
#pragma once

#include "core/store/database.h"

#include <string_view>

namespace verdict::core {

class IdClaims {
public:
    // Creates (or empties) the connection's claim table.
    static Result<IdClaims> open(Database& db);

    // True when no earlier claim had `id`. Errors are SQLite's (a full disk).
    Result<bool> claim(std::string_view id);

private:
    IdClaims(Database& db, Statement insert) : m_db(&db), m_insert(std::move(insert)) {}
    Database* m_db;
    Statement m_insert;
};

}  // namespace verdict::core
