// Running a stored suite on one model: the use case behind `verdict run` and the Suites screen's
// "Run on A and B". Both fill a SuiteRunSettings and call runSuite; neither assembles a run itself.
//
//   SuiteRunSettings s;                 // the defaults written here are the only ones: the CLI's
//   s.modelRef = "m.gguf";              // --help prints them, the window's controls start from them
//   s.suite = "gsm8k";
//   auto done = runSuite(db, s, events, stop);
//
// Same settings, same resume key: a run started in the window continues from the CLI and the
// other way round (tests/ui/test_window.cpp windowAndCliShareOneRun).
#pragma once

#include "core/run/backend_factory.h"
#include "core/run/suite_runner.h"
#include "core/services/service_result.h"
#include "core/stats/run_summary.h"

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace verdict::core {

struct SuiteRunSettings {
    std::string modelRef;                // GGUF file or endpoint ("URL" or "URL MODEL"); "" with resumeRunId: the run's model
    std::string suite;                   // stored suite, name or "#ID"; "" with resumeRunId: the run's suite
    std::optional<int64_t> limit;        // evaluate the first N items only
    std::optional<int64_t> resumeRunId;  // continue this run with its stored settings
    bool autoResume = true;              // continue an unfinished run with the same settings (false: start a new one)
    PromptingOptions prompting;          // shots, chat template, system message, multiple-choice mode, template
    GenerationParams generation;         // greedy, seed 0, at most 256 tokens, top-k 40, top-p 0.95, min-p 0.05
    BackendOpenOptions backend;          // threads, context, device, GPU layers, endpoint model and key, engineVersion
    bool allowCodeExecution = false;     // code_exec scorers may run the generated programs
    // Items in flight at once: the engine batches them (continuous batching), an endpoint gets
    // that many requests at once. 0: the backend chooses (engine_backend.h; an endpoint: 1).
    // Outputs and scores equal a sequential run's, so it is not part of the resume key.
    int parallel = 0;
};

// What a run is about, resolved from the settings (and from the run to resume).
struct SuiteRunPlan {
    std::string modelRef;
    SuiteRecord suite;
    std::vector<SuiteItem> items;
};

struct SuiteRunEvents {
    std::function<void()> loading;                     // before the model is opened
    std::function<void(const PreparedRun&)> prepared;  // the run is created or picked, before its first item
    std::function<void(const RunProgress&)> progress;  // after every stored item (SuiteRunner's callback)
};

struct SuiteRunDone {
    SuiteRecord suite;
    PreparedRun prepared;
    RunOutcome outcome;   // status completed, or cancelled (resumable) when `stop` was requested
    RunSummary summary;   // of every item stored, earlier sessions included
};

// Finds the suite, its items and the model: from the settings, or from the run to resume (a suite
// named too must be that run's). BadInput for what does not exist, Storage for a failed read.
ServiceResult<SuiteRunPlan> planSuiteRun(Database& db, const SuiteRunSettings& settings);

// The runner's request for a plan: exposed so that tests compare what two callers ask for.
RunRequest makeRunRequest(const SuiteRunSettings& settings, const SuiteRunPlan& plan);

// Opens the model (ModelOpen; Cancelled when `stop` was requested while loading), prepares the
// run (BadInput: a run that cannot be continued), evaluates it storing every item as it finishes
// (Storage when the database refuses a write) and summarizes what is stored.
ServiceResult<SuiteRunDone> executeSuiteRun(Database& db, const SuiteRunSettings& settings, const SuiteRunPlan& plan,
                                            const SuiteRunEvents& events, std::stop_token stop);

// planSuiteRun, then executeSuiteRun.
ServiceResult<SuiteRunDone> runSuite(Database& db, const SuiteRunSettings& settings, const SuiteRunEvents& events,
                                     std::stop_token stop);

}  // namespace verdict::core
