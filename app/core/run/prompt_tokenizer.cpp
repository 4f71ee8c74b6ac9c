#include "core/run/prompt_tokenizer.h"

#include "core/run/tool_prompt.h"
#include "core/suite/chat_turn_json.h"
#include "verdict/engine/model.h"
#include "verdict/engine/text_tokenizer.h"

namespace verdict::core {

namespace {

bool hasToolFields(const std::vector<ChatTurn>& messages) {
    for (const ChatTurn& t : messages)
        if (!t.toolCalls.empty() || !t.toolCallId.empty()) return true;
    return false;
}

std::vector<std::pair<std::string, std::string>> plainMessages(const std::vector<ChatTurn>& messages) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const ChatTurn& t : messages) out.emplace_back(t.role, t.content);
    return out;
}

// OpenAI's message shape, with each call's arguments as an object when they parse: templates
// print them with tojson, and a string would come out quoted.
std::string messagesJson(const std::vector<ChatTurn>& messages) {
    nlohmann::json out = nlohmann::json::array();
    for (const ChatTurn& t : messages) {
        nlohmann::json m = chatTurnToJson(t);
        if (m.contains("tool_calls"))
            for (auto& c : m["tool_calls"]) {
                auto& args = c["function"]["arguments"];
                nlohmann::json parsed = nlohmann::json::parse(args.get<std::string>(), nullptr, false);
                if (!parsed.is_discarded() && parsed.is_object()) args = std::move(parsed);
            }
        out.push_back(std::move(m));
    }
    return out.dump();
}

}  // namespace

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
    impl->parts = impl->model->partPaths();
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
        auto chat = p.tools.is_null() && !hasToolFields(p.messages) ? d.text->renderChat(plainMessages(p.messages), shouldStop)
                                                                    : d.text->renderChatJson(messagesJson(p.messages), p.tools.dump(), shouldStop);
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
        // Tools without a template to show them: offered in the prompt's own words.
        text = toolsPreamble(p.tools) + text;
        out.rendered = {std::move(text), "raw", std::move(note)};
    }
    auto tokens = d.tokenize(out.rendered.text, out.templated);
    if (!tokens) return tokens.error();
    out.tokens = std::move(*tokens);
    if (out.tokens.empty()) return Error{"the prompt tokenizes to nothing"};
    return out;
}

}  // namespace verdict::core
