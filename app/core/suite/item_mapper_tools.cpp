// Record -> SuiteItem for function-calling suites: Verdict's own shape ("tools") and the
// Berkeley Function Calling Leaderboard's ("bfcl"). Both are documented in docs/cli.md.
#include "core/score/tool_call_scorer.h"
#include "core/suite/item_mapper.h"
#include "core/suite/record_fields.h"
#include "core/suite/utf8_text.h"

namespace verdict::core {

namespace {

MapOutcome reject(std::string why) {
    MapOutcome out;
    out.reason = std::move(why);
    return out;
}

MapOutcome accept(SuiteItem item, int line) {
    MapOutcome out;
    item.sourceLine = line;
    out.item = std::move(item);
    out.ok = true;
    return out;
}

// The prompt of a function-calling record: a text (prompt/question/input) or chat messages
// (messages, or any of those keys holding a list of messages).
bool readToolPrompt(nlohmann::json& r, SuiteItem& item, std::vector<std::string>& used, std::string& why) {
    std::string key;
    auto* p = fields::findAny(r, {"messages", "prompt", "question", "input"}, &key);
    if (!p) {
        why = "no prompt (expected 'prompt' or 'messages')";
        return false;
    }
    used.push_back(key);
    if (p->is_array()) return readMessages(*p, item.messages, why);
    auto text = fields::takeText(*p);
    if (!text || fields::isBlank(*text)) {
        why = "no prompt ('" + key + "' is empty)";
        return false;
    }
    item.prompt = std::move(*text);
    return true;
}

bool readTools(const nlohmann::json* v, const char* key, SuiteItem& item, std::string& why) {
    if (!v) {
        why = std::string("no '") + key + "' (the functions the model may call)";
        return false;
    }
    auto tools = normalizeTools(*v);
    if (!tools) {
        why = std::string("'") + key + "': " + tools.error().message;
        return false;
    }
    if (tools->empty()) {
        why = std::string("'") + key + "' is empty";
        return false;
    }
    item.tools = std::move(*tools);
    return true;
}

// "get_weather" must be among the tools offered, or the item cannot be passed.
bool expectedAmongTools(const SuiteItem& item, std::string& why) {
    for (const ExpectedCall& c : *item.expectedCalls) {
        bool found = false;
        for (const auto& t : item.tools)
            if (t["function"].value("name", std::string()) == c.name) found = true;
        if (!found) {
            why = "expected call '" + c.name + "' is not one of the tools offered";
            return false;
        }
    }
    return true;
}

// "simple_12" -> "simple", "live_parallel_multiple_3-1-0" -> "live_parallel_multiple".
std::string bfclCategory(const std::string& id) {
    const size_t cut = id.find_last_of('_');
    if (cut == std::string::npos || cut == 0) return {};
    const std::string tail = id.substr(cut + 1);
    if (tail.empty() || tail.find_first_not_of("0123456789-") != std::string::npos) return {};
    return id.substr(0, cut);
}

}  // namespace

// {"id", "category", "prompt" | "messages", "tools": [...], "expected_calls": [...] ([] = no call is
//  due), "tool_results": {"name": result} (multi-step), "reference": final answer}
MapOutcome mapToolCalls(nlohmann::json& r, int line, const MapContext& ctx) {
    std::vector<std::string> used = {"tools", "expected_calls", "tool_results"};
    SuiteItem item;
    std::string why;
    if (!readToolPrompt(r, item, used, why)) return reject(why);
    if (!readTools(fields::find(r, "tools"), "tools", item, why)) return reject(why);
    const auto* expected = fields::find(r, "expected_calls");
    if (!expected) return reject("no 'expected_calls' (a list of {name, arguments}; [] when no call is due)");
    auto calls = expectedCallsFromPlain(*expected);
    if (!calls) return reject("'expected_calls': " + calls.error().message);
    item.expectedCalls = std::move(*calls);
    if (!expectedAmongTools(item, why)) return reject(why);
    if (const auto* results = fields::find(r, "tool_results"); results && !results->is_null()) {
        if (!results->is_object() || results->empty())
            return reject("'tool_results' must be an object mapping a function's name to its result");
        if (item.expectedCalls->empty()) return reject("'tool_results' given but no call is expected");
        item.toolResults = *results;
    }
    item.references = readReferences(r, used);
    if (!item.references.empty() && item.toolResults.is_null())
        return reject("a reference (the final answer) needs 'tool_results' to feed back after the calls");
    fillIdAndCategory(item, r, line, ctx, used);
    item.metadata = fields::rest(r, used);
    return accept(std::move(item), line);
}

// BFCL v3 (gorilla/berkeley-function-call-leaderboard/data): {"id": "simple_0", "question":
// [[{"role": "user", "content": "..."}]], "function": [{"name", "description", "parameters"}]}
// with the ground truth from the possible_answer file ({"id", "ground_truth": [{"f": {"arg":
// [values]}}]}, --answers) or inline. Older files give the question as a text. Irrelevance items
// (ids "irrelevance_*", "live_irrelevance_*") expect no call.
MapOutcome mapBfcl(nlohmann::json& r, int line, const MapContext& ctx) {
    std::vector<std::string> used = {"question", "function", "ground_truth"};
    SuiteItem item;
    std::string why;
    auto* q = fields::find(r, "question");
    if (!q) return reject("no 'question'");
    if (q->is_array() && !q->empty() && (*q)[0].is_array()) {
        if (q->size() > 1) return reject("BFCL multi-turn entries (" + std::to_string(q->size()) + " turns) are not supported; "
                                         "import the simple, multiple, parallel or irrelevance files");
        if (!readMessages((*q)[0], item.messages, why)) return reject("'question': " + why);
    } else if (q->is_array()) {
        if (!readMessages(*q, item.messages, why)) return reject("'question': " + why);
    } else {
        auto text = fields::takeText(*q);
        if (!text || fields::isBlank(*text)) return reject("'question' is empty");
        item.prompt = std::move(*text);
    }
    if (!readTools(fields::find(r, "function"), "function", item, why)) return reject(why);
    fillIdAndCategory(item, r, line, ctx, used);
    if (item.category.empty()) item.category = bfclCategory(item.id);
    const nlohmann::json* truth = fields::find(r, "ground_truth");
    if (!truth && ctx.answers)
        if (auto it = ctx.answers->find(item.id); it != ctx.answers->end()) truth = &it->second;
    if (truth) {
        auto calls = expectedCallsFromBfcl(*truth);
        if (!calls) return reject("ground truth of '" + item.id + "': " + calls.error().message);
        item.expectedCalls = std::move(*calls);
    } else if (item.id.rfind("irrelevance", 0) == 0 || item.id.rfind("live_irrelevance", 0) == 0) {
        item.expectedCalls = std::vector<ExpectedCall>{};
    } else {
        return reject("no ground truth for '" + item.id + "'" +
                      (ctx.answers ? std::string(" in the answers file") : std::string(": give BFCL's possible_answer file with --answers")));
    }
    if (!expectedAmongTools(item, why)) return reject(why);
    item.metadata = fields::rest(r, used);
    return accept(std::move(item), line);
}

}  // namespace verdict::core
