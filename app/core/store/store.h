// Where the results database lives and how to open it ready for use.
//
//   auto db = verdict::core::openStore(args.value("db"));   // --db wins, then $VERDICT_DB
//   if (!db) return fail(db.error().message);
#pragma once

#include "core/store/database.h"

#include <optional>
#include <string>

namespace verdict::core {

// $XDG_DATA_HOME/verdict/verdict.db, else $HOME/.local/share/verdict/verdict.db (XDG Base
// Directory spec: an unset or relative XDG_DATA_HOME is ignored), else ./verdict.db.
std::string defaultDatabasePath();

// The database to use: `explicitPath` (from --db) when given and non-empty, else $VERDICT_DB
// when set and non-empty, else defaultDatabasePath().
std::string resolveDatabasePath(const std::optional<std::string>& explicitPath);

// Resolves the path, creates its directory, opens it (WAL, foreign keys, busy timeout) and
// migrates the schema to the current version. Errors name the path.
Result<Database> openStore(const std::optional<std::string>& explicitPath);

// For commands that only read (results, export, verify, diff, report, suite list/show): like
// openStore, except that a database this process cannot write (a read-only file, directory or
// medium) is opened read-only instead of failing. It must then be at the current schema version
// (it cannot be migrated), and every write to it fails with SQLite's "readonly" error. A path
// where no database exists yet is opened with openStore (it is created, empty).
Result<Database> openStoreForReading(const std::optional<std::string>& explicitPath);

// Current time as "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC), the format of every *_at column.
std::string utcTimestamp();

}  // namespace verdict::core
