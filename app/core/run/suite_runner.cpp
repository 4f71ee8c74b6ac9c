#include "core/run/suite_runner.h"

#include "core/judge/judge_verdict.h"
#include "core/score/mc_loglik.h"
#include "core/score/scorer.h"
#include "core/store/model_repository.h"
#include "core/store/run_repository.h"
#include "util/sha256.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

namespace verdict::core {

namespace {

// A multi-turn item's per-turn references (metadata.turn_references, checked at import): the
// accepted answers of turn k, empty when turn k is not scored.
std::vector<std::string> turnReferences(const SuiteItem& item, size_t k) {
    auto it = item.metadata.find("turn_references");
    if (it == item.metadata.end() || !it->is_array() || k >= it->size()) return {};
    const nlohmann::json& v = (*it)[k];
    if (v.is_string()) return {v.get<std::string>()};
    std::vector<std::string> out;
    if (v.is_array())
        for (const auto& e : v)
            if (e.is_string()) out.push_back(e.get<std::string>());
    return out;
}

bool hasTurnReferences(const SuiteItem& item) {
    auto it = item.metadata.find("turn_references");
    return it != item.metadata.end() && it->is_array();
}

// The answer part of a turn's text (reasoning skipped, as for a whole item's output).
std::string answerOf(const std::string& text) {
    auto part = judgeAnswerPart(text);
    if (!part) return {};
    const size_t first = part->find_first_not_of(" \t\r\n");
    return first == std::string_view::npos ? std::string() : std::string(part->substr(first));
}

}  // namespace
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// "cpu" of "cpu (AMD EPYC ..., 8 threads)", "cuda:0" of "cuda:0 (NVIDIA H200)" (core/run/device_check.h).
std::string deviceIdOf(const std::string& device) { return device.substr(0, device.find(' ')); }

// Scored by log-likelihood over its choices (a function-calling item never is, whatever its shape).
bool scoredByLoglik(const SuiteItem& item, const PromptingOptions& options) {
    return !item.expectedCalls && isLoglikItem(item, options);
}

// A run continues only on the device its items were measured on (threads may differ).
bool sameDevice(const RunRecord& run, const BackendInfo& info) {
    return deviceIdOf(run.device) == deviceIdOf(info.device);
}

}  // namespace

nlohmann::json GenerationParams::toJson() const {
    return {{"max_tokens", maxTokens}, {"temperature", temperature}, {"top_k", topK},
            {"top_p", topP},           {"min_p", minP},              {"repeat_penalty", repeatPenalty},
            {"stop", stop}};
}

Result<GenerationParams> generationParamsFromJson(const nlohmann::json& j, uint64_t seed) {
    if (!j.is_object()) return Error{"generation parameters: expected a JSON object"};
    GenerationParams g;
    try {
        g.maxTokens = j.value("max_tokens", g.maxTokens);
        g.temperature = j.value("temperature", g.temperature);
        g.topK = j.value("top_k", g.topK);
        g.topP = j.value("top_p", g.topP);
        g.minP = j.value("min_p", g.minP);
        g.repeatPenalty = j.value("repeat_penalty", g.repeatPenalty);
        g.stop = j.value("stop", g.stop);
    } catch (const nlohmann::json::exception& e) {
        return Error{std::string("generation parameters: ") + e.what()};
    }
    g.seed = seed;
    return g;
}

nlohmann::json PromptingOptions::toJson() const {
    nlohmann::json j = {{"shots", shots},   {"shot_seed", shotSeed}, {"chat_template", useChatTemplate},
                        {"system", system}, {"mc_mode", mcMode},     {"shape", shape},
                        {"template", templateText}, {"description", description}};
    if (toolRetries != 0) j["tool_retries"] = toolRetries;
    return j;
}

Result<PromptingOptions> PromptingOptions::fromJson(const nlohmann::json& j) {
    if (!j.is_object()) return Error{"prompting options: expected a JSON object"};
    PromptingOptions o;
    try {
        o.shots = j.value("shots", o.shots);
        o.shotSeed = j.value("shot_seed", o.shotSeed);
        o.useChatTemplate = j.value("chat_template", o.useChatTemplate);
        o.system = j.value("system", o.system);
        o.mcMode = j.value("mc_mode", o.mcMode);
        o.shape = j.value("shape", o.shape);
        o.templateText = j.value("template", o.templateText);
        o.description = j.value("description", o.description);
        o.toolRetries = j.value("tool_retries", o.toolRetries);
    } catch (const nlohmann::json::exception& e) {
        return Error{std::string("prompting options: ") + e.what()};
    }
    if (o.toolRetries < 0 || o.toolRetries > 5) return Error{"prompting options: tool_retries must be 0..5"};
    return o;
}

bool isLoglikItem(const SuiteItem& item, const PromptingOptions& options) {
    if (options.mcMode != "loglik" || item.choices.empty() || !item.gold) return false;
    if (item.scorers.empty()) return true;
    for (const ScorerSpec& s : item.scorers)
        if (isLoglikelihoodScorer(s.name)) return true;
    return false;
}

SuiteRunner::SuiteRunner(Database& db, ModelBackend& backend, PromptRenderer renderer, ItemScorer scorer)
    : m_db(db), m_backend(backend), m_renderer(std::move(renderer)), m_scorer(std::move(scorer)) {}

Result<PreparedRun> SuiteRunner::prepare(const RunRequest& req) {
    if (req.items.empty()) return Error{"suite '" + req.suite.name + "' has no items"};
    if (req.limit && *req.limit <= 0) return Error{"the item limit must be positive"};
    const BackendInfo info = m_backend.info();

    RunRecord rec;
    rec.backend = info.backend;
    rec.modelPath = info.modelPath;
    rec.modelSha256 = info.modelSha256;
    rec.modelBytes = info.modelBytes;
    if (rec.modelSha256.empty() && !info.modelParts.empty()) {
        ModelRepository models(m_db);
        auto id = models.identifyFile(info.modelParts);
        if (!id) return id.error();
        rec.modelId = id->modelId;
        rec.modelSha256 = id->sha256;
        rec.modelBytes = id->bytes;
    }

    RunRepository runs(m_db);
    PreparedRun p;
    p.items = req.items;
    const int64_t pid = static_cast<int64_t>(::getpid());
    const std::string host = hostName();

    std::optional<RunRecord> existing;
    if (req.resumeRunId) {
        auto found = runs.find(*req.resumeRunId);
        if (!found) return found.error();
        if (!*found) return Error{"run " + std::to_string(*req.resumeRunId) + " does not exist"};
        const RunRecord& r = **found;
        const std::string id = "run " + std::to_string(r.id);
        if (r.suiteId != req.suite.id)
            return Error{id + " evaluated suite " + std::to_string(r.suiteId) + ", not '" + req.suite.name + "' (" +
                         std::to_string(req.suite.id) + ")"};
        if (r.backend != rec.backend || r.modelSha256 != rec.modelSha256)
            return Error{id + " was made with " + r.modelPath + " (sha256 " + r.modelSha256.substr(0, 12) +
                         "), not with " + rec.modelPath + " (sha256 " + rec.modelSha256.substr(0, 12) + ")"};
        if (r.engineVersion != info.engineVersion)
            return Error{id + " was made with engine " + r.engineVersion + ", this is " + info.engineVersion};
        if (!sameDevice(r, info))
            return Error{id + " was measured on " + r.device + ", this is " + info.device + ": continue it with --device " +
                         deviceIdOf(r.device) + " (a run's timings come from one device)"};
        existing = r;
    } else {
        rec.suiteId = req.suite.id;
        rec.prompting = req.prompting.toJson();
        rec.generation = req.generation.toJson();
        // An endpoint reached through a provider preset: the preset and the served model, so that
        // `verdict results` can price the run (never the key). Only then: other runs keep their keys.
        // The served model's prices as the catalog gave them now are kept with the run, so that
        // its cost stays what it was when the catalog changes.
        if (!info.provider.empty()) {
            const std::string model = info.modelPath.substr(info.modelPath.find(' ') + 1);
            rec.generation["provider"] = {{"id", info.provider}, {"model", model}};
            for (const auto& price : info.providerPrices)
                if (price.is_object() && price.value("model", std::string()) == model) rec.generation["provider"]["price"] = price;
        }
        const bool templated = req.prompting.useChatTemplate && !info.chatTemplate.empty();
        rec.chatTemplateMode = templated ? "model" : "raw";
        rec.chatTemplate = templated ? info.chatTemplate : std::string();
        rec.chatTemplateHash = templated ? util::sha256Hex(info.chatTemplate) : std::string();
        rec.seed = static_cast<int64_t>(req.generation.seed);
        rec.itemLimit = req.limit;
        rec.nPlanned = std::min<int64_t>(req.limit.value_or(std::numeric_limits<int64_t>::max()), static_cast<int64_t>(req.items.size()));
        rec.engineVersion = info.engineVersion;
        rec.device = info.device;
        rec.sweepId = req.sweepId;
        rec.ownerPid = pid;
        rec.ownerHost = host;
        if (req.autoResume) {
            auto found = runs.findUnfinished(resumeKeyOf(rec));
            if (!found) return found.error();
            // An unfinished run on another device is left alone: this one starts afresh.
            if (*found && sameDevice(**found, info)) existing = *found;
        }
        if (!existing) {
            auto created = runs.create(rec);
            if (!created) return created.error();
            p.run = std::move(*created);
            p.prompting = req.prompting;
            p.generation = req.generation;
        }
    }

    if (existing) {
        if (existing->nPlanned > static_cast<int64_t>(req.items.size()))
            return Error{"run " + std::to_string(existing->id) + " plans " + std::to_string(existing->nPlanned) +
                         " items but the suite has " + std::to_string(req.items.size())};
        auto prompting = PromptingOptions::fromJson(existing->prompting);
        if (!prompting) return Error{"run " + std::to_string(existing->id) + ": " + prompting.error().message};
        auto generation = generationParamsFromJson(existing->generation, static_cast<uint64_t>(existing->seed));
        if (!generation) return Error{"run " + std::to_string(existing->id) + ": " + generation.error().message};
        if (auto r = runs.claim(existing->id, pid, host, req.forceClaim); !r) return r.error();
        auto reread = runs.find(existing->id);
        if (!reread) return reread.error();
        p.run = std::move(**reread);
        p.resumed = true;
        p.prompting = std::move(*prompting);
        p.generation = std::move(*generation);
    }

    auto stored = runs.storedItemIndices(p.run.id);
    if (!stored) return stored.error();
    p.storedBefore = static_cast<int64_t>(stored->size());
    return p;
}

Result<RunOutcome> SuiteRunner::execute(const PreparedRun& p, std::stop_token stop) {
    RunRepository runs(m_db);
    auto storedList = runs.storedItemIndices(p.run.id);
    if (!storedList) return storedList.error();
    const std::set<int64_t> stored(storedList->begin(), storedList->end());
    std::vector<int64_t> pending;
    for (int64_t idx = 0; idx < p.run.nPlanned; ++idx)
        if (!stored.count(idx)) pending.push_back(idx);

    RunProgress progress;
    progress.runId = p.run.id;
    progress.total = p.run.nPlanned;
    progress.done = static_cast<int64_t>(stored.size());
    if (m_progress) m_progress(progress);

    const auto t0 = Clock::now();
    // Stores one evaluated item and reports progress; the database's error when it refuses.
    auto store = [&](RunItemRecord item) -> Result<void> {
        const int64_t idx = item.itemIdx;
        auto saved = runs.appendItem(std::move(item));
        if (!saved) return saved.error();
        ++progress.done;
        ++progress.doneNow;
        if (!saved->error.empty()) ++progress.errorsNow;
        const double secs = msSince(t0) / 1000.0;
        progress.itemsPerSecond = secs > 0 ? static_cast<double>(progress.doneNow) / secs : 0.0;
        if (progress.itemsPerSecond > 0)
            progress.etaSeconds = static_cast<double>(progress.total - progress.done) / progress.itemsPerSecond;
        progress.lastItemIdx = idx;
        progress.lastCorrect = saved->correct;
        if (m_progress) m_progress(progress);
        return {};
    };

    bool cancelled = false;
    std::optional<Error> failure;
    // One item after the other.
    auto runSequential = [&](const std::vector<int64_t>& indices) {
        for (int64_t idx : indices) {
            if (stop.stop_requested()) {
                cancelled = true;
                return;
            }
            std::optional<RunItemRecord> item = evaluate(p, static_cast<size_t>(idx), stop);
            if (!item) {
                cancelled = true;
                return;
            }
            if (auto r = store(std::move(*item)); !r) {
                failure = r.error();
                return;
            }
        }
    };
    // `workers` items in flight, each evaluated on its own thread and stored (in the order they
    // finish, one transaction each) under the lock. A stop abandons the items in flight; a
    // refused write stops the others too.
    auto runParallel = [&](const std::vector<int64_t>& indices, int workers) {
        std::mutex mu;
        size_t next = 0;
        std::stop_source halt;
        std::stop_callback forward(stop, [&halt] { halt.request_stop(); });
        auto work = [&] {
            for (;;) {
                size_t k = 0;
                {
                    std::lock_guard lock(mu);
                    if (halt.stop_requested()) {
                        if (!failure) cancelled = true;
                        return;
                    }
                    if (next >= indices.size()) return;
                    k = next++;
                }
                std::optional<RunItemRecord> item = evaluate(p, static_cast<size_t>(indices[k]), halt.get_token());
                std::lock_guard lock(mu);
                if (!item) {
                    if (!failure) cancelled = true;
                    return;
                }
                if (failure) return;
                if (auto r = store(std::move(*item)); !r) {
                    failure = r.error();
                    halt.request_stop();
                    return;
                }
            }
        };
        std::vector<std::thread> threads;
        for (int w = 1; w < workers; ++w) threads.emplace_back(work);
        work();
        for (std::thread& t : threads) t.join();
    };

    const size_t workers = std::min({static_cast<size_t>(std::max(1, m_parallel)),
                                     static_cast<size_t>(std::max(1, m_backend.maxConcurrentCalls())), pending.size()});
    if (workers <= 1) {
        runSequential(pending);
    } else {
        // Log-likelihood items first, `workers` of them scored together (the engine packs their
        // rows into shared forward passes), then the generated ones in parallel.
        std::vector<int64_t> loglik, generated;
        for (int64_t idx : pending) {
            const SuiteItem& item = p.items[static_cast<size_t>(idx)];
            (scoredByLoglik(item, p.prompting) ? loglik : generated).push_back(idx);
        }
        const bool finished = runLoglik(p, loglik, workers, stop, [&](RunItemRecord rec) {
            if (auto r = store(std::move(rec)); !r) {
                failure = r.error();
                return false;
            }
            return true;
        });
        if (!finished) cancelled = true;
        if (!cancelled && !failure) {
            if (generated.size() > 1) runParallel(generated, static_cast<int>(std::min(workers, generated.size())));
            else runSequential(generated);
        }
    }
    if (failure) {
        (void)runs.finish(p.run.id, RunStatus::Failed, failure->message);
        return *failure;
    }

    const RunStatus status = cancelled ? RunStatus::Cancelled : RunStatus::Completed;
    if (auto r = runs.finish(p.run.id, status, ""); !r) return r.error();
    auto final = runs.find(p.run.id);
    if (!final) return final.error();
    RunOutcome out;
    out.run = std::move(**final);
    out.storedBefore = p.storedBefore;
    out.storedNow = progress.doneNow;
    out.errorsNow = progress.errorsNow;
    return out;
}

SuiteRunner::LoglikPlan SuiteRunner::planLoglik(const PreparedRun& p, size_t index) {
    const SuiteItem& item = p.items[index];
    LoglikPlan plan;
    plan.start = Clock::now();
    RunItemRecord& r = plan.record;
    r.runId = p.run.id;
    r.itemIdx = static_cast<int64_t>(index);
    r.itemId = item.id;
    r.category = item.category;
    auto fail = [&](std::string message) {
        r.error = std::move(message);
        r.durationMs = msSince(plan.start);
        return std::move(plan);
    };
    auto ip = m_renderer(item, index, p.items, p.prompting);
    // A suite-side problem, not the model's: stored unscored.
    if (!ip) return fail("prompt: " + ip.error().message);
    std::vector<std::string> conts = ip->continuations;
    if (conts.empty())
        for (const std::string& c : item.choices) conts.push_back(" " + c);
    if (conts.size() != item.choices.size())
        return fail("prompt: " + std::to_string(conts.size()) + " continuations for " +
                    std::to_string(item.choices.size()) + " choices");
    const int gold = *item.gold;
    if (gold < 0 || gold >= static_cast<int>(conts.size()))
        return fail("gold index " + std::to_string(gold) + " is outside the " + std::to_string(conts.size()) + " choices");
    plan.request = LoglikRequest{std::move(ip->prompt), std::move(conts)};
    return plan;
}

RunItemRecord SuiteRunner::finishLoglik(const PreparedRun& p, size_t index, LoglikPlan plan,
                                        const std::vector<Result<ContinuationScore>>& scores) {
    const SuiteItem& item = p.items[index];
    RunItemRecord& r = plan.record;
    nlohmann::json lps = nlohmann::json::array(), ntoks = nlohmann::json::array(), greedy = nlohmann::json::array();
    std::vector<ChoiceLoglik> scored;
    auto failChoice = [&](size_t k, const std::string& message) {
        r.error = "choice " + std::to_string(k) + ": " + message;
        r.correct = false;
        if (r.prompt.empty()) r.prompt = plan.request->context.text;
        r.details["logprobs"] = lps;
        r.durationMs = msSince(plan.start);
        return std::move(r);
    };
    for (size_t k = 0; k < plan.request->continuations.size(); ++k) {
        if (k >= scores.size()) return failChoice(k, "not scored");  // the backend stopped without saying why
        const Result<ContinuationScore>& s = scores[k];
        if (!s) return failChoice(k, s.error().message);
        if (k == 0) {
            r.prompt = s->context.text;
            r.details["template"] = s->context.templateUsed;
            if (!s->context.note.empty()) r.details["template_note"] = s->context.note;
            r.tokensIn = s->contextTokens;
        }
        r.tokensOut += s->continuationTokens;
        lps.push_back(s->logprob);
        ntoks.push_back(s->continuationTokens);
        greedy.push_back(s->greedy);
        scored.push_back({s->logprob, choiceLength(item.choices[k])});
    }
    // lm-evaluation-harness acc (argmax of the summed logprob), or acc_norm (per character)
    // when the item's mc_loglik scorer asks for {"norm": true}.
    bool useNorm = false;
    for (const ScorerSpec& spec : item.scorers)
        if (isLoglikelihoodScorer(spec.name) && spec.params.is_object() && spec.params.value("norm", false)) useNorm = true;
    const int gold = *item.gold;
    const McLoglikResult m = scoreMcLoglik(scored, gold);
    const int best = useNorm ? m.predNorm : m.pred;
    const bool ok = best == gold;
    r.output = item.choices[static_cast<size_t>(best)];
    r.correct = ok;
    r.scores = nlohmann::json::array({{{"name", "mc_loglik"},
                                       {"score", ok ? 1.0 : 0.0},
                                       {"pass", ok},
                                       {"detail", {{"choice", best}, {"gold", gold}, {"pred", m.pred},
                                                   {"pred_norm", m.predNorm}, {"norm", useNorm}}}}});
    r.details["logprobs"] = lps;
    r.details["continuation_tokens"] = ntoks;
    r.details["greedy"] = greedy;
    r.durationMs = msSince(plan.start);
    return std::move(r);
}

bool SuiteRunner::runLoglik(const PreparedRun& p, const std::vector<int64_t>& indices, size_t group,
                            std::stop_token stop, const std::function<bool(RunItemRecord)>& store) {
    group = std::max<size_t>(group, 1);
    for (size_t begin = 0; begin < indices.size(); begin += group) {
        if (stop.stop_requested()) return false;
        const size_t end = std::min(indices.size(), begin + group);
        std::vector<LoglikPlan> plans;
        std::vector<LoglikRequest> requests;
        std::vector<size_t> asked;  // plans[asked[j]] made requests[j]
        for (size_t k = begin; k < end; ++k) {
            plans.push_back(planLoglik(p, static_cast<size_t>(indices[k])));
            if (plans.back().request) {
                requests.push_back(*plans.back().request);
                asked.push_back(plans.size() - 1);
            }
        }
        std::vector<std::vector<Result<ContinuationScore>>> scores;
        if (!requests.empty()) scores = m_backend.logprobsMany(requests);
        std::vector<std::vector<Result<ContinuationScore>>> byPlan(plans.size());
        for (size_t j = 0; j < asked.size() && j < scores.size(); ++j) byPlan[asked[j]] = std::move(scores[j]);
        for (size_t k = 0; k < plans.size(); ++k) {
            const auto index = static_cast<size_t>(indices[begin + k]);
            RunItemRecord rec = plans[k].request ? finishLoglik(p, index, std::move(plans[k]), byPlan[k])
                                                 : std::move(plans[k].record);
            if (!store(std::move(rec))) return true;
        }
    }
    return true;
}

std::optional<RunItemRecord> SuiteRunner::evaluate(const PreparedRun& p, size_t index, std::stop_token stop) {
    const SuiteItem& item = p.items[index];
    if (scoredByLoglik(item, p.prompting)) {  // a group of one
        std::optional<RunItemRecord> out;
        runLoglik(p, {static_cast<int64_t>(index)}, 1, stop, [&out](RunItemRecord rec) {
            out = std::move(rec);
            return true;
        });
        return out;
    }
    const auto t0 = Clock::now();
    RunItemRecord r;
    r.runId = p.run.id;
    r.itemIdx = static_cast<int64_t>(index);
    r.itemId = item.id;
    r.category = item.category;

    auto ip = m_renderer(item, index, p.items, p.prompting);
    if (!ip) {
        // A suite-side problem, not the model's: stored unscored.
        r.error = "prompt: " + ip.error().message;
        r.durationMs = msSince(t0);
        return r;
    }
    auto noteTemplate = [&](const RenderedPrompt& rp) {
        r.prompt = rp.text;
        r.details["template"] = rp.templateUsed;
        if (!rp.note.empty()) r.details["template_note"] = rp.note;
    };

    if (item.expectedCalls) {
        return evaluateToolItem(p, index, stop, std::move(r), std::move(*ip));
    }
    GenerationParams gp = p.generation;
    gp.seed = p.generation.seed + index;  // per item, so a resumed run draws what a fresh one would
    const auto keepGoing = [&](std::string_view) { return !stop.stop_requested(); };
    auto g = m_backend.generate(ip->prompt, gp, keepGoing);
    // A multi-turn item (MT-Bench): each later user turn is asked after the model's own answers,
    // as one conversation; the item's output is the last answer, every turn's is in details.turns.
    nlohmann::json turns = nlohmann::json::array();
    int64_t tokensIn = 0, tokensOut = 0;
    std::optional<double> firstTtft;
    if (item.turns.size() > 1) {
        SuiteItem step = item;  // the conversation so far, as chat turns
        step.turns.clear();
        step.prompt.clear();
        for (size_t k = 0; g && g->stopReason != "callback"; ++k) {
            turns.push_back({{"turn", k + 1}, {"output", g->text}, {"tokens_in", g->tokensIn},
                             {"tokens_out", g->tokensOut}, {"stop_reason", g->stopReason}});
            // Multi-turn consistency: a turn with references is scored on its own answer (the
            // item's scorers, "contains" when it has none) — accuracy by turn index.
            if (const auto refs = turnReferences(item, k); !refs.empty()) {
                SuiteItem t = item;
                t.turns.clear();
                t.references = refs;
                if (t.scorers.empty()) t.scorers = {{"contains", nlohmann::json::object()}};
                auto ts = m_scorer(t, answerOf(g->text));
                nlohmann::json& turn = turns.back();
                turn["references"] = refs;
                if (!ts) {
                    turn["score_error"] = ts.error().message;
                } else {
                    bool all = !ts->empty();
                    nlohmann::json list = nlohmann::json::array();
                    for (const ItemScore& sc : *ts) {
                        list.push_back({{"name", sc.name}, {"score", sc.score}, {"pass", sc.pass}, {"detail", sc.detail}});
                        all = all && sc.pass;
                    }
                    turn["scores"] = list;
                    turn["correct"] = all;
                }
            }
            tokensIn += g->tokensIn;
            tokensOut += g->tokensOut;
            if (k == 0) firstTtft = g->ttftMs;
            if (k + 1 == item.turns.size()) break;
            step.messages.push_back({"user", item.turns[k]});
            step.messages.push_back({"assistant", g->text});
            step.messages.push_back({"user", item.turns[k + 1]});
            auto sp = m_renderer(step, index, p.items, p.prompting);
            step.messages.pop_back();
            if (!sp) {
                r.error = "prompt: turn " + std::to_string(k + 2) + ": " + sp.error().message;
                r.details["turns"] = turns;
                r.durationMs = msSince(t0);
                return r;
            }
            ip = std::move(sp);
            g = m_backend.generate(ip->prompt, gp, keepGoing);
        }
        if (!turns.empty()) r.details["turns"] = turns;
    }
    if (stop.stop_requested() && (!g || g->stopReason == "callback")) return std::nullopt;
    if (!g) {
        r.prompt = ip->prompt.text;
        r.error = item.turns.size() > 1 ? "turn " + std::to_string(turns.size() + 1) + ": " + g.error().message
                                        : g.error().message;
        r.correct = false;  // the model could not answer (e.g. the prompt does not fit): wrong
        r.durationMs = msSince(t0);
        return r;
    }
    noteTemplate(g->prompt);
    // Reasoning models (Qwen3, DeepSeek-R1: "<think>...</think>"; gpt-oss: harmony channels): what
    // follows the reasoning is the answer, the output scorers see and the run stores; the reasoning
    // is kept in details.reasoning. The split is the judge's (judge_verdict.h judgeAnswerPart).
    // Reasoning that never ended (out of tokens) leaves no answer: scored on "".
    std::string answer = g->text;
    if (auto part = judgeAnswerPart(g->text); !part) {
        r.details["reasoning"] = g->text;
        r.details["reasoning_unended"] = true;
        answer.clear();
    } else if (part->size() != g->text.size()) {
        r.details["reasoning"] = g->text.substr(0, g->text.size() - part->size());
        const size_t first = part->find_first_not_of(" \t\r\n");
        answer = first == std::string_view::npos ? std::string() : std::string(part->substr(first));
    }
    if (!g->reasoning.empty()) r.details["reasoning"] = g->reasoning;  // sent apart (reasoning_content)
    if (g->reasoningTokens) r.details["reasoning_tokens"] = *g->reasoningTokens;
    if (g->cachedTokensIn) r.details["cached_tokens"] = *g->cachedTokensIn;
    if (g->ttfaMs) r.details["ttfa_ms"] = *g->ttfaMs;
    r.output = answer;
    r.tokensIn = turns.empty() ? g->tokensIn : tokensIn;
    r.tokensOut = turns.empty() ? g->tokensOut : tokensOut;
    r.ttftMs = turns.empty() ? g->ttftMs : firstTtft;
    r.decodeTps = g->decodeTps;
    r.details["stop_reason"] = g->stopReason;
    if (item.turns.size() > 1 && hasTurnReferences(item)) {
        // Scored turn by turn above: the item is right when every scored turn is.
        int64_t scored = 0, right = 0;
        bool failed = false;
        for (const auto& t : turns) {
            if (t.contains("score_error")) failed = true;
            if (!t.contains("correct")) continue;
            ++scored;
            right += t["correct"].get<bool>() ? 1 : 0;
        }
        if (failed) {
            for (const auto& t : turns)
                if (t.contains("score_error")) r.error = "scoring: turn " + std::to_string(t["turn"].get<int>()) + ": " +
                                                         t["score_error"].get<std::string>();
        } else if (scored > 0) {
            r.scores.push_back({{"name", "turns"},
                                {"score", double(right) / double(scored)},
                                {"pass", right == scored},
                                {"detail", {{"scored", scored}, {"correct", right}}}});
            r.correct = right == scored;
        }
        r.durationMs = msSince(t0);
        return r;
    }
    auto scores = m_scorer(item, answer);
    if (!scores) {
        r.error = "scoring: " + scores.error().message;  // unscored: the suite's fault, not the model's
    } else {
        bool all = true;
        for (const ItemScore& s : *scores) {
            r.scores.push_back({{"name", s.name}, {"score", s.score}, {"pass", s.pass}, {"detail", s.detail}});
            all = all && s.pass;
        }
        if (!scores->empty()) r.correct = all;
    }
    r.durationMs = msSince(t0);
    return r;
}

}  // namespace verdict::core
