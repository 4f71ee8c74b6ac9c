#include "core/store/study_repository.h"

#include "core/store/store.h"

namespace verdict::core {

namespace {

constexpr const char* kColumns = "id, kind, name, subject, status, created_at, finished_at, result";

Result<StudyRecord> readStudy(const Statement& st) {
    StudyRecord s;
    int c = 0;
    s.id = st.columnInt(c++);
    s.kind = st.columnText(c++);
    s.name = st.columnText(c++);
    s.subject = st.columnText(c++);
    s.status = st.columnText(c++);
    s.createdAt = st.columnText(c++);
    s.finishedAt = st.columnText(c++);
    s.result = nlohmann::json::parse(st.columnText(c++), nullptr, false);
    if (s.result.is_discarded() || !s.result.is_object())
        return Error{"study " + std::to_string(s.id) + ": column result is not a JSON object"};
    return s;
}

}  // namespace

const nlohmann::json& studyField(const nlohmann::json& doc, std::initializer_list<const char*> path) {
    static const nlohmann::json kNull;
    const nlohmann::json* p = &doc;
    for (const char* k : path) {
        if (!p->is_object() || !p->contains(k)) return kNull;
        p = &(*p)[k];
    }
    return *p;
}

nlohmann::json studyDocument(const StudyRecord& s) {
    nlohmann::json j = s.result;
    j["id"] = s.id;
    j["status"] = s.status;
    j["created_at"] = s.createdAt;
    j["finished_at"] = s.finishedAt.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.finishedAt);
    return j;
}

Result<int64_t> StudyRepository::create(const std::string& kind, const std::string& name, const std::string& subject,
                                        const nlohmann::json& result) {
    auto st = m_db.prepare("INSERT INTO studies (kind, name, subject, status, created_at, result) "
                           "VALUES (?1, ?2, ?3, 'running', ?4, ?5)");
    if (!st) return st.error();
    st->bind(1, kind).bind(2, name).bind(3, subject).bind(4, utcTimestamp()).bind(5, result.dump());
    if (auto r = st->run(); !r) return r.error();
    return m_db.lastInsertRowid();
}

Result<void> StudyRepository::update(int64_t id, const nlohmann::json& result, const std::string& status) {
    const bool running = status == "running";
    auto st = m_db.prepare(running ? "UPDATE studies SET result = ?2 WHERE id = ?1"
                                   : "UPDATE studies SET result = ?2, status = ?3, finished_at = ?4 WHERE id = ?1");
    if (!st) return st.error();
    st->bind(1, id).bind(2, result.dump());
    if (!running) st->bind(3, status).bind(4, utcTimestamp());
    if (auto r = st->run(); !r) return r;
    if (m_db.changes() != 1) return Error{"study " + std::to_string(id) + " does not exist"};
    return {};
}

Result<std::vector<StudyRecord>> StudyRepository::list(const std::string& kind) {
    auto st = m_db.prepare(std::string("SELECT ") + kColumns + " FROM studies WHERE kind = ?1 ORDER BY id DESC");
    if (!st) return st.error();
    st->bind(1, kind);
    std::vector<StudyRecord> out;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        auto s = readStudy(*st);
        if (!s) return s.error();
        out.push_back(std::move(*s));
    }
    return out;
}

Result<std::optional<StudyRecord>> StudyRepository::find(int64_t id, const std::string& kind) {
    auto st = m_db.prepare(std::string("SELECT ") + kColumns + " FROM studies WHERE id = ?1 AND kind = ?2");
    if (!st) return st.error();
    st->bind(1, id).bind(2, kind);
    auto row = st->step();
    if (!row) return row.error();
    if (!*row) return std::optional<StudyRecord>{};
    auto s = readStudy(*st);
    if (!s) return s.error();
    return std::optional<StudyRecord>(std::move(*s));
}

}  // namespace verdict::core
