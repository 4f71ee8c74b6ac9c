// WordPiece, as llama.cpp's llm_tokenizer_wpm_session (src/llama-vocab.cpp):
//   * BERT basic normalisation: NFD (first code point) and accent removal when strip_accents,
//     lowercase when lowercase; NUL, U+FFFD and control characters dropped; white space splits
//     words; punctuation, ASCII symbols and CJK ideographs are words of their own;
//   * each word, prefixed with U+2581 (GGUF stores word-initial pieces with it and drops "##"),
//     is cut greedily into the longest vocabulary entries; a word with an uncovered position
//     becomes the unknown token.
#include "tokenizer/models.h"
#include "tokenizer/unicode.h"

namespace verdict::tok {

namespace {

// CJK ranges of BERT's _is_chinese_char (0x2B920 instead of 0x2B820, as in HF's Rust code).
bool isChineseChar(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// Greedy longest match of one word (already prefixed with U+2581).
void encodeWord(const Vocab& vocab, const std::string& word, std::vector<int32_t>& out) {
    const size_t n = word.size();
    const size_t before = out.size();
    for (size_t i = 0; i < n;) {
        bool matched = false;
        for (size_t j = std::min(n, i + vocab.maxTokenLength); j > i; --j) {
            const int32_t id = vocab.find(std::string_view(word).substr(i, j - i));
            if (id != kNoToken) {
                out.push_back(id);
                matched = true;
                i = j;
                break;
            }
        }
        if (!matched) {
            out.resize(before);
            break;
        }
    }
    if (out.size() == before && vocab.unk != kNoToken) out.push_back(vocab.unk);
}

}  // namespace

void wpmEncode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
    static constexpr std::string_view kPrefix = "\xE2\x96\x81";  // U+2581
    std::string word(kPrefix);
    auto finish = [&] {
        if (word.size() > kPrefix.size()) encodeWord(vocab, word, out);
        word.resize(kPrefix.size());
    };
    size_t off = 0;
    while (off < text.size()) {
        uint32_t cp = decodeUtf8At(text, off);
        if (vocab.stripAccents) cp = cpNfdFirst(cp);
        const uint16_t f = cpFlags(cp);
        if (f & kCpWhitespace) {
            finish();
            continue;
        }
        if (cp == 0 || cp == kReplacementChar || (f & kCpControl)) continue;
        if (vocab.stripAccents && (f & kCpMark)) continue;
        const uint32_t c = vocab.lowercase ? cpToLower(cp) : cp;
        if ((f & kCpPunct) || (cp < 0x7F && (f & kCpSymbol)) || isChineseChar(cp)) {
            finish();
            appendUtf8(word, c);
            finish();
        } else {
            appendUtf8(word, c);
        }
    }
    finish();
}

}  // namespace verdict::tok
