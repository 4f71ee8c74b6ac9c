// The tokenizer as a Model uses it: a thin adapter over engine/tokenizer, so that the rest of
// the engine depends on five calls only.
#pragma once

#include "gguf/gguf_file.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::tok { class Tokenizer; }

namespace verdict {

class ModelTokenizer {
public:
    // Fails when the file has no tokenizer or one the tokenizer module cannot load.
    static Result<std::unique_ptr<ModelTokenizer>> load(const gguf::GgufFile& file);
    ~ModelTokenizer();

    Result<std::vector<int32_t>> encode(std::string_view text, bool addSpecial, bool parseSpecial) const;
    std::string piece(int32_t token, bool renderSpecial = false) const;  // raw bytes; control tokens give "" unless renderSpecial
    std::string decode(const std::vector<int32_t>& tokens) const;
    bool isEog(int32_t token) const;
    int32_t bos() const;
    int32_t eos() const;

private:
    ModelTokenizer() = default;
    std::shared_ptr<const tok::Tokenizer> m_tok;
};

}  // namespace verdict
