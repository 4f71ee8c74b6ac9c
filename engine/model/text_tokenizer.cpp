#include "verdict/engine/text_tokenizer.h"

#include "gguf/gguf_file.h"
#include "model/model_impl.h"
#include "template/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "verdict/engine/model.h"

#include <optional>

namespace verdict {

struct TextTokenizer::Impl {
    std::string path;
    std::unique_ptr<gguf::GgufFile> ownFile;  // open(): the file read for its metadata only
    std::shared_ptr<const Model> model;       // fromModel(): keeps the model's mapping alive
    std::shared_ptr<const tok::Tokenizer> tok;
    std::string templateSource;               // "" when the file has none
    std::optional<tok::ChatTemplate> tmpl;    // the parsed template, when it parses
    std::string templateParseError;
    std::string bosText, eosText;             // control tokens' vocabulary texts ("<s>"): the template wants them
};

namespace {

Result<std::unique_ptr<TextTokenizer::Impl>> readTokenizer(const gguf::GgufFile& file, const std::string& path) {
    auto tok = tok::Tokenizer::fromGguf(file);
    if (!tok) return Error{path + ": no usable tokenizer: " + tok.error().message};
    auto impl = std::make_unique<TextTokenizer::Impl>();
    impl->path = path;
    impl->tok = *tok;
    impl->templateSource = file.getString("tokenizer.chat_template").value_or("");
    if (const auto* tokens = file.getArray("tokenizer.ggml.tokens")) {
        auto text = [&](int32_t id) -> std::string {
            if (id < 0 || static_cast<size_t>(id) >= tokens->size()) return {};
            const std::string* s = (*tokens)[static_cast<size_t>(id)].asString();
            return s ? *s : std::string();
        };
        impl->bosText = text(impl->tok->bos());
        impl->eosText = text(impl->tok->eos());
    }
    if (!impl->templateSource.empty()) {
        auto t = tok::ChatTemplate::parse(impl->templateSource);
        if (t) impl->tmpl = std::move(*t);
        else impl->templateParseError = t.error().message;
    }
    return impl;
}

}  // namespace

TextTokenizer::TextTokenizer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
TextTokenizer::~TextTokenizer() = default;

Result<std::unique_ptr<TextTokenizer>> TextTokenizer::open(const std::string& path) {
    auto file = gguf::GgufFile::open(path);
    if (!file) return file.error();
    auto impl = readTokenizer(**file, path);
    if (!impl) return impl.error();
    (*impl)->ownFile = std::move(*file);
    return std::unique_ptr<TextTokenizer>(new TextTokenizer(std::move(*impl)));
}

Result<std::unique_ptr<TextTokenizer>> TextTokenizer::fromModel(std::shared_ptr<const Model> model) {
    auto impl = readTokenizer(*model->impl().file, model->path());
    if (!impl) return impl.error();
    (*impl)->model = std::move(model);
    return std::unique_ptr<TextTokenizer>(new TextTokenizer(std::move(*impl)));
}

std::vector<int32_t> TextTokenizer::encode(std::string_view text, bool addSpecial, bool parseSpecial) const {
    return m_impl->tok->encode(text, addSpecial, parseSpecial);
}

namespace {

// The file's template, else the built-in format of the family it looks like.
Result<TextTokenizer::RenderedChat> renderInputs(const TextTokenizer::Impl& d, tok::ChatTemplateInputs in,
                                                 const std::function<bool()>& shouldStop) {
    if (!d.tmpl)
        return Error{d.templateSource.empty() ? "the model has no chat template"
                                              : "the model's chat template does not parse: " + d.templateParseError};
    in.addGenerationPrompt = true;
    if (!d.bosText.empty()) in.bosToken = d.bosText;
    if (!d.eosText.empty()) in.eosToken = d.eosText;
    in.limits.shouldStop = shouldStop;
    auto text = d.tmpl->render(in);
    if (text) return TextTokenizer::RenderedChat{std::move(*text), "model", ""};
    if (shouldStop && shouldStop()) return Error{"cancelled while rendering the chat template"};
    const std::string note = "the model's chat template failed: " + text.error().message;
    const std::string family = tok::detectTemplateFamily(d.templateSource);
    if (auto b = tok::renderBuiltinTemplate(family, in)) return TextTokenizer::RenderedChat{std::move(*b), "builtin:" + family, note};
    return Error{note};
}

}  // namespace

Result<TextTokenizer::RenderedChat> TextTokenizer::renderChat(const std::vector<std::pair<std::string, std::string>>& messages,
                                                              const std::function<bool()>& shouldStop) const {
    tok::ChatTemplateInputs in;
    for (const auto& [role, content] : messages) in.messages.push_back({{"role", role}, {"content", content}});
    return renderInputs(*m_impl, std::move(in), shouldStop);
}

Result<TextTokenizer::RenderedChat> TextTokenizer::renderChatJson(std::string_view messagesJson, std::string_view toolsJson,
                                                                  const std::function<bool()>& shouldStop) const {
    tok::ChatTemplateInputs in;
    in.messages = nlohmann::ordered_json::parse(messagesJson, nullptr, false);
    if (in.messages.is_discarded() || !in.messages.is_array()) return Error{"chat messages: not a JSON array"};
    if (!toolsJson.empty()) {
        in.tools = nlohmann::ordered_json::parse(toolsJson, nullptr, false);
        if (in.tools.is_discarded() || !(in.tools.is_array() || in.tools.is_null())) return Error{"chat tools: not a JSON array"};
    }
    return renderInputs(*m_impl, std::move(in), shouldStop);
}

std::string TextTokenizer::tokenToPiece(int32_t id, bool renderSpecial) const {
    return m_impl->tok->tokenToPiece(id, renderSpecial);
}

const std::string& TextTokenizer::templateSource() const { return m_impl->templateSource; }

bool TextTokenizer::startsWithBos(std::string_view text) const {
    return !m_impl->bosText.empty() && text.substr(0, m_impl->bosText.size()) == m_impl->bosText;
}

const std::string& TextTokenizer::path() const { return m_impl->path; }

}  // namespace verdict
