// Suites and their items in the results database (tables suites, suite_items).
//
// A suite is identified by its content: the SHA-256 of its items' canonical JSON
// (suite_item_json.h), one item per line. Importing the same content again returns the stored
// suite; a different content under a taken name is refused.
#pragma once

#include "core/store/database.h"
#include "core/store/id_claims.h"
#include "core/suite/suite_importer.h"
#include "core/suite/suite_item.h"

#include <atomic>
#include <memory>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::util {
class Sha256;
}

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

// Stores one suite item by item inside one write transaction, so that memory does not grow with
// the suite: begin(), add() each item, finish() names it and commits. Destroyed before finish()
// (an error, a cancel, a killed process): nothing is stored.
class SuiteWriter {
public:
    static Result<std::unique_ptr<SuiteWriter>> begin(Database& db);
    ~SuiteWriter();
    SuiteWriter(const SuiteWriter&) = delete;
    SuiteWriter& operator=(const SuiteWriter&) = delete;

    Result<void> add(const SuiteItem& item);
    size_t count() const { return m_count; }
    // Claims an item id for this suite: true when no earlier claim had it (IdClaims: on disk, so
    // a suite of any size is checked in bounded memory; ImportOptions::claimId).
    Result<bool> claimId(const std::string& id);
    // Stores the suite (name, shape, sourcePath, sourceSha256 from `meta`; hash, time and count
    // computed). The same content already stored: rolls back and returns that suite. Fails for an
    // empty name, no items, or a name taken by other content (the message says which suite).
    Result<SuiteSaveResult> finish(const SuiteRecord& meta);

private:
    SuiteWriter(Database& db, Transaction tx, Statement insert, IdClaims claims, int64_t suiteId);
    Database& m_db;
    std::optional<Transaction> m_tx;
    Statement m_insert;
    IdClaims m_claims;
    int64_t m_suiteId;
    std::unique_ptr<util::Sha256> m_hash;  // over the items as stored, see suiteContentHash
    size_t m_count = 0;
};

// What importSuiteToStore read and stored.
struct StoredImport {
    ImportSummary summary;  // counts, rejected and warned lines, format, file hash
    SuiteSaveResult saved;
};

// `verdict suite import` and the window's import: reads the file as a stream and stores each
// item as it is mapped (memory bounded by the largest record, not the item count). Fails, storing
// nothing, when the file cannot be read, no record could be imported (the message gives the
// rejected count and the first reason), `cancel` was set ("import of PATH cancelled"), or save
// fails (see SuiteWriter::finish).
Result<StoredImport> importSuiteToStore(Database& db, const std::string& file, const ImportOptions& options,
                                        const std::atomic<bool>* cancel = nullptr);

// The record to save for a freshly imported file (name, shape, source path and its hash), as
// `verdict suite import` and the window's Suites screen store it.
SuiteRecord importedSuiteRecord(const std::string& file, const ImportSummary& imported);

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
