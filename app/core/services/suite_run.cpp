#include "core/services/suite_run.h"

#include "core/run/suite_bindings.h"
#include "core/store/run_repository.h"

namespace verdict::core {

ServiceResult<SuiteRunPlan> planSuiteRun(Database& db, const SuiteRunSettings& s) {
    SuiteRepository suites(db);
    SuiteRunPlan plan;
    plan.modelRef = s.modelRef;
    std::optional<SuiteRecord> suite;
    if (s.resumeRunId) {
        const std::string id = "run " + std::to_string(*s.resumeRunId);
        auto run = RunRepository(db).find(*s.resumeRunId);
        if (!run) return ServiceError{ServiceFailure::Storage, run.error().message};
        if (!*run) return ServiceError{ServiceFailure::BadInput, id + " does not exist"};
        if (plan.modelRef.empty()) plan.modelRef = (*run)->modelPath;
        auto found = suites.findById((*run)->suiteId);
        if (!found) return ServiceError{ServiceFailure::Storage, found.error().message};
        if (!*found) return ServiceError{ServiceFailure::BadInput, "the suite of " + id + " is missing"};
        suite = **found;
    }
    if (!s.suite.empty()) {
        auto found = suites.find(s.suite);
        if (!found) return ServiceError{ServiceFailure::Storage, found.error().message};
        if (!*found)
            return ServiceError{ServiceFailure::BadInput, "no suite named '" + s.suite + "' (the stored ones: verdict suite list)"};
        if (suite && suite->id != (*found)->id)
            return ServiceError{ServiceFailure::BadInput, "run " + std::to_string(*s.resumeRunId) + " evaluated suite '" +
                                                              suite->name + "', not '" + s.suite + "'"};
        suite = **found;
    }
    if (!suite) return ServiceError{ServiceFailure::BadInput, "no suite chosen"};
    if (plan.modelRef.empty()) return ServiceError{ServiceFailure::BadInput, "no model chosen"};
    auto items = suites.items(suite->id);
    if (!items) return ServiceError{ServiceFailure::Storage, items.error().message};
    plan.suite = std::move(*suite);
    plan.items = std::move(*items);
    return plan;
}

RunRequest makeRunRequest(const SuiteRunSettings& s, const SuiteRunPlan& plan) {
    RunRequest req;
    req.suite = plan.suite;
    req.items = plan.items;
    req.prompting = s.prompting;
    req.prompting.shape = plan.suite.shape;  // the layout of the suite's own shape
    req.generation = s.generation;
    req.limit = s.limit;
    req.resumeRunId = s.resumeRunId;
    req.autoResume = s.autoResume;
    return req;
}

ServiceResult<SuiteRunDone> executeSuiteRun(Database& db, const SuiteRunSettings& s, const SuiteRunPlan& plan,
                                            const SuiteRunEvents& events, std::stop_token stop) {
    if (events.loading) events.loading();
    BackendOpenOptions bo = s.backend;
    bo.parallel = s.parallel;
    auto backend = openModelBackend(plan.modelRef, bo);
    if (!backend) {
        if (stop.stop_requested()) return ServiceError{ServiceFailure::Cancelled, "cancelled while loading the model"};
        return ServiceError{ServiceFailure::ModelOpen, backend.error().message};
    }
    ScorerOptions so;
    so.allowCodeExecution = s.allowCodeExecution;
    SuiteRunner runner(db, **backend, makeSuitePromptRenderer(), makeRegistryScorer(so));
    if (events.progress) runner.setProgressCallback(events.progress);
    runner.setParallel((*backend)->maxConcurrentCalls());
    auto prepared = runner.prepare(makeRunRequest(s, plan));
    if (!prepared) return ServiceError{ServiceFailure::BadInput, prepared.error().message};
    if (events.prepared) events.prepared(*prepared);
    auto outcome = runner.execute(*prepared, stop);
    if (!outcome) return ServiceError{ServiceFailure::Storage, outcome.error().message};
    auto stored = RunRepository(db).items(prepared->run.id);
    if (!stored) return ServiceError{ServiceFailure::Storage, stored.error().message};
    return SuiteRunDone{plan.suite, std::move(*prepared), std::move(*outcome), summarizeRun(*stored)};
}

ServiceResult<SuiteRunDone> runSuite(Database& db, const SuiteRunSettings& s, const SuiteRunEvents& events,
                                     std::stop_token stop) {
    auto plan = planSuiteRun(db, s);
    if (!plan) return plan.error();
    return executeSuiteRun(db, s, *plan, events, stop);
}

}  // namespace verdict::core
