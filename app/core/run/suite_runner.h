// Runs a suite against a model backend and stores every item as it finishes.
//
//   SuiteRunner runner(db, backend, renderer, scorer);
//   runner.setProgressCallback([](const RunProgress& p) { ... });    // items/s, ETA
//   auto prepared = runner.prepare(request);    // new run, or the unfinished one to continue
//   auto outcome = runner.execute(*prepared, stopSource.get_token());
//
// Each item is stored in its own transaction (RunRepository::appendItem) the moment it is
// scored, so a process killed at any point loses at most the item in flight; preparing the same
// experiment again (or --resume RUN) continues with the items not yet stored. Cancelling via the
// stop token interrupts the generation in flight (that item is not stored) and marks the run
// cancelled (resumable).
//
// Item kinds:
//   log-likelihood multiple choice: the item has choices and a gold index, PromptingOptions::mcMode
//     is "loglik" and its scorers are none or include "mc_loglik". Each choice's continuation is scored
//     with backend.logprobs; the highest total log-probability is the answer (lm-eval-harness
//     "acc", score/mc_loglik.h; with scorer params {"norm": true} the per-character one,
//     "acc_norm"). Both predictions are recorded in the score's detail.
//   function calling: the item has expected_calls; its tools go with the prompt, the calls that come
//     back are graded (tool_call_scorer.h: the "tool_call" score, its detail.error the error class);
//     a multi-step item's tool_results are fed back after the calls and the final answer scored by
//     the item's scorers; with PromptingOptions::toolRetries a wrong call gets the grader's reason
//     back as its tool result and the model may correct it (details.tool_retries, tool_recovered).
//   everything else: backend.generate, then the item's scorers on the output.
// An item is correct when every scorer passed; an item whose generation failed is stored with
// its error and counts as wrong; one whose scorers failed to run is stored unscored (null).
#pragma once

#include "core/run/model_backend.h"
#include "core/store/database.h"
#include "core/store/run_record.h"
#include "core/store/suite_repository.h"

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace verdict::core {

// How prompts are built, as stored in runs.prompting (toJson keys are stable).
struct PromptingOptions {
    int shots = 0;                  // few-shot examples put before each item (chosen from the suite itself)
    uint64_t shotSeed = 1234;       // few-shot selection seed (lm-evaluation-harness's default)
    bool useChatTemplate = true;    // apply the model's chat template when it has one
    std::string system;             // system message ("" for none)
    std::string mcMode = "loglik";  // multiple-choice items: "loglik" or "generate"
    std::string shape;              // suite shape, picks the prompt layout ("" = guess per item)
    std::string templateText;       // prompt template with {{field}} placeholders ("" = the shape's)
    std::string description;        // text before the examples ("" = the shape's default)
    // Function-calling items: after a wrong call, the grader's reason goes back to the model as
    // the call's tool result this many times, for it to correct the call (retry behaviour). The
    // item is graded on its first attempt; whether a retry recovered is recorded beside it. 0..5.
    int toolRetries = 0;

    // {shots, shot_seed, chat_template, system, mc_mode, shape, template, description}, and
    // tool_retries when not 0 (so the resume keys of runs without it stay as they were)
    nlohmann::json toJson() const;
    static Result<PromptingOptions> fromJson(const nlohmann::json& j);
};
Result<GenerationParams> generationParamsFromJson(const nlohmann::json& j, uint64_t seed);

// One item's prompt, built by the suite's renderer.
struct ItemPrompt {
    Prompt prompt;
    std::vector<std::string> continuations;  // log-likelihood items: what follows the prompt, per choice
};

// Builds an item's prompt. `suite` is the whole suite (few-shot examples come from it), `index`
// the item's position in it.
using PromptRenderer = std::function<Result<ItemPrompt>(const SuiteItem& item, size_t index,
                                                        const std::vector<SuiteItem>& suite,
                                                        const PromptingOptions& options)>;

struct ItemScore {
    std::string name;      // scorer name
    double score = 0;      // 0..1 for pass/fail scorers; a measure for others
    bool pass = false;
    nlohmann::json detail = nlohmann::json::object();
};
// Scores one output with the item's scorers (or the suite default). Fails when a scorer cannot
// run (unknown name, bad parameters).
using ItemScorer = std::function<Result<std::vector<ItemScore>>(const SuiteItem& item, const std::string& output)>;

// True when `item` is evaluated by log-likelihood over its choices (see the top of this file).
bool isLoglikItem(const SuiteItem& item, const PromptingOptions& options);

struct RunRequest {
    SuiteRecord suite;
    std::vector<SuiteItem> items;           // the whole suite, in order
    PromptingOptions prompting;
    GenerationParams generation;            // generation.seed is the run's seed
    std::optional<int64_t> limit;           // evaluate the first `limit` items only
    std::optional<int64_t> resumeRunId;     // continue this run (its stored settings are used)
    bool autoResume = true;                 // continue an unfinished run with the same settings
    bool forceClaim = false;                // take over a run marked as owned by another host
    std::optional<int64_t> sweepId;
};

struct PreparedRun {
    RunRecord run;
    bool resumed = false;
    int64_t storedBefore = 0;               // items already stored when execution starts
    std::vector<SuiteItem> items;           // the whole suite
    PromptingOptions prompting;                // effective settings (the stored ones when resuming)
    GenerationParams generation;
};

struct RunProgress {
    int64_t runId = 0;
    int64_t done = 0;                       // items stored, earlier sessions included
    int64_t total = 0;                      // items planned
    int64_t doneNow = 0;                    // stored by this execute()
    int64_t errorsNow = 0;                  // of those, items with an error
    double itemsPerSecond = 0;              // this execute()'s rate
    std::optional<double> etaSeconds;       // remaining / rate (unknown before the first item)
    int64_t lastItemIdx = -1;
    std::optional<bool> lastCorrect;
};

struct RunOutcome {
    RunRecord run;                          // final state (status, finished_at)
    int64_t storedBefore = 0;
    int64_t storedNow = 0;
    int64_t errorsNow = 0;
};

class SuiteRunner {
public:
    SuiteRunner(Database& db, ModelBackend& backend, PromptRenderer renderer, ItemScorer scorer);

    // Called after every stored item (and once before the first), one call at a time: on the
    // executing thread, or in a parallel run on the thread that stored the item.
    void setProgressCallback(std::function<void(const RunProgress&)> callback) { m_progress = std::move(callback); }

    // Items in flight at once (default 1), capped by the backend's maxConcurrentCalls(). Results
    // equal a sequential run's (the engine's batched decode is exact; each item samples with its
    // own seed); they are stored in the order they finish. Log-likelihood items run first, in
    // groups of n scored together (ModelBackend::logprobsMany: the engine packs their rows into
    // shared forward passes; on the CPU scores equal a sequential run's bit for bit).
    void setParallel(int n) { m_parallel = n; }

    // Identifies the model (hashing the file unless cached), then creates a run or picks the one
    // to continue: request.resumeRunId when given (fails when it is completed, runs another
    // suite or model, or is owned by a live process), else with autoResume the newest unfinished
    // run with the same resume key, else a new run. Claims the run for this process.
    Result<PreparedRun> prepare(const RunRequest& request);

    // Evaluates every planned item that is not stored yet, in order (setParallel: several at
    // once), storing each as it finishes. Returns the outcome with status completed, or cancelled when `stop` was
    // requested. Fails (marking the run failed) only when the database refuses a write.
    Result<RunOutcome> execute(const PreparedRun& prepared, std::stop_token stop);

private:
    // Evaluates one item; returns nullopt when cancelled mid-way (nothing to store).
    std::optional<RunItemRecord> evaluate(const PreparedRun& p, size_t index, std::stop_token stop);
    // A log-likelihood item before and after its scores: the record so far (its prompt rendered)
    // and what to score, or no request when the record already holds the item's error.
    struct LoglikPlan {
        RunItemRecord record;
        std::optional<LoglikRequest> request;
        std::chrono::steady_clock::time_point start;
    };
    LoglikPlan planLoglik(const PreparedRun& p, size_t index);
    RunItemRecord finishLoglik(const PreparedRun& p, size_t index, LoglikPlan plan,
                               const std::vector<Result<ContinuationScore>>& scores);
    // Log-likelihood items in groups of `group`, each group scored by one logprobsMany call;
    // `store` keeps each record (false: stop). Returns false when `stop` ended it early.
    bool runLoglik(const PreparedRun& p, const std::vector<int64_t>& indices, size_t group, std::stop_token stop,
                   const std::function<bool(RunItemRecord)>& store);
    // A function-calling item (suite_runner_tools.cpp); `r` carries what evaluate() filled in.
    std::optional<RunItemRecord> evaluateToolItem(const PreparedRun& p, size_t index, std::stop_token stop,
                                                  RunItemRecord r, ItemPrompt ip);

    Database& m_db;
    ModelBackend& m_backend;
    PromptRenderer m_renderer;
    ItemScorer m_scorer;
    std::function<void(const RunProgress&)> m_progress;
    int m_parallel = 1;
};

}  // namespace verdict::core
