#include "core/run/prompt_tokenizer.h"

#include "model/model_impl.h"
#include "tokenizer/chat_template.h"

#include <optional>

namespace verdict::core {

struct PromptTokenizer::Impl {
    std::shared_ptr<const Model> model;
    std::vector<std::string> parts;
    std::string templateSource;             // "" when the file has none
    std::optional<tok::ChatTemplate> tmpl;  // parsed template, when it parses
    std::string templateParseError;
    std::string bosText, eosText;           // token texts as the template sees them ("<s>", "</s>")

    Result<std::vector<int32_t>> tokenize(const std::string& text, bool templated) const {
        // A rendered template carries its special tokens as text ("<|im_start|>") and often the
        // BOS itself; parse them, and only add BOS when the text does not start with it.
        bool addSpecial = true;
        if (templated && !bosText.empty() && text.rfind(bosText, 0) == 0) addSpecial = false;
        return model->tokenize(text, addSpecial, templated);
    }
};

PromptTokenizer::PromptTokenizer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
PromptTokenizer::~PromptTokenizer() = default;

Result<std::unique_ptr<PromptTokenizer>> PromptTokenizer::create(std::shared_ptr<const Model> model) {
    if (!model->hasTokenizer())
        return Error{model->path() + ": the model has no usable tokenizer, so prompts cannot be encoded"};
    auto impl = std::make_unique<Impl>();
    impl->model = model;
    // The template and the part list come from the engine's own GGUF reader (engine-internal
    // access; the public Model API does not expose metadata yet).
    const gguf::GgufFile& file = *model->impl().file;
    impl->parts = file.partPaths();
    if (impl->parts.empty()) impl->parts.push_back(model->path());
    impl->templateSource = file.getString("tokenizer.chat_template").value_or("");
    // Control tokens have no piece text; the template wants their vocabulary text.
    if (const auto* tokens = file.getArray("tokenizer.ggml.tokens")) {
        auto text = [&](int32_t id) -> std::string {
            if (id < 0 || static_cast<size_t>(id) >= tokens->size()) return {};
            const std::string* s = (*tokens)[static_cast<size_t>(id)].asString();
            return s ? *s : std::string();
        };
        impl->bosText = text(model->bos());
        impl->eosText = text(model->eos());
    }
    if (!impl->templateSource.empty()) {
        auto t = tok::ChatTemplate::parse(impl->templateSource);
        if (t) impl->tmpl = std::move(*t);
        else impl->templateParseError = t.error().message;
    }
    return std::unique_ptr<PromptTokenizer>(new PromptTokenizer(std::move(impl)));
}

Result<std::vector<int32_t>> PromptTokenizer::tokenize(const std::string& text, bool templated) const {
    return m_impl->tokenize(text, templated);
}

const std::string& PromptTokenizer::templateSource() const { return m_impl->templateSource; }
const std::vector<std::string>& PromptTokenizer::parts() const { return m_impl->parts; }

Result<PromptTokenizer::Tokenized> PromptTokenizer::render(const Prompt& p, const std::function<bool()>& shouldStop) const {
    const Impl& d = *m_impl;
    Tokenized out;
    std::string note;
    if (p.useChatTemplate && !p.messages.empty()) {
        if (d.tmpl) {
            tok::ChatTemplateInputs in;
            for (const ChatTurn& t : p.messages) in.messages.push_back({{"role", t.role}, {"content", t.content}});
            in.addGenerationPrompt = true;
            if (!d.bosText.empty()) in.bosToken = d.bosText;
            if (!d.eosText.empty()) in.eosToken = d.eosText;
            in.limits.shouldStop = shouldStop;
            auto text = d.tmpl->render(in);
            if (!text && shouldStop && shouldStop()) return Error{"cancelled while rendering the chat template"};
            if (text) {
                out.rendered = {*text, "model", ""};
                out.templated = true;
            } else {
                note = "the model's chat template failed: " + text.error().message;
                const std::string family = tok::detectTemplateFamily(d.templateSource);
                if (auto b = tok::renderBuiltinTemplate(family, in)) {
                    out.rendered = {*b, "builtin:" + family, note};
                    out.templated = true;
                }
            }
        } else {
            note = d.templateSource.empty() ? "the model has no chat template"
                                            : "the model's chat template does not parse: " + d.templateParseError;
        }
    }
    if (!out.templated) {
        std::string text = p.text;
        if (text.empty())  // chat-only item on a model without a template: contents in order
            for (const ChatTurn& t : p.messages) text += (text.empty() ? "" : "\n\n") + t.content;
        out.rendered = {std::move(text), "raw", std::move(note)};
    }
    auto tokens = d.tokenize(out.rendered.text, out.templated);
    if (!tokens) return tokens.error();
    out.tokens = std::move(*tokens);
    if (out.tokens.empty()) return Error{"the prompt tokenizes to nothing"};
    return out;
}

}  // namespace verdict::core
