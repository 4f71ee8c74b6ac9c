// Unicode helpers for the tokenizers: code point categories, lowercase, NFD, UTF-8 as llama.cpp
// reads it, and the GPT-2 byte-level alphabet.
//
// Categories follow llama.cpp's unicode tables (src/unicode.h, scripts/gen-unicode-data.py):
// every code point gets exactly one of the \p{..} category bits below (unassigned ones get
// kCpUndefined), plus kCpWhitespace for the White_Space property. Data: tools/gen_unicode_tables.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::tok {

enum CpFlag : uint16_t {
    kCpUndefined = 0x0001,   // general category Cn (unassigned)
    kCpNumber = 0x0002,      // \p{N}
    kCpLetter = 0x0004,      // \p{L}
    kCpSeparator = 0x0008,   // \p{Z}
    kCpMark = 0x0010,        // \p{M}
    kCpPunct = 0x0020,       // \p{P}
    kCpSymbol = 0x0040,      // \p{S}
    kCpControl = 0x0080,     // \p{C} (Cc, Cf, Co, Cs)
    kCpWhitespace = 0x0100,  // White_Space property (what \s means in llama.cpp's splitters)
};

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr uint32_t kReplacementChar = 0xFFFD;

namespace detail {
struct FlagTable {
    uint16_t ascii[128];
    std::vector<uint16_t> stage1;  // block index per 256 code points
    std::vector<uint16_t> stage2;  // deduplicated blocks of 256 flag words
};
const FlagTable* buildFlagTable();
inline const FlagTable& flagTable() {
    static const FlagTable* const table = buildFlagTable();  // built once, thread-safe
    return *table;
}
}  // namespace detail

// Category flags of a code point; kCpUndefined for values past U+10FFFF.
inline uint16_t cpFlags(uint32_t cp) {
    const detail::FlagTable& t = detail::flagTable();
    if (cp < 128) return t.ascii[cp];
    if (cp > kMaxCodePoint) return kCpUndefined;
    return t.stage2[(size_t(t.stage1[cp >> 8]) << 8) | (cp & 0xFF)];
}

uint32_t cpToLower(uint32_t cp);   // simple lowercase mapping (UnicodeData field 13)
uint32_t cpNfdFirst(uint32_t cp);  // first code point of the canonical decomposition
bool cpIsHan(uint32_t cp);         // CJK ideograph blocks (llama.cpp unicode_cpt_is_han)

// ---- UTF-8 -------------------------------------------------------------------------------

// Sequence length announced by a lead byte, from its high nibble (1 for continuation bytes),
// as llama.cpp's unicode_len_utf8. Used where llama.cpp chops text without validating it.
inline size_t utf8LeadLength(uint8_t b) {
    static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return kLen[b >> 4];
}

// Decodes one code point at `off` the way llama.cpp's unicode_cpts_from_utf8 does: structural
// check only (lead byte + continuation bytes; overlong forms and surrogates are accepted), an
// invalid byte yields U+FFFD and advances by one byte. Values past U+10FFFF (leads F5..F7),
// which llama.cpp cannot re-encode, also yield U+FFFD (consuming their bytes).
uint32_t decodeUtf8At(std::string_view s, size_t& off);

size_t utf8EncodedLength(uint32_t cp);
void appendUtf8(std::string& out, uint32_t cp);

// Decodes all of `s` with decodeUtf8At.
void decodeUtf8(std::string_view s, std::vector<uint32_t>& cps);

// Re-encodes `s` so that every code point decodeUtf8At reads is written canonically (invalid
// bytes become EF BF BD). Returns false and leaves `out` untouched when `s` is already canonical.
bool canonicalizeUtf8(std::string_view s, std::string& out);

// Strict UTF-8 check (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF) of the
// sequence starting at s[0]: its length when complete and valid, 0 when `s` is a valid but
// incomplete start of a sequence (more bytes may complete it), -1 when it can never be valid.
int strictUtf8Sequence(std::string_view s);

// ---- GPT-2 byte-level alphabet (each byte is shown as one printable code point) ----------

uint32_t byteToAlphabetCp(uint8_t b);
int alphabetCpToByte(uint32_t cp);  // -1 when cp is not in the alphabet

}  // namespace verdict::tok
