#include "core/suite/utf8_text.h"

#include "verdict/engine/unicode_case.h"

#include <cstdint>

namespace verdict::core::utf8 {

namespace {
// Length of a well-formed sequence starting at s[i], or 0 when ill-formed (RFC 3629 table 3-7).
size_t sequenceLength(std::string_view s, size_t i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return 1;
    auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
        if (i + k >= s.size()) return false;
        const auto b = static_cast<unsigned char>(s[i + k]);
        return b >= lo && b <= hi;
    };
    if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
    if (b0 == 0xE0) return cont(1, 0xA0, 0xBF) && cont(2) ? 3 : 0;
    if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) return cont(1) && cont(2) ? 3 : 0;
    if (b0 == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no surrogates
    if (b0 == 0xF0) return cont(1, 0x90, 0xBF) && cont(2) && cont(3) ? 4 : 0;
    if (b0 >= 0xF1 && b0 <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (b0 == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    return 0;
}
}  // namespace

std::optional<size_t> firstInvalidByte(std::string_view s) {
    size_t i = 0;
    const size_t n = s.size();
    while (i < n) {
        // Fast path over ASCII, 8 bytes at a time.
        while (i + 8 <= n) {
            uint64_t w;
            __builtin_memcpy(&w, s.data() + i, 8);
            if (w & 0x8080808080808080ULL) break;
            i += 8;
        }
        if (i >= n) break;
        const size_t len = sequenceLength(s, i);
        if (len == 0) return i;
        i += len;
    }
    return std::nullopt;
}

char32_t decodeNext(std::string_view s, size_t& i) {
    const size_t len = sequenceLength(s, i);
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (len == 0) {
        ++i;
        return 0xFFFD;
    }
    char32_t cp;
    if (len == 1) cp = b0;
    else if (len == 2) cp = b0 & 0x1F;
    else if (len == 3) cp = b0 & 0x0F;
    else cp = b0 & 0x07;
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += len;
    return cp;
}

void append(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(char(cp));
    } else if (cp < 0x800) {
        out.push_back(char(0xC0 | (cp >> 6)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(char(0xE0 | (cp >> 12)));
        out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(char(0xF0 | (cp >> 18)));
        out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    }
}

size_t codePointCount(std::string_view s) {
    size_t n = 0;
    for (size_t i = 0; i < s.size();) {
        decodeNext(s, i);
        ++n;
    }
    return n;
}

bool isCjk(char32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF)      // CJK Unified Ideographs
        || (cp >= 0x3400 && cp <= 0x4DBF)      // Extension A
        || (cp >= 0x20000 && cp <= 0x2FA1F)    // Extensions B–F, compatibility supplement
        || (cp >= 0xF900 && cp <= 0xFAFF)      // Compatibility Ideographs
        || (cp >= 0x3040 && cp <= 0x30FF)      // Hiragana, Katakana
        || (cp >= 0x31F0 && cp <= 0x31FF)      // Katakana phonetic extensions
        || (cp >= 0xAC00 && cp <= 0xD7AF)      // Hangul syllables
        || (cp >= 0x3100 && cp <= 0x312F);     // Bopomofo
}

bool isCjkPunctuation(char32_t cp) {
    return (cp >= 0x3001 && cp <= 0x303F)                       // 、。〃〈〉《》「」『』【】〔〕…
        || (cp >= 0xFF01 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20)
        || (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65)
        || (cp >= 0x2010 && cp <= 0x2027)                       // dashes, curly quotes, …
        || (cp >= 0x2030 && cp <= 0x205E) || cp == 0x00B7 || cp == 0xFE30 || (cp >= 0xFE50 && cp <= 0xFE6B);
}

bool isAsciiPunctuation(char32_t cp) {
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
}

bool isWhitespace(char32_t cp) {
    return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == '\v' || cp == '\f' || cp == 0xA0 ||
           cp == 0x3000 || (cp >= 0x2000 && cp <= 0x200B) || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF;
}

bool isLetterOrDigit(char32_t cp) {
    if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z');
    if (isWhitespace(cp) || isCjkPunctuation(cp)) return false;
    if (cp >= 0x80 && cp <= 0xBF) return cp == 0xAA || cp == 0xB2 || cp == 0xB3 || cp == 0xB5 || cp == 0xB9 || cp == 0xBA;
    if (cp == 0xD7 || cp == 0xF7) return false;
    if ((cp >= 0xFF10 && cp <= 0xFF19) || (cp >= 0xFF21 && cp <= 0xFF3A) || (cp >= 0xFF41 && cp <= 0xFF5A)) return true;
    if (cp >= 0xFF00 && cp <= 0xFF65) return false;
    return true;
}

char32_t toLower(char32_t cp) { return lowercaseCodePoint(cp); }

std::string toLowerUtf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x80) {
            out.push_back((b >= 'A' && b <= 'Z') ? char(b + 32) : char(b));
            ++i;
            continue;
        }
        append(out, toLower(decodeNext(s, i)));
    }
    return out;
}

char32_t toHalfWidth(char32_t cp) {
    if (cp >= 0xFF01 && cp <= 0xFF5E) return cp - 0xFEE0;
    if (cp == 0x3000) return ' ';
    return cp;
}

std::string_view trim(std::string_view s) {
    size_t b = 0;
    while (b < s.size()) {
        size_t j = b;
        if (!isWhitespace(decodeNext(s, j))) break;
        b = j;
    }
    size_t e = s.size();
    while (e > b) {
        // step back to the start of the previous code point
        size_t start = e - 1;
        while (start > b && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
        size_t j = start;
        if (!isWhitespace(decodeNext(s, j))) break;
        e = start;
    }
    return s.substr(b, e - b);
}

}  // namespace verdict::core::utf8
