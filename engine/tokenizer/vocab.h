// Vocabulary: token texts, scores and attributes, special token ids and tokenizer flags, read
// from GGUF metadata (tokenizer.ggml.*) with llama.cpp's defaults and fix-ups
// (src/llama-vocab.cpp, llama_vocab::impl::load).
#pragma once

#include "tokenizer/flat_hash.h"
#include "tokenizer/pre_tokenizer.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::gguf {
class GgufFile;
}

namespace verdict::tok {

constexpr int32_t kNoToken = -1;

// tokenizer.ggml.token_type values (stored in GGUF files: never renumber).
enum class TokenType : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

// Token attribute bits (llama.cpp's llama_token_attr).
enum TokenAttr : uint32_t {
    kAttrUndefined = 0,
    kAttrUnknown = 1u << 0,
    kAttrUnused = 1u << 1,
    kAttrNormal = 1u << 2,
    kAttrControl = 1u << 3,
    kAttrUserDefined = 1u << 4,
    kAttrByte = 1u << 5,
    kAttrNormalized = 1u << 6,
    kAttrLStrip = 1u << 7,  // white space before the token is dropped when it is parsed from text
    kAttrRStrip = 1u << 8,  // white space after it likewise
    kAttrSingleWord = 1u << 9,
};

enum class VocabType {
    Spm,  // "llama": SentencePiece BPE with scores and <0xNN> byte fallback
    Bpe,  // "gpt2": byte-level BPE with merge ranks and a pre-tokenizer
    Wpm,  // "bert": WordPiece
    CharBpe,  // "gemma4": BPE by merge rank over UTF-8 characters, spaces as U+2581, <0xNN> fallback
};

// The tokenizer metadata as stored, before defaults are applied. Filled from GGUF by
// readVocabSpec or by hand in tests. Special ids are kept as read (possibly out of range).
struct VocabSpec {
    std::string model;                 // tokenizer.ggml.model
    std::string pre;                   // tokenizer.ggml.pre ("" when absent)
    std::string name;                  // general.name (a few token attributes depend on it)
    std::string architecture;          // general.architecture
    std::vector<std::string> tokens;   // tokenizer.ggml.tokens
    std::vector<float> scores;         // tokenizer.ggml.scores (empty: all 0)
    std::vector<int32_t> tokenTypes;   // tokenizer.ggml.token_type (empty: all normal)
    std::optional<std::vector<std::string>> merges;  // tokenizer.ggml.merges ("left right", rank = index)
    std::optional<int64_t> bos, eos, eot, eom, unk, sep, pad, cls, mask;
    std::optional<int64_t> fimPre, fimSuf, fimMid, fimPad, fimRep, fimSep;
    std::optional<bool> addBos, addEos, addSep, addSpacePrefix, removeExtraWhitespaces;
    std::optional<bool> lowercase, stripAccents;  // tokenizer.ggml.normalizer.* (bert)
};

// Reads every tokenizer key the tokenizers use. Fails, naming the key, when a required key is
// missing or a key has the wrong type.
Result<VocabSpec> readVocabSpec(const gguf::GgufFile& file);

// A loaded vocabulary with llama.cpp's defaults applied. Immutable after build().
struct Vocab {
    VocabType type = VocabType::Spm;
    std::string model;
    std::string pre;
    PreTokenizerInfo preInfo;  // BPE only

    TextIndex texts;              // token id <-> text
    std::vector<float> scores;
    std::vector<uint32_t> attrs;  // TokenAttr bits
    std::vector<std::string> merges;
    size_t maxTokenLength = 0;    // in bytes

    int32_t bos = kNoToken, eos = kNoToken, eot = kNoToken, eom = kNoToken, unk = kNoToken;
    int32_t sep = kNoToken, pad = kNoToken, cls = kNoToken, mask = kNoToken, newline = kNoToken;
    int32_t fimPre = kNoToken, fimSuf = kNoToken, fimMid = kNoToken;
    int32_t fimPad = kNoToken, fimRep = kNoToken, fimSep = kNoToken;
    std::vector<int32_t> eog;  // end-of-generation ids, ascending

    bool addSpacePrefix = false;
    bool addBos = false;
    bool addEos = false;
    bool addSep = false;
    bool ignoreMerges = false;
    bool cleanSpaces = false;
    bool removeExtraWhitespaces = false;  // read but, as in llama.cpp, not applied
    bool escapeWhitespaces = true;
    bool lowercase = true;     // bert normalizer
    bool stripAccents = true;  // bert normalizer

    // Tokens that the text partitioner can match (control, user-defined, unknown), longest
    // first, then by id.
    std::vector<int32_t> specialTokens;

    int32_t size() const { return int32_t(scores.size()); }
    std::string_view text(int32_t id) const { return texts.at(id); }
    uint32_t attr(int32_t id) const { return attrs[size_t(id)]; }
    int32_t find(std::string_view s) const { return texts.find(s); }
    bool isEog(int32_t id) const;

    // Token of one raw byte: <0xNN> (SPM, character-level BPE) or the byte's own character, kNoToken if absent.
    int32_t byteToken(uint8_t b) const;
    // Byte value of a <0xNN> byte token; -1 when `id` is not one.
    int byteOfToken(int32_t id) const;

    // Applies defaults and fix-ups; fails on an unknown model or pre-tokenizer, duplicate
    // tokens, size mismatches of scores/types, or add_*_token without the token.
    static Result<Vocab> build(VocabSpec spec);
    // What this build lacks for a vocabulary of tokenizer.ggml.model `model` and .pre `pre`, in
    // build()'s words; nullopt when it is supported (the model card's support check uses it).
    static std::optional<std::string> unsupported(std::string_view model, std::string_view pre);
};

}  // namespace verdict::tok
