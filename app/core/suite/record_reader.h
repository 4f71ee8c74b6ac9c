// Streams the records of a suite file one at a time, each with the line it starts on.
//
// Formats: JSONL (one object per line), a JSON array of objects (or a top-level object holding
// one such array, e.g. {"tests": [...]}), CSV/TSV with or without a header (RFC 4180 quoting:
// fields may hold quotes and newlines). Any of them may be gzip-compressed; a UTF-8 BOM is
// skipped. Memory is bounded by the largest single record, never by the file size.
//
// A record that cannot be used (invalid JSON, bad UTF-8, wrong number of CSV fields) is still
// returned, with `error` set and its line number, so the importer can report it.
#pragma once

#include "core/suite/byte_source.h"

#include <verdict/engine/result.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

enum class RecordFormat { Jsonl, JsonArray, Csv };

const char* recordFormatName(RecordFormat f);  // "jsonl", "json", "csv"

struct RawRecord {
    int line = 0;                 // 1-based line of the decoded text where the record starts
    nlohmann::json value;         // an object (CSV: header name -> string, or "col1".."colN")
    std::string error;            // non-empty: unusable record, `value` is null
};

struct ReaderOptions {
    // "" (detect from content and extension), "jsonl", "json", "csv", "tsv",
    // "csv-header" / "csv-noheader" (force the header decision), "tsv-header", "tsv-noheader".
    std::string formatHint;
    // Extra names that mark a first CSV row as a header (e.g. the sources of a field mapping).
    std::vector<std::string> headerNames;
    // What a gzip file may inflate to (ByteSource::open).
    GzipLimits gzip;
};

class RecordReader {
public:
    ~RecordReader();
    RecordReader(const RecordReader&) = delete;
    RecordReader& operator=(const RecordReader&) = delete;

    // Fails only when the file cannot be opened/decompressed or the format hint is unknown.
    static Result<std::unique_ptr<RecordReader>> open(const std::string& path, const ReaderOptions& options = {});
    // The same over bytes in memory (they must outlive the reader); `name` plays the path's part:
    // its extension counts for the format like a file name's, and errors name it.
    static Result<std::unique_ptr<RecordReader>> openMemory(std::string_view bytes, const std::string& name,
                                                            const ReaderOptions& options = {});

    // Next record into `out`; false at the end. An Error here is fatal for the file (I/O error,
    // corrupt gzip); per-record problems come back in `out.error` instead.
    Result<bool> next(RawRecord& out);

    RecordFormat format() const { return m_format; }
    // For a top-level JSON object: its other members read before the records (each under 1 MiB),
    // e.g. promptfoo's "prompts" and "description".
    const nlohmann::json& topLevelValues() const { return m_topLevel; }

    uint64_t rawBytesRead() const;
    uint64_t decodedBytesRead() const { return m_decodedConsumed; }
    bool isGzip() const;
    // SHA-256 of the file's bytes as stored (compressed bytes for .gz); reads to the end if needed.
    Result<std::string> contentHash();

private:
    RecordReader() = default;
    static Result<std::unique_ptr<RecordReader>> start(std::unique_ptr<ByteSource> src, const std::string& path,
                                                       const ReaderOptions& options);

    Result<bool> fill(size_t atLeast);  // make m_len - m_pos >= atLeast unless the source ends
    Result<int> peekByte();             // -1 at end
    Result<bool> skipJsonWhitespace();

    Result<bool> nextJsonl(RawRecord& out);
    Result<bool> nextJsonArrayElement(RawRecord& out);
    Result<bool> enterTopLevelObject();  // positions the scanner inside the records array
    Result<bool> captureJsonValue(std::string& dst);  // one balanced JSON value, raw text
    Result<bool> readCsvRow(std::vector<std::string>& fields, int& startLine, std::string& error);
    Result<bool> nextCsv(RawRecord& out);
    void parseJsonText(const std::string& text, RawRecord& out, int line);

    std::unique_ptr<ByteSource> m_src;
    std::string m_path;
    RecordFormat m_format = RecordFormat::Jsonl;
    std::vector<char> m_buf;
    size_t m_pos = 0;
    size_t m_len = 0;
    bool m_srcEnd = false;
    int m_line = 1;  // line of the byte at m_pos
    uint64_t m_decodedConsumed = 0;

    // JSON array state
    bool m_arrayDone = false;
    bool m_firstElement = true;
    nlohmann::json m_topLevel = nlohmann::json::object();

    // CSV state
    char m_delim = ',';
    bool m_csvHasHeader = false;
    std::vector<std::string> m_header;
    std::vector<std::string> m_colNames;  // "col1", "col2", ... for headerless files
    bool m_havePendingRow = false;
    std::vector<std::string> m_pendingRow;
    int m_pendingLine = 0;
    std::string m_pendingError;
    std::string m_scratch;
};

}  // namespace verdict::core
