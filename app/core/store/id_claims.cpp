#include "core/store/id_claims.h"

namespace verdict::core {

Result<IdClaims> IdClaims::open(Database& db) {
    if (auto r = db.exec("CREATE TEMP TABLE IF NOT EXISTS claimed_ids (id TEXT PRIMARY KEY) WITHOUT ROWID; "
                         "DELETE FROM temp.claimed_ids;");
        !r)
        return r.error();
    auto insert = db.prepare("INSERT OR IGNORE INTO temp.claimed_ids (id) VALUES (?1)");
    if (!insert) return insert.error();
    return IdClaims(db, std::move(*insert));
}

Result<bool> IdClaims::claim(std::string_view id) {
    m_insert.reset();
    m_insert.bind(1, id);
    if (auto r = m_insert.run(); !r) return r.error();
    return m_db->changes() == 1;
}

}  // namespace verdict::core
