// Small UTF-8 helpers shared by the suite importer (validation) and the scorers (normalisation,
// CJK segmentation). Code points are char32_t; invalid bytes never crash a caller: decoding
// yields U+FFFD for them and validation reports the first bad byte offset.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace verdict::core::utf8 {

// Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF), or nullopt when `s` is valid.
std::optional<size_t> firstInvalidByte(std::string_view s);
inline bool isValid(std::string_view s) { return !firstInvalidByte(s).has_value(); }

// Decodes the code point starting at s[i] and advances i. Ill-formed input yields U+FFFD and
// advances by one byte, so a loop over `decodeNext` always terminates.
char32_t decodeNext(std::string_view s, size_t& i);

void append(std::string& out, char32_t cp);
size_t codePointCount(std::string_view s);

// Han ideographs, kana, Hangul syllables and CJK symbols: each is one "word" for ROUGE/BLEU.
bool isCjk(char32_t cp);
// CJK / full-width punctuation (U+3000–U+303F, U+FF00–U+FF65 punctuation, curly quotes, dashes).
bool isCjkPunctuation(char32_t cp);
bool isAsciiPunctuation(char32_t cp);
bool isWhitespace(char32_t cp);  // ASCII space/tab/CR/LF/VT/FF, NBSP, U+3000 and U+2000–U+200B
bool isLetterOrDigit(char32_t cp);  // ASCII alnum, or any non-ASCII that is not space/punctuation

// Unicode simple lowercase mapping (the engine's table, the one the tokenizers use:
// verdict/engine/unicode_case.h).
char32_t toLower(char32_t cp);
std::string toLowerUtf8(std::string_view s);

// Full-width ASCII variants (U+FF01–U+FF5E) and the ideographic space to their half-width forms.
char32_t toHalfWidth(char32_t cp);

// Trims ASCII + Unicode whitespace at both ends.
std::string_view trim(std::string_view s);

}  // namespace verdict::core::utf8
