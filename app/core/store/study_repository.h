// Studies: measurements made of several runs, sweeps and figures of their own, stored as one JSON
// document that is rewritten after every step (table studies, schema v6): a quantization
// trade-off (`verdict quant-compare`, kind "quant_compare") and a soak test (`verdict soak`, kind
// "soak"). Each write is its own statement (autocommit), so a killed process keeps every step it
// finished; its status then stays "running". The runs and sweeps a study made are ordinary rows
// with their own hash chains; the study itself is not chained.
#pragma once

#include "core/store/database.h"

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

struct StudyRecord {
    int64_t id = 0;
    std::string kind;          // "quant_compare", "soak"
    std::string name;
    std::string subject;       // what was studied: the base file, the endpoint or model
    std::string status;        // "running", "completed", "cancelled", "failed"
    std::string createdAt;
    std::string finishedAt;    // "" while running
    nlohmann::json result;     // the document (its shape belongs to the kind; docs/cli.md)
};

// doc[a][b]... of a study document; a null json when any step is missing (a part not measured,
// an older document).
const nlohmann::json& studyField(const nlohmann::json& doc, std::initializer_list<const char*> path);

// The document as commands print it: the result with the row's id, status (the column wins: a
// killed process leaves "running" in both), created_at and finished_at (null while running).
nlohmann::json studyDocument(const StudyRecord& study);

class StudyRepository {
public:
    explicit StudyRepository(Database& db) : m_db(db) {}

    // Inserts a study with status running; returns its id.
    Result<int64_t> create(const std::string& kind, const std::string& name, const std::string& subject,
                           const nlohmann::json& result);
    // Rewrites the document; a status other than "running" also sets finished_at.
    Result<void> update(int64_t id, const nlohmann::json& result, const std::string& status = "running");
    // Studies of one kind, newest first.
    Result<std::vector<StudyRecord>> list(const std::string& kind);
    // nullopt: no study with that id and kind.
    Result<std::optional<StudyRecord>> find(int64_t id, const std::string& kind);

private:
    Database& m_db;
};

}  // namespace verdict::core
