// Jinja lexer: see jinja_lexer.h for the whitespace rules it reproduces.
#include "template/jinja_lexer.h"

#include "template/jinja_error.h"
#include "template/jinja_string.h"

#include <cstring>

namespace verdict::tok::jinja {

namespace {

[[noreturn]] void syntaxError(std::string message, std::size_t offset) {
    throw JinjaError(ErrorKind::Syntax, std::move(message), offset);
}

}  // namespace

// jinja2: split on \r\n|\r|\n, drop one empty last line (keep_trailing_newline=False), join "\n".
std::string normaliseNewlines(std::string_view source) {
    std::string out;
    out.reserve(source.size());
    for (std::size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            out += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            out += source[i];
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

namespace {

// Python's \s at position i (Unicode whitespace); returns its byte length or 0.
std::size_t spaceLengthAt(std::string_view s, std::size_t i) {
    if (i >= s.size()) return 0;
    const Utf8Unit u = decodeUtf8At(s, i);
    return (u.valid && isPySpace(u.codePoint)) ? u.length : 0;
}

std::size_t skipSpaces(std::string_view s, std::size_t i) {
    while (std::size_t n = spaceLengthAt(s, i)) i += n;
    return i;
}

bool allSpaces(std::string_view s) {
    if (s.empty()) return false;  // jinja2 matches \s+ : needs at least one character
    return skipSpaces(s, 0) == s.size();
}

std::string rstripSpaces(std::string_view s) {
    return pyStrip(s, std::nullopt, false, true);
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isNameStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool isNameChar(char c) { return isNameStart(c) || isDigit(c); }

// `(\d+_)*\d+` starting at i; returns the end, or i when there is no digit.
std::size_t scanDigits(std::string_view s, std::size_t i) {
    if (i >= s.size() || !isDigit(s[i])) return i;
    std::size_t end = i;
    while (end < s.size() && isDigit(s[end])) ++end;
    while (end + 1 < s.size() && s[end] == '_' && isDigit(s[end + 1])) {
        ++end;
        while (end < s.size() && isDigit(s[end])) ++end;
    }
    return end;
}

// `e[+\-]?(\d+_)*\d+` at i; returns the end or i.
std::size_t scanExponent(std::string_view s, std::size_t i) {
    if (i >= s.size() || (s[i] != 'e' && s[i] != 'E')) return i;
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    const std::size_t end = scanDigits(s, j);
    return end == j ? i : end;
}

std::string withoutUnderscores(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != '_') out += c;
    return out;
}

int hexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Python's "unicode-escape" decoding of a literal's body (jinja2 decodes string literals so).
std::string decodeStringLiteral(std::string_view body, std::size_t offset) {
    std::string out;
    out.reserve(body.size());
    for (std::size_t i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (c != '\\' || i + 1 >= body.size()) {
            out += c;
            continue;
        }
        const char e = body[++i];
        switch (e) {
        case '\n': break;  // line continuation
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
            const std::size_t digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
            char32_t cp = 0;
            for (std::size_t k = 0; k < digits; ++k) {
                const int h = i + 1 + k < body.size() ? hexValue(body[i + 1 + k]) : -1;
                if (h < 0) syntaxError(std::string("truncated \\") + e + " escape in string literal", offset);
                cp = cp * 16 + static_cast<char32_t>(h);
            }
            if (cp > 0x10FFFF) syntaxError("illegal Unicode character in string literal", offset);
            appendUtf8(out, cp);
            i += digits;
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                char32_t cp = static_cast<char32_t>(e - '0');
                for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
                    cp = cp * 8 + static_cast<char32_t>(body[++i] - '0');
                appendUtf8(out, cp);
            } else {
                out += '\\';  // unknown escapes stay as written
                out += e;
            }
        }
    }
    return out;
}

class Lexer {
public:
    explicit Lexer(std::string text) { m_out.text = std::move(text); }

    LexedTemplate run() {
        const std::string_view s = m_out.text;
        std::size_t pos = 0;
        while (pos < s.size()) {
            const std::size_t tag = findTagStart(s, pos);
            if (tag == std::string_view::npos) {
                emit(TokenType::Data, std::string(s.substr(pos)), pos);
                break;
            }
            const char kind = s[tag + 1];
            std::size_t after = tag + 2;
            char sign = 0;
            if (after < s.size() && (s[after] == '-' || s[after] == '+')) sign = s[after++];

            std::size_t rawBodyStart = 0;
            const bool raw = kind == '%' && matchRawBegin(s, after, rawBodyStart);
            std::string text = applyLeftStrip(s.substr(pos, tag - pos), sign, kind != '{');
            if (!text.empty()) emit(TokenType::Data, std::move(text), pos);

            if (raw) pos = lexRaw(s, rawBodyStart, tag);
            else if (kind == '#') pos = lexComment(s, after, tag);
            else pos = lexTag(s, after, tag, kind == '{');
        }
        emit(TokenType::End, {}, s.size());
        return std::move(m_out);
    }

private:
    void emit(TokenType type, std::string value, std::size_t offset) {
        m_out.tokens.push_back(Token{type, std::move(value), offset});
    }

    static std::size_t findTagStart(std::string_view s, std::size_t pos) {
        for (std::size_t i = s.find('{', pos); i != std::string_view::npos; i = s.find('{', i + 1)) {
            if (i + 1 < s.size() && (s[i + 1] == '{' || s[i + 1] == '%' || s[i + 1] == '#')) return i;
        }
        return std::string_view::npos;
    }

    // '-' strips all whitespace before the tag; otherwise lstrip_blocks removes the spaces and
    // tabs between the start of the line and a block/comment tag (never for {{ }}, never with '+').
    std::string applyLeftStrip(std::string_view text, char sign, bool blockOrComment) const {
        if (sign == '-') return rstripSpaces(text);
        if (sign == '+' || !blockOrComment) return std::string(text);
        const std::size_t nl = text.rfind('\n');
        const std::size_t lineStart = nl == std::string_view::npos ? 0 : nl + 1;
        if ((lineStart > 0 || m_lineStarting) && allSpaces(text.substr(lineStart)))
            return std::string(text.substr(0, lineStart));
        return std::string(text);
    }

    // After a tag's end marker: '-' eats all following whitespace; plain "%}" / "#}" eat one
    // newline (trim_blocks); '+' keeps everything. Returns the position after what was eaten.
    std::size_t afterBlockEnd(std::string_view s, std::size_t endMarker, char modifier) {
        std::size_t p = endMarker + 2;
        if (modifier == '-') p = skipSpaces(s, p);
        else if (modifier != '+' && p < s.size() && s[p] == '\n') ++p;
        m_lineStarting = p > 0 && s[p - 1] == '\n' && p > endMarker + 2;
        return p;
    }

    bool matchRawBegin(std::string_view s, std::size_t after, std::size_t& bodyStart) const {
        std::size_t p = skipSpaces(s, after);
        if (s.compare(p, 3, "raw") != 0) return false;
        p = skipSpaces(s, p + 3);
        if (s.compare(p, 3, "-%}") == 0) {
            bodyStart = skipSpaces(s, p + 3);
            return true;
        }
        if (s.compare(p, 2, "%}") == 0) {
            bodyStart = p + 2;  // no trim_blocks for the raw opening tag (as in jinja2)
            return true;
        }
        return false;
    }

    std::size_t lexRaw(std::string_view s, std::size_t body, std::size_t tagStart) {
        m_lineStarting = body > 0 && s[body - 1] == '\n';
        for (std::size_t i = findTagStart(s, body); i != std::string_view::npos; i = findTagStart(s, i + 1)) {
            if (s[i + 1] != '%') continue;
            std::size_t p = i + 2;
            char sign = 0;
            if (p < s.size() && (s[p] == '-' || s[p] == '+')) sign = s[p++];
            p = skipSpaces(s, p);
            if (s.compare(p, 6, "endraw") != 0) continue;
            p = skipSpaces(s, p + 6);
            char modifier = 0;
            if (p < s.size() && (s[p] == '-' || s[p] == '+')) modifier = s[p++];
            if (s.compare(p, 2, "%}") != 0) continue;
            std::string text = applyLeftStrip(s.substr(body, i - body), sign, true);
            if (!text.empty()) emit(TokenType::Data, std::move(text), body);
            return afterBlockEnd(s, p, modifier);
        }
        syntaxError("missing end of raw directive ({% endraw %})", tagStart);
    }

    std::size_t lexComment(std::string_view s, std::size_t after, std::size_t tagStart) {
        const std::size_t close = s.find("#}", after);
        if (close == std::string_view::npos) syntaxError("missing end of comment tag", tagStart);
        char modifier = 0;
        if (close > after && (s[close - 1] == '-' || s[close - 1] == '+')) modifier = s[close - 1];
        return afterBlockEnd(s, close, modifier);
    }

    std::size_t lexTag(std::string_view s, std::size_t p, std::size_t tagStart, bool variable) {
        emit(variable ? TokenType::VariableBegin : TokenType::BlockBegin, {}, tagStart);
        std::string balance;  // expected closing brackets
        while (true) {
            if (p >= s.size()) {
                syntaxError(std::string("unexpected end of template: ") + (variable ? "'{{'" : "'{%'")
                                + " tag is never closed",
                            tagStart);
            }
            if (balance.empty()) {
                if (variable) {
                    if (s.compare(p, 3, "-}}") == 0) {
                        emit(TokenType::VariableEnd, {}, p);
                        const std::size_t end = skipSpaces(s, p + 3);
                        m_lineStarting = end > p + 3 && s[end - 1] == '\n';
                        return end;
                    }
                    if (s.compare(p, 2, "}}") == 0) {
                        emit(TokenType::VariableEnd, {}, p);
                        m_lineStarting = false;
                        return p + 2;
                    }
                } else {
                    if ((s[p] == '-' || s[p] == '+') && s.compare(p + 1, 2, "%}") == 0) {
                        emit(TokenType::BlockEnd, {}, p);
                        return afterBlockEnd(s, p + 1, s[p]);
                    }
                    if (s.compare(p, 2, "%}") == 0) {
                        emit(TokenType::BlockEnd, {}, p);
                        return afterBlockEnd(s, p, 0);
                    }
                }
            }
            if (std::size_t n = spaceLengthAt(s, p)) {
                p += n;
                continue;
            }
            p = lexExpressionToken(s, p, balance);
        }
    }

    std::size_t lexExpressionToken(std::string_view s, std::size_t p, std::string& balance) {
        const char c = s[p];
        if (isDigit(c)) return lexNumber(s, p);
        if (isNameStart(c)) {
            std::size_t e = p + 1;
            while (e < s.size() && isNameChar(s[e])) ++e;
            emit(TokenType::Name, std::string(s.substr(p, e - p)), p);
            return e;
        }
        if (c == '\'' || c == '"') {
            std::size_t e = p + 1;
            while (e < s.size() && s[e] != c) e += (s[e] == '\\') ? 2 : 1;
            if (e >= s.size()) syntaxError("unterminated string literal", p);
            emit(TokenType::String, decodeStringLiteral(s.substr(p + 1, e - p - 1), p), p);
            return e + 1;
        }
        static const char* const kTwoChar[] = {"**", "//", "==", "!=", ">=", "<="};
        for (const char* op : kTwoChar) {
            if (s.compare(p, 2, op) == 0) {
                emit(TokenType::Operator, op, p);
                return p + 2;
            }
        }
        if (std::strchr("+-/*%~[](){}><=.:|,;", c) == nullptr || c == 0) {
            std::string shown(s.substr(p, decodeUtf8At(s, p).length));
            syntaxError("unexpected character '" + shown + "'", p);
        }
        if (c == '(' || c == '[' || c == '{') {
            balance += c == '(' ? ')' : (c == '[' ? ']' : '}');
        } else if (c == ')' || c == ']' || c == '}') {
            if (balance.empty()) syntaxError(std::string("unexpected '") + c + "'", p);
            if (balance.back() != c)
                syntaxError(std::string("unexpected '") + c + "', expected '" + balance.back() + "'", p);
            balance.pop_back();
        }
        emit(TokenType::Operator, std::string(1, c), p);
        return p + 1;
    }

    std::size_t lexNumber(std::string_view s, std::size_t p) {
        // Float first (jinja2 tries float_re before integer_re); it needs no '.' right before.
        const std::size_t intEnd = scanDigits(s, p);
        if (p == 0 || s[p - 1] != '.') {
            std::size_t end = intEnd;
            if (intEnd < s.size() && s[intEnd] == '.') {
                const std::size_t frac = scanDigits(s, intEnd + 1);
                if (frac > intEnd + 1) end = scanExponent(s, frac);
            }
            if (end == intEnd) end = scanExponent(s, intEnd);
            if (end != intEnd) {
                emit(TokenType::Float, withoutUnderscores(s.substr(p, end - p)), p);
                return end;
            }
        }
        // Integers: 0b / 0o / 0x prefixes, or decimal; value normalised to decimal text.
        if (s[p] == '0' && p + 1 < s.size() && std::strchr("bBoOxX", s[p + 1]) && s[p + 1] != 0) {
            const char base = static_cast<char>(s[p + 1] | 0x20);
            const int radix = base == 'b' ? 2 : (base == 'o' ? 8 : 16);
            std::size_t e = p + 2;
            unsigned long long v = 0;
            bool any = false;
            while (e < s.size()) {
                if (s[e] == '_' && e + 1 < s.size()) { ++e; continue; }
                const int d = hexValue(s[e]);
                if (d < 0 || d >= radix) break;
                if (v > (~0ULL) / static_cast<unsigned>(radix)) syntaxError("integer literal too large", p);
                v = v * static_cast<unsigned>(radix) + static_cast<unsigned>(d);
                any = true;
                ++e;
            }
            if (any) {
                emit(TokenType::Integer, std::to_string(v), p);
                return e;
            }
        }
        if (s[p] == '0') {
            // `0(_?0)*`: a leading zero only continues with more zeros.
            std::size_t e = p + 1;
            while (e < s.size() && (s[e] == '0' || (s[e] == '_' && e + 1 < s.size() && s[e + 1] == '0'))) ++e;
            emit(TokenType::Integer, "0", p);
            return e;
        }
        emit(TokenType::Integer, withoutUnderscores(s.substr(p, intEnd - p)), p);
        return intEnd;
    }

    LexedTemplate m_out;
    bool m_lineStarting = true;  // the text about to be read starts a line
};

}  // namespace

LexedTemplate lexTemplate(std::string_view source) { return Lexer(normaliseNewlines(source)).run(); }

SourcePosition positionOf(std::string_view text, std::size_t offset) {
    if (offset > text.size()) offset = text.size();
    SourcePosition pos;
    std::size_t lineStart = 0;
    for (std::size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++pos.line;
            lineStart = i + 1;
        }
    }
    pos.column = static_cast<int>(utf8Length(text.substr(lineStart, offset - lineStart))) + 1;
    return pos;
}

}  // namespace verdict::tok::jinja
