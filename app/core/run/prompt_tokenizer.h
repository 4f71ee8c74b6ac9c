// Turns a Prompt (chat messages and/or plain text) into the token ids a local model sees, the
// same way for suite runs (EngineBackend) and the OpenAI-compatible server (`verdict serve`):
// the model's own chat template when it renders, else the built-in renderer of its detected
// family, else the plain text. RenderedPrompt::templateUsed records which.
#pragma once

#include "core/run/model_backend.h"
#include "verdict/engine/model.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace verdict::core {

class PromptTokenizer {
public:
    struct Tokenized {
        RenderedPrompt rendered;
        std::vector<int32_t> tokens;
        bool templated = false;
    };

    // Reads the chat template and the BOS/EOS texts from the model file. Fails when the model has
    // no usable tokenizer.
    static Result<std::unique_ptr<PromptTokenizer>> create(std::shared_ptr<const Model> model);
    ~PromptTokenizer();

    // `shouldStop`, when set, is asked while the chat template renders; true fails the render
    // ("cancelled") instead of falling back to the built-in template.
    Result<Tokenized> render(const Prompt& prompt, const std::function<bool()>& shouldStop = {}) const;
    // Tokenizes text the way render() does: special tokens parsed when `templated`, BOS added
    // unless a templated text already starts with it.
    Result<std::vector<int32_t>> tokenize(const std::string& text, bool templated) const;
    const std::string& templateSource() const;  // "" when the file has none
    const std::vector<std::string>& parts() const;  // the model's files (split models: every part)

private:
    struct Impl;
    explicit PromptTokenizer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace verdict::core
