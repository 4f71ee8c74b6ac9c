#include "core/suite/record_reader.h"

#include "core/suite/json_parse.h"
#include "core/suite/utf8_text.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

namespace verdict::core {

namespace {

constexpr size_t kInitialBuffer = size_t(4) << 20;
constexpr size_t kMinBuffer = size_t(4) << 10;
constexpr size_t kMaxRecordBytes = size_t(256) << 20;  // one record larger than this is refused

std::string lowerAscii(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = char(c + 32);
    return s;
}

bool isJsonSpace(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// nlohmann's messages start with "[json.exception.parse_error.101] "; people need the rest.
std::string cleanJsonError(const char* what) {
    std::string m = what;
    if (!m.empty() && m[0] == '[') {
        const auto close = m.find("] ");
        if (close != std::string::npos) m = m.substr(close + 2);
    }
    return m;
}

// First-row names that say "this CSV has a header" (lower-case). Headerless MMLU rows start with
// a question text, so none of these match them.
bool looksLikeHeaderName(const std::string& lower) {
    static const char* const kNames[] = {"prompt", "question", "input", "text", "instruction", "query",
                                         "context", "passage", "vars", "task_id", "problem", "sentence",
                                         "premise", "goal", "id", "answer", "reference", "target",
                                         "expected", "category", "subject", "choices"};
    if (lower.rfind("__expected", 0) == 0 || lower == "__description") return true;
    for (const char* n : kNames)
        if (lower == n) return true;
    return false;
}

}  // namespace

const char* recordFormatName(RecordFormat f) {
    switch (f) {
    case RecordFormat::Jsonl: return "jsonl";
    case RecordFormat::JsonArray: return "json";
    case RecordFormat::Csv: return "csv";
    }
    return "?";
}

RecordReader::~RecordReader() = default;

uint64_t RecordReader::rawBytesRead() const { return m_src ? m_src->rawBytesRead() : 0; }
bool RecordReader::isGzip() const { return m_src && m_src->isGzip(); }
Result<std::string> RecordReader::contentHash() { return m_src->contentHash(); }

Result<bool> RecordReader::fill(size_t atLeast) {
    if (m_len - m_pos >= atLeast) return true;
    if (m_pos > 0) {  // compact: keep the unread tail at the front
        std::memmove(m_buf.data(), m_buf.data() + m_pos, m_len - m_pos);
        m_len -= m_pos;
        m_pos = 0;
    }
    if (atLeast > m_buf.size()) {
        if (atLeast > kMaxRecordBytes + 1)
            return Error{m_path + ": line " + std::to_string(m_line) + ": a record longer than " +
                         std::to_string(kMaxRecordBytes >> 20) + " MiB; refusing to buffer it"};
        m_buf.resize(std::min(std::max(atLeast, m_buf.size() * 2), kMaxRecordBytes + 1));
    }
    while (m_len < atLeast && !m_srcEnd) {
        auto r = m_src->read(m_buf.data() + m_len, m_buf.size() - m_len);
        if (!r) return r.error();
        if (*r == 0) m_srcEnd = true;
        m_len += *r;
        m_decodedConsumed += *r;
    }
    return m_len - m_pos >= atLeast;
}

Result<int> RecordReader::peekByte() {
    if (m_pos == m_len) {
        auto r = fill(1);
        if (!r) return r.error();
        if (!*r) return -1;
    }
    return int(static_cast<unsigned char>(m_buf[m_pos]));
}

Result<bool> RecordReader::skipJsonWhitespace() {
    for (;;) {
        auto c = peekByte();
        if (!c) return c.error();
        if (*c < 0) return false;
        if (!isJsonSpace(*c)) return true;
        if (*c == '\n') ++m_line;
        ++m_pos;
    }
}

Result<std::unique_ptr<RecordReader>> RecordReader::open(const std::string& path, const ReaderOptions& options) {
    auto src = ByteSource::open(path, options.gzip);
    if (!src) return src.error();
    return start(std::move(*src), path, options);
}

Result<std::unique_ptr<RecordReader>> RecordReader::openMemory(std::string_view bytes, const std::string& name,
                                                               const ReaderOptions& options) {
    auto src = ByteSource::openMemory(bytes, name, options.gzip);
    if (!src) return src.error();
    return start(std::move(*src), name, options);
}

Result<std::unique_ptr<RecordReader>> RecordReader::start(std::unique_ptr<ByteSource> src, const std::string& path,
                                                          const ReaderOptions& options) {
    std::unique_ptr<RecordReader> rd(new RecordReader());
    // A small file needs no 4 MiB buffer (gzip: guess 8x the file); fill() grows it for longer records.
    const uint64_t textGuess = src->fileSize() * (src->isGzip() ? 8 : 1) + 1;
    rd->m_buf.resize(size_t(std::clamp<uint64_t>(textGuess, kMinBuffer, kInitialBuffer)));
    rd->m_src = std::move(src);
    rd->m_path = path;

    // What the name says, then what the hint says; the content decides between JSON flavours.
    std::filesystem::path p(path);
    std::string ext = lowerAscii(p.extension().string());
    if (ext == ".gz") ext = lowerAscii(p.stem().extension().string());
    std::string hint = lowerAscii(options.formatHint);
    enum class Want { Unknown, Jsonl, Json, Csv } want = Want::Unknown;
    int headerForced = -1;  // -1 decide, 0 no header, 1 header
    if (ext == ".jsonl" || ext == ".ndjson") want = Want::Jsonl;
    else if (ext == ".json") want = Want::Json;
    else if (ext == ".csv") want = Want::Csv;
    else if (ext == ".tsv") want = Want::Csv, rd->m_delim = '\t';
    if (!hint.empty()) {
        if (hint == "jsonl" || hint == "ndjson") want = Want::Jsonl;
        else if (hint == "json") want = Want::Json;
        else if (hint.rfind("csv", 0) == 0 || hint.rfind("tsv", 0) == 0) {
            want = Want::Csv;
            rd->m_delim = hint[0] == 't' ? '\t' : ',';
            const std::string rest = hint.substr(3);
            if (rest == "-header") headerForced = 1;
            else if (rest == "-noheader") headerForced = 0;
            else if (!rest.empty()) return Error{"unknown format hint '" + options.formatHint + "'"};
        } else {
            return Error{"unknown format hint '" + options.formatHint +
                         "' (expected jsonl, json, csv, tsv, csv-header, csv-noheader)"};
        }
    }

    auto have = rd->fill(3);
    if (!have) return have.error();
    if (rd->m_len >= 3 && std::memcmp(rd->m_buf.data(), "\xEF\xBB\xBF", 3) == 0) rd->m_pos = 3;  // UTF-8 BOM

    if (want != Want::Csv) {
        auto ws = rd->skipJsonWhitespace();
        if (!ws) return ws.error();
        auto c = rd->peekByte();
        if (!c) return c.error();
        if (*c == '[') {
            rd->m_format = RecordFormat::JsonArray;
            ++rd->m_pos;
            return rd;
        }
        if (*c == '{' && want != Want::Jsonl) {
            // One object per line, or one pretty-printed document? Try the first line alone.
            size_t scanned = 0;
            size_t nl = std::string::npos;
            for (;;) {
                const char* base = rd->m_buf.data() + rd->m_pos;
                const void* hit = std::memchr(base + scanned, '\n', rd->m_len - rd->m_pos - scanned);
                if (hit) {
                    nl = size_t(static_cast<const char*>(hit) - base);
                    break;
                }
                scanned = rd->m_len - rd->m_pos;
                auto more = rd->fill(scanned + 1);
                if (!more) return more.error();
                if (!*more) break;
            }
            const size_t lineLen = nl == std::string::npos ? rd->m_len - rd->m_pos : nl;
            const bool firstLineIsObject = nlohmann::json::accept(
                std::string_view(rd->m_buf.data() + rd->m_pos, lineLen));
            if (firstLineIsObject) {
                rd->m_format = RecordFormat::Jsonl;
                return rd;
            }
            rd->m_format = RecordFormat::JsonArray;
            ++rd->m_pos;
            auto entered = rd->enterTopLevelObject();
            if (!entered) return entered.error();
            return rd;
        }
        if (*c == '{' || want == Want::Jsonl || want == Want::Json || *c < 0) {
            rd->m_format = RecordFormat::Jsonl;  // JSON errors, if any, are reported per line
            return rd;
        }
    }

    // CSV: read the first row and decide whether it is a header.
    rd->m_format = RecordFormat::Csv;
    std::vector<std::string> first;
    int line = 0;
    std::string err;
    auto got = rd->readCsvRow(first, line, err);
    if (!got) return got.error();
    if (!*got) return rd;  // empty file: no records
    bool header = false;
    if (headerForced >= 0) {
        header = headerForced == 1;
    } else if (err.empty()) {
        std::vector<std::string> lowered;
        for (const auto& f : first) lowered.push_back(lowerAscii(std::string(utf8::trim(f))));
        auto sorted = lowered;
        std::sort(sorted.begin(), sorted.end());
        const bool distinct = std::adjacent_find(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
                                  return !a.empty() && a == b;
                              }) == sorted.end();
        bool known = false;
        for (const auto& f : lowered) {
            if (looksLikeHeaderName(f)) known = true;
            for (const auto& extra : options.headerNames)
                if (f == lowerAscii(extra)) known = true;
        }
        header = distinct && known;
    }
    if (header) {
        if (!err.empty()) return Error{path + ": line " + std::to_string(line) + ": bad CSV header: " + err};
        rd->m_csvHasHeader = true;
        for (size_t i = 0; i < first.size(); ++i) {
            std::string name(utf8::trim(first[i]));
            if (name.empty()) name = "col" + std::to_string(i + 1);  // e.g. the index column of ",Question,A,..."
            rd->m_header.push_back(name);
        }
    } else {
        rd->m_havePendingRow = true;
        rd->m_pendingRow = std::move(first);
        rd->m_pendingLine = line;
        rd->m_pendingError = err;
    }
    return rd;
}

Result<bool> RecordReader::enterTopLevelObject() {
    // Inside "{": walk the keys until one holds an array; that array's elements are the records.
    for (;;) {
        auto ws = skipJsonWhitespace();
        if (!ws) return ws.error();
        auto c = peekByte();
        if (!c) return c.error();
        if (*c != '"')
            return Error{m_path + ": line " + std::to_string(m_line) +
                         ": the top-level JSON object holds no array of records (expected e.g. {\"tests\": [...]})"};
        std::string keyText;
        auto k = captureJsonValue(keyText);
        if (!k) return k.error();
        std::string key;
        try {
            key = nlohmann::json::parse(keyText).get<std::string>();
        } catch (const std::exception& e) {
            return Error{m_path + ": line " + std::to_string(m_line) + ": bad key: " + cleanJsonError(e.what())};
        }
        ws = skipJsonWhitespace();
        if (!ws) return ws.error();
        c = peekByte();
        if (!c) return c.error();
        if (*c != ':') return Error{m_path + ": line " + std::to_string(m_line) + ": expected ':' after key \"" + key + "\""};
        ++m_pos;
        ws = skipJsonWhitespace();
        if (!ws) return ws.error();
        c = peekByte();
        if (!c) return c.error();
        if (*c == '[') {
            // The records are the first array whose first element is an object; other arrays
            // (promptfoo's "prompts": ["..."]) are kept as top-level values.
            ++m_pos;
            ws = skipJsonWhitespace();
            if (!ws) return ws.error();
            c = peekByte();
            if (!c) return c.error();
            if (*c == '{') return true;
            nlohmann::json kept = nlohmann::json::array();  // not records: read it element by element
            for (;;) {
                if (*c == ']') {
                    ++m_pos;
                    break;
                }
                std::string elem;
                auto got = captureJsonValue(elem);
                if (!got) return got.error();
                if (!*got) return Error{m_path + ": line " + std::to_string(m_line) + ": malformed array under key \"" + key + "\""};
                nlohmann::json value;
                std::string why;
                if (kept.size() < 1000 && elem.size() < 65536 && utf8::isValid(elem) && parseJson(elem, value, why))
                    kept.push_back(std::move(value));
                ws = skipJsonWhitespace();
                if (!ws) return ws.error();
                c = peekByte();
                if (!c) return c.error();
                if (*c == ',') {
                    ++m_pos;
                    ws = skipJsonWhitespace();
                    if (!ws) return ws.error();
                    c = peekByte();
                    if (!c) return c.error();
                } else if (*c != ']') {
                    return Error{m_path + ": line " + std::to_string(m_line) + ": expected ',' or ']' in the array under key \"" + key + "\""};
                }
            }
            m_topLevel[key] = std::move(kept);
            ws = skipJsonWhitespace();
            if (!ws) return ws.error();
            c = peekByte();
            if (!c) return c.error();
            if (*c == ',') ++m_pos;
            continue;
        }
        std::string skipped;
        auto v = captureJsonValue(skipped);
        if (!v) return v.error();
        if (skipped.size() < (size_t(1) << 20)) {
            nlohmann::json value;
            std::string why;
            if (utf8::isValid(skipped) && parseJson(skipped, value, why)) m_topLevel[key] = std::move(value);
        }
        ws = skipJsonWhitespace();
        if (!ws) return ws.error();
        c = peekByte();
        if (!c) return c.error();
        if (*c == ',') ++m_pos;
    }
}

Result<bool> RecordReader::captureJsonValue(std::string& dst) {
    dst.clear();
    auto c0 = peekByte();
    if (!c0) return c0.error();
    if (*c0 < 0) return false;
    if (*c0 != '{' && *c0 != '[' && *c0 != '"') {
        for (;;) {  // scalar: up to the next delimiter
            auto c = peekByte();
            if (!c) return c.error();
            if (*c < 0 || *c == ',' || *c == ']' || *c == '}' || isJsonSpace(*c)) return !dst.empty();
            dst.push_back(char(*c));
            ++m_pos;
        }
    }
    int depth = 0;
    bool inString = false;
    for (;;) {
        if (m_pos == m_len) {
            auto r = fill(1);
            if (!r) return r.error();
            if (!*r) return false;  // the file ends inside the value
            if (dst.size() > kMaxRecordBytes) return Error{m_path + ": a JSON value longer than 256 MiB"};
        }
        // Copy a run of ordinary bytes at once; stop on anything the state machine cares about.
        const char* p = m_buf.data() + m_pos;
        const char* end = m_buf.data() + m_len;
        const char* q = p;
        if (inString) {
            while (q < end && *q != '"' && *q != '\\' && *q != '\n') ++q;
        } else {
            while (q < end && *q != '"' && *q != '{' && *q != '}' && *q != '[' && *q != ']' && *q != '\n') ++q;
        }
        dst.append(p, size_t(q - p));
        m_pos += size_t(q - p);
        if (q == end) continue;
        const char ch = *q;
        dst.push_back(ch);
        ++m_pos;
        if (ch == '\n') {
            ++m_line;
            continue;
        }
        if (inString) {
            if (ch == '\\') {
                auto r = fill(1);
                if (!r) return r.error();
                if (!*r) return false;
                if (m_buf[m_pos] == '\n') ++m_line;
                dst.push_back(m_buf[m_pos++]);
            } else if (ch == '"') {
                inString = false;
                if (depth == 0) return true;  // a top-level string value
            }
            continue;
        }
        if (ch == '"') inString = true;
        else if (ch == '{' || ch == '[') ++depth;
        else if (ch == '}' || ch == ']') {
            if (--depth == 0) return true;
        }
    }
}

void RecordReader::parseJsonText(const std::string& text, RawRecord& out, int line) {
    out.line = line;
    out.error.clear();
    out.value = nullptr;
    if (auto bad = utf8::firstInvalidByte(text)) {
        out.error = "bad UTF-8 encoding (byte " + std::to_string(*bad + 1) + " of the record)";
        return;
    }
    std::string why;
    if (!parseJson(text, out.value, why)) {
        out.error = "invalid JSON: " + why;
        return;
    }
    if (!out.value.is_object()) {
        out.error = std::string("record is a JSON ") + out.value.type_name() + ", not an object";
        out.value = nullptr;
    }
}

Result<bool> RecordReader::next(RawRecord& out) {
    switch (m_format) {
    case RecordFormat::Jsonl: return nextJsonl(out);
    case RecordFormat::JsonArray: return nextJsonArrayElement(out);
    case RecordFormat::Csv: return nextCsv(out);
    }
    return false;
}

Result<bool> RecordReader::nextJsonl(RawRecord& out) {
    for (;;) {
        size_t scanned = 0;
        size_t nl = std::string::npos;
        for (;;) {
            const char* base = m_buf.data() + m_pos;
            const void* hit = std::memchr(base + scanned, '\n', m_len - m_pos - scanned);
            if (hit) {
                nl = size_t(static_cast<const char*>(hit) - base);
                break;
            }
            scanned = m_len - m_pos;
            auto more = fill(scanned + 1);
            if (!more) return more.error();
            if (!*more) break;
        }
        const size_t avail = m_len - m_pos;
        if (avail == 0) return false;
        const size_t lineLen = nl == std::string::npos ? avail : nl;
        std::string_view text(m_buf.data() + m_pos, lineLen);
        m_pos += nl == std::string::npos ? avail : nl + 1;
        const int line = m_line++;
        if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
        bool blank = true;
        for (char ch : text)
            if (!isJsonSpace(static_cast<unsigned char>(ch))) {
                blank = false;
                break;
            }
        if (blank) continue;
        out.line = line;
        out.error.clear();
        out.value = nullptr;
        if (auto bad = utf8::firstInvalidByte(text)) {
            out.error = "bad UTF-8 encoding (byte " + std::to_string(*bad + 1) + " of the line)";
            return true;
        }
        std::string why;
        if (!parseJson(text, out.value, why)) {
            out.error = "invalid JSON: " + why;
            return true;
        }
        if (!out.value.is_object()) {
            out.error = std::string("record is a JSON ") + out.value.type_name() + ", not an object";
            out.value = nullptr;
        }
        return true;
    }
}

Result<bool> RecordReader::nextJsonArrayElement(RawRecord& out) {
    if (m_arrayDone) return false;
    auto ws = skipJsonWhitespace();
    if (!ws) return ws.error();
    auto c = peekByte();
    if (!c) return c.error();
    auto stopWith = [&](const std::string& why) {
        out.line = m_line;
        out.value = nullptr;
        out.error = why + "; the rest of the file was not read";
        m_arrayDone = true;
        return true;
    };
    if (*c < 0) return stopWith("the JSON array is not closed (file ends before ']')");
    if (!m_firstElement) {
        if (*c == ']') {
            m_arrayDone = true;
            return false;
        }
        if (*c != ',') return stopWith(std::string("malformed JSON array: expected ',' or ']' but found '") + char(*c) + "'");
        ++m_pos;
        ws = skipJsonWhitespace();
        if (!ws) return ws.error();
        c = peekByte();
        if (!c) return c.error();
    }
    if (*c == ']') {  // "[]" or a trailing comma before "]"
        m_arrayDone = true;
        return false;
    }
    m_firstElement = false;
    const int line = m_line;
    auto got = captureJsonValue(m_scratch);
    if (!got) return got.error();
    if (!*got) {
        out.line = line;
        out.value = nullptr;
        out.error = "unterminated JSON value (the file ends inside it); the rest of the file was not read";
        m_arrayDone = true;
        return true;
    }
    parseJsonText(m_scratch, out, line);
    return true;
}

Result<bool> RecordReader::readCsvRow(std::vector<std::string>& fields, int& startLine, std::string& error) {
    fields.clear();
    error.clear();
    for (;;) {  // blank lines are not records
        auto c = peekByte();
        if (!c) return c.error();
        if (*c < 0) return false;
        if (*c == '\n') {
            ++m_line;
            ++m_pos;
            continue;
        }
        if (*c == '\r') {
            ++m_pos;
            continue;
        }
        break;
    }
    startLine = m_line;
    std::string field;
    bool inQuotes = false;
    bool quoted = false;
    int quoteLine = m_line;
    for (;;) {
        if (m_pos == m_len) {
            auto r = fill(1);
            if (!r) return r.error();
            if (!*r) {
                if (inQuotes) error = "unterminated quoted field (opened on line " + std::to_string(quoteLine) + ")";
                fields.push_back(std::move(field));
                break;
            }
        }
        // Copy runs of ordinary bytes at once; only quotes, delimiters and line ends need a look.
        {
            const char* p = m_buf.data() + m_pos;
            const char* end = m_buf.data() + m_len;
            const char* q = p;
            if (inQuotes) {
                while (q < end && *q != '"') {
                    if (*q == '\n') ++m_line;
                    ++q;
                }
            } else if (!field.empty() || quoted) {
                while (q < end && *q != m_delim && *q != '\n' && *q != '\r') ++q;
            } else {
                while (q < end && *q != m_delim && *q != '\n' && *q != '\r' && *q != '"') ++q;
                if (q > p && q < end && *q == '"') {  // a quote after field text is literal
                    while (q < end && *q != m_delim && *q != '\n' && *q != '\r') ++q;
                }
            }
            if (q > p) {
                field.append(p, size_t(q - p));
                m_pos += size_t(q - p);
                if (field.size() > kMaxRecordBytes) return Error{m_path + ": a CSV field longer than 256 MiB"};
                continue;
            }
        }
        const char ch = m_buf[m_pos++];
        if (inQuotes) {
            if (ch == '"') {
                auto r = fill(1);
                if (!r) return r.error();
                if (*r && m_buf[m_pos] == '"') {
                    field.push_back('"');  // "" is an escaped quote
                    ++m_pos;
                } else {
                    inQuotes = false;
                }
            } else {
                if (ch == '\n') ++m_line;
                field.push_back(ch);
                if (field.size() > kMaxRecordBytes) return Error{m_path + ": a CSV field longer than 256 MiB"};
            }
            continue;
        }
        if (ch == m_delim) {
            fields.push_back(std::move(field));
            field.clear();
            quoted = false;
            continue;
        }
        if (ch == '\n') {
            ++m_line;
            fields.push_back(std::move(field));
            break;
        }
        if (ch == '\r') {
            auto r = fill(1);
            if (!r) return r.error();
            if (*r && m_buf[m_pos] == '\n') continue;  // CRLF
        }
        if (ch == '"' && field.empty() && !quoted) {
            inQuotes = true;
            quoted = true;
            quoteLine = m_line;
            continue;
        }
        field.push_back(ch);  // RFC 4180 is strict here; real files put stray quotes mid-field
    }
    if (error.empty()) {
        for (size_t i = 0; i < fields.size(); ++i)
            if (auto bad = utf8::firstInvalidByte(fields[i])) {
                error = "bad UTF-8 encoding in field " + std::to_string(i + 1) + " (byte " + std::to_string(*bad + 1) + ")";
                break;
            }
    }
    return true;
}

Result<bool> RecordReader::nextCsv(RawRecord& out) {
    std::vector<std::string> row;
    int line = 0;
    std::string err;
    if (m_havePendingRow) {
        m_havePendingRow = false;
        row = std::move(m_pendingRow);
        line = m_pendingLine;
        err = std::move(m_pendingError);
    } else {
        auto got = readCsvRow(row, line, err);
        if (!got) return got.error();
        if (!*got) return false;
    }
    out.line = line;
    out.value = nullptr;
    out.error = err;
    if (!err.empty()) return true;
    if (m_csvHasHeader && row.size() != m_header.size()) {
        out.error = "CSV row has " + std::to_string(row.size()) + " fields, the header has " + std::to_string(m_header.size());
        return true;
    }
    if (!m_csvHasHeader)
        while (m_colNames.size() < row.size()) m_colNames.push_back("col" + std::to_string(m_colNames.size() + 1));
    const std::vector<std::string>& names = m_csvHasHeader ? m_header : m_colNames;
    nlohmann::json obj = nlohmann::json::object();
    auto& members = obj.get_ref<nlohmann::json::object_t&>();
    for (size_t i = 0; i < row.size(); ++i) members.insert_or_assign(names[i], std::move(row[i]));
    out.value = std::move(obj);
    return true;
}

}  // namespace verdict::core
