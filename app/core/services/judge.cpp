#include "core/services/judge.h"

#include "core/version.h"

namespace verdict::core {

namespace {

ServiceError badInput(std::string message) { return {ServiceFailure::BadInput, std::move(message)}; }

}  // namespace

ServiceResult<JudgeRunOptions> prepareJudgeRun(const JudgeRequest& request) {
    if (request.mode == JudgeMode::Human)
        return badInput("a person judges blind (humanJudging / storeHumanVote), not as a judge model's mode");
    if (request.concurrency < 1 || request.concurrency > kMaxJudgeConcurrency)
        return badInput("judge calls in flight must be between 1 and " + std::to_string(kMaxJudgeConcurrency));
    if (request.generation.maxTokens < 1) return badInput("the judge's output limit must be at least 1 token");
    if (request.limit && *request.limit < 1) return badInput("the item limit must be at least 1");
    JudgeRunOptions o;
    o.mode = request.mode;
    o.judgeRef = request.judge.empty() ? std::string() : normalizeModelRef(request.judge);
    o.generation = request.generation;
    o.concurrency = request.concurrency;
    o.limit = request.limit;
    if (!request.promptFile.empty()) {
        auto text = loadJudgePrompt(request.promptFile, request.mode);
        if (!text) return badInput(text.error().message);
        o.promptTemplate = std::move(*text);
        o.promptName = request.promptFile;
    }
    if (!request.rubricFile.empty()) {
        if (request.mode == JudgeMode::Pairwise) return badInput("rubrics go with the rubric and reference modes");
        auto rubrics = loadRubrics(request.rubricFile);
        if (!rubrics) return badInput(rubrics.error().message);
        o.rubrics = std::move(*rubrics);
    }
    return o;
}

BackendOpenOptions judgeBackendOptions(const JudgeRequest& request, const std::atomic<bool>* cancel) {
    BackendOpenOptions bo = request.backend;
    bo.engineVersion = toolVersion();
    bo.cancelLoad = cancel;
    return bo;
}

ServiceResult<JudgeDone> judgeRunPair(Database& db, int64_t runA, int64_t runB, const JudgeRequest& request,
                                      const std::function<void(const JudgeRunProgress&)>& progress,
                                      const std::atomic<bool>* cancel) {
    auto options = prepareJudgeRun(request);
    if (!options) return options.error();
    if (options->judgeRef.empty()) return badInput("no judge given: a GGUF file or an endpoint (\"URL MODEL\")");
    // The runs first, so that what is wrong with them is said as bad input, before a judge loads.
    if (auto items = judgeableItems(db, runA, runB); !items) return badInput(items.error().message);

    const BackendOpenOptions bo = judgeBackendOptions(request, cancel);
    const std::string ref = options->judgeRef;
    int opened = 0, refused = 0;  // judgeRuns opens its judges one after the other, before any worker starts
    const JudgeOpener open = [&]() {
        auto judge = openModelBackend(ref, bo);
        ++(judge ? opened : refused);
        return judge;
    };
    auto report = judgeRuns(db, runA, runB, *options, open, progress, cancel);
    if (!report) {
        if (opened == 0 && refused > 0)
            return ServiceError{cancel && cancel->load() ? ServiceFailure::Cancelled : ServiceFailure::ModelOpen,
                                report.error().message};
        return ServiceError{ServiceFailure::Storage, report.error().message};
    }
    return JudgeDone{std::move(*options), std::move(*report)};
}

bool validJudgeName(const std::string& person) { return !person.empty() && person.size() <= kMaxJudgeNameBytes; }

std::string humanJudgeRef(const std::string& person) { return "human:" + person; }

std::optional<HumanVote> humanVoteOf(const JudgmentRecord& stored) {
    if (!stored.winner) return std::nullopt;
    const bool aLeft = stored.position == "ab";
    switch (*stored.winner) {
    case JudgedWinner::A: return aLeft ? HumanVote::Left : HumanVote::Right;
    case JudgedWinner::B: return aLeft ? HumanVote::Right : HumanVote::Left;
    case JudgedWinner::Tie: return HumanVote::Tie;
    case JudgedWinner::BothBad: return HumanVote::BothBad;
    }
    return std::nullopt;
}

ServiceResult<HumanJudging> humanJudging(Database& db, int64_t runA, int64_t runB, const std::string& person) {
    if (!validJudgeName(person)) return badInput("a person judges under a name of 1 to 200 bytes");
    auto items = judgeableItems(db, runA, runB);
    if (!items) return badInput(items.error().message);
    auto stored = JudgmentRepository(db).list(runA, runB, JudgeMode::Human);
    if (!stored) return ServiceError{ServiceFailure::Storage, stored.error().message};
    HumanJudging out;
    out.items = std::move(items->items);
    out.missing = items->missing;
    const std::string judge = humanJudgeRef(person);
    for (JudgmentRecord& j : *stored)
        if (j.judge == judge) out.votes[j.itemIdx] = std::move(j);  // by id: a later vote of an item wins
    return out;
}

ServiceResult<JudgmentRecord> storeHumanVote(Database& db, int64_t runA, int64_t runB, const std::string& person,
                                             int64_t itemIdx, HumanVote vote) {
    if (!validJudgeName(person)) return badInput("a person judges under a name of 1 to 200 bytes");
    JudgmentRecord rec;
    rec.runA = runA;
    rec.runB = runB;
    rec.itemIdx = itemIdx;
    rec.judge = humanJudgeRef(person);
    rec.mode = JudgeMode::Human;
    rec.position = blindPosition(person, runA, runB, itemIdx);
    const bool aLeft = rec.position == "ab";
    switch (vote) {
    case HumanVote::Left: rec.winner = aLeft ? JudgedWinner::A : JudgedWinner::B; break;
    case HumanVote::Right: rec.winner = aLeft ? JudgedWinner::B : JudgedWinner::A; break;
    case HumanVote::Tie: rec.winner = JudgedWinner::Tie; break;
    case HumanVote::BothBad: rec.winner = JudgedWinner::BothBad; break;
    }
    auto id = JudgmentRepository(db).add(rec);
    if (!id) return ServiceError{ServiceFailure::Storage, id.error().message};
    rec.id = *id;
    return rec;
}

}  // namespace verdict::core
