// The text that offers functions to a model reached without a chat template (a raw prompt, an
// endpoint's text-completions route): the tools' JSON and how to answer with a call, in the
// prompt-based style of function-calling harnesses for models without native tool support.
// parseToolCalls (tool_call_parse.h) reads the answer's {"name", "arguments"} object back.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace verdict::core {

// "" when `tools` is null or empty; else ends with a blank line, ready to precede the prompt.
std::string toolsPreamble(const nlohmann::json& tools);

}  // namespace verdict::core
