// A tokenizer read from any GGUF file that carries one — a model, or a vocabulary-only file such as
// llama.cpp's ggml-vocab-*.gguf — without loading weights: the metadata is read, the tensors are
// not touched. The workbench counts an endpoint's tokens with it (the server's `usage` against
// the model's own tokenizer) and renders chat prompts the way the model's chat template does.
#pragma once

#include "verdict/engine/result.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace verdict {

class Model;

class TextTokenizer {
public:
    struct RenderedChat {
        std::string text;
        std::string templateUsed;  // "model" (the file's template) or "builtin:FAMILY"
        std::string note;          // why the built-in one was used ("" for "model")
    };

    // Fails naming the file when it is no GGUF or has no usable tokenizer.
    static Result<std::unique_ptr<TextTokenizer>> open(const std::string& path);
    // The tokenizer of an open model (its mapping is shared, nothing is read twice from disk).
    static Result<std::unique_ptr<TextTokenizer>> fromModel(std::shared_ptr<const Model> model);
    ~TextTokenizer();
    TextTokenizer(const TextTokenizer&) = delete;
    TextTokenizer& operator=(const TextTokenizer&) = delete;

    // addSpecial: BOS/EOS as the vocabulary's metadata says; parseSpecial: control-token texts in
    // `text` ("<|im_start|>") become their ids.
    std::vector<int32_t> encode(std::string_view text, bool addSpecial, bool parseSpecial) const;

    // (role, content) messages rendered with the generation prompt added and BOS/EOS texts as the
    // vocabulary spells them: by the file's chat template, or, when it fails, by the built-in
    // renderer of the family it looks like. Error when neither renders (the message says why) or
    // `shouldStop` asked to stop while the template ran.
    Result<RenderedChat> renderChat(const std::vector<std::pair<std::string, std::string>>& messages,
                                    const std::function<bool()>& shouldStop = {}) const;
    // The same for a conversation with function calling: `messagesJson` is an OpenAI messages array
    // (tool_calls, tool_call_id, name where set) and `toolsJson` the OpenAI tools array ("" or
    // "null": none), both as JSON text; the template sees them as `messages` and `tools`. Fails
    // naming the argument that is not such JSON.
    Result<RenderedChat> renderChatJson(std::string_view messagesJson, std::string_view toolsJson,
                                        const std::function<bool()>& shouldStop = {}) const;
    // Raw bytes of a token's text (a lone byte of a split character stays one byte); a control
    // token's text only when renderSpecial.
    std::string tokenToPiece(int32_t id, bool renderSpecial) const;

    const std::string& templateSource() const;  // "" when the file has none
    // True when a rendered chat text already starts with the BOS text (then encode adds none).
    bool startsWithBos(std::string_view text) const;

    const std::string& path() const;

    struct Impl;  // opaque; public only so that the implementation's helpers can name it

private:
    explicit TextTokenizer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace verdict
