// Python str semantics over UTF-8: see jinja_string.h.
#include "template/jinja_string.h"

#include "template/jinja_error.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace verdict::tok::jinja {

Utf8Unit decodeUtf8At(std::string_view s, std::size_t pos) {
    const auto b0 = static_cast<unsigned char>(s[pos]);
    if (b0 < 0x80) return {b0, 1, true};
    std::size_t need = 0;
    char32_t cp = 0;
    char32_t minimum = 0;
    if ((b0 & 0xE0) == 0xC0) { need = 1; cp = b0 & 0x1F; minimum = 0x80; }
    else if ((b0 & 0xF0) == 0xE0) { need = 2; cp = b0 & 0x0F; minimum = 0x800; }
    else if ((b0 & 0xF8) == 0xF0) { need = 3; cp = b0 & 0x07; minimum = 0x10000; }
    else return {b0, 1, false};
    if (pos + need >= s.size()) return {b0, 1, false};
    for (std::size_t k = 1; k <= need; ++k) {
        const auto b = static_cast<unsigned char>(s[pos + k]);
        if ((b & 0xC0) != 0x80) return {b0, 1, false};
        cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < minimum || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {b0, 1, false};
    return {cp, need + 1, true};
}

void appendUtf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
}

std::size_t utf8Length(std::string_view s) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); i += decodeUtf8At(s, i).length) ++n;
    return n;
}

std::vector<std::size_t> utf8Boundaries(std::string_view s) {
    std::vector<std::size_t> out;
    out.reserve(s.size() + 1);
    for (std::size_t i = 0; i < s.size(); i += decodeUtf8At(s, i).length) out.push_back(i);
    out.push_back(s.size());
    return out;
}

std::size_t utf8OffsetOfUnit(std::string_view s, std::size_t unitIndex) {
    std::size_t i = 0;
    for (std::size_t n = 0; n < unitIndex && i < s.size(); ++n) i += decodeUtf8At(s, i).length;
    return i;
}

bool isPySpace(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680
        || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F
        || c == 0x3000;
}

bool isPyLineBreak(char32_t c) {
    return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85
        || c == 0x2028 || c == 0x2029;
}

// Pair ranges where upper and lower case alternate (even = upper or odd = upper).
namespace {
struct AlternatingRange {
    char32_t first;
    char32_t last;  // inclusive, last lower-case member
};
// Ranges where the upper-case letter is at the even offset from `first`.
constexpr AlternatingRange kAlternating[] = {
    {0x0100, 0x012F}, {0x0132, 0x0137}, {0x0139, 0x0148}, {0x014A, 0x0177}, {0x0179, 0x017E},
    {0x01A0, 0x01A5}, {0x01DE, 0x01EF}, {0x01F8, 0x021F}, {0x0222, 0x0233}, {0x03D8, 0x03EF},
    {0x0460, 0x0481}, {0x048A, 0x04BF}, {0x04C1, 0x04CE}, {0x04D0, 0x052F}, {0x1E00, 0x1E95},
    {0x1EA0, 0x1EFF},
};

bool alternatingLookup(char32_t c, bool wantUpper, char32_t& out) {
    for (const auto& r : kAlternating) {
        if (c < r.first || c > r.last) continue;
        const bool isUpper = ((c - r.first) % 2) == 0;
        if (wantUpper) out = isUpper ? c : c - 1;
        else out = isUpper ? c + 1 : c;
        return true;
    }
    return false;
}
}  // namespace

char32_t upperCodePoint(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
    if (c == 0xB5) return 0x39C;
    if (c == 0xFF) return 0x178;
    if ((c >= 0xE0 && c <= 0xFE) && c != 0xF7) return c - 32;
    if (c == 0x131) return 'I';
    char32_t out = c;
    if (alternatingLookup(c, true, out)) return out;
    if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
    if (c == 0x3C2) return 0x3A3;
    if (c == 0x3AC) return 0x386;
    if (c >= 0x3AD && c <= 0x3AF) return c - 37;
    if (c == 0x3CC) return 0x38C;
    if (c == 0x3CD || c == 0x3CE) return c - 63;
    if (c >= 0x430 && c <= 0x44F) return c - 32;
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    if (c >= 0x561 && c <= 0x586) return c - 48;
    if (c >= 0xFF41 && c <= 0xFF5A) return c - 32;
    return c;
}

char32_t lowerCodePoint(char32_t c) {
    if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
    if ((c >= 0xC0 && c <= 0xDE) && c != 0xD7) return c + 32;
    if (c == 0x178) return 0xFF;
    if (c == 0x130) return 'i';
    char32_t out = c;
    if (alternatingLookup(c, false, out)) return out;
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
    if (c == 0x386) return 0x3AC;
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c == 0x38C) return 0x3CC;
    if (c == 0x38E || c == 0x38F) return c + 63;
    if (c >= 0x410 && c <= 0x42F) return c + 32;
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    if (c >= 0x531 && c <= 0x556) return c + 48;
    if (c >= 0xFF21 && c <= 0xFF3A) return c + 32;
    return c;
}

bool isCasedCodePoint(char32_t c) {
    return c == 0xDF || upperCodePoint(c) != c || lowerCodePoint(c) != c;
}

bool isDigitCodePoint(char32_t c) { return (c >= '0' && c <= '9') || (c >= 0xFF10 && c <= 0xFF19); }

bool isAlphaCodePoint(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (c < 0xC0) return c == 0xAA || c == 0xB5 || c == 0xBA;
    if (c == 0xD7 || c == 0xF7 || isPySpace(c)) return false;
    if (c >= 0x2000 && c <= 0x2BFF) return false;  // punctuation, symbols, arrows, boxes
    if (c >= 0x3000 && c <= 0x303F) return false;  // CJK punctuation
    if (c >= 0xFF00 && c <= 0xFF20) return false;  // fullwidth punctuation and digits
    if (c >= 0xFE30 && c <= 0xFE4F) return false;
    if (c >= 0x1F000 && c <= 0x1FAFF) return false;  // emoji and pictographs
    return true;
}

namespace {
template <class F>
std::string mapUnits(std::string_view s, F&& f) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const Utf8Unit u = decodeUtf8At(s, i);
        if (!u.valid) out.append(s.substr(i, 1));
        else f(out, u.codePoint);
        i += u.length;
    }
    return out;
}
}  // namespace

std::string pyUpper(std::string_view s) {
    return mapUnits(s, [](std::string& out, char32_t c) {
        if (c == 0xDF) out += "SS";
        else appendUtf8(out, upperCodePoint(c));
    });
}

std::string pyLower(std::string_view s) {
    return mapUnits(s, [](std::string& out, char32_t c) { appendUtf8(out, lowerCodePoint(c)); });
}

std::string pyTitle(std::string_view s) {
    bool previousCased = false;
    return mapUnits(s, [&](std::string& out, char32_t c) {
        const bool cased = isCasedCodePoint(c);
        if (cased && !previousCased) appendUtf8(out, upperCodePoint(c));
        else if (cased) appendUtf8(out, lowerCodePoint(c));
        else appendUtf8(out, c);
        previousCased = cased;
    });
}

std::string pyCapitalize(std::string_view s) {
    bool first = true;
    return mapUnits(s, [&](std::string& out, char32_t c) {
        appendUtf8(out, first ? upperCodePoint(c) : lowerCodePoint(c));
        first = false;
    });
}

std::string jinjaTitle(std::string_view s) {
    // jinja2's do_title: split on runs of [-\s({[<], keep the separators, and for every other
    // piece upper-case its first character and lower-case the rest.
    auto isSeparator = [](const Utf8Unit& u) {
        if (!u.valid) return false;
        const char32_t c = u.codePoint;
        return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || isPySpace(c);
    };
    std::string out;
    out.reserve(s.size());
    bool wordStart = true;
    for (std::size_t i = 0; i < s.size();) {
        const Utf8Unit u = decodeUtf8At(s, i);
        if (isSeparator(u)) {
            out.append(s.substr(i, u.length));
            wordStart = true;
        } else if (!u.valid) {
            out.append(s.substr(i, 1));
            wordStart = false;
        } else {
            appendUtf8(out, wordStart ? upperCodePoint(u.codePoint) : lowerCodePoint(u.codePoint));
            wordStart = false;
        }
        i += u.length;
    }
    return out;
}

std::string pyStrip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
    std::vector<std::string_view> set;
    if (chars) {
        for (std::size_t i = 0; i < chars->size();) {
            const std::size_t n = decodeUtf8At(*chars, i).length;
            set.push_back(std::string_view(*chars).substr(i, n));
            i += n;
        }
    }
    auto strippable = [&](std::string_view unit, const Utf8Unit& u) {
        if (!chars) return u.valid && isPySpace(u.codePoint);
        for (auto c : set)
            if (c == unit) return true;
        return false;
    };
    const std::vector<std::size_t> b = utf8Boundaries(s);
    std::size_t lo = 0;
    std::size_t hi = b.size() - 1;  // unit indices [lo, hi)
    if (left) {
        while (lo < hi && strippable(s.substr(b[lo], b[lo + 1] - b[lo]), decodeUtf8At(s, b[lo]))) ++lo;
    }
    if (right) {
        while (hi > lo && strippable(s.substr(b[hi - 1], b[hi] - b[hi - 1]), decodeUtf8At(s, b[hi - 1]))) --hi;
    }
    return std::string(s.substr(b[lo], b[hi] - b[lo]));
}

namespace {
bool spaceAt(std::string_view s, std::size_t i, std::size_t& len) {
    const Utf8Unit u = decodeUtf8At(s, i);
    len = u.length;
    return u.valid && isPySpace(u.codePoint);
}
}  // namespace

std::vector<std::string> pySplit(std::string_view s, const std::optional<std::string>& sep, std::int64_t maxSplit) {
    std::vector<std::string> out;
    if (sep) {
        if (sep->empty()) fail(ErrorKind::Value, "empty separator");
        std::size_t start = 0;
        while (maxSplit < 0 || static_cast<std::int64_t>(out.size()) < maxSplit) {
            const std::size_t at = s.find(*sep, start);
            if (at == std::string_view::npos) break;
            out.emplace_back(s.substr(start, at - start));
            start = at + sep->size();
        }
        out.emplace_back(s.substr(start));
        return out;
    }
    std::size_t i = 0;
    std::size_t len = 0;
    while (i < s.size()) {
        while (i < s.size() && spaceAt(s, i, len)) i += len;
        if (i >= s.size()) break;
        if (maxSplit >= 0 && static_cast<std::int64_t>(out.size()) >= maxSplit) {
            out.emplace_back(s.substr(i));  // remainder keeps its trailing whitespace
            return out;
        }
        const std::size_t start = i;
        while (i < s.size() && !spaceAt(s, i, len)) i += len;
        out.emplace_back(s.substr(start, i - start));
    }
    return out;
}

std::vector<std::string> pyRSplit(std::string_view s, const std::optional<std::string>& sep, std::int64_t maxSplit) {
    std::vector<std::string> out;
    if (sep) {
        if (sep->empty()) fail(ErrorKind::Value, "empty separator");
        std::size_t end = s.size();
        while (maxSplit < 0 || static_cast<std::int64_t>(out.size()) < maxSplit) {
            if (end < sep->size()) break;
            const std::size_t at = s.rfind(*sep, end - sep->size());
            if (at == std::string_view::npos) break;
            out.emplace_back(s.substr(at + sep->size(), end - at - sep->size()));
            end = at;
        }
        out.emplace_back(s.substr(0, end));
        return {out.rbegin(), out.rend()};
    }
    const std::vector<std::size_t> b = utf8Boundaries(s);
    auto isSpaceUnit = [&](std::size_t unit) {
        const Utf8Unit u = decodeUtf8At(s, b[unit]);
        return u.valid && isPySpace(u.codePoint);
    };
    std::size_t hi = b.size() - 1;  // unit index (exclusive)
    while (hi > 0) {
        while (hi > 0 && isSpaceUnit(hi - 1)) --hi;
        if (hi == 0) break;
        if (maxSplit >= 0 && static_cast<std::int64_t>(out.size()) >= maxSplit) {
            out.emplace_back(s.substr(0, b[hi]));
            return {out.rbegin(), out.rend()};
        }
        std::size_t lo = hi;
        while (lo > 0 && !isSpaceUnit(lo - 1)) --lo;
        out.emplace_back(s.substr(b[lo], b[hi] - b[lo]));
        hi = lo;
    }
    return {out.rbegin(), out.rend()};
}

std::vector<std::string> pySplitLines(std::string_view s, bool keepEnds) {
    std::vector<std::string> out;
    std::size_t start = 0;
    std::size_t i = 0;
    while (i < s.size()) {
        const Utf8Unit u = decodeUtf8At(s, i);
        if (u.valid && isPyLineBreak(u.codePoint)) {
            std::size_t end = i + u.length;
            if (u.codePoint == '\r' && end < s.size() && s[end] == '\n') ++end;
            out.emplace_back(s.substr(start, (keepEnds ? end : i) - start));
            start = i = end;
        } else {
            i += u.length;
        }
    }
    if (start < s.size()) out.emplace_back(s.substr(start));
    return out;
}

std::string pyReplace(std::string_view s, std::string_view from, std::string_view to, std::int64_t count,
                      std::size_t maxBytes) {
    std::string out;
    std::int64_t done = 0;
    auto bounded = [&] {
        if (out.size() > maxBytes)
            throw JinjaError(ErrorKind::Limit, "replace() result larger than " + std::to_string(maxBytes) + " bytes");
    };
    if (from.empty()) {
        // Python inserts `to` before every unit and at the end.
        const std::vector<std::size_t> b = utf8Boundaries(s);
        for (std::size_t k = 0; k + 1 < b.size(); ++k) {
            if (count < 0 || done < count) { out.append(to); ++done; }
            out.append(s.substr(b[k], b[k + 1] - b[k]));
            bounded();
        }
        if (count < 0 || done < count) out.append(to);
        bounded();
        return out;
    }
    std::size_t start = 0;
    while (count < 0 || done < count) {
        const std::size_t at = s.find(from, start);
        if (at == std::string_view::npos) break;
        out.append(s.substr(start, at - start));
        out.append(to);
        bounded();
        start = at + from.size();
        ++done;
    }
    out.append(s.substr(start));
    bounded();
    return out;
}

std::int64_t pyFind(std::string_view s, std::string_view sub, std::optional<std::int64_t> start,
                    std::optional<std::int64_t> end, bool reverse) {
    const std::vector<std::size_t> b = utf8Boundaries(s);
    const auto n = static_cast<std::int64_t>(b.size() - 1);
    auto clampIndex = [n](std::int64_t v) {
        if (v < 0) v += n;
        if (v < 0) v = 0;
        return v;
    };
    std::int64_t lo = start ? clampIndex(*start) : 0;
    std::int64_t hi = end ? clampIndex(*end) : n;
    if (hi > n) hi = n;
    if (lo > n || lo > hi) return -1;
    const std::string_view window = s.substr(b[lo], b[hi] - b[lo]);
    const std::size_t at = reverse ? window.rfind(sub) : window.find(sub);
    if (at == std::string_view::npos) return -1;
    const std::size_t byte = b[lo] + at;
    // Convert the byte offset back to a unit index.
    std::int64_t unit = lo;
    while (static_cast<std::size_t>(unit) < b.size() && b[unit] < byte) ++unit;
    return unit;
}

std::int64_t pyCount(std::string_view s, std::string_view sub) {
    if (sub.empty()) return static_cast<std::int64_t>(utf8Length(s)) + 1;
    std::int64_t n = 0;
    for (std::size_t at = s.find(sub); at != std::string_view::npos; at = s.find(sub, at + sub.size())) ++n;
    return n;
}

std::string htmlEscape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&#34;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

namespace {
bool isPrintable(char32_t c) {
    if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0xA0) || c == 0xAD) return false;
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F)) return false;
    if ((c >= 0x205F && c <= 0x2064) || (c >= 0x2066 && c <= 0x206F) || c == 0x3000) return false;
    if (c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) || (c >= 0xE000 && c <= 0xF8FF)) return false;
    if (c >= 0xF0000) return false;
    return true;
}

void appendHexEscape(std::string& out, char32_t c) {
    char buf[16];
    if (c < 0x100) std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
    else if (c < 0x10000) std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
    else std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
    out += buf;
}
}  // namespace

std::string pyReprString(std::string_view s) {
    const bool hasSingle = s.find('\'') != std::string_view::npos;
    const bool hasDouble = s.find('"') != std::string_view::npos;
    const char quote = (hasSingle && !hasDouble) ? '"' : '\'';
    std::string out;
    out.reserve(s.size() + 2);
    out += quote;
    for (std::size_t i = 0; i < s.size();) {
        const Utf8Unit u = decodeUtf8At(s, i);
        if (!u.valid) {
            appendHexEscape(out, static_cast<unsigned char>(s[i]));
        } else {
            const char32_t c = u.codePoint;
            if (c == static_cast<char32_t>(quote) || c == '\\') { out += '\\'; out += static_cast<char>(c); }
            else if (c == '\n') out += "\\n";
            else if (c == '\r') out += "\\r";
            else if (c == '\t') out += "\\t";
            else if (!isPrintable(c)) appendHexEscape(out, c);
            else out.append(s.substr(i, u.length));
        }
        i += u.length;
    }
    out += quote;
    return out;
}

std::string pyFloatRepr(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
    // sci looks like "-1.2345e+17" or "5e-05".
    std::string sign;
    std::size_t i = 0;
    if (sci[0] == '-') { sign = "-"; i = 1; }
    const std::size_t ePos = sci.find('e');
    std::string digits;
    for (std::size_t k = i; k < ePos; ++k)
        if (sci[k] != '.') digits += sci[k];
    int exp10 = 0;
    std::from_chars(sci.data() + ePos + (sci[ePos + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp10);
    const int decpt = exp10 + 1;  // value = 0.DIGITS * 10^decpt
    const int nd = static_cast<int>(digits.size());
    std::string out = sign;
    if (decpt < -3 || decpt > 16) {
        out += digits[0];
        if (nd > 1) { out += '.'; out.append(digits, 1, std::string::npos); }
        char eb[16];
        std::snprintf(eb, sizeof eb, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
        out += eb;
    } else if (decpt <= 0) {
        out += "0.";
        out.append(static_cast<std::size_t>(-decpt), '0');
        out += digits;
    } else if (decpt >= nd) {
        out += digits;
        out.append(static_cast<std::size_t>(decpt - nd), '0');
        out += ".0";
    } else {
        out.append(digits, 0, static_cast<std::size_t>(decpt));
        out += '.';
        out.append(digits, static_cast<std::size_t>(decpt), std::string::npos);
    }
    return out;
}

}  // namespace verdict::tok::jinja
