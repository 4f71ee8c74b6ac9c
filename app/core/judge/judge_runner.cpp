#include "core/judge/judge_runner.h"

#include "core/judge/judge_verdict.h"
#include "core/run/backend_factory.h"
#include "core/stats/paired_comparison.h"
#include "core/store/run_repository.h"
#include "core/store/suite_repository.h"
#include "util/sha256.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

namespace verdict::core {
namespace {

// The wording is ours; the method (a judge told to ignore order and length, reasoning before a
// bracketed verdict, [[A]] / [[B]] / [[C]], "Rating: [[n]]" on 1-10) is MT-Bench's (Zheng et al.
// 2023, FastChat fastchat/llm_judge/data/judge_prompts.jsonl: pair-v2, single-v1, single-math-v1).
const char* kPairwisePrompt =
    "You are comparing two AI assistants' answers to the same question from a user. Decide which "
    "answer serves the user better. Weigh correctness first, then how helpful, relevant, complete "
    "and clear each answer is. The order in which the answers appear, their length and the "
    "assistants' names must not sway you.\n\n"
    "First compare the answers in a few sentences. Then give your verdict on the last line, as "
    "exactly one of these markers: [[A]] when assistant A's answer is better, [[B]] when assistant "
    "B's answer is better, [[C]] when neither is better.\n\n"
    "<|The Start of the Question|>\n{question}\n<|The End of the Question|>\n\n"
    "<|The Start of Assistant A's Answer|>\n{answer_a}\n<|The End of Assistant A's Answer|>\n\n"
    "<|The Start of Assistant B's Answer|>\n{answer_b}\n<|The End of Assistant B's Answer|>\n";

const char* kRubricPrompt =
    "You are grading an AI assistant's answer to a question from a user, on a scale of 1 (useless "
    "or wrong) to 10 (excellent), following the rubric below.\n\n"
    "[Rubric]\n{rubric}\n\n"
    "First explain your grade in a few sentences. Then give it on the last line in double square "
    "brackets, for example: Rating: [[6]]\n\n"
    "<|The Start of the Question|>\n{question}\n<|The End of the Question|>\n\n"
    "<|The Start of the Assistant's Answer|>\n{answer}\n<|The End of the Assistant's Answer|>\n";

const char* kReferencePrompt =
    "You are grading an AI assistant's answer to a question from a user, on a scale of 1 (useless "
    "or wrong) to 10 (excellent). A reference answer is given: judge correctness against it first, "
    "then follow the rubric below.\n\n"
    "[Rubric]\n{rubric}\n\n"
    "First compare the answer with the reference and explain your grade in a few sentences. Then "
    "give it on the last line in double square brackets, for example: Rating: [[6]]\n\n"
    "<|The Start of the Question|>\n{question}\n<|The End of the Question|>\n\n"
    "<|The Start of the Reference Answer|>\n{reference}\n<|The End of the Reference Answer|>\n\n"
    "<|The Start of the Assistant's Answer|>\n{answer}\n<|The End of the Assistant's Answer|>\n";

const char* kGeneralRubric =
    "Correct and complete answers to what was asked score highest; mistakes, invented facts and "
    "ignored parts of the question lower the grade; padding earns nothing.";

// The question as the judge should read it: the plain prompt, the conversation's turns, or a
// multi-turn item's user turns, each labelled.
std::string questionOf(const SuiteItem& item) {
    if (item.turns.size() > 1) {
        std::string text;
        for (size_t k = 0; k < item.turns.size(); ++k)
            text += (k ? "\n\n" : "") + std::string("[Turn ") + std::to_string(k + 1) + "]\n" + item.turns[k];
        return text;
    }
    if (!item.prompt.empty() || item.messages.empty()) return item.prompt;
    if (item.messages.size() == 1) return item.messages.front().content;
    std::string text;
    for (const ChatTurn& t : item.messages) text += "[" + t.role + "]\n" + t.content + "\n\n";
    return text;
}

// A multi-turn item's answers, one per turn (details.turns); empty when not all are there.
std::vector<std::string> turnAnswers(const RunItemRecord& r, const SuiteItem& item) {
    std::vector<std::string> out;
    const auto it = r.details.find("turns");
    if (item.turns.size() <= 1 || it == r.details.end() || !it->is_array()) return out;
    for (const auto& t : *it) {
        if (!t.is_object() || !t.contains("output") || !t["output"].is_string()) return {};
        out.push_back(t["output"].get<std::string>());
    }
    return out;
}

// A run's answer as the judge should read it: the output, or for a multi-turn item every turn's
// answer, labelled like the question.
std::string answerOf(const RunItemRecord& r, const SuiteItem& item) {
    const std::vector<std::string> turns = turnAnswers(r, item);
    if (turns.empty()) return r.output;
    std::string text;
    for (size_t k = 0; k < turns.size(); ++k)
        text += (k ? "\n\n" : "") + std::string("[Turn ") + std::to_string(k + 1) + "]\n" + turns[k];
    return text;
}

PairwiseChoice other(PairwiseChoice c) {
    if (c == PairwiseChoice::A) return PairwiseChoice::B;
    if (c == PairwiseChoice::B) return PairwiseChoice::A;
    return c;
}

JudgedWinner toWinner(PairwiseChoice c) {
    return c == PairwiseChoice::A ? JudgedWinner::A : c == PairwiseChoice::B ? JudgedWinner::B : JudgedWinner::Tie;
}
PairwiseChoice toChoice(JudgedWinner w) {
    return w == JudgedWinner::A ? PairwiseChoice::A : w == JudgedWinner::B ? PairwiseChoice::B : PairwiseChoice::Tie;
}

struct Task {
    int64_t itemIdx = 0;
    std::string position;  // pairwise: "ab" / "ba"
    int64_t run = 0;       // rubric: the run graded
    int turn = 0;          // 0: the item as a whole; k: the answers to turn k of a multi-turn item
};

// "[Turn 1]\n...\n\n[Turn 2]\n..." over the first `upTo` texts.
std::string labelledTurns(const std::vector<std::string>& texts, size_t upTo) {
    std::string out;
    for (size_t k = 0; k < std::min(upTo, texts.size()); ++k)
        out += (k ? "\n\n" : "") + std::string("[Turn ") + std::to_string(k + 1) + "]\n" + texts[k];
    return out;
}

}  // namespace

const std::string& builtinJudgePrompt(JudgeMode mode) {
    static const std::string pairwise = kPairwisePrompt, rubric = kRubricPrompt, reference = kReferencePrompt;
    return mode == JudgeMode::Rubric ? rubric : mode == JudgeMode::Reference ? reference : pairwise;
}

std::string fillJudgePrompt(std::string_view tmpl, const std::map<std::string, std::string>& values) {
    std::string out;
    out.reserve(tmpl.size());
    size_t i = 0;
    while (i < tmpl.size()) {
        if (tmpl[i] == '{') {
            const size_t close = tmpl.find('}', i + 1);
            if (close != std::string_view::npos) {
                auto it = values.find(std::string(tmpl.substr(i + 1, close - i - 1)));
                if (it != values.end()) {
                    out += it->second;
                    i = close + 1;
                    continue;
                }
            }
        }
        out += tmpl[i++];
    }
    return out;
}

namespace {

// A small text file whole; errors name it.
Result<std::string> readSmallFile(const std::string& path, const char* what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path + ": cannot read the " + std::string(what)};
    std::string text;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, static_cast<size_t>(in.gcount()));
        if (text.size() > (1u << 20)) return Error{path + ": a " + std::string(what) + " over 1 MiB"};
    }
    return text;
}

}  // namespace

Result<std::string> loadJudgePrompt(const std::string& path, JudgeMode mode) {
    auto text = readSmallFile(path, "judge prompt template");
    if (!text) return text.error();
    const std::vector<const char*> needed = mode == JudgeMode::Pairwise ? std::vector<const char*>{"{answer_a}", "{answer_b}"}
                                                                        : std::vector<const char*>{"{answer}"};
    for (const char* n : needed)
        if (text->find(n) == std::string::npos)
            return Error{path + ": the template has no " + n + " placeholder (" + std::string(judgeModeName(mode)) + " mode)"};
    return text;
}

Result<std::map<std::string, std::string>> loadRubrics(const std::string& path) {
    auto read = readSmallFile(path, "rubric file");
    if (!read) return read.error();
    const std::string& text = *read;
    std::map<std::string, std::string> out;
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            if (!v.is_string()) return Error{path + ": rubric for category '" + k + "' is not a string"};
            out[k] = v.get<std::string>();
        }
        if (out.empty()) return Error{path + ": the JSON object holds no rubric"};
        return out;
    }
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Error{path + ": the rubric file is empty"};
    out["*"] = text;
    return out;
}

std::string rubricFor(const std::map<std::string, std::string>& rubrics, const std::string& category) {
    if (auto it = rubrics.find(category); it != rubrics.end()) return it->second;
    if (auto it = rubrics.find("*"); it != rubrics.end()) return it->second;
    return kGeneralRubric;
}

Result<JudgeItems> judgeableItems(Database& db, int64_t runA, int64_t runB) {
    if (runA == runB) return Error{"judge: run A and run B are the same run (" + std::to_string(runA) + ")"};
    RunRepository runs(db);
    auto a = runs.find(runA);
    if (!a) return a.error();
    if (!*a) return Error{"judge: no run " + std::to_string(runA)};
    auto b = runs.find(runB);
    if (!b) return b.error();
    if (!*b) return Error{"judge: no run " + std::to_string(runB)};
    if ((*a)->suiteId != (*b)->suiteId)
        return Error{"judge: runs " + std::to_string(runA) + " and " + std::to_string(runB) + " ran different suites"};
    auto itemsA = runs.items(runA);
    if (!itemsA) return itemsA.error();
    auto itemsB = runs.items(runB);
    if (!itemsB) return itemsB.error();
    auto suiteItems = SuiteRepository(db).items((*a)->suiteId);
    if (!suiteItems) return suiteItems.error();

    std::map<int64_t, const RunItemRecord*> byIdxB;
    for (const RunItemRecord& r : *itemsB) byIdxB[r.itemIdx] = &r;
    JudgeItems out;
    std::set<int64_t> seen;
    for (const RunItemRecord& r : *itemsA) {
        seen.insert(r.itemIdx);
        auto it = byIdxB.find(r.itemIdx);
        if (it == byIdxB.end() || !r.error.empty() || !it->second->error.empty() || r.itemIdx < 0 ||
            r.itemIdx >= static_cast<int64_t>(suiteItems->size())) {
            ++out.missing;
            continue;
        }
        const SuiteItem& item = (*suiteItems)[static_cast<size_t>(r.itemIdx)];
        JudgeItem ji{r.itemIdx, item.id, item.category, questionOf(item), answerOf(r, item),
                     answerOf(*it->second, item), item.references, {}, {}, {}};
        // Per-turn judging needs every turn's answer from both runs.
        auto a = turnAnswers(r, item), b = turnAnswers(*it->second, item);
        if (item.turns.size() > 1 && a.size() == item.turns.size() && b.size() == item.turns.size()) {
            ji.turns = item.turns;
            ji.turnAnswersA = std::move(a);
            ji.turnAnswersB = std::move(b);
        }
        out.items.push_back(std::move(ji));
    }
    for (const RunItemRecord& r : *itemsB)
        if (!seen.count(r.itemIdx)) ++out.missing;
    return out;
}

std::string blindPosition(const std::string& person, int64_t runA, int64_t runB, int64_t itemIdx) {
    const auto [lo, hi] = std::minmax(runA, runB);
    const std::string h = util::sha256Hex(person + "\n" + std::to_string(lo) + "\n" + std::to_string(hi) + "\n" +
                                          std::to_string(itemIdx));
    const bool loLeft = (h[0] - '0') % 2 == 0;  // a hex digit's parity: '0'-'9' and 'a'-'f' both alternate
    return loLeft == (runA == lo) ? "ab" : "ba";
}

Result<JudgeRunReport> judgeRuns(Database& db, int64_t runA, int64_t runB, const JudgeRunOptions& options,
                                 const JudgeOpener& openJudge, const std::function<void(const JudgeRunProgress&)>& progress,
                                 const std::atomic<bool>* cancel) {
    if (options.mode == JudgeMode::Human) return Error{"judge: a person judges through `verdict judge --human` or the window"};
    if (options.judgeRef.empty()) return Error{"judge: no judge model given"};
    auto judgeable = judgeableItems(db, runA, runB);
    if (!judgeable) return judgeable.error();
    JudgeRunReport report;
    report.itemsMissing = judgeable->missing;
    std::map<int64_t, const JudgeItem*> common;
    for (const JudgeItem& it : judgeable->items) {
        if (options.limit && static_cast<int64_t>(common.size()) >= *options.limit) break;
        common[it.itemIdx] = &it;
    }
    report.items = static_cast<int64_t>(common.size());

    // The prompt as stored: the template, and for graded modes the rubrics it will be filled with.
    const std::string tmpl = options.promptTemplate.empty() ? builtinJudgePrompt(options.mode) : options.promptTemplate;
    std::string stored = tmpl;
    if (options.mode != JudgeMode::Pairwise) stored += "\n\n[rubrics]\n" + nlohmann::json(options.rubrics).dump();
    JudgmentRepository repo(db);
    auto hash = repo.addPrompt(options.promptName, options.mode, stored);
    if (!hash) return hash.error();
    report.promptHash = *hash;

    // What is stored already (same judge, mode, prompt) is not asked again.
    std::set<std::tuple<int64_t, int, std::string>> done;  // (item, turn, position) or (item, turn, "run:ID")
    auto collect = [&](int64_t x, std::optional<int64_t> y) -> Result<void> {
        auto list = repo.list(x, y, options.mode);
        if (!list) return list.error();
        for (const JudgmentRecord& j : *list)
            if (j.judge == options.judgeRef && j.promptHash == *hash)
                done.insert({j.itemIdx, j.turn, y ? j.position : "run:" + std::to_string(x)});
        return {};
    };
    std::vector<Task> tasks;
    if (options.mode == JudgeMode::Pairwise) {
        if (auto r = collect(runA, runB); !r) return r.error();
        for (const auto& [idx, c] : common)
            for (int turn = 0; turn <= static_cast<int>(c->turns.size()); ++turn)
                for (const char* pos : {"ab", "ba"}) {
                    if (done.count({idx, turn, pos})) ++report.alreadyStored;
                    else tasks.push_back({idx, pos, 0, turn});
                }
    } else {
        if (auto r = collect(runA, std::nullopt); !r) return r.error();
        if (auto r = collect(runB, std::nullopt); !r) return r.error();
        for (const auto& [idx, c] : common) {
            if (options.mode == JudgeMode::Reference && c->references.empty()) continue;  // nothing to grade against
            for (int turn = 0; turn <= static_cast<int>(c->turns.size()); ++turn)
                for (int64_t run : {runA, runB}) {
                    if (done.count({idx, turn, "run:" + std::to_string(run)})) ++report.alreadyStored;
                    else tasks.push_back({idx, "", run, turn});
                }
        }
    }

    JudgeRunProgress prog;
    prog.total = static_cast<int64_t>(tasks.size());
    prog.skipped = report.alreadyStored;
    if (progress) progress(prog);
    if (tasks.empty()) return report;

    // Judges: one per worker. The first must open; later ones that fail just mean fewer workers.
    // A local model is one engine with one context: one worker, whatever was asked.
    const int asked = isEndpointRef(options.judgeRef) ? options.concurrency : 1;
    const int wanted = std::clamp(asked, 1, static_cast<int>(std::min<size_t>(tasks.size(), 64)));
    std::vector<std::unique_ptr<ModelBackend>> judges;
    for (int w = 0; w < wanted; ++w) {
        auto j = openJudge();
        if (!j) {
            if (judges.empty()) return Error{"judge " + options.judgeRef + ": " + j.error().message};
            break;
        }
        judges.push_back(std::move(*j));
    }

    std::mutex mu;  // guards next, prog, report, the database
    size_t next = 0;
    auto work = [&](ModelBackend& judge) {
        for (;;) {
            Task t;
            {
                std::lock_guard<std::mutex> lock(mu);
                if (next >= tasks.size() || (cancel && cancel->load())) return;
                t = tasks[next++];
            }
            const JudgeItem& c = *common.at(t.itemIdx);
            // Turn k of a multi-turn item: the conversation up to turn k, the judge told which
            // answers count; turn 0: the whole item (every turn of a conversation).
            std::string question = c.question, answerA = c.answerA, answerB = c.answerB;
            if (t.turn > 0) {
                const auto k = static_cast<size_t>(t.turn);
                question = labelledTurns(c.turns, k);
                if (k > 1) question += "\n\n(Judge the answers to turn " + std::to_string(k) + "; the earlier turns are context.)";
                answerA = labelledTurns(c.turnAnswersA, k);
                answerB = labelledTurns(c.turnAnswersB, k);
            }
            std::map<std::string, std::string> values = {{"question", question}};
            if (options.mode == JudgeMode::Pairwise) {
                const bool aFirst = t.position == "ab";
                values["answer_a"] = aFirst ? answerA : answerB;
                values["answer_b"] = aFirst ? answerB : answerA;
            } else {
                values["answer"] = t.run == runA ? answerA : answerB;
                values["rubric"] = rubricFor(options.rubrics, c.category);
                // MT-Bench gives one reference per turn: turn k gets the k-th, the whole
                // conversation all of them, labelled like the turns.
                if (t.turn == 0 && !c.turns.empty() && c.references.size() > 1) {
                    values["reference"] = labelledTurns(c.references, c.references.size());
                } else {
                    const size_t k = static_cast<size_t>(t.turn);
                    values["reference"] = c.references.empty() ? "" : c.references[k > 0 && k <= c.references.size() ? k - 1 : 0];
                }
            }
            Prompt prompt;
            prompt.text = fillJudgePrompt(tmpl, values);
            prompt.messages = {{"user", prompt.text}};
            const auto t0 = std::chrono::steady_clock::now();
            auto gen = judge.generate(prompt, options.generation,
                                      [cancel](std::string_view) { return !(cancel && cancel->load()); });
            const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

            JudgmentRecord rec;
            rec.runA = options.mode == JudgeMode::Pairwise ? runA : t.run;
            if (options.mode == JudgeMode::Pairwise) rec.runB = runB;
            rec.itemIdx = t.itemIdx;
            rec.turn = t.turn;
            rec.judge = options.judgeRef;
            rec.mode = options.mode;
            rec.position = t.position;
            rec.promptHash = *hash;
            rec.judgeInput = prompt.text;
            bool unreadable = false;
            if (gen) {
                if (gen->stopReason == "callback") {  // cancelled mid-answer: not a verdict, ask again next time
                    std::lock_guard<std::mutex> lock(mu);
                    ++prog.done;
                    continue;
                }
                rec.judgeOutput = gen->text;
                rec.details = {{"tokens_in", gen->tokensIn}, {"tokens_out", gen->tokensOut},
                               {"stop_reason", gen->stopReason}, {"duration_ms", ms}};
                if (options.mode == JudgeMode::Pairwise) {
                    auto v = parsePairwiseVerdict(gen->text);
                    if (v) rec.winner = toWinner(t.position == "ab" ? *v : other(*v));
                    else rec.error = v.error().message;
                    unreadable = !v;
                } else {
                    auto s = parseRubricScore(gen->text, 1, 10);
                    if (s) rec.score = *s;
                    else rec.error = s.error().message;
                    unreadable = !s;
                }
            }
            std::lock_guard<std::mutex> lock(mu);
            ++prog.done;
            if (!gen && cancel && cancel->load()) continue;  // stopped while loading or sending: asked again next time
            if (!gen) {
                if (report.failedCalls++ == 0)
                    report.firstFailure = "item " + std::to_string(t.itemIdx) + ": " + gen.error().message;
            } else {
                ++report.calls;
                if (unreadable) {
                    ++report.unreadable;
                    ++prog.unreadable;
                }
                if (auto r = repo.add(rec); !r && report.failedCalls++ == 0) report.firstFailure = r.error().message;
            }
            if (progress) progress(prog);
        }
    };
    std::vector<std::thread> threads;
    for (size_t w = 1; w < judges.size(); ++w) threads.emplace_back(work, std::ref(*judges[w]));
    work(*judges[0]);
    for (std::thread& t : threads) t.join();
    report.cancelled = cancel && cancel->load();
    return report;
}

Result<JudgeSummaries> summarizeJudgments(Database& db, int64_t runA, int64_t runB) {
    JudgmentRepository repo(db);
    JudgeSummaries out;
    auto pairs = repo.list(runA, runB);
    if (!pairs) return pairs.error();
    auto itemsA = RunRepository(db).items(runA);
    if (!itemsA) return itemsA.error();
    std::map<int64_t, std::string> category;
    for (const RunItemRecord& r : *itemsA) category[r.itemIdx] = r.category;

    // Pairwise and human: group by judge, mode and prompt.
    struct PairGroup {
        PairwiseJudgeSummary s;
        std::map<int64_t, OrderedJudgment> orders;
        std::map<int64_t, std::pair<bool, bool>> seenOrder;  // ab, ba seen
        std::map<int64_t, std::optional<JudgedWinner>> human;
    };
    std::map<std::tuple<std::string, int, std::string, int>, PairGroup> groups;
    for (const JudgmentRecord& j : *pairs) {
        PairGroup& g = groups[{j.judge, static_cast<int>(j.mode), j.promptHash, j.turn}];
        g.s.judge = j.judge;
        g.s.mode = j.mode;
        g.s.turn = j.turn;
        if (j.mode == JudgeMode::Human) {
            g.human[j.itemIdx] = j.winner;
            continue;
        }
        std::optional<PairwiseChoice> c;
        if (j.winner) c = toChoice(*j.winner);
        if (j.position == "ab") {
            g.orders[j.itemIdx].aFirst = c;
            g.seenOrder[j.itemIdx].first = true;
        } else {
            g.orders[j.itemIdx].bFirst = c;
            g.seenOrder[j.itemIdx].second = true;
        }
    }
    for (auto& [key, g] : groups) {
        std::vector<std::optional<PairwiseChoice>> outcomes;
        if (g.s.mode == JudgeMode::Human) {
            for (const auto& [idx, w] : g.human) {
                std::optional<PairwiseChoice> c;
                if (w) c = toChoice(*w);
                if (w == JudgedWinner::BothBad) ++g.s.bothBad;
                g.s.outcomes[idx] = c;
                outcomes.push_back(c);
            }
        } else {
            std::vector<OrderedJudgment> complete;
            for (const auto& [idx, o] : g.orders) {
                const auto& seen = g.seenOrder[idx];
                if (!seen.first || !seen.second) continue;
                complete.push_back(o);
                const auto combined = combineOrders(o).outcome;
                g.s.outcomes[idx] = combined;
                outcomes.push_back(combined);
            }
            g.s.positionBias = positionBias(complete);
        }
        g.s.winRate = winRate(outcomes);
        out.pairwise.push_back(std::move(g.s));
    }
    for (size_t x = 0; x < out.pairwise.size(); ++x)
        for (size_t y = x + 1; y < out.pairwise.size(); ++y) {
            if (out.pairwise[x].turn != out.pairwise[y].turn) continue;  // agreement on the same question
            std::vector<std::pair<std::optional<PairwiseChoice>, std::optional<PairwiseChoice>>> labels;
            for (const auto& [idx, o] : out.pairwise[x].outcomes)
                if (auto it = out.pairwise[y].outcomes.find(idx); it != out.pairwise[y].outcomes.end())
                    labels.emplace_back(o, it->second);
            Kappa k = cohensKappa(labels);
            if (k.n == 0) continue;  // no item where both have a verdict
            out.agreement.push_back({out.pairwise[x].judge, out.pairwise[y].judge, out.pairwise[x].turn, k});
        }

    // Rubric and reference grades: each run alone, paired by item.
    std::map<std::tuple<std::string, int, std::string, int>, std::pair<std::map<int64_t, std::optional<double>>,
                                                                        std::map<int64_t, std::optional<double>>>> grades;
    for (int side = 0; side < 2; ++side) {
        for (JudgeMode mode : {JudgeMode::Rubric, JudgeMode::Reference}) {
            auto list = repo.list(side == 0 ? runA : runB, std::nullopt, mode);
            if (!list) return list.error();
            for (const JudgmentRecord& j : *list) {
                auto& g = grades[{j.judge, static_cast<int>(j.mode), j.promptHash, j.turn}];
                (side == 0 ? g.first : g.second)[j.itemIdx] = j.score;
            }
        }
    }
    for (const auto& [key, g] : grades) {
        RubricJudgeSummary s;
        s.judge = std::get<0>(key);
        s.mode = static_cast<JudgeMode>(std::get<1>(key));
        s.turn = std::get<3>(key);
        std::map<std::string, std::vector<int64_t>> byCategory;
        std::set<int64_t> all;
        for (const auto& [idx, v] : g.first) all.insert(idx);
        for (const auto& [idx, v] : g.second) all.insert(idx);
        for (int64_t idx : all) byCategory[category.count(idx) ? category[idx] : ""].push_back(idx);
        auto summarize = [&](const std::string& name, const std::vector<int64_t>& idxs) {
            RubricCategory c;
            c.category = name;
            double sumA = 0, sumB = 0;
            std::vector<double> diffs;
            for (int64_t idx : idxs) {
                auto ia = g.first.find(idx), ib = g.second.find(idx);
                std::optional<double> sa, sb;
                if (ia != g.first.end()) {
                    if (ia->second) { ++c.a.graded; sumA += *ia->second; sa = ia->second; }
                    else ++c.a.unreadable;
                }
                if (ib != g.second.end()) {
                    if (ib->second) { ++c.b.graded; sumB += *ib->second; sb = ib->second; }
                    else ++c.b.unreadable;
                }
                if (sa && sb) diffs.push_back(*sa - *sb);
            }
            if (c.a.graded) c.a.mean = sumA / static_cast<double>(c.a.graded);
            if (c.b.graded) c.b.mean = sumB / static_cast<double>(c.b.graded);
            c.pairs = static_cast<int64_t>(diffs.size());
            if (!diffs.empty()) {
                double sum = 0;
                for (double d : diffs) sum += d;
                c.meanDifference = sum / static_cast<double>(diffs.size());
                c.differenceCi = pairedBootstrapMean(diffs);
            }
            return c;
        };
        s.categories.push_back(summarize("", std::vector<int64_t>(all.begin(), all.end())));
        if (byCategory.size() > 1 || (byCategory.size() == 1 && !byCategory.begin()->first.empty()))
            for (const auto& [name, idxs] : byCategory) s.categories.push_back(summarize(name, idxs));
        out.rubric.push_back(std::move(s));
    }
    return out;
}

std::string describeJudgeSummaries(const JudgeSummaries& s) {
    std::string out;
    auto add = [&out](const char* f, auto... v) {
        const int n = std::snprintf(nullptr, 0, f, v...);
        if (n <= 0) return;
        std::string piece(static_cast<size_t>(n), '\0');
        std::snprintf(piece.data(), piece.size() + 1, f, v...);
        out += piece;
    };
    auto mean = [](const std::optional<double>& m) {
        if (!m) return std::string("-");
        char b[32];
        std::snprintf(b, sizeof b, "%.2f", *m);
        return std::string(b);
    };
    if (s.pairwise.empty() && s.rubric.empty()) return "no judgments yet (verdict judge A B --judge MODEL|URL, or --human NAME)\n";
    for (const auto& p : s.pairwise) {
        const WinRate& w = p.winRate;
        add("%s (%s%s): %lld items: A won %lld, B won %lld, %lld ties", p.judge.c_str(),
                    std::string(judgeModeName(p.mode)).c_str(), p.turn ? (", turn " + std::to_string(p.turn)).c_str() : "",
                    static_cast<long long>(w.items),
                    static_cast<long long>(w.winsA), static_cast<long long>(w.winsB), static_cast<long long>(w.ties));
        if (p.bothBad) add(" (%lld both bad)", static_cast<long long>(p.bothBad));
        if (w.errors) add(", %lld unreadable", static_cast<long long>(w.errors));
        if (w.winRateA)
            add("\n  A's win rate %.1f%% of %lld decided (95%% CI %.1f-%.1f%%, ties apart)", 100 * *w.winRateA,
                        static_cast<long long>(w.decided), 100 * w.winRateACi.lo, 100 * w.winRateACi.hi);
        if (p.positionBias.flipRate)
            add("\n  position bias: %.1f%% of %lld items flipped with the order (%lld favoured the first shown, %lld the second)",
                        100 * *p.positionBias.flipRate, static_cast<long long>(p.positionBias.usable),
                        static_cast<long long>(p.positionBias.favoursFirst), static_cast<long long>(p.positionBias.favoursSecond));
        add("\n");
    }
    for (const auto& r : s.rubric) {
        add("%s (%s grades, 1-10%s):\n", r.judge.c_str(), std::string(judgeModeName(r.mode)).c_str(),
            r.turn ? (", turn " + std::to_string(r.turn)).c_str() : "");
        for (const auto& c : r.categories) {
            add("  %-16s A %s  B %s", c.category.empty() ? "all" : c.category.c_str(), mean(c.a.mean).c_str(),
                mean(c.b.mean).c_str());
            if (c.meanDifference)
                add("  A-B %+.2f (95%% CI %+.2f to %+.2f, %lld pairs)", *c.meanDifference, c.differenceCi.lo,
                            c.differenceCi.hi, static_cast<long long>(c.pairs));
            if (c.a.unreadable + c.b.unreadable)
                add("  %lld unreadable", static_cast<long long>(c.a.unreadable + c.b.unreadable));
            add("\n");
        }
    }
    for (const auto& a : s.agreement)
        if (a.kappa.kappa)
            add("agreement %s vs %s%s: kappa %.2f (95%% CI %.2f to %.2f) over %lld items\n", a.judge1.c_str(),
                        a.judge2.c_str(), a.turn ? (" (turn " + std::to_string(a.turn) + ")").c_str() : "", *a.kappa.kappa,
                        a.kappa.ci.lo, a.kappa.ci.hi, static_cast<long long>(a.kappa.n));
    return out;
}

Result<RankedRuns> rankRuns(Database& db, const std::vector<int64_t>& runs, const std::optional<std::string>& judge,
                            int resamples, uint64_t seed) {
    if (runs.size() < 2) return Error{"rank: give at least two runs"};
    if (runs.size() > 64) return Error{"rank: at most 64 runs"};
    RunRepository repo(db);
    std::optional<int64_t> suite;
    for (size_t i = 0; i < runs.size(); ++i) {
        for (size_t j = 0; j < i; ++j)
            if (runs[j] == runs[i]) return Error{"rank: run " + std::to_string(runs[i]) + " is given twice"};
        auto r = repo.find(runs[i]);
        if (!r) return r.error();
        if (!*r) return Error{"rank: no run " + std::to_string(runs[i])};
        if (suite && *suite != (*r)->suiteId) return Error{"rank: the runs did not all run the same suite"};
        suite = (*r)->suiteId;
    }
    RankedRuns out;
    out.runs = runs;
    std::set<std::string> judges;
    std::vector<Comparison> comparisons;
    for (size_t i = 0; i < runs.size(); ++i)
        for (size_t j = i + 1; j < runs.size(); ++j) {
            auto sum = summarizeJudgments(db, runs[i], runs[j]);
            if (!sum) return sum.error();
            for (const PairwiseJudgeSummary& s : sum->pairwise) {
                if ((judge && s.judge != *judge) || s.turn != 0) continue;  // whole items only
                judges.insert(s.judge);
                for (const auto& [item, outcome] : s.outcomes) {
                    if (!outcome) {
                        ++out.unreadable;
                        continue;
                    }
                    const double score = *outcome == PairwiseChoice::A ? 1.0 : *outcome == PairwiseChoice::B ? 0.0 : 0.5;
                    comparisons.push_back({static_cast<int>(item), static_cast<int>(i), static_cast<int>(j), score});
                }
            }
        }
    out.judges.assign(judges.begin(), judges.end());
    out.comparisons = static_cast<int64_t>(comparisons.size());
    out.strengths = bradleyTerry(static_cast<int>(runs.size()), comparisons, resamples, seed);
    return out;
}

}  // namespace verdict::core
