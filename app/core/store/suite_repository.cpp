#include "core/store/suite_repository.h"

#include "core/score/scorer.h"
#include "core/store/store.h"
#include "core/store/suite_item_json.h"
#include "util/quote.h"
#include "util/sha256.h"

#include <charconv>
#include <chrono>
#include <set>

namespace verdict::core {

SuiteRecord importedSuiteRecord(const std::string& file, const ImportSummary& imported) {
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

std::string suiteItemText(const SuiteItem& item) {
    return suiteItemToJson(item).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string suiteContentHash(const std::vector<SuiteItem>& items) {
    util::Sha256 h;
    for (const SuiteItem& item : items) {
        h.update(suiteItemText(item));
        h.update("\n");
    }
    return h.finalHex();
}

SuiteWriter::SuiteWriter(Database& db, Transaction tx, Statement insert, IdClaims claims, int64_t suiteId)
    : m_db(db),
      m_tx(std::move(tx)),
      m_insert(std::move(insert)),
      m_claims(std::move(claims)),
      m_suiteId(suiteId),
      m_hash(std::make_unique<util::Sha256>()) {}

SuiteWriter::~SuiteWriter() = default;  // an unfinished transaction rolls back

Result<std::unique_ptr<SuiteWriter>> SuiteWriter::begin(Database& db) {
    auto tx = Transaction::begin(db);
    if (!tx) return tx.error();
    // A placeholder row the items can point at; finish() gives it its name and hash. It is never
    // visible: the transaction commits only in finish().
    const std::string pending = "(importing " + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ")";
    auto ins = db.prepare(
        "INSERT INTO suites (name, content_hash, shape, source_path, source_sha256, imported_at, n_items) "
        "VALUES (?1, ?1, '', '', '', '', 0)");
    if (!ins) return ins.error();
    ins->bind(1, pending);
    if (auto r = ins->run(); !r) return r.error();
    const int64_t id = db.lastInsertRowid();
    auto item = db.prepare("INSERT INTO suite_items (suite_id, idx, item_id, category, item) VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!item) return item.error();
    auto claims = IdClaims::open(db);
    if (!claims) return claims.error();
    return std::unique_ptr<SuiteWriter>(new SuiteWriter(db, std::move(*tx), std::move(*item), std::move(*claims), id));
}

Result<void> SuiteWriter::add(const SuiteItem& item) {
    if (!m_tx) return Error{"suite writer already finished"};
    const std::string text = suiteItemText(item);
    m_hash->update(text);
    m_hash->update("\n");
    m_insert.reset();
    m_insert.bind(1, m_suiteId).bind(2, static_cast<int64_t>(m_count)).bind(3, item.id).bind(4, item.category).bind(5, text);
    if (auto r = m_insert.run(); !r) return r.error();
    ++m_count;
    return {};
}

Result<bool> SuiteWriter::claimId(const std::string& id) {
    if (!m_tx) return Error{"suite writer already finished"};
    return m_claims.claim(id);
}

Result<SuiteSaveResult> SuiteWriter::finish(const SuiteRecord& meta) {
    if (!m_tx) return Error{"suite writer already finished"};
    const std::string& name = meta.name;
    if (name.empty()) return Error{"suite name is empty"};
    if (m_count == 0) return Error{"suite '" + name + "' has no items"};
    const std::string hash = m_hash->finalHex();
    SuiteRepository repo(m_db);
    auto same = queryOne(m_db, "content_hash = ?1", [&](Statement& s) { s.bind(1, hash); });
    if (!same) return same.error();
    if (*same) {
        m_tx.reset();  // roll back the copy
        return SuiteSaveResult{**same, true};
    }
    auto named = repo.findByName(name);
    if (!named) return named.error();
    if (*named)
        return Error{"a suite named '" + name + "' already exists (id " + std::to_string((*named)->id) +
                     ", other content); choose another name"};
    SuiteRecord rec = meta;
    rec.id = m_suiteId;
    rec.contentHash = hash;
    rec.importedAt = utcTimestamp();
    rec.nItems = static_cast<int64_t>(m_count);
    auto up = m_db.prepare(
        "UPDATE suites SET name = ?1, content_hash = ?2, shape = ?3, source_path = ?4, source_sha256 = ?5, "
        "imported_at = ?6, n_items = ?7 WHERE id = ?8");
    if (!up) return up.error();
    up->bind(1, rec.name).bind(2, rec.contentHash).bind(3, rec.shape).bind(4, rec.sourcePath)
        .bind(5, rec.sourceSha256).bind(6, rec.importedAt).bind(7, rec.nItems).bind(8, rec.id);
    if (auto r = up->run(); !r) return r.error();
    if (auto r = m_tx->commit(); !r) return r.error();
    m_tx.reset();
    return SuiteSaveResult{rec, false};
}

Result<SuiteSaveResult> SuiteRepository::save(const SuiteRecord& meta, const std::vector<SuiteItem>& items) {
    if (meta.name.empty()) return Error{"suite name is empty"};
    if (items.empty()) return Error{"suite '" + meta.name + "' has no items"};
    auto w = SuiteWriter::begin(m_db);
    if (!w) return w.error();
    for (const SuiteItem& item : items)
        if (auto r = (*w)->add(item); !r) return r.error();
    return (*w)->finish(meta);
}

Result<StoredImport> importSuiteToStore(Database& db, const std::string& file, const ImportOptions& options,
                                        const std::atomic<bool>* cancel) {
    auto w = SuiteWriter::begin(db);
    if (!w) return w.error();
    std::optional<Error> storeError;
    ImportOptions o = options;
    o.claimId = [&](const std::string& id) {  // duplicate ids checked in the database, not in memory
        auto claimed = (*w)->claimId(id);
        if (claimed) return *claimed;
        if (!storeError) storeError = claimed.error();
        return true;
    };
    // A scorer that cannot be made (unknown name, a regex that does not compile, a label scorer
    // without its labels) rejects its record here, with the line, instead of failing every item
    // of every run later. Specs repeat over items: each distinct one is checked once.
    std::set<std::string> checked;
    o.validateItem = [&, inner = options.validateItem](const SuiteItem& item) -> std::optional<std::string> {
        if (inner)
            if (auto why = inner(item)) return why;
        for (const ScorerSpec& spec : item.scorers) {
            if (isLoglikelihoodScorer(spec.name)) continue;
            const std::string key = spec.name + "\x1f" + spec.params.dump();
            if (checked.count(key)) continue;
            auto made = makeScorer(spec);
            if (!made) return "scorer '" + spec.name + "': " + made.error().message;
            checked.insert(key);
        }
        return std::nullopt;
    };
    auto summary = importSuiteStreaming(file, o, [&](SuiteItem&& item) {
        if (storeError) return false;
        if (auto r = (*w)->add(item); !r) {
            storeError = r.error();
            return false;
        }
        return !(cancel && cancel->load());
    });
    if (!summary) return summary.error();
    if (storeError) return *storeError;
    if (cancel && cancel->load()) return Error{"import of " + file + " cancelled"};
    if ((*w)->count() == 0)
        return Error{file + ": no record could be imported (" + std::to_string(summary->rejectedCount) + " rejected" +
                     (summary->rejected.empty() ? std::string()
                                                : "; first: line " + std::to_string(summary->rejected[0].line) + ": " +
                                                      util::oneLine(summary->rejected[0].reason, 400)) +
                     ")"};
    SuiteRecord meta = importedSuiteRecord(file, *summary);
    if (!options.name.empty()) meta.name = options.name;
    auto saved = (*w)->finish(meta);
    if (!saved) return saved.error();
    return StoredImport{std::move(*summary), std::move(*saved)};
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
