// Model files seen by runs (table models): the SHA-256 of a file's bytes, cached by
// (path, size, mtime) so a multi-gigabyte model is hashed once, not at every run.
#pragma once

#include "core/store/database.h"

#include <cstdint>
#include <string>
#include <vector>

namespace verdict::core {

struct ModelFileIdentity {
    int64_t modelId = 0;      // models.id
    std::string path;         // first part as given
    int64_t bytes = 0;        // all parts together
    std::string sha256;       // of all parts' bytes, concatenated in order
    bool fromCache = false;   // true when the hash came from the table (file unchanged)
};

class ModelRepository {
public:
    explicit ModelRepository(Database& db) : m_db(db) {}

    // Identity of a model file (split models: every part, in order). Reads and hashes the files
    // unless a row with the same path, total size and newest mtime exists. Fails naming the
    // file when it cannot be read.
    Result<ModelFileIdentity> identifyFile(const std::vector<std::string>& parts);

private:
    Database& m_db;
};

}  // namespace verdict::core
