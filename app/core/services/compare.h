// Asking two models the same prompt: the use case behind `verdict compare` and the Compare
// screen. Both take their choices and defaults from CompareSettings, build the prompt with
// comparePrompt and store a vote's settings with compareVoteSettings, so the same choices send
// the same text and a vote reads the same whichever side stored it.
#pragma once

#include "core/run/backend_factory.h"
#include "core/run/model_backend.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace verdict::core {

struct CompareSettings {
    std::string system;            // system message ("" for none)
    bool useChatTemplate = true;   // the model's chat template when it has one
    GenerationParams generation;   // greedy, seed 0, at most 256 tokens (model_backend.h)
    BackendOpenOptions backend;    // threads, context, device, endpoint key
};

// The prompt both models get: the system message, the conversation so far (the Compare screen's
// earlier turns; empty for `verdict compare`) and the new user turn, as chat messages, and as plain
// text for a model without a chat template: "SYSTEM\n\nUSER" for a first turn, else a
// "User: ... / Assistant: ..." transcript ending in "Assistant:".
Prompt comparePrompt(const CompareSettings& s, const std::vector<ChatTurn>& history, const std::string& user);

// What a vote stores as its settings (votes.settings): A's system, temperature, seed, max_tokens,
// chat_template and ctx at the top, `source` ("cli" or "window"), and per side `a` / `b` its own
// generation settings merged with `statsA` / `statsB` (what the voter saw: tokens, speed ...).
nlohmann::json compareVoteSettings(const CompareSettings& a, const CompareSettings& b, const std::string& source,
                                   const nlohmann::json& statsA = nlohmann::json::object(),
                                   const nlohmann::json& statsB = nlohmann::json::object());

}  // namespace verdict::core
