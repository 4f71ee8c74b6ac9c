#include "verdict/engine/chat_render.h"

#include "gguf/gguf_file.h"
#include "template/model_chat_template.h"

namespace verdict {

Result<ChatTemplateRendering> renderChatTemplate(const std::string& ggufPath, std::string_view messagesJson,
                                                 std::string_view toolsJson, bool addGenerationPrompt,
                                                 const std::optional<std::string>& overrideTemplate) {
    tok::ChatTemplateInputs in;
    in.messages = nlohmann::ordered_json::parse(messagesJson, nullptr, false);
    if (in.messages.is_discarded() || !in.messages.is_array()) return Error{"chat messages: not a JSON array"};
    if (!toolsJson.empty()) {
        in.tools = nlohmann::ordered_json::parse(toolsJson, nullptr, false);
        if (in.tools.is_discarded()) return Error{"chat tools: not JSON"};
    }
    in.addGenerationPrompt = addGenerationPrompt;
    auto file = gguf::GgufFile::open(ggufPath);
    if (!file) return file.error();
    auto r = tok::renderModelChat(**file, std::move(in), overrideTemplate);
    if (!r) return r.error();
    return ChatTemplateRendering{std::move(r->text), std::move(r->source), std::move(r->family),
                                 std::move(r->templateHash), r->fellBack, std::move(r->fallbackReason)};
}

}  // namespace verdict
