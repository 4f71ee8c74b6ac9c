#include "core/store/audit_chain.h"

#include "core/store/run_repository.h"
#include "core/store/sweep_repository.h"
#include "util/quote.h"
#include "util/sha256.h"

#include <sys/stat.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace verdict::core {
namespace {

constexpr size_t kMaxBreaks = 100;

std::string compact(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json optNumber(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json optInt(const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

std::string runHeaderContent(const RunRecord& r) {
    // An array, not an object: the position is the column, so the text cannot be reinterpreted.
    const nlohmann::json a = {
        "run/v1",           r.id,           r.backend,         r.modelPath,        r.modelSha256,
        r.modelBytes,       r.suiteId,      compact(r.prompting), compact(r.generation), r.chatTemplateMode,
        util::sha256Hex(r.chatTemplate),    r.chatTemplateHash, r.seed,            optInt(r.itemLimit),
        r.nPlanned,         r.engineVersion, r.device,         r.startedAt,        r.resumeKey,
        optInt(r.sweepId),  optInt(r.modelId)};
    return compact(a);
}

std::string runHeaderHash(const RunRecord& run) { return util::sha256Hex(runHeaderContent(run)); }

std::string runItemContent(const RunItemRecord& it, std::string_view headerHash) {
    const nlohmann::json a = {"item/v1",
                              std::string(headerHash),
                              it.runId,
                              it.itemIdx,
                              it.itemId,
                              it.category,
                              it.prompt,
                              it.output,
                              it.tokensIn,
                              it.tokensOut,
                              optNumber(it.ttftMs),
                              optNumber(it.decodeTps),
                              optNumber(it.durationMs),
                              compact(it.scores),
                              it.correct ? nlohmann::json(*it.correct) : nlohmann::json(nullptr),
                              it.error,
                              compact(it.details),
                              it.createdAt};
    return compact(a);
}

std::string sweepHeaderContent(const SweepRecord& s) {
    const nlohmann::json a = {"sweep/v1",       s.id,           s.name,          compact(s.spec),
                              s.createdAt,      s.backend,      s.modelPath,     s.modelSha256,
                              s.modelBytes,     s.device,       s.engineVersion, compact(s.environment)};
    return compact(a);
}

std::string sweepHeaderHash(const SweepRecord& sweep) { return util::sha256Hex(sweepHeaderContent(sweep)); }

std::string sweepPointContent(const SweepPointRecord& p, std::string_view headerHash) {
    const nlohmann::json a = {"point/v1", std::string(headerHash), p.sweepId,          p.promptTokens,
                              p.genTokens, p.batch,                 p.rate,             compact(p.metrics),
                              compact(p.requests), p.error,         p.createdAt};
    return compact(a);
}

std::string chainHash(std::string_view content, std::string_view prevHash) {
    util::Sha256 h;
    h.update(content);
    h.update(prevHash);
    return h.finalHex();
}

namespace {

bool isHex64(const std::string& s) {
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Suites: the stored items, in idx order, hash to content_hash (the hash is over exactly the
// stored JSON text, suiteContentHash) and count n_items with no index missing.
Result<void> verifySuites(Database& db, ChainReport& report, const std::function<void(ChainBreak)>& note) {
    auto suites = db.prepare("SELECT id, name, content_hash, n_items FROM suites ORDER BY id");
    if (!suites) return suites.error();
    struct Suite {
        int64_t id, nItems;
        std::string name, hash;
    };
    std::vector<Suite> all;
    for (;;) {
        auto row = suites->step();
        if (!row) return row.error();
        if (!*row) break;
        all.push_back({suites->columnInt(0), suites->columnInt(3), suites->columnText(1), suites->columnText(2)});
    }
    auto items = db.prepare("SELECT idx, item FROM suite_items WHERE suite_id = ?1 ORDER BY idx");
    if (!items) return items.error();
    for (const Suite& s : all) {
        ++report.suitesChecked;
        items->reset();
        items->bind(1, s.id);
        util::Sha256 h;
        int64_t n = 0;
        bool gap = false;
        for (;;) {
            auto row = items->step();
            if (!row) return row.error();
            if (!*row) break;
            if (items->columnInt(0) != n) gap = true;
            h.update(items->columnText(1));
            h.update("\n");
            ++n;
        }
        report.suiteItemsChecked += n;
        const std::string what = "suite '" + s.name + "'";
        if (gap) note({"suites", 0, s.id, -1, what + ": item indexes are not 0.." + std::to_string(n - 1) + " (items were removed)"});
        else if (n != s.nItems)
            note({"suites", 0, s.id, -1, what + " has " + std::to_string(n) + " items stored, n_items says " + std::to_string(s.nItems)});
        else if (h.finalHex() != s.hash)
            note({"suites", 0, s.id, -1, what + ": its items do not match content_hash (an item or gold answer was edited)"});
    }
    return {};
}

// Models: sha256 is 64 hex digits and equals what the runs and sweeps that name the model
// recorded; with rehash, the file (when its size and mtime still match) hashes to it.
Result<void> verifyModels(Database& db, const VerifyOptions& o, ChainReport& report,
                          const std::function<void(ChainBreak)>& note) {
    auto st = db.prepare("SELECT id, kind, path, bytes, mtime_ns, sha256 FROM models ORDER BY id");
    if (!st) return st.error();
    struct Model {
        int64_t id, bytes, mtimeNs;
        std::string kind, path, sha;
    };
    std::vector<Model> all;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        all.push_back({st->columnInt(0), st->columnInt(3), st->columnInt(4), st->columnText(1), st->columnText(2), st->columnText(5)});
    }
    auto runs = db.prepare("SELECT id, model_sha256 FROM runs WHERE model_id = ?1 AND model_sha256 <> ?2 LIMIT 1");
    if (!runs) return runs.error();
    for (const Model& m : all) {
        ++report.modelsChecked;
        const std::string what = "model " + m.path;
        if (m.kind == "file" && !isHex64(m.sha)) {
            note({"models", 0, m.id, -1, what + ": sha256 '" + util::oneLine(m.sha, 80) + "' is not 64 hex digits"});
            continue;
        }
        runs->reset();
        runs->bind(1, m.id).bind(2, m.sha);
        auto row = runs->step();
        if (!row) return row.error();
        if (*row) {
            note({"models", 0, m.id, -1, what + ": run " + std::to_string(runs->columnInt(0)) +
                                             " recorded model_sha256 " + runs->columnText(1).substr(0, 12) +
                                             "…, the models row says " + m.sha.substr(0, 12) + "…"});
            continue;
        }
        if (!o.rehashModels || m.kind != "file") continue;
        struct stat fs {};
        if (::stat(m.path.c_str(), &fs) != 0 || static_cast<int64_t>(fs.st_size) != m.bytes ||
            static_cast<int64_t>(fs.st_mtim.tv_sec) * 1'000'000'000 + fs.st_mtim.tv_nsec != m.mtimeNs)
            continue;  // gone, changed since, or a split model (bytes of all parts): nothing to compare
        std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(m.path.c_str(), "rb"), &std::fclose);
        if (!f) continue;
        util::Sha256 h;
        std::vector<char> buf(std::size_t{4} << 20);
        size_t got;
        while ((got = std::fread(buf.data(), 1, buf.size(), f.get())) > 0) h.update(buf.data(), got);
        ++report.modelsRehashed;
        if (h.finalHex() != m.sha)
            note({"models", 0, m.id, -1, what + ": the file (same size and mtime) no longer hashes to the stored sha256"});
    }
    return {};
}

}  // namespace

Result<ChainReport> verifyChain(Database& db, const VerifyOptions& options) {
    ChainReport report;
    auto note = [&](ChainBreak b) {
        if (report.breaks.size() < kMaxBreaks) report.breaks.push_back(std::move(b));
    };

    // SQLite's structural check: pages, freelist, indexes against their tables, NOT NULL ...
    {
        auto ic = db.prepare("PRAGMA integrity_check(100)");
        if (!ic) return ic.error();
        for (;;) {
            auto row = ic->step();
            if (!row) {  // SQLITE_CORRUPT and the like: the file is too damaged to check
                note({"sqlite", 0, 0, -1, "integrity_check could not read the file: " + row.error().message});
                return report;
            }
            if (!*row) break;
            const std::string line = ic->columnText(0);
            if (line != "ok") note({"sqlite", 0, 0, -1, "integrity_check: " + line});
        }
    }
    // A damaged file is reported as such; walking it could fail on the very pages that are broken.
    if (!report.breaks.empty()) return report;

    RunRepository runs(db);
    auto all = runs.list(true);
    if (!all) return all.error();
    std::map<int64_t, std::string> headers;  // run id -> stored header_hash
    for (const RunRecord& r : *all) {
        ++report.runsChecked;
        headers[r.id] = r.headerHash;
        if (runHeaderHash(r) != r.headerHash)
            note({"runs", 0, r.id, -1, "run header does not match its header_hash (a column of the run was edited)"});
    }

    // Rows are read raw (not through RunRepository::items) so that a row whose JSON columns no
    // longer parse is reported as a finding instead of failing the walk.
    auto st = db.prepare(std::string("SELECT ") + kRunItemColumns + " FROM run_items ORDER BY seq");
    if (!st) return st.error();
    std::string expectedPrev(kGenesisHash);
    int64_t prevSeq = 0;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        ++report.rowsChecked;
        std::string parseError;
        RunItemRecord it = readRunItem(*st, &parseError);
        const auto where = [&](std::string reason) { return ChainBreak{"run_items", it.seq, it.runId, it.itemIdx, std::move(reason)}; };
        if (!parseError.empty()) {
            note(where(parseError));
        } else if (it.prevHash != expectedPrev) {
            note(where(prevSeq == 0 ? "prev_hash is not the genesis hash (earlier rows were removed)"
                                    : "prev_hash does not match the row_hash of row seq " + std::to_string(prevSeq) +
                                          " (that row was edited with its hash recomputed, or rows between were removed)"));
        } else if (auto h = headers.find(it.runId); h == headers.end()) {
            note(where("its run " + std::to_string(it.runId) + " is missing"));
        } else if (chainHash(runItemContent(it, h->second), it.prevHash) != it.rowHash) {
            note(where("content does not match row_hash (the row was edited)"));
        }
        expectedPrev = it.rowHash;
        prevSeq = it.seq;
    }

    SweepRepository sweeps(db);
    auto allSweeps = sweeps.list(true);
    if (!allSweeps) return allSweeps.error();
    std::map<int64_t, std::string> sweepHeaders;
    for (const SweepRecord& s : *allSweeps) {
        ++report.sweepsChecked;
        sweepHeaders[s.id] = s.headerHash;
        if (sweepHeaderHash(s) != s.headerHash)
            note({"sweeps", 0, s.id, -1, "sweep header does not match its header_hash (a column of the sweep was edited)"});
    }
    auto sp = db.prepare(std::string("SELECT ") + kSweepPointColumns + " FROM sweep_points ORDER BY seq");
    if (!sp) return sp.error();
    expectedPrev = std::string(kGenesisHash);
    prevSeq = 0;
    for (;;) {
        auto row = sp->step();
        if (!row) return row.error();
        if (!*row) break;
        ++report.pointsChecked;
        std::string parseError;
        SweepPointRecord p = readSweepPoint(*sp, &parseError);
        const auto where = [&](std::string reason) { return ChainBreak{"sweep_points", p.seq, p.sweepId, -1, std::move(reason)}; };
        if (!parseError.empty()) {
            note(where(parseError));
        } else if (p.prevHash != expectedPrev) {
            note(where(prevSeq == 0 ? "prev_hash is not the genesis hash (earlier points were removed)"
                                    : "prev_hash does not match the row_hash of point seq " + std::to_string(prevSeq) +
                                          " (that point was edited with its hash recomputed, or points between were removed)"));
        } else if (auto h = sweepHeaders.find(p.sweepId); h == sweepHeaders.end()) {
            note(where("its sweep " + std::to_string(p.sweepId) + " is missing"));
        } else if (chainHash(sweepPointContent(p, h->second), p.prevHash) != p.rowHash) {
            note(where("content does not match row_hash (the point was edited)"));
        }
        expectedPrev = p.rowHash;
        prevSeq = p.seq;
    }
    if (auto r = verifySuites(db, report, note); !r) return r.error();
    if (auto r = verifyModels(db, options, report, note); !r) return r.error();
    return report;
}

}  // namespace verdict::core
