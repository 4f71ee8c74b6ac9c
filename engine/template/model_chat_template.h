// A model's chat prompt: its own `tokenizer.chat_template` rendered by the interpreter, a user
// override, or — when neither can be rendered — the detected family's built-in format, always
// saying which one was used (never silently a wrong template).
#pragma once

#include "template/chat_template.h"
#include "verdict/engine/result.h"

#include <optional>
#include <string>

namespace verdict::gguf { class GgufFile; }

namespace verdict::tok {

struct RenderedChat {
    std::string text;            // the prompt
    std::string source;          // "model" | "override" | "builtin"
    std::string family;          // detected family of the template used ("unknown" if none)
    std::string templateHash;    // SHA-256 of the template text that was rendered ("" for builtin)
    bool fellBack = false;       // the built-in format was used instead of the model's template
    std::string fallbackReason;  // why (the interpreter's error, or "no chat template in the model")
};

// bos_token / eos_token are the texts of the model's BOS/EOS tokens (unset when the model has
// none), as transformers passes them. Fails only when no template applies at all (no usable
// template, and no built-in format for its family): the message says what to do (--template).
Result<RenderedChat> renderModelChat(const gguf::GgufFile& model, ChatTemplateInputs inputs,
                                     const std::optional<std::string>& overrideTemplate = std::nullopt);

}  // namespace verdict::tok
