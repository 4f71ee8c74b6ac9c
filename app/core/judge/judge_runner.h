// LLM-as-judge over two stored runs of one suite (issue 21): a judge model (a GGUF file or an
// endpoint, through ModelBackend) reads each item's question and the two runs' answers and gives
// a verdict, stored per item (JudgmentRepository). The CLI (`verdict judge`) and the window call
// this; neither judges by itself.
//
// Modes:
//   pairwise   both orders per item (A's answer first, then B's first); the verdicts are parsed
//              with parsePairwiseVerdict and combined by combineOrders (a flip is a tie).
//   rubric     each run's answer graded alone on 1-10 with the rubric text of its category.
//   reference  as rubric, with the item's first reference answer shown to the judge.
// A multi-turn item (MT-Bench) is judged as a whole (turn 0: every turn of both conversations)
// and turn by turn (turn k: the conversation up to k, the answers to turn k judged; MT-Bench
// judges turn 2 this way), each stored with its turn number.
// Resumable: judgments already stored for the same runs, judge, mode and prompt are skipped.
// Unreadable outputs are stored with their full text and counted, never guessed.
#pragma once

#include "core/run/model_backend.h"
#include "core/stats/preference.h"
#include "core/store/database.h"
#include "core/store/judgment_repository.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// The built-in judge prompts. Placeholders: {question}, {answer_a}, {answer_b} (pairwise),
// {answer}, {rubric} (rubric), {reference} (reference). Each is replaced once, in one pass, so an
// answer that contains "{answer_b}" stays as written.
const std::string& builtinJudgePrompt(JudgeMode mode);
std::string fillJudgePrompt(std::string_view tmpl, const std::map<std::string, std::string>& values);

// A judge prompt template from a file (up to 1 MiB), with the placeholders its mode needs:
// {answer_a} and {answer_b} for pairwise, {answer} for rubric and reference. Errors name the file.
Result<std::string> loadJudgePrompt(const std::string& path, JudgeMode mode);

// Rubrics per category from a file: a JSON object {"category": "text", ..., "*": "default"}, or
// any other text = one rubric for every category. Errors name the file.
Result<std::map<std::string, std::string>> loadRubrics(const std::string& path);
// The rubric of a category: its own, else "*", else a general one.
std::string rubricFor(const std::map<std::string, std::string>& rubrics, const std::string& category);

// An item both runs answered without error, as a judge (or a person) sees it.
struct JudgeItem {
    int64_t itemIdx = 0;
    std::string itemId;                   // the suite item's id
    std::string category;
    std::string question;                 // the plain prompt, or the conversation's turns
    std::string answerA, answerB;         // the runs' outputs
    std::vector<std::string> references;  // the suite item's reference answers
    // A multi-turn item whose every turn both runs answered: the user's turns and each run's
    // answer to each (empty otherwise). Judges then also judge turn by turn.
    std::vector<std::string> turns, turnAnswersA, turnAnswersB;
};
struct JudgeItems {
    std::vector<JudgeItem> items;         // by item index
    int64_t missing = 0;                  // items one run lacks or failed
};
// The items runs A and B can be judged on. Fails for unknown or identical runs and for runs of
// different suites.
Result<JudgeItems> judgeableItems(Database& db, int64_t runA, int64_t runB);

// Which answer a person sees on the left for an item: "ab" (A's) or "ba", fixed per person, run
// pair and item (SHA-256 of them), so the sides look random but a resumed session shows the same.
std::string blindPosition(const std::string& person, int64_t runA, int64_t runB, int64_t itemIdx);

struct JudgeRunOptions {
    JudgeMode mode = JudgeMode::Pairwise;  // Pairwise, Rubric or Reference
    std::string judgeRef;                  // stored as judgments.judge (normalized model reference)
    std::string promptName = "builtin";    // what the user calls the prompt (file name, "builtin")
    std::string promptTemplate;            // "" = builtinJudgePrompt(mode)
    std::map<std::string, std::string> rubrics;  // rubric / reference modes
    GenerationParams generation;           // default below: greedy, 1024 tokens
    int concurrency = 1;                   // judge calls in flight, each worker with its own judge; endpoints only (a local judge: 1)
    std::optional<int64_t> limit;          // judge the first N common items only
    JudgeRunOptions() { generation.maxTokens = 1024; generation.temperature = 0; }
};

struct JudgeRunProgress {
    int64_t done = 0;        // judge calls finished in this invocation
    int64_t total = 0;       // judge calls this invocation makes
    int64_t skipped = 0;     // already stored
    int64_t unreadable = 0;  // outputs without a verdict
};

struct JudgeRunReport {
    int64_t items = 0;             // items both runs answered (after --limit)
    int64_t itemsMissing = 0;      // items one run lacks or failed (not judged)
    int64_t calls = 0;             // judge calls made now
    int64_t alreadyStored = 0;
    int64_t unreadable = 0;        // of the calls made now
    int64_t failedCalls = 0;       // the judge itself failed (transport, context): not stored
    std::string firstFailure;      // the first such failure's message
    std::string promptHash;
    bool cancelled = false;
};

// Opens one judge per worker (an endpoint can take several; a local model gets one worker).
using JudgeOpener = std::function<Result<std::unique_ptr<ModelBackend>>()>;

// Judges runs A and B (rubric/reference: each run's answers alone). Fails before judging for
// unknown or identical runs, runs of different suites, a judge that does not open. A judge call
// that fails (transport, context) is counted in failedCalls and not stored, so the next
// invocation tries it again; an output without a readable verdict is stored and counted.
Result<JudgeRunReport> judgeRuns(Database& db, int64_t runA, int64_t runB, const JudgeRunOptions& options,
                                 const JudgeOpener& openJudge, const std::function<void(const JudgeRunProgress&)>& progress = {},
                                 const std::atomic<bool>* cancel = nullptr);

// --- Summaries of what is stored ----------------------------------------------------------------

struct PairwiseJudgeSummary {
    std::string judge;                 // model reference or "human:NAME"
    JudgeMode mode = JudgeMode::Pairwise;
    int turn = 0;                      // 0: whole items; k: the answers to turn k of multi-turn items
    WinRate winRate;                   // per item: the combined verdict (pairwise) or the vote (human)
    PositionBias positionBias;         // pairwise only (human: zero)
    int64_t bothBad = 0;               // human votes "both bad" (counted in winRate.ties)
    std::map<int64_t, std::optional<PairwiseChoice>> outcomes;  // item -> outcome (nullopt: unreadable)
};

struct RubricRunScore {
    int64_t graded = 0;
    int64_t unreadable = 0;
    std::optional<double> mean;
};
struct RubricCategory {
    std::string category;              // "" = overall
    int64_t pairs = 0;                 // items both runs got a score on
    RubricRunScore a, b;
    std::optional<double> meanDifference;  // mean of (score A - score B) over the pairs
    Interval differenceCi;             // paired bootstrap 95 %
};
struct RubricJudgeSummary {
    std::string judge;
    JudgeMode mode = JudgeMode::Rubric;
    int turn = 0;                      // as PairwiseJudgeSummary::turn
    std::vector<RubricCategory> categories;  // overall first, then by category name
};

struct JudgeSummaries {
    std::vector<PairwiseJudgeSummary> pairwise;  // one per judge, prompt and turn (people: one per person)
    std::vector<RubricJudgeSummary> rubric;      // one per judge and mode
    // Agreement of each two pairwise judges over the items both gave a verdict on (Cohen's kappa
    // on A/B/tie); pairs of judges without such an item are left out.
    struct Agreement {
        std::string judge1, judge2;
        int turn = 0;                  // the judges' common turn (0: whole items)
        Kappa kappa;
    };
    std::vector<Agreement> agreement;
};

// The summaries as text, one block per judge (`verdict judge`, the window's judging dialog).
std::string describeJudgeSummaries(const JudgeSummaries& s);

// Everything stored for runs A and B, summarized per judge (and prompt); categories from run A's
// items. Items a pairwise judge answered in one order only (a run in progress) are left out.
Result<JudgeSummaries> summarizeJudgments(Database& db, int64_t runA, int64_t runB);

// --- More than two runs: Bradley-Terry ------------------------------------------------------------

struct RankedRuns {
    std::vector<int64_t> runs;       // as given; BradleyTerry's players are their indices
    std::vector<std::string> judges; // whose verdicts were used
    int64_t comparisons = 0;         // item verdicts (A, B or tie) between two of the runs
    int64_t unreadable = 0;          // item verdicts left out (no readable verdict)
    BradleyTerry strengths;          // Elo-scale ratings and bootstrap intervals over items
};

// Bradley-Terry strengths of runs of one suite from every stored pairwise verdict between two of
// them (judge models' combined verdicts and people's votes; `judge` keeps one judge only: a model
// reference or "human:NAME"). Each item verdict is one comparison (a tie half a win each); the
// bootstrap resamples suite items, each with all of its comparisons. Fails for fewer than two
// runs, a run given twice, unknown runs, runs of different suites.
Result<RankedRuns> rankRuns(Database& db, const std::vector<int64_t>& runs, const std::optional<std::string>& judge,
                            int resamples = kBradleyTerryResamples, uint64_t seed = kBootstrapSeed);

}  // namespace verdict::core
