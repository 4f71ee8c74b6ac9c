#include "core/store/model_repository.h"

#include "core/store/store.h"
#include "util/sha256.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace verdict::core {
namespace {

struct FileStat {
    int64_t bytes = 0;
    int64_t mtimeNs = 0;
};

Result<FileStat> statFile(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Error{path + ": " + std::strerror(errno)};
    return FileStat{static_cast<int64_t>(st.st_size),
                    static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

}  // namespace

Result<ModelFileIdentity> ModelRepository::identifyFile(const std::vector<std::string>& parts) {
    if (parts.empty()) return Error{"no model file given"};
    ModelFileIdentity id;
    id.path = parts.front();
    int64_t mtime = 0;
    for (const std::string& p : parts) {
        auto s = statFile(p);
        if (!s) return s.error();
        id.bytes += s->bytes;
        mtime = std::max(mtime, s->mtimeNs);
    }

    auto q = m_db.prepare("SELECT id, sha256 FROM models WHERE kind = 'file' AND path = ?1 AND bytes = ?2 AND mtime_ns = ?3");
    if (!q) return q.error();
    q->bind(1, id.path).bind(2, id.bytes).bind(3, mtime);
    auto row = q->step();
    if (!row) return row.error();
    if (*row) {
        id.modelId = q->columnInt(0);
        id.sha256 = q->columnText(1);
        id.fromCache = true;
        return id;
    }
    q->reset();

    util::Sha256 h;
    std::vector<char> buf(std::size_t{4} << 20);
    for (const std::string& p : parts) {
        std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(p.c_str(), "rb"), &std::fclose);
        if (!f) return Error{p + ": cannot open: " + std::strerror(errno)};
        for (;;) {
            const size_t n = std::fread(buf.data(), 1, buf.size(), f.get());
            if (n > 0) h.update(buf.data(), n);
            if (n < buf.size()) {
                if (std::ferror(f.get())) return Error{p + ": read error: " + std::strerror(errno)};
                break;
            }
        }
    }
    id.sha256 = h.finalHex();

    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    auto ins = m_db.prepare(
        "INSERT INTO models (kind, path, bytes, mtime_ns, sha256, first_seen) VALUES ('file', ?1, ?2, ?3, ?4, ?5) "
        "ON CONFLICT (kind, path, bytes, mtime_ns) DO UPDATE SET sha256 = excluded.sha256");
    if (!ins) return ins.error();
    ins->bind(1, id.path).bind(2, id.bytes).bind(3, mtime).bind(4, id.sha256).bind(5, utcTimestamp());
    if (auto r = ins->run(); !r) return r.error();
    if (auto r = tx->commit(); !r) return r.error();
    // Re-read: with ON CONFLICT DO UPDATE last_insert_rowid is not reliable.
    auto again = q->step();
    if (!again) return again.error();
    if (*again) id.modelId = q->columnInt(0);
    return id;
}

}  // namespace verdict::core
