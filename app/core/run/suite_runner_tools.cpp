// Function-calling items of a suite run (see suite_runner.h, "function calling").
//
// The item's tools go with its prompt; the calls that come back (an endpoint's tool_calls, or a
// local model's output read by tool_call_parse.h) are graded against its expected calls
// (tool_call_scorer.h). A multi-step item (tool_results) then gets each call's result back as a
// tool message and goes on — more calls are answered the same way, up to kMaxSteps rounds —
// until it answers in text; that final answer is scored by the item's scorers. Every round is
// kept in details.steps.
#include "core/judge/judge_verdict.h"
#include "core/run/suite_runner.h"
#include "core/score/tool_call_scorer.h"

#include <chrono>

namespace verdict::core {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxSteps = 4;  // rounds of calls answered before the model must answer in text

// The answer part of a text (reasoning skipped), as evaluate() does for other items.
std::string answerText(const std::string& text) {
    auto part = judgeAnswerPart(text);
    if (!part) return {};
    const size_t first = part->find_first_not_of(" \t\r\n");
    return first == std::string_view::npos ? std::string() : std::string(part->substr(first));
}

// What a multi-step item's function returns: its tool_results entry, as text.
std::string toolResultFor(const SuiteItem& item, const std::string& name) {
    auto it = item.toolResults.find(name);
    if (it == item.toolResults.end()) return nlohmann::json{{"error", "no result for '" + name + "' in this test"}}.dump();
    return it->is_string() ? it->get<std::string>() : it->dump();
}

nlohmann::json callsJson(const std::vector<ToolCall>& calls) {
    nlohmann::json out = nlohmann::json::array();
    for (const ToolCall& c : calls) {
        nlohmann::json args = nlohmann::json::parse(c.arguments, nullptr, false);
        out.push_back({{"id", c.id}, {"name", c.name}, {"arguments", args.is_discarded() ? nlohmann::json(c.arguments) : args}});
    }
    return out;
}

nlohmann::json stepJson(const Generation& g) {
    nlohmann::json s = {{"output", g.text},
                        {"calls", callsJson(g.toolCalls)},
                        {"format", g.toolCallFormat},
                        {"tokens_in", g.tokensIn},
                        {"tokens_out", g.tokensOut},
                        {"stop_reason", g.stopReason}};
    if (!g.toolCallProblems.empty()) s["problems"] = g.toolCallProblems;
    return s;
}

}  // namespace

std::optional<RunItemRecord> SuiteRunner::evaluateToolItem(const PreparedRun& p, size_t index, std::stop_token stop,
                                                           RunItemRecord r, ItemPrompt ip) {
    const SuiteItem& item = p.items[index];
    const auto t0 = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
    GenerationParams gp = p.generation;
    gp.seed = p.generation.seed + index;
    const auto keepGoing = [&](std::string_view) { return !stop.stop_requested(); };
    const nlohmann::json expected = expectedCallsToJson(*item.expectedCalls);

    auto g = m_backend.generate(ip.prompt, gp, keepGoing);
    if (stop.stop_requested() && (!g || g->stopReason == "callback")) return std::nullopt;
    if (!g) {
        r.prompt = ip.prompt.text;
        r.error = g.error().message;
        r.correct = false;  // no answer at all: an error of the model's run, counted as wrong
        r.details["tool_error"] = "error";
        r.durationMs = elapsed();
        return r;
    }
    r.prompt = g->prompt.text;
    r.details["template"] = g->prompt.templateUsed;
    if (!g->prompt.note.empty()) r.details["template_note"] = g->prompt.note;
    r.tokensIn = g->tokensIn;
    r.tokensOut = g->tokensOut;
    r.ttftMs = g->ttftMs;
    r.decodeTps = g->decodeTps;
    if (g->ttfaMs) r.details["ttfa_ms"] = *g->ttfaMs;
    if (!g->reasoning.empty()) r.details["reasoning"] = g->reasoning;

    const ToolCallVerdict verdict = scoreToolCalls(item.tools, *item.expectedCalls, g->toolCalls);
    nlohmann::json steps = nlohmann::json::array({stepJson(*g)});
    nlohmann::json callScore = {{"name", "tool_call"},
                                {"score", verdict.pass ? 1.0 : 0.0},
                                {"pass", verdict.pass},
                                {"detail", {{"error", toolCallErrorName(verdict.error)},
                                            {"why", verdict.detail},
                                            {"calls", verdict.calls},
                                            {"expected", expected}}}};
    r.details["tool_calls"] = verdict.calls;
    r.details["tool_call_format"] = g->toolCallFormat;
    if (!g->toolCallProblems.empty()) r.details["tool_call_problems"] = g->toolCallProblems;
    std::string errorClass = toolCallErrorName(verdict.error);

    // Retry behaviour: when a call is malformed as a tool layer would see it (toolCallProblem: an
    // unknown function, arguments that are no JSON object or break the schema), the reason goes
    // back as that call's tool result and the model may call again, up to toolRetries times. The
    // item stays graded on its first attempt; whether a retry recovered is recorded beside it.
    // Calls that are well-formed but wrong (another function, a wrong value) get no feedback: no
    // real tool could tell.
    if (!verdict.pass && p.prompting.toolRetries > 0 && !g->toolCalls.empty()) {
        SuiteItem step = item;
        step.prompt.clear();
        if (step.messages.empty()) step.messages.push_back({"user", item.prompt});
        nlohmann::json attempts = nlohmann::json::array();
        bool recovered = false;
        Generation last = *g;
        for (int k = 0; k < p.prompting.toolRetries; ++k) {
            std::vector<std::optional<std::string>> problems;
            bool any = false;
            for (const ToolCall& c : last.toolCalls) {
                problems.push_back(toolCallProblem(item.tools, c));
                any = any || problems.back().has_value();
            }
            if (!any) break;  // well-formed calls: nothing a tool would object to
            ChatTurn said{"assistant", answerText(last.text)};
            said.toolCalls = last.toolCalls;
            for (size_t c = 0; c < said.toolCalls.size(); ++c)
                if (said.toolCalls[c].id.empty()) said.toolCalls[c].id = "call_r" + std::to_string(k) + "_" + std::to_string(c);
            step.messages.push_back(said);
            for (size_t c = 0; c < said.toolCalls.size(); ++c) {
                const std::string error = problems[c] ? *problems[c] + ". Correct the call and call again."
                                                      : std::string("not run: another call of this turn was invalid");
                ChatTurn result{"tool", nlohmann::json{{"error", error}}.dump()};
                result.toolCallId = said.toolCalls[c].id;
                result.name = said.toolCalls[c].name;
                step.messages.push_back(std::move(result));
            }
            auto sp = m_renderer(step, index, p.items, p.prompting);
            if (!sp) {
                attempts.push_back({{"error", "prompt: " + sp.error().message}});
                break;
            }
            auto next = m_backend.generate(sp->prompt, gp, keepGoing);
            if (stop.stop_requested() && (!next || next->stopReason == "callback")) return std::nullopt;
            if (!next) {
                attempts.push_back({{"error", next.error().message}});
                break;
            }
            r.tokensIn += next->tokensIn;
            r.tokensOut += next->tokensOut;
            const ToolCallVerdict again = scoreToolCalls(item.tools, *item.expectedCalls, next->toolCalls);
            std::string told;
            for (const auto& pr : problems)
                if (pr && told.empty()) told = *pr;
            attempts.push_back({{"told", told},
                                {"calls", again.calls},
                                {"tool_error", toolCallErrorName(again.error)},
                                {"why", again.detail},
                                {"output", next->text}});
            if (again.pass) {
                recovered = true;
                break;
            }
            if (next->toolCalls.empty()) break;  // gave up calling
            last = std::move(*next);
        }
        if (!attempts.empty()) {
            r.details["tool_retries"] = attempts;
            r.details["tool_recovered"] = recovered;
            callScore["detail"]["retries"] = attempts.size();
            callScore["detail"]["recovered"] = recovered;
        }
    }

    // Multi-step: the results go back until the model answers in text.
    std::string final = answerText(g->text);
    if (verdict.pass && !item.toolResults.is_null() && !g->toolCalls.empty()) {
        SuiteItem step = item;
        step.prompt.clear();
        if (step.messages.empty()) step.messages.push_back({"user", item.prompt});
        std::optional<Generation> last = std::move(*g);
        for (int round = 0; round < kMaxSteps && last && !last->toolCalls.empty(); ++round) {
            ChatTurn said{"assistant", answerText(last->text)};
            said.toolCalls = last->toolCalls;
            for (size_t k = 0; k < said.toolCalls.size(); ++k)
                if (said.toolCalls[k].id.empty()) said.toolCalls[k].id = "call_" + std::to_string(round) + "_" + std::to_string(k);
            step.messages.push_back(said);
            for (const ToolCall& c : said.toolCalls) {
                ChatTurn result{"tool", toolResultFor(item, c.name)};
                result.toolCallId = c.id;
                result.name = c.name;
                step.messages.push_back(std::move(result));
            }
            auto sp = m_renderer(step, index, p.items, p.prompting);
            if (!sp) {
                r.error = "prompt: step " + std::to_string(round + 2) + ": " + sp.error().message;
                break;
            }
            auto next = m_backend.generate(sp->prompt, gp, keepGoing);
            if (stop.stop_requested() && (!next || next->stopReason == "callback")) return std::nullopt;
            if (!next) {
                r.error = "step " + std::to_string(round + 2) + ": " + next.error().message;
                r.correct = false;
                errorClass = "error";
                last.reset();
                break;
            }
            r.tokensIn += next->tokensIn;
            r.tokensOut += next->tokensOut;
            steps.push_back(stepJson(*next));
            final = answerText(next->text);
            last = std::move(*next);
        }
        if (last && !last->toolCalls.empty() && r.error.empty()) {
            final.clear();  // still calling after kMaxSteps rounds: no final answer
            steps.back()["note"] = "still calling functions after " + std::to_string(kMaxSteps) + " rounds of results";
        }
    }
    r.details["steps"] = steps;
    r.output = final;
    r.scores.push_back(callScore);
    bool correct = verdict.pass;
    const bool scoreFinal = verdict.pass && !item.toolResults.is_null() && r.error.empty();
    if (scoreFinal && (!item.scorers.empty() || !item.references.empty())) {
        auto scores = m_scorer(item, final);
        if (!scores) {
            r.error = "scoring: " + scores.error().message;  // the suite's fault: stored unscored
            r.details["tool_error"] = errorClass;
            r.durationMs = elapsed();
            return r;
        }
        for (const ItemScore& s : *scores) {
            r.scores.push_back({{"name", s.name}, {"score", s.score}, {"pass", s.pass}, {"detail", s.detail}});
            correct = correct && s.pass;
        }
        if (correct != verdict.pass) errorClass = toolCallErrorName(ToolCallError::WrongAnswer);
    }
    if (errorClass == "error") correct = false;
    r.details["tool_error"] = errorClass;
    r.correct = correct;
    r.durationMs = elapsed();
    return r;
}

}  // namespace verdict::core
