#include "core/store/store.h"

#include "core/store/migrations.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <system_error>

#include <unistd.h>

namespace verdict::core {
namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

}  // namespace

std::string defaultDatabasePath() {
    namespace fs = std::filesystem;
    // XDG Base Directory Specification: "If $XDG_DATA_HOME is either not set or empty, a default
    // equal to $HOME/.local/share should be used"; relative paths are invalid and ignored.
    const std::string xdg = env("XDG_DATA_HOME");
    if (!xdg.empty() && fs::path(xdg).is_absolute()) return (fs::path(xdg) / "verdict" / "verdict.db").string();
    const std::string home = env("HOME");
    if (!home.empty()) return (fs::path(home) / ".local" / "share" / "verdict" / "verdict.db").string();
    return "verdict.db";
}

std::string resolveDatabasePath(const std::optional<std::string>& explicitPath) {
    if (explicitPath && !explicitPath->empty()) return *explicitPath;
    if (std::string v = env("VERDICT_DB"); !v.empty()) return v;
    return defaultDatabasePath();
}

Result<Database> openStore(const std::optional<std::string>& explicitPath) {
    namespace fs = std::filesystem;
    const std::string path = resolveDatabasePath(explicitPath);
    const fs::path dir = fs::path(path).parent_path();
    if (!dir.empty()) {
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec) return Error{"database " + path + ": cannot create directory " + dir.string() + ": " + ec.message()};
    }
    auto db = Database::open(path);
    if (!db) return db.error();
    if (auto r = migrate(*db); !r) return r.error();
    return std::move(*db);
}

Result<Database> openStoreForReading(const std::optional<std::string>& explicitPath) {
    namespace fs = std::filesystem;
    const std::string path = resolveDatabasePath(explicitPath);
    std::error_code ec;
    if (!fs::exists(path, ec)) return openStore(explicitPath);
    const fs::path dir = fs::path(path).parent_path();
    const bool writable = ::access(path.c_str(), W_OK) == 0 && ::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0;
    if (writable) return openStore(explicitPath);
    Database::Options o;
    o.readOnly = true;
    auto db = Database::open(path, o);
    if (!db) return db.error();
    auto version = schemaVersion(*db);
    if (!version) return version.error();
    if (*version > kSchemaVersion) return newerSchemaError(*db, *version);
    if (*version < kSchemaVersion)
        return Error{"database " + path + " is read-only and at schema version " + std::to_string(*version) +
                     " (this verdict needs " + std::to_string(kSchemaVersion) +
                     "); it cannot be migrated in place: copy it somewhere writable"};
    return std::move(*db);
}

std::string utcTimestamp() {
    using namespace std::chrono;
    const auto now = system_clock::now();
    const std::time_t secs = system_clock::to_time_t(now);
    const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    return buf;
}

}  // namespace verdict::core
