// One test item of a suite, whatever file shape it was imported from (see suite_importer.h).
// The runner, the scorers and the store all speak this type.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// One function call a model made (OpenAI `tool_calls[i]`): the arguments as the model wrote them
// (a JSON object's text when well formed; anything else is kept so that it can be judged).
struct ToolCall {
    std::string id;         // the call's id ("" when the model gave none)
    std::string name;       // function name
    std::string arguments;  // raw arguments text
};

struct ChatTurn {
    std::string role;     // "system" | "user" | "assistant" | "tool"
    std::string content;
    std::vector<ToolCall> toolCalls;  // assistant turns that called tools
    std::string toolCallId;           // tool turns: the call this is the result of
    std::string name;                 // tool turns: the function's name
};

// A call a function-calling item expects (BFCL's "possible answer" semantics): for each argument,
// the list of acceptable values; a null entry in a list means the argument may be left out.
// Arguments the model passes that are not listed here are extra arguments.
struct ExpectedCall {
    std::string name;
    nlohmann::json arguments = nlohmann::json::object();  // {"city": ["Paris"], "unit": ["celsius", null]}
};

struct ScorerSpec {
    std::string name;                 // registry name: "exact", "contains", "regex", "numeric", "mc_loglik", ...
    nlohmann::json params = nlohmann::json::object();  // scorer options (pattern, tolerance, normalisation, ...)
};

struct SuiteItem {
    std::string id;                   // from the file, else "<line number>"
    std::string category;             // "" when none
    std::string prompt;               // plain prompt (empty when `messages` is used)
    std::vector<ChatTurn> messages;   // chat-shaped input (OpenAI evals), else empty
    // Multi-turn items (MT-Bench's "turns"): the user's turns in order. `prompt` is the first; each
    // later one is sent after the model's own answer to the ones before. Empty for other items.
    std::vector<std::string> turns;
    std::vector<std::string> references;  // acceptable answers (may be empty: generate-only)
    std::vector<std::string> choices;     // multiple choice options, in order
    std::optional<int> gold;          // index into `choices`
    std::vector<ScorerSpec> scorers;  // explicit scorers (promptfoo asserts); empty = suite default
    // Function calling: the tools offered (OpenAI `tools`, [{"type":"function","function":{name,
    // description, parameters (JSON Schema)}}]; null when none), the calls expected (nullopt: not a
    // function-calling item; empty: no call is due) and, for multi-step items, each function's
    // result to feed back ({"name": result}; null when the item ends at the calls).
    nlohmann::json tools;
    std::optional<std::vector<ExpectedCall>> expectedCalls;
    nlohmann::json toolResults;
    nlohmann::json metadata = nlohmann::json::object();  // anything else from the line (tests, entry_point, ...)
    int sourceLine = 0;               // 1-based line (record) number in the imported file
};

}  // namespace verdict::core
