// The stored shape of a run and of one evaluated item (tables runs, run_items; docs/schema.md).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace verdict::core {

// Stored as text in runs.status; values on disk: never rename.
enum class RunStatus {
    Running,    // started and not finished (or its process died: resumable)
    Completed,  // every planned item is stored
    Cancelled,  // stopped on request (resumable)
    Failed,     // stopped by an error that is not about one item, e.g. the model failed to load
};
std::string_view runStatusName(RunStatus status);  // "running", "completed", "cancelled", "failed"
std::optional<RunStatus> parseRunStatus(std::string_view name);

struct RunRecord {
    int64_t id = 0;
    // What ran. For a model file, path/sha/bytes identify the weights; for an endpoint (later
    // issue) modelPath holds the URL and model name.
    std::string backend = "engine";   // "engine" | "endpoint"
    std::optional<int64_t> modelId;   // models.id (sha cache), when known
    std::string modelPath;
    std::string modelSha256;          // 64 hex digits of the file bytes ("" for an endpoint)
    int64_t modelBytes = 0;
    int64_t suiteId = 0;
    // How it ran.
    nlohmann::json prompting = nlohmann::json::object();   // {shots, chat_template, system, ...}
    nlohmann::json generation = nlohmann::json::object();  // {max_tokens, temperature, top_k, ...}
    std::string chatTemplateMode;     // "model" (the model's own template), "raw", "builtin:<family>"
    std::string chatTemplate;         // the template text used ("" for raw)
    std::string chatTemplateHash;     // SHA-256 of chatTemplate ("" for raw)
    int64_t seed = 0;
    std::optional<int64_t> itemLimit; // --limit, when given
    int64_t nPlanned = 0;             // items this run evaluates
    std::string engineVersion;
    std::string device;               // "cpu (AMD EPYC ..., 8 threads)", "cuda:0 (NVIDIA H200)", "endpoint"
    std::string startedAt;            // UTC (utcTimestamp())
    // Derived, set by RunRepository::create.
    std::string resumeKey;            // same key = same experiment (see resumeKeyOf)
    std::string headerHash;           // SHA-256 of the immutable columns above (audit chain)
    std::optional<int64_t> sweepId;   // sweeps.id when the run belongs to a sweep (issue 7)
    // Mutable state.
    RunStatus status = RunStatus::Running;
    std::string finishedAt;           // "" while running
    std::string error;                // why it failed ("" otherwise)
    std::optional<int64_t> ownerPid;  // process currently executing it
    std::string ownerHost;
};

// One scorer's verdict on an item, inside run_items.scores:
//   [{"name": "exact", "score": 1.0, "pass": true, "detail": {...}}, ...]
struct RunItemRecord {
    int64_t seq = 0;                  // position in the hash chain (set on append)
    int64_t runId = 0;
    int64_t itemIdx = 0;              // 0-based index into the suite's items
    std::string itemId;               // SuiteItem::id
    std::string category;
    std::string prompt;               // exactly what was sent to the model (after template)
    std::string output;               // generated text, or the chosen choice for log-likelihood items
    int64_t tokensIn = 0;             // prompt tokens (for log-likelihood: context tokens)
    int64_t tokensOut = 0;            // generated tokens (for log-likelihood: continuation tokens scored)
    std::optional<double> ttftMs;     // time to first token
    std::optional<double> decodeTps;  // decode tokens per second
    std::optional<double> durationMs; // wall time of the item (render + model + scoring)
    nlohmann::json scores = nlohmann::json::array();
    std::optional<bool> correct;      // all scorers passed; nullopt when nothing could be scored
    std::string error;                // "" unless the item failed (then correct is false or null)
    nlohmann::json details = nlohmann::json::object();  // stop reason, template used, per-choice logprobs
    std::string createdAt;            // set on append
    std::string prevHash;             // set on append
    std::string rowHash;              // set on append
};

}  // namespace verdict::core
