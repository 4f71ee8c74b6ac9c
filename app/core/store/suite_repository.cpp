#include "core/store/suite_repository.h"

#include "core/store/store.h"
#include "core/store/suite_item_json.h"
#include "util/sha256.h"

#include <charconv>

namespace verdict::core {

SuiteRecord importedSuiteRecord(const std::string& file, const ImportResult& imported) {
    SuiteRecord meta;
    meta.name = imported.suiteName;
    meta.shape = imported.shape;
    meta.sourcePath = file;
    meta.sourceSha256 = imported.contentHash;
    return meta;
}

namespace {

constexpr const char* kSuiteColumns = "id, name, content_hash, shape, source_path, source_sha256, imported_at, n_items";

SuiteRecord readSuite(const Statement& st) {
    SuiteRecord s;
    s.id = st.columnInt(0);
    s.name = st.columnText(1);
    s.contentHash = st.columnText(2);
    s.shape = st.columnText(3);
    s.sourcePath = st.columnText(4);
    s.sourceSha256 = st.columnText(5);
    s.importedAt = st.columnText(6);
    s.nItems = st.columnInt(7);
    return s;
}

Result<std::optional<SuiteRecord>> queryOne(Database& db, const std::string& where, auto bindFn) {
    auto st = db.prepare(std::string("SELECT ") + kSuiteColumns + " FROM suites WHERE " + where);
    if (!st) return st.error();
    bindFn(*st);
    auto row = st->step();
    if (!row) return row.error();
    if (!*row) return std::optional<SuiteRecord>();
    return std::optional<SuiteRecord>(readSuite(*st));
}

}  // namespace

std::string suiteContentHash(const std::vector<SuiteItem>& items) {
    util::Sha256 h;
    for (const SuiteItem& item : items) {
        h.update(suiteItemToJson(item).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        h.update("\n");
    }
    return h.finalHex();
}

Result<SuiteSaveResult> SuiteRepository::save(const SuiteRecord& meta, const std::vector<SuiteItem>& items) {
    const std::string& name = meta.name;
    if (name.empty()) return Error{"suite name is empty"};
    if (items.empty()) return Error{"suite '" + name + "' has no items"};
    const std::string hash = suiteContentHash(items);

    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    auto same = queryOne(m_db, "content_hash = ?1", [&](Statement& s) { s.bind(1, hash); });
    if (!same) return same.error();
    if (*same) return SuiteSaveResult{**same, true};
    auto named = findByName(name);
    if (!named) return named.error();
    if (*named)
        return Error{"a suite named '" + name + "' already exists (id " + std::to_string((*named)->id) +
                     ", other content); choose another name"};

    SuiteRecord rec = meta;
    rec.contentHash = hash;
    rec.importedAt = utcTimestamp();
    rec.nItems = static_cast<int64_t>(items.size());
    auto ins = m_db.prepare(
        "INSERT INTO suites (name, content_hash, shape, source_path, source_sha256, imported_at, n_items) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (!ins) return ins.error();
    ins->bind(1, rec.name).bind(2, rec.contentHash).bind(3, rec.shape).bind(4, rec.sourcePath)
        .bind(5, rec.sourceSha256).bind(6, rec.importedAt).bind(7, rec.nItems);
    if (auto r = ins->run(); !r) return r.error();
    rec.id = m_db.lastInsertRowid();

    auto item = m_db.prepare("INSERT INTO suite_items (suite_id, idx, item_id, category, item) VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!item) return item.error();
    for (size_t i = 0; i < items.size(); ++i) {
        item->reset();
        item->bind(1, rec.id)
            .bind(2, static_cast<int64_t>(i))
            .bind(3, items[i].id)
            .bind(4, items[i].category)
            .bind(5, suiteItemToJson(items[i]).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        if (auto r = item->run(); !r) return r.error();
    }
    if (auto r = tx->commit(); !r) return r.error();
    return SuiteSaveResult{rec, false};
}

Result<std::vector<SuiteRecord>> SuiteRepository::list() {
    auto st = m_db.prepare(std::string("SELECT ") + kSuiteColumns + " FROM suites ORDER BY id");
    if (!st) return st.error();
    std::vector<SuiteRecord> out;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        out.push_back(readSuite(*st));
    }
    return out;
}

Result<std::optional<SuiteRecord>> SuiteRepository::findById(int64_t id) {
    return queryOne(m_db, "id = ?1", [&](Statement& s) { s.bind(1, id); });
}

Result<std::optional<SuiteRecord>> SuiteRepository::findByName(std::string_view name) {
    return queryOne(m_db, "name = ?1", [&](Statement& s) { s.bind(1, name); });
}

Result<std::optional<SuiteRecord>> SuiteRepository::find(std::string_view nameOrId) {
    auto byName = findByName(nameOrId);
    if (!byName || *byName) return byName;
    std::string_view digits = nameOrId;
    if (!digits.empty() && digits.front() == '#') digits.remove_prefix(1);
    int64_t id = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size()) return std::optional<SuiteRecord>();
    return findById(id);
}

Result<std::vector<SuiteItem>> SuiteRepository::items(int64_t suiteId, int64_t limit) {
    auto st = m_db.prepare("SELECT idx, item FROM suite_items WHERE suite_id = ?1 ORDER BY idx LIMIT ?2");
    if (!st) return st.error();
    st->bind(1, suiteId).bind(2, limit < 0 ? int64_t{-1} : limit);
    std::vector<SuiteItem> out;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        const int64_t idx = st->columnInt(0);
        auto j = nlohmann::json::parse(st->columnText(1), nullptr, false);
        auto item = j.is_discarded() ? Result<SuiteItem>(Error{"not JSON"}) : suiteItemFromJson(j);
        if (!item)
            return Error{"database " + m_db.path() + ": suite " + std::to_string(suiteId) + " item " + std::to_string(idx) +
                         ": " + item.error().message};
        out.push_back(std::move(*item));
    }
    return out;
}

}  // namespace verdict::core
