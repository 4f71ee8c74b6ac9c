#include "core/suite/suite_importer.h"

#include "core/suite/item_mapper.h"
#include "core/suite/record_fields.h"
#include "core/suite/record_reader.h"
#include "core/suite/suite_shape.h"

#include <filesystem>
#include <unordered_map>
#include <unordered_set>

namespace verdict::core {

namespace {

constexpr size_t kDetectRecords = 32;  // records looked at to decide the shape

std::string stripExtensions(const std::string& path) {
    std::filesystem::path p(path);
    std::string name = p.filename().string();
    for (const char* ext : {".gz", ".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".txt"}) {
        const std::string e = ext;
        if (name.size() > e.size() && fields::lowerAscii(name.substr(name.size() - e.size())) == e)
            name.resize(name.size() - e.size());
    }
    return name;
}

std::string keysOf(const nlohmann::json& obj) {
    std::string out;
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        if (!out.empty()) out += ", ";
        out += it.key();
        if (out.size() > 200) {
            out += ", ...";
            break;
        }
    }
    return out;
}

class Collector {
public:
    Collector(ImportSummary& s, const ImportOptions& o) : m_s(s), m_o(o) {}

    void reject(int line, std::string reason) {
        ++m_s.rejectedCount;
        if (m_s.rejected.size() < m_o.maxListedRejects) m_s.rejected.push_back({line, std::move(reason)});
    }
    void warn(int line, std::string message) {
        ++m_s.warningCount;
        if (m_s.warnings.size() < m_o.maxListedRejects) m_s.warnings.push_back({line, std::move(message)});
    }
    // Ids must be unique within a suite (the store keys results by them): a repeat is renamed.
    void uniqueId(SuiteItem& item) {
        if (claim(item.id)) return;
        const std::string renamed = item.id + "@" + std::to_string(item.sourceLine);
        warn(item.sourceLine, "duplicate id '" + item.id + "' renamed to '" + renamed + "'");
        item.id = renamed;
        claim(item.id);
    }

private:
    bool claim(const std::string& id) {
        if (m_o.claimId) return m_o.claimId(id);
        return m_ids.insert(std::hash<std::string>{}(id)).second;
    }

    ImportSummary& m_s;
    const ImportOptions& m_o;
    std::unordered_set<size_t> m_ids;
};

}  // namespace

std::string categoryFromFileName(const std::string& path) {
    std::string name = stripExtensions(path);
    for (const char* split : {"_test", "_dev", "_val", "_validation", "_train"}) {
        const std::string s = split;
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
            name.resize(name.size() - s.size());
            break;
        }
    }
    return name;
}

namespace {

ReaderOptions readerOptions(const ImportOptions& options) {
    ReaderOptions ro;
    ro.formatHint = options.formatHint;
    ro.gzip = options.gzip;
    if (options.mapping)
        for (const auto& [target, source] : options.mapping->entries) ro.headerNames.push_back(source.substr(0, source.find('.')));
    return ro;
}

// BFCL's possible_answer file: id -> ground_truth. Fails naming the file and line of a record
// that is no {"id", "ground_truth"} or repeats an id.
Result<std::unordered_map<std::string, nlohmann::json>> readAnswers(const std::string& path, const ImportOptions& options) {
    ReaderOptions ro;
    ro.gzip = options.gzip;
    auto rd = RecordReader::open(path, ro);
    if (!rd) return rd.error();
    std::unordered_map<std::string, nlohmann::json> out;
    RawRecord rec;
    for (;;) {
        auto got = (*rd)->next(rec);
        if (!got) return got.error();
        if (!*got) break;
        const std::string at = path + ":" + std::to_string(rec.line) + ": ";
        if (!rec.error.empty()) return Error{at + rec.error};
        const nlohmann::json& v = rec.value;
        const auto id = v.is_object() ? v.find("id") : v.end();
        if (!v.is_object() || id == v.end() || !id->is_string() || !v.contains("ground_truth"))
            return Error{at + "expected {\"id\": ..., \"ground_truth\": [...]} (BFCL's possible_answer shape)"};
        if (!out.emplace(id->get<std::string>(), v["ground_truth"]).second)
            return Error{at + "id '" + id->get<std::string>() + "' appears twice"};
    }
    return out;
}

Result<ImportSummary> importRecords(RecordReader& rd, const std::string& path, const ImportOptions& options,
                                    const SuiteItemCallback& onItem) {
    ImportSummary summary;
    summary.suiteName = options.name.empty() ? stripExtensions(path) : options.name;
    summary.format = recordFormatName(rd.format());
    summary.gzip = rd.isGzip();
    Collector collect(summary, options);

    // Look at the first records before deciding the shape; they are processed afterwards.
    std::vector<RawRecord> head;
    std::vector<nlohmann::json> sample;
    bool ended = false;
    while (sample.size() < kDetectRecords) {
        RawRecord rec;
        auto got = rd.next(rec);
        if (!got) return got.error();
        if (!*got) {
            ended = true;
            break;
        }
        if (rec.error.empty()) sample.push_back(rec.value);
        head.push_back(std::move(rec));
    }

    MapContext ctx;
    ctx.options = &options;
    std::unordered_map<std::string, nlohmann::json> answers;
    if (!options.answersPath.empty()) {
        auto read = readAnswers(options.answersPath, options);
        if (!read) return read.error();
        answers = std::move(*read);
        ctx.answers = &answers;
    }
    ctx.fileCategory = categoryFromFileName(path);
    ctx.promptTemplate = options.promptTemplate;
    if (ctx.promptTemplate.empty()) {  // a promptfoo config carries its prompts next to its tests
        const auto& top = rd.topLevelValues();
        if (auto it = top.find("prompts"); it != top.end() && it->is_array() && !it->empty() && (*it)[0].is_string()) {
            const std::string first = (*it)[0].get<std::string>();
            if (first.rfind("file://", 0) != 0) ctx.promptTemplate = first;
        }
    }
    if (options.mapping) {
        ctx.shape = SuiteShape::Mapped;
    } else if (!options.shape.empty()) {
        auto forced = shapeFromName(options.shape);
        if (!forced || *forced == SuiteShape::Unknown || *forced == SuiteShape::Mapped)
            return Error{"unknown suite shape '" + options.shape + "'"};
        ctx.shape = *forced;
    } else {
        ctx.shape = detectShape(sample);
        if (ctx.shape == SuiteShape::Unknown && !sample.empty())
            return Error{path + ": cannot tell the suite's shape from the first records (keys: " + keysOf(sample.front()) +
                         "); give a field mapping such as prompt=instruction,reference=output"};
    }
    summary.shape = shapeName(ctx.shape);
    summary.defaultScorers = defaultScorers(ctx.shape, SuiteItem{});

    bool stopped = false;
    std::optional<std::vector<ScorerSpec>> defaultsCache[4];
    auto process = [&](RawRecord& rec) {
        if (!rec.error.empty()) {
            collect.reject(rec.line, rec.error);
            return;
        }
        MapOutcome m = mapRecord(rec.value, rec.line, ctx);
        if (!m.ok) {
            collect.reject(rec.line, m.reason);
            return;
        }
        for (auto& w : m.warnings) collect.warn(rec.line, std::move(w));
        collect.uniqueId(m.item);
        if (options.fillDefaultScorers && m.item.scorers.empty()) {
            // Defaults depend only on (shape, has choices+gold, has references): build each once.
            const int key = (!m.item.choices.empty() && m.item.gold ? 1 : 0) | (m.item.references.empty() ? 0 : 2);
            if (!defaultsCache[key]) defaultsCache[key] = defaultScorers(ctx.shape, m.item);
            m.item.scorers = *defaultsCache[key];
        }
        if (options.validateItem) {
            if (auto why = options.validateItem(m.item)) {
                collect.reject(rec.line, std::move(*why));
                return;
            }
        }
        ++summary.takenCount;
        if (!onItem(std::move(m.item))) stopped = true;
    };
    for (auto& rec : head) {
        if (stopped) break;
        process(rec);
    }
    head.clear();
    if (!ended) {
        RawRecord rec;
        while (!stopped) {
            auto got = rd.next(rec);
            if (!got) return got.error();
            if (!*got) break;
            process(rec);
        }
    }
    summary.textBytes = rd.decodedBytesRead();
    auto hash = rd.contentHash();
    if (!hash) return hash.error();
    summary.contentHash = *hash;
    summary.fileBytes = rd.rawBytesRead();
    return summary;
}

}  // namespace

Result<ImportSummary> importSuiteStreaming(const std::string& path, const ImportOptions& options,
                                           const SuiteItemCallback& onItem) {
    auto reader = RecordReader::open(path, readerOptions(options));
    if (!reader) return reader.error();
    return importRecords(**reader, path, options, onItem);
}

Result<ImportSummary> importSuiteStreamingFromMemory(std::string_view bytes, const std::string& name,
                                                     const ImportOptions& options, const SuiteItemCallback& onItem) {
    auto reader = RecordReader::openMemory(bytes, name, readerOptions(options));
    if (!reader) return reader.error();
    return importRecords(**reader, name, options, onItem);
}

Result<ImportResult> importSuite(const std::string& path, const ImportOptions& options,
                                 const std::atomic<bool>* cancel) {
    std::vector<SuiteItem> items;
    auto summary = importSuiteStreaming(path, options, [&](SuiteItem&& item) {
        items.push_back(std::move(item));
        return !(cancel && cancel->load());
    });
    if (!summary) return summary.error();
    if (cancel && cancel->load()) return Error{"import of " + path + " cancelled"};
    return importResult(std::move(*summary), std::move(items));
}

ImportResult importResult(ImportSummary&& summary, std::vector<SuiteItem> items) {
    ImportResult r;
    r.suiteName = std::move(summary.suiteName);
    r.shape = std::move(summary.shape);
    r.format = std::move(summary.format);
    r.gzip = summary.gzip;
    r.contentHash = std::move(summary.contentHash);
    r.fileBytes = summary.fileBytes;
    r.textBytes = summary.textBytes;
    r.items = std::move(items);
    r.takenCount = summary.takenCount;
    r.rejected = std::move(summary.rejected);
    r.rejectedCount = summary.rejectedCount;
    r.warnings = std::move(summary.warnings);
    r.defaultScorers = std::move(summary.defaultScorers);
    return r;
}

}  // namespace verdict::core
