#include "template/model_chat_template.h"

#include "gguf/gguf_file.h"

namespace verdict::tok {
namespace {

std::optional<std::string> tokenText(const gguf::GgufFile& f, const char* idKey) {
    auto id = f.getUInt(idKey);
    const auto* tokens = f.getArray("tokenizer.ggml.tokens");
    if (!id || !tokens || *id >= tokens->size()) return std::nullopt;
    const std::string* s = (*tokens)[*id].asString();
    return s ? std::optional<std::string>(*s) : std::nullopt;
}

Result<RenderedChat> renderBuiltin(const std::string& family, const ChatTemplateInputs& inputs, std::string reason) {
    // A template of no known family falls back to ChatML, as llama.cpp does for models without one.
    const std::string use = family == "unknown" ? "chatml" : family;
    auto text = renderBuiltinTemplate(use, inputs);
    if (!text) return Error{reason + "; the built-in '" + use + "' format failed too: " + text.error().message +
                            " (give a template with --template FILE)"};
    RenderedChat r;
    r.text = std::move(*text);
    r.source = "builtin";
    r.family = use;
    r.fellBack = true;
    r.fallbackReason = std::move(reason);
    return r;
}

}  // namespace

Result<RenderedChat> renderModelChat(const gguf::GgufFile& model, ChatTemplateInputs inputs,
                                     const std::optional<std::string>& overrideTemplate) {
    if (!inputs.bosToken) inputs.bosToken = tokenText(model, "tokenizer.ggml.bos_token_id");
    if (!inputs.eosToken) inputs.eosToken = tokenText(model, "tokenizer.ggml.eos_token_id");

    const std::optional<std::string> own = model.getString("tokenizer.chat_template");
    const std::optional<std::string>& source = overrideTemplate ? overrideTemplate : own;
    if (!source) return renderBuiltin("unknown", inputs, "no chat template in the model");

    const std::string family = detectTemplateFamily(*source);
    auto tmpl = ChatTemplate::parse(*source);
    if (!tmpl) {
        if (overrideTemplate) return tmpl.error();  // the user's own template: report, never replace
        return renderBuiltin(family, inputs, "the model's template cannot be parsed: " + tmpl.error().message);
    }
    auto text = tmpl->render(inputs);
    if (!text) {
        // raise_exception() is the template's own verdict on the conversation: report it as is.
        if (overrideTemplate || text.error().message.rfind("TemplateError: ", 0) == 0) return text.error();
        return renderBuiltin(family, inputs, "the model's template cannot be rendered: " + text.error().message);
    }
    RenderedChat r;
    r.text = std::move(*text);
    r.source = overrideTemplate ? "override" : "model";
    r.family = family;
    r.templateHash = templateHash(*source);
    return r;
}

}  // namespace verdict::tok
