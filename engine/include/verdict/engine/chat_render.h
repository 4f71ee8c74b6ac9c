// A GGUF file's chat prompt for `verdict template`: messages (and tools) rendered exactly as given
// by a user's template, the file's own `tokenizer.chat_template`, or — when neither renders — the
// built-in format of the template's family, always saying which one was used. Reads metadata only
// (no weights, no tokenizer needed). Runs use TextTokenizer::renderChat, which adds the
// generation prompt and the model's BOS/EOS texts the same way.
#pragma once

#include "verdict/engine/result.h"

#include <optional>
#include <string>
#include <string_view>

namespace verdict {

struct ChatTemplateRendering {
    std::string text;
    std::string source;          // "model" | "override" | "builtin"
    std::string family;          // detected family of the template used ("chatml" when the file has none)
    std::string templateHash;    // SHA-256 of the template text rendered ("" for builtin)
    bool fellBack = false;       // the built-in format was used instead of the file's template
    std::string fallbackReason;  // why (the interpreter's error, or "no chat template in the model")
};

// messagesJson: an array of messages ({role, content, tool_calls …}); toolsJson: the OpenAI tools
// array, or "" for none. overrideTemplate: its errors are reported, never replaced; so is a
// template's own raise_exception(). Errors name the file or the argument.
Result<ChatTemplateRendering> renderChatTemplate(const std::string& ggufPath, std::string_view messagesJson,
                                                 std::string_view toolsJson, bool addGenerationPrompt,
                                                 const std::optional<std::string>& overrideTemplate = std::nullopt);

}  // namespace verdict
