// Function (tool) calls in the raw text a local model generated, in the shapes the common chat
// templates teach: Hermes/Qwen <tool_call> JSON, GLM-4.5 <arg_key>/<arg_value>, Mistral
// [TOOL_CALLS], DeepSeek V3 / V3.1, Kimi K2, gpt-oss harmony, Llama 3.x JSON, Granite,
// Command R7B, and a plain-JSON fallback (one object, an array, or OpenAI's {"tool_calls": [...]}).
// Text inside <think>...</think> (or before a lone leading </think>) never yields calls.
#pragma once

#include "core/suite/suite_item.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

struct ParsedToolCalls {
    std::string content;          // the text with every recognised call's markup removed, trimmed
    std::vector<ToolCall> calls;  // in order of appearance
    // The format that matched, "" when no call was found: "hermes", "glm4", "mistral",
    // "deepseek-v3", "deepseek-v3.1", "kimi-k2", "harmony", "llama3", "granite", "command-r7b", "json".
    std::string format;
    // Call markup found but unreadable, e.g. "call 2 (hermes): body is not JSON: <reason>".
    std::vector<std::string> problems;
};

// Never throws, never fails; text without calls gives content = text (trimmed), no calls.
// Linear work in the text's length (apart from parsing each call's JSON once).
ParsedToolCalls parseToolCalls(std::string_view text);

// The arguments text of a call from the value a format gave: an object (or any JSON value) dumped
// compactly; a string holding JSON is parsed and dumped (the model double-encoded it); a string
// that is not JSON is returned as written. `isJson` (optional) tells which case it was.
std::string toolArgumentsText(const nlohmann::json& value, bool* isJson = nullptr);

}  // namespace verdict::core
