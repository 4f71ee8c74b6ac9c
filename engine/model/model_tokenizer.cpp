#include "model/model_tokenizer.h"

#include "tokenizer/tokenizer.h"

#include <exception>

namespace verdict {

Result<std::unique_ptr<ModelTokenizer>> ModelTokenizer::load(const gguf::GgufFile& file) {
    // The tokenizer module reports errors as values; the catch only keeps a defect there from
    // escaping the engine (the host must never see an exception from Model::open).
    try {
        auto t = tok::Tokenizer::fromGguf(file);
        if (!t) return t.error();
        std::unique_ptr<ModelTokenizer> out(new ModelTokenizer());
        out->m_tok = std::move(t.value());
        return out;
    } catch (const std::exception& e) {
        return Error{file.path() + ": tokenizer failed to load: " + e.what()};
    }
}

ModelTokenizer::~ModelTokenizer() = default;

Result<std::vector<int32_t>> ModelTokenizer::encode(std::string_view text, bool addSpecial, bool parseSpecial) const {
    return m_tok->encode(text, addSpecial, parseSpecial);
}

std::string ModelTokenizer::piece(int32_t token, bool renderSpecial) const { return m_tok->tokenToPiece(token, renderSpecial); }
std::string ModelTokenizer::decode(const std::vector<int32_t>& tokens) const { return m_tok->decode(tokens, false); }
bool ModelTokenizer::isEog(int32_t token) const { return m_tok->isEog(token); }
int32_t ModelTokenizer::bos() const { return m_tok->bos(); }
int32_t ModelTokenizer::eos() const { return m_tok->eos(); }

}  // namespace verdict
