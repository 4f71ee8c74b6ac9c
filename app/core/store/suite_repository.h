// Suites and their items in the results database (tables suites, suite_items).
//
// A suite is identified by its content: the SHA-256 of its items' canonical JSON
// (suite_item_json.h), one item per line. Importing the same content again returns the stored
// suite; a different content under a taken name is refused.
#pragma once

#include "core/store/database.h"
#include "core/suite/suite_importer.h"
#include "core/suite/suite_item.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

struct SuiteRecord {
    int64_t id = 0;
    std::string name;
    std::string contentHash;  // 64 hex digits, see suiteContentHash
    std::string shape;        // file shape the importer detected ("jsonl", "mmlu-csv", ...)
    std::string sourcePath;   // the imported file as given
    std::string sourceSha256; // SHA-256 of the file's bytes as stored ("" when not from a file)
    std::string importedAt;   // UTC, utcTimestamp() format
    int64_t nItems = 0;
};

struct SuiteSaveResult {
    SuiteRecord suite;
    bool alreadyStored = false;  // the same content was imported before (suite is that one)
};

// SHA-256 over dump(suiteItemToJson(item)) + "\n" for every item, in order.
std::string suiteContentHash(const std::vector<SuiteItem>& items);

// The record to save for a freshly imported file (name, shape, source path and its hash), as
// `verdict suite import` and the window's Suites screen store it.
SuiteRecord importedSuiteRecord(const std::string& file, const ImportResult& imported);

class SuiteRepository {
public:
    explicit SuiteRepository(Database& db) : m_db(db) {}

    // Stores a suite (name, shape, sourcePath, sourceSha256 from `meta`; the rest is computed)
    // and all its items in one transaction. Fails for an empty name, no items, or a name already
    // used by other content (the message says which suite holds it).
    Result<SuiteSaveResult> save(const SuiteRecord& meta, const std::vector<SuiteItem>& items);

    Result<std::vector<SuiteRecord>> list();  // by id
    Result<std::optional<SuiteRecord>> findById(int64_t id);
    Result<std::optional<SuiteRecord>> findByName(std::string_view name);
    // A name, or "#ID" / a bare number when no suite has that name.
    Result<std::optional<SuiteRecord>> find(std::string_view nameOrId);

    // Items in order; `limit` >= 0 keeps the first `limit`. Fails naming the suite and index of
    // an item whose stored JSON does not parse.
    Result<std::vector<SuiteItem>> items(int64_t suiteId, int64_t limit = -1);

private:
    Database& m_db;
};

}  // namespace verdict::core
