#include "core/run/prompt_tokenizer.h"

#include "model/model_impl.h"
#include "verdict/engine/text_tokenizer.h"

namespace verdict::core {

struct PromptTokenizer::Impl {
    std::shared_ptr<const Model> model;
    std::vector<std::string> parts;
    std::unique_ptr<TextTokenizer> text;  // the chat template and the BOS text

    Result<std::vector<int32_t>> tokenize(const std::string& t, bool templated) const {
        // A rendered template carries its special tokens as text ("<|im_start|>") and often the
        // BOS itself; parse them, and only add BOS when the text does not start with it.
        const bool addSpecial = !(templated && text->startsWithBos(t));
        return model->tokenize(t, addSpecial, templated);
    }
};

PromptTokenizer::PromptTokenizer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
PromptTokenizer::~PromptTokenizer() = default;

Result<std::unique_ptr<PromptTokenizer>> PromptTokenizer::create(std::shared_ptr<const Model> model) {
    if (!model->hasTokenizer())
        return Error{model->path() + ": the model has no usable tokenizer, so prompts cannot be encoded"};
    auto impl = std::make_unique<Impl>();
    auto text = TextTokenizer::fromModel(model);
    if (!text) return text.error();
    impl->text = std::move(*text);
    impl->model = std::move(model);
    // The part list comes from the engine's own GGUF reader (engine-internal access; the public
    // Model API does not expose the parts yet).
    impl->parts = impl->model->impl().file->partPaths();
    if (impl->parts.empty()) impl->parts.push_back(impl->model->path());
    return std::unique_ptr<PromptTokenizer>(new PromptTokenizer(std::move(impl)));
}

Result<std::vector<int32_t>> PromptTokenizer::tokenize(const std::string& text, bool templated) const {
    return m_impl->tokenize(text, templated);
}

const std::string& PromptTokenizer::templateSource() const { return m_impl->text->templateSource(); }
const std::vector<std::string>& PromptTokenizer::parts() const { return m_impl->parts; }

Result<PromptTokenizer::Tokenized> PromptTokenizer::render(const Prompt& p, const std::function<bool()>& shouldStop) const {
    const Impl& d = *m_impl;
    Tokenized out;
    std::string note;
    if (p.useChatTemplate && !p.messages.empty()) {
        std::vector<std::pair<std::string, std::string>> messages;
        for (const ChatTurn& t : p.messages) messages.emplace_back(t.role, t.content);
        auto chat = d.text->renderChat(messages, shouldStop);
        if (!chat && shouldStop && shouldStop()) return chat.error();
        if (chat) {
            out.rendered = {std::move(chat->text), chat->templateUsed, std::move(chat->note)};
            out.templated = true;
        } else {
            note = chat.error().message;
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
