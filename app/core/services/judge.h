// Judging two stored runs of one suite: the use case behind `verdict judge` and the window's
// judging dialog (the Suites screen's "Judge…"). Both fill a JudgeRequest and call judgeRunPair;
// neither opens a judge itself. The defaults written here are the only ones: the CLI's --help
// prints them, the dialog's controls start from them, so the same choices store the same
// judgments (same judge reference, mode and prompt hash) from either, and a judging started in
// one front end resumes in the other (tests/ui/test_window.cpp judgeRunsInTheWindow).
//
//   JudgeRequest r;                        // pairwise, built-in prompt, greedy, 1024 tokens, 1 call in flight
//   r.judge = "http://host:8000/v1 judge"; // or a GGUF file (opened in-process, one call at a time)
//   auto done = judgeRunPair(db, runA, runB, r, progress, cancel);
//
// A person judges blind instead (`verdict judge --human NAME`, the dialog's "Judge yourself"):
// humanJudging lists the items and the person's votes so far, storeHumanVote stores one vote.
// What a front end resolves itself: a provider preset's model name into "URL MODEL" and the
// endpoint's key / TLS settings (request.backend), which come from its flags or keychain.
#pragma once

#include "core/judge/judge_runner.h"
#include "core/run/backend_factory.h"
#include "core/run/model_backend.h"
#include "core/services/service_result.h"
#include "core/store/database.h"
#include "core/store/judgment_repository.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// At most this many judge calls in flight (endpoints; a local judge is one engine: one call).
inline constexpr int kMaxJudgeConcurrency = 64;

struct JudgeRequest {
    std::string judge;                 // a GGUF file or an endpoint ("URL MODEL"); stored normalized (normalizeModelRef)
    JudgeMode mode = JudgeMode::Pairwise;  // Pairwise (both orders per item), Rubric (each answer 1-10) or Reference
    std::string promptFile;            // the judge prompt template; "": the mode's built-in prompt
    std::string rubricFile;            // rubric / reference modes: rubrics per category; "": a general one
    GenerationParams generation = JudgeRunOptions{}.generation;  // greedy, at most 1024 tokens
    int concurrency = JudgeRunOptions{}.concurrency;             // judge calls in flight (endpoints): 1
    std::optional<int64_t> limit;      // judge the first N items both runs answered only
    // The local judge's engine (threads: physical cores, context: min(training context, 4096),
    // device, GPU layers) and the endpoint's model, key, TLS and routes. engineVersion and
    // cancelLoad are the service's own.
    BackendOpenOptions backend;
};

// The checks made before anything is opened, and the runner's options they give: a mode a model
// judges in (not Human), concurrency in 1..kMaxJudgeConcurrency, at least one output token, a
// limit of at least 1, rubrics only with the rubric and reference modes; the prompt template and
// the rubric file read (errors name the file, and for a template the placeholder it lacks).
// judgeRef is request.judge normalized ("" when none is given yet). Every failure is BadInput.
ServiceResult<JudgeRunOptions> prepareJudgeRun(const JudgeRequest& request);

// The engine and endpoint settings the judge opens with: the request's, with this build's
// version and `cancel` as the load's stop flag.
BackendOpenOptions judgeBackendOptions(const JudgeRequest& request, const std::atomic<bool>* cancel);

struct JudgeDone {
    JudgeRunOptions options;  // as judged: the normalized judge reference, mode, prompt name
    JudgeRunReport report;    // calls, already stored, unreadable, failed calls, prompt hash, cancelled
};

// prepareJudgeRun (BadInput), checks the runs (BadInput: unknown, identical, of different suites),
// opens one judge per worker (a GGUF file in-process: one; an endpoint: `concurrency`) and judges
// every item not already judged by the same judge, mode and prompt, storing each verdict as it
// comes (core/judge/judge_runner.h judgeRuns). A judge that does not open is ModelOpen
// (Cancelled when `cancel` was set while it loaded); a refused read or write of the database is
// Storage. Judge calls that fail are counted in the report (failedCalls), not stored.
ServiceResult<JudgeDone> judgeRunPair(Database& db, int64_t runA, int64_t runB, const JudgeRequest& request,
                                      const std::function<void(const JudgeRunProgress&)>& progress = {},
                                      const std::atomic<bool>* cancel = nullptr);

// --- A person, blind -----------------------------------------------------------------------------

// A person's name as stored: 1 to 200 bytes; the judge is "human:NAME".
inline constexpr size_t kMaxJudgeNameBytes = 200;
bool validJudgeName(const std::string& person);
std::string humanJudgeRef(const std::string& person);

// What a person sees and presses: the answer shown on the left is better, the right one, a tie, both bad.
enum class HumanVote { Left, Right, Tie, BothBad };
// The vote as the person gave it, from a stored human judgment (its winner and position);
// nullopt for a judgment without a winner.
std::optional<HumanVote> humanVoteOf(const JudgmentRecord& stored);

struct HumanJudging {
    std::vector<JudgeItem> items;            // the items both runs answered, by item index
    int64_t missing = 0;                     // items one run lacks or failed
    std::map<int64_t, JudgmentRecord> votes; // this person's stored votes, by item index
};
// The items runs A and B can be judged on and what `person` voted so far. BadInput: an invalid
// name, runs that cannot be judged; Storage: the votes cannot be read.
ServiceResult<HumanJudging> humanJudging(Database& db, int64_t runA, int64_t runB, const std::string& person);

// Stores `person`'s vote on an item, the sides as blindPosition showed them to that person (a
// later vote on the same item replaces it). BadInput: an invalid name; Storage: refused.
ServiceResult<JudgmentRecord> storeHumanVote(Database& db, int64_t runA, int64_t runB, const std::string& person,
                                             int64_t itemIdx, HumanVote vote);

}  // namespace verdict::core
