// Quantization trade-off: one model in several files (F16 / Q8_0 / Q4_K_M / IQ4_XS ...) measured
// against a base file — the use case behind `verdict quant-compare` and the Performance screen's
// "Quantization…" dialog. Per file, each part optional:
//   * fidelity on a text: KL-divergence of the file's next-token distributions against the base's
//     and top-1 agreement ("same top p"), with PPL and the PPL ratio (verdict/engine/perplexity.h,
//     llama-perplexity's definitions);
//   * accuracy on a stored suite: a normal suite run per file (stored, resumable), paired with the
//     base's run item by item: the accuracy delta with the paired bootstrap interval and McNemar's
//     exact p (stats/paired_comparison.h);
//   * speed: a one-point latency sweep per file (stored as a normal sweep): decode and prefill
//     throughput, TPOT P50 / ITL P99, and their change against the base (the "throughput drop rate"
//     and "P99 drift" such reports show);
//   * memory: file size, bits per weight, and the sweep point's weights / KV / scratch bytes.
// The comparison itself is stored (a study of kind "quant_compare", store/study_repository.h) after every step, so a
// killed process keeps what it measured; its runs and sweeps are ordinary ones (History, `verdict
// results`, `verdict sweep show`).
#pragma once

#include "core/perf/sweep_runner.h"
#include "core/services/service_result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace verdict::core {

class Database;

struct QuantCompareRequest {
    std::string basePath;                 // the reference file (usually F16 / BF16 / Q8_0)
    std::vector<std::string> files;       // the files compared with it (at least one)
    std::string suite;                    // stored suite (name or "#ID"); "" = no accuracy part
    std::optional<int64_t> limit;         // the suite's first N items only
    std::string textPath;                 // UTF-8 text for KLD; "" = no fidelity part
    int64_t ctx = 512;                    // KLD chunk size (llama-perplexity -c)
    int64_t chunks = 0;                   // KLD chunks, <= 0: every whole chunk of the text
    bool sweep = true;                    // the speed part
    SweepSpec sweepSpec{{128}, {64}, {1}, 5, 1, 1};  // one point: prompt 128, gen 64, batch 1, 5 reps
    int threads = 0;                      // <= 0: physical cores
    std::string device = "cpu";           // where every file runs ("cpu", "cuda:N")
    int gpuLayers = -1;
    std::string name;                     // default: the base file's name
};

// Checks the request before anything runs: a base and at least one file, no file twice, at most
// 16 files, ctx in [4, 1048576], and at least one part (text, suite or sweep). Errors name the field.
Result<void> validateQuantCompareRequest(const QuantCompareRequest& request);

struct QuantCompareProgress {
    int file = 0;                         // 0 = the base, k = files[k-1]
    int fileCount = 0;                    // 1 + files.size()
    std::string path;
    std::string stage;                    // "fidelity", "accuracy", "speed", "done"
    std::string detail;                   // "chunk 3/8", "item 12/40", "point 1/1"
};

struct QuantCompareEvents {
    std::function<void(const QuantCompareProgress&)> progress;
    std::function<void(const nlohmann::json&)> stored;  // the comparison after each stored step
};

struct QuantCompareDone {
    int64_t id = 0;                       // studies.id
    nlohmann::json comparison;            // the stored shape (docs/cli.md, "verdict quant-compare")
    bool cancelled = false;
};

// Runs every part for the base and then each file, storing after every step. A part that fails
// for one file (a text the file tokenizes differently, a context it cannot hold) is recorded as
// that file's error for the part and the rest goes on. BadInput: an invalid request, a missing
// file, a suite that does not exist, an unreadable text, a base that cannot be opened;
// Storage: the database refuses.
ServiceResult<QuantCompareDone> runQuantCompare(Database& db, const QuantCompareRequest& request,
                                                const QuantCompareEvents& events, std::stop_token stop);

// The deltas of each file against the base, computed from the stored parts (pure; exposed for
// tests and for readers of old rows): sets rows[k]["vs_base"] = {"kld" ..., "decode_change",
// "prefill_change", "tpot_p50_change", "itl_p99_change", "memory_change", "size_ratio"} where a change is
// file / base - 1 (null when either side is missing or the base's value is 0).
void addQuantDeltas(nlohmann::json& comparison);

// "Q4_K_M", "F16", ... from general.file_type (llama.h's llama_ftype values); "" when unknown.
std::string fileTypeName(uint32_t fileType);

struct QuantCompareSummary {
    int64_t id = 0;
    std::string name, createdAt, status, basePath;
    int64_t files = 0;
};
// Stored comparisons, newest first, and one by id (nullopt: none with that id).
Result<std::vector<QuantCompareSummary>> listQuantCompares(Database& db);
Result<std::optional<nlohmann::json>> loadQuantCompare(Database& db, int64_t id);

}  // namespace verdict::core
