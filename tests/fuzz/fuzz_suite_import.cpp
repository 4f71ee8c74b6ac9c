// libFuzzer entry: any byte string must import as a suite (items, per-record rejections) or fail
// with a clean Error, never crash, hang or allocate absurdly; this is the path a downloaded suite
// file takes (byte source with gzip, record reader, JSON parser, shape detection, item mappers).
//
// The first byte picks how the rest is read, so every format is reached from any seed:
//   bits 0-2  format hint: detect, jsonl, json, csv, tsv, csv-header, csv-noheader, tsv-noheader
//   bit  3    gzip the rest first (a valid stream: the reader inflates it like a .gz file)
//   bits 4-7  shape: detect (0, 1), forced (2-12: prompt ... promptfoo), a field mapping (13, 14),
//             detect with a promptfoo prompt template (15)
// A rest that itself starts with 1F 8B is read as (usually corrupt) gzip, as a file would be.
#include "core/suite/suite_importer.h"

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

// Gzip-wraps `in` (a small window and hash: fast, and any window inflates); empty on a zlib failure.
std::string gzipped(std::string_view in) {
    z_stream zs{};
    if (deflateInit2(&zs, 1, Z_DEFLATED, 12 + 16, 2, Z_DEFAULT_STRATEGY) != Z_OK) return {};
    std::string out(deflateBound(&zs, uLong(in.size())) + 32, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = uInt(in.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = uInt(out.size());
    const int rc = deflate(&zs, Z_FINISH);
    out.resize(out.size() - zs.avail_out);
    deflateEnd(&zs);
    return rc == Z_STREAM_END ? out : std::string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    static const char* const kHints[] = {"",           "jsonl",        "json",        "csv",
                                         "tsv",        "csv-header",   "csv-noheader", "tsv-noheader"};
    static const char* const kShapes[] = {"prompt", "inspect", "openai_evals", "mc",   "arc",      "aqua",
                                          "mmlu",   "gsm8k",   "humaneval",    "mbpp", "promptfoo"};
    const unsigned mode = data[0];
    std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    std::string packed;
    if (mode & 8) {
        packed = gzipped(rest);
        rest = packed;
    }

    verdict::core::ImportOptions options;
    options.formatHint = kHints[mode & 7];
    options.gzip.maxExpandedBytes = uint64_t{64} << 20;  // a small bomb guard keeps every input cheap
    options.maxListedRejects = 64;
    const unsigned shape = mode >> 4;
    if (shape >= 2 && shape <= 12) options.shape = kShapes[shape - 2];
    if (shape == 13 || shape == 14) {
        auto mapping = verdict::core::FieldMapping::parse(
            shape == 13 ? "prompt=question,reference=answer|target,category=meta.subject,id=id"
                        : "prompt=q.stem,choices=A|B|C|D,answer=label,system=sys,input=messages");
        if (mapping) options.mapping = *mapping;
    }
    if (shape == 15) options.promptTemplate = "Q: {{question}} ({{ topic }}) {{missing}}";

    size_t items = 0;
    auto summary = verdict::core::importSuiteStreamingFromMemory(
        rest, "fuzz_test.txt", options, [&](verdict::core::SuiteItem&& item) {
            // Look at what the importer promised: a gold index is inside the choices.
            if (item.gold && (*item.gold < 0 || size_t(*item.gold) >= item.choices.size())) __builtin_trap();
            return ++items < 100000;
        });
    if (summary && summary->takenCount != items) __builtin_trap();
    return 0;
}
