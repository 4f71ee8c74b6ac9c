// Import a test suite from the files people already have: JSONL, JSON arrays, CSV/TSV (with or
// without header), any of them gzip-compressed. The record shape (MMLU, GSM8K, HumanEval,
// promptfoo, Inspect AI, OpenAI evals, ...) is detected from the first records' keys, or given
// as an explicit FieldMapping; see suite_shape.h for the list.
//
// Nothing is dropped silently: each record that cannot become a SuiteItem is reported with its
// line number and the reason, and the counts of taken and rejected records are exact. The file
// is read as a stream (one record in memory at a time); importSuite keeps the items, and
// importSuiteStreaming hands each one to a callback for files too large to hold.
#pragma once

#include "core/suite/byte_source.h"
#include "core/suite/field_mapping.h"
#include "core/suite/suite_item.h"

#include <verdict/engine/result.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

struct ImportOptions {
    std::string name;                      // suite name; "" = file name without extensions
    std::optional<FieldMapping> mapping;   // explicit columns; disables shape detection
    std::string formatHint;                // "", "jsonl", "json", "csv", "tsv", "csv-header", "csv-noheader"
    std::string shape;                     // "" = detect; else a shapeName() to force ("mmlu", "gsm8k", ...)
    // promptfoo: the prompt with {{var}} placeholders, when the vars carry no prompt/question/input.
    std::string promptTemplate;
    // BFCL: the possible_answer file (JSONL of {"id", "ground_truth"}), joined to the items by id.
    std::string answersPath;
    bool fillDefaultScorers = true;        // items without explicit scorers get defaultScorers(shape)
    size_t maxListedRejects = 10000;       // rejected/warnings lists stop growing here; counts stay exact
    GzipLimits gzip;                       // gzip bomb guard (size and ratio)
    // Claims an item id within the suite: true when no earlier item had it (a repeat is renamed
    // "id@line"). Unset: a set of id hashes in memory, which grows with the item count;
    // importSuiteToStore keeps the ids in the database instead (SuiteWriter::claimId).
    std::function<bool(const std::string& id)> claimId;
    // Checks a mapped item (after its scorers are set); a message rejects the record with it, as
    // a malformed one. importSuiteToStore checks the scorer specs here (unknown names, bad params).
    std::function<std::optional<std::string>(const SuiteItem& item)> validateItem;
};

struct RejectedRecord {
    int line = 0;          // 1-based line where the record starts
    std::string reason;    // "invalid JSON: ...", "no prompt", "answer 'E' is not among the 4 choices (A-D)", ...
};

struct ImportSummary {
    std::string suiteName;
    std::string shape;         // shapeName() of the detected or forced shape
    std::string format;        // "jsonl", "json", "csv"
    bool gzip = false;
    std::string contentHash;   // SHA-256 (hex) of the file bytes as stored: same file, same hash
    uint64_t fileBytes = 0;    // bytes on disk
    uint64_t textBytes = 0;    // decoded (decompressed) bytes
    size_t takenCount = 0;
    size_t rejectedCount = 0;
    std::vector<RejectedRecord> rejected;  // first maxListedRejects of them, in file order
    std::vector<RejectedRecord> warnings;  // kept items with a caveat (unsupported assert, renamed duplicate id)
    size_t warningCount = 0;
    std::vector<ScorerSpec> defaultScorers;  // of the shape, for an item without choices/references
};

struct ImportResult {
    std::string suiteName;
    std::string shape;
    std::string format;
    bool gzip = false;
    std::string contentHash;
    uint64_t fileBytes = 0;
    uint64_t textBytes = 0;
    std::vector<SuiteItem> items;
    size_t takenCount = 0;                 // == items.size() for importSuite; a preview keeps fewer items
    std::vector<RejectedRecord> rejected;
    size_t rejectedCount = 0;              // == rejected.size() unless capped by maxListedRejects
    std::vector<RejectedRecord> warnings;
    std::vector<ScorerSpec> defaultScorers;
};

// Imports the whole file into memory. Fails (Error) only when the file cannot be read at all,
// is corrupt gzip, or its shape cannot be recognised and no mapping was given; everything else
// becomes per-record rejections.
// `cancel` (optional), when set, stops the import at the next item: the result is then an Error
// "import of PATH cancelled" (the window's import dialog closed while reading a large file).
Result<ImportResult> importSuite(const std::string& path, const ImportOptions& options = {},
                                 const std::atomic<bool>* cancel = nullptr);

// A streamed import's summary with the items kept of it (all of them for importSuite, the first
// rows for a preview): takenCount stays the summary's count.
ImportResult importResult(ImportSummary&& summary, std::vector<SuiteItem> items);

// Called once per accepted item, in file order; return false to stop early (the summary then
// covers the records read so far; the content hash still covers the whole file).
using SuiteItemCallback = std::function<bool(SuiteItem&& item)>;
Result<ImportSummary> importSuiteStreaming(const std::string& path, const ImportOptions& options,
                                           const SuiteItemCallback& onItem);

// The same over a file's bytes already in memory; `name` stands for its path (the extension
// counts for the format, the name for the suite name, category and messages).
Result<ImportSummary> importSuiteStreamingFromMemory(std::string_view bytes, const std::string& name,
                                                     const ImportOptions& options, const SuiteItemCallback& onItem);

// "abstract_algebra_test.csv.gz" -> "abstract_algebra" (strips extensions and a trailing
// _test/_dev/_val/_validation/_train split name): MMLU-style files name their subject this way.
std::string categoryFromFileName(const std::string& path);

}  // namespace verdict::core
