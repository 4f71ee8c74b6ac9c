// One test item of a suite, whatever file shape it was imported from (see suite_importer.h).
// The runner, the scorers and the store all speak this type.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

struct ChatTurn {
    std::string role;     // "system" | "user" | "assistant" | "tool"
    std::string content;
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
    nlohmann::json metadata = nlohmann::json::object();  // anything else from the line (tests, entry_point, ...)
    int sourceLine = 0;               // 1-based line (record) number in the imported file
};

}  // namespace verdict::core
