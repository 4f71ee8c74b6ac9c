// Tokenizers that reproduce llama.cpp's tokenization exactly (its tokenizer test vectors are the
// reference): SentencePiece BPE ("llama"), byte-level BPE with pre-tokenizers ("gpt2"),
// character-level BPE ("gemma4") and WordPiece ("bert"), loaded from GGUF metadata.
//
// Thread safety: a Tokenizer is immutable once created; every method is const and may be
// called from any number of threads at once (all scratch memory is per call).
//
// Failure contracts:
//   * fromGguf / fromSpec return an Error naming the key for a missing or malformed tokenizer,
//     an unsupported model ("t5", "rwkv", ...) or an unknown pre-tokenizer.
//   * encode never fails: any byte string is accepted. Invalid UTF-8 is handled as llama.cpp
//     does for the model type (SPM: raw bytes go through <0xNN> byte fallback; BPE, gemma4 and WPM:
//     an invalid byte becomes U+FFFD). Texts of 1 GiB or more are not supported and give {}.
//   * tokenToPiece / decode skip ids outside [0, nVocab()) (they produce no bytes).
#pragma once

#include "tokenizer/vocab.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::gguf {
class GgufFile;
}

namespace verdict::tok {

class SpmModel;
class BpeModel;
class CharBpeModel;
class SpecialMatcher;

class Tokenizer {
public:
    static Result<std::shared_ptr<const Tokenizer>> fromGguf(const gguf::GgufFile& file);
    static Result<std::shared_ptr<const Tokenizer>> fromSpec(VocabSpec spec);

    ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

    // Text -> ids, as llama_tokenize(vocab, text, addSpecial, parseSpecial):
    //   addSpecial: BOS/EOS (bert: CLS/SEP) as the vocabulary's add_*_token flags say;
    //   parseSpecial: control tokens written in the text (e.g. "<|im_end|>") become their ids.
    //   User-defined tokens are always matched in the text, as in llama.cpp and HF tokenizers.
    std::vector<int32_t> encode(std::string_view text, bool addSpecial, bool parseSpecial) const;

    // The exact bytes of one token (may be an incomplete UTF-8 sequence, e.g. <0xE4>).
    // Control and unknown tokens give "" unless renderSpecial.
    std::string tokenToPiece(int32_t id, bool renderSpecial = false) const;

    // Ids -> text as llama_detokenize(remove_special=false, unparse_special=renderSpecial):
    // drops the leading space SentencePiece added to the first token, and for vocabularies with
    // clean_spaces (gpt2-style, bert) removes spaces before punctuation as llama.cpp does.
    std::string decode(const std::vector<int32_t>& ids, bool renderSpecial = false) const;

    int32_t bos() const { return m_vocab.bos; }
    int32_t eos() const { return m_vocab.eos; }
    int32_t eot() const { return m_vocab.eot; }
    int32_t eom() const { return m_vocab.eom; }
    int32_t unk() const { return m_vocab.unk; }
    int32_t sep() const { return m_vocab.sep; }
    int32_t pad() const { return m_vocab.pad; }
    int32_t cls() const { return m_vocab.cls; }
    int32_t mask() const { return m_vocab.mask; }
    int32_t newline() const { return m_vocab.newline; }
    bool isEog(int32_t id) const { return m_vocab.isEog(id); }
    const std::vector<int32_t>& eogTokens() const { return m_vocab.eog; }
    bool addBos() const { return m_vocab.addBos; }
    bool addEos() const { return m_vocab.addEos; }
    bool addSep() const { return m_vocab.addSep; }
    bool addSpacePrefix() const { return m_vocab.addSpacePrefix; }

    int32_t nVocab() const { return m_vocab.size(); }
    std::string_view model() const { return m_vocab.model; }  // tokenizer.ggml.model
    std::string_view pre() const { return m_vocab.pre; }      // tokenizer.ggml.pre
    VocabType type() const { return m_vocab.type; }
    std::string_view tokenText(int32_t id) const;  // raw vocabulary entry; "" when out of range
    float tokenScore(int32_t id) const;
    uint32_t tokenAttr(int32_t id) const;          // TokenAttr bits; 0 when out of range
    std::optional<int32_t> tokenId(std::string_view text) const;  // exact vocabulary entry
    const Vocab& vocab() const { return m_vocab; }

private:
    Tokenizer();
    void encodeText(std::string_view text, std::vector<int32_t>& out) const;  // one fragment, no specials
    std::string pieceOf(int32_t id) const;  // piece with special tokens rendered

    Vocab m_vocab;
    std::unique_ptr<SpmModel> m_spm;
    std::unique_ptr<BpeModel> m_bpe;
    std::unique_ptr<CharBpeModel> m_charBpe;
    std::unique_ptr<SpecialMatcher> m_special;
    std::string m_pieceBlob;                // piece of every token, rendered
    std::vector<uint32_t> m_pieceOffsets;   // nVocab + 1 offsets into m_pieceBlob
};

// Turns a stream of generated ids into text that is always valid UTF-8: bytes of a character
// split across tokens are held back until the character is complete. Bytes that can never form
// a valid character are replaced by U+FFFD. Not thread-safe (one decoder per stream).
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer& tokenizer, bool renderSpecial = false);
    std::string push(int32_t id);  // complete characters now available (may be "")
    std::string flush();           // the rest; an incomplete tail becomes U+FFFD
    size_t pendingBytes() const { return m_pending.size(); }

private:
    const Tokenizer& m_tok;
    bool m_renderSpecial;
    std::string m_pending;
};

}  // namespace verdict::tok
