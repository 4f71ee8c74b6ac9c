#include "util/quote.h"

#include <cstdint>
#include <cstdio>

namespace verdict::util {
namespace {

// Length of the valid UTF-8 sequence at s[i] (1..4), or 0 when the bytes there are not one.
// C1 controls (U+0080..U+009F, which some terminals obey as escapes) count as invalid here.
size_t utf8Length(std::string_view s, size_t i) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1Fu) : n == 3 ? (b & 0x0Fu) : (b & 0x07u);
    for (size_t k = 1; k < n; ++k) {
        const auto c = static_cast<unsigned char>(s[i + k]);
        if ((c >> 6) != 0x2) return 0;
        cp = (cp << 6) | (c & 0x3Fu);
    }
    const uint32_t minCp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < minCp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;  // overlong, surrogate
    if (cp >= 0x80 && cp <= 0x9F) return 0;
    return n;
}

void escapeByte(std::string& out, unsigned char b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", b);
    out += buf;
}

// Appends s[i..] escaped until `maxBytes` of the input are consumed; returns the bytes consumed.
size_t appendEscaped(std::string& out, std::string_view s, size_t maxBytes, bool escapeQuote) {
    size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        const size_t n = utf8Length(s, i);
        if (i + (n ? n : 1) > maxBytes) break;
        if (n == 1 && b >= 0x20 && b != 0x7F) {
            if (escapeQuote && (b == '\'' || b == '\\')) out += '\\';
            out += static_cast<char>(b);
        } else if (n == 1 && b == '\n') {
            out += "\\n";
        } else if (n == 1 && b == '\t') {
            out += "\\t";
        } else if (n > 1) {
            out.append(s.substr(i, n));
        } else {
            escapeByte(out, b);
            i += 1;
            continue;
        }
        i += n;
    }
    return i;
}

}  // namespace

std::string quoteFileText(std::string_view text, size_t maxBytes) {
    std::string out = "'";
    const size_t used = appendEscaped(out, text, maxBytes, true);
    out += '\'';
    if (used < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
    return out;
}

std::string oneLine(std::string_view message, size_t maxBytes) {
    std::string out;
    const size_t used = appendEscaped(out, message, maxBytes, false);
    if (used < message.size()) out += "... (" + std::to_string(message.size()) + " bytes in all)";
    return out;
}

}  // namespace verdict::util
