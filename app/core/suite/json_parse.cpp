#include "core/suite/json_parse.h"

#include <charconv>
#include <cstring>

namespace verdict::core {

namespace {

constexpr int kMaxDepth = 512;  // deeper nesting is refused instead of exhausting the stack

class Parser {
public:
    explicit Parser(std::string_view text) : m_p(text.data()), m_begin(text.data()), m_end(text.data() + text.size()) {}

    bool parseDocument(nlohmann::json& out) {
        skipWs();
        if (!parseValue(out, 0)) return false;
        skipWs();
        if (m_p != m_end) return fail("unexpected text after the JSON value");
        return true;
    }

    std::string error;

private:
    bool fail(const std::string& what) {
        if (error.empty()) error = what + " at column " + std::to_string(m_p - m_begin + 1);
        return false;
    }

    void skipWs() {
        while (m_p < m_end && (*m_p == ' ' || *m_p == '\t' || *m_p == '\n' || *m_p == '\r')) ++m_p;
    }

    bool literal(const char* word, size_t n) {
        if (size_t(m_end - m_p) < n || std::memcmp(m_p, word, n) != 0) return fail("invalid literal");
        m_p += n;
        return true;
    }

    bool parseValue(nlohmann::json& out, int depth) {
        if (m_p == m_end) return fail("unexpected end of input");
        switch (*m_p) {
        case '{': return parseObject(out, depth + 1);
        case '[': return parseArray(out, depth + 1);
        case '"': {
            std::string s;
            if (!parseString(s)) return false;
            out = std::move(s);
            return true;
        }
        case 't':
            if (!literal("true", 4)) return false;
            out = true;
            return true;
        case 'f':
            if (!literal("false", 5)) return false;
            out = false;
            return true;
        case 'n':
            if (!literal("null", 4)) return false;
            out = nullptr;
            return true;
        default: return parseNumber(out);
        }
    }

    bool parseObject(nlohmann::json& out, int depth) {
        if (depth > kMaxDepth) return fail("nesting deeper than 512 levels");
        ++m_p;  // '{'
        out = nlohmann::json::object();
        auto& obj = out.get_ref<nlohmann::json::object_t&>();
        skipWs();
        if (m_p < m_end && *m_p == '}') {
            ++m_p;
            return true;
        }
        for (;;) {
            skipWs();
            if (m_p == m_end || *m_p != '"') return fail("expected a string key");
            std::string key;
            if (!parseString(key)) return false;
            skipWs();
            if (m_p == m_end || *m_p != ':') return fail("expected ':' after an object key");
            ++m_p;
            skipWs();
            nlohmann::json value;
            if (!parseValue(value, depth)) return false;
            obj.insert_or_assign(std::move(key), std::move(value));
            skipWs();
            if (m_p == m_end) return fail("unexpected end of input inside an object");
            if (*m_p == ',') {
                ++m_p;
                continue;
            }
            if (*m_p == '}') {
                ++m_p;
                return true;
            }
            return fail("expected ',' or '}' in an object");
        }
    }

    bool parseArray(nlohmann::json& out, int depth) {
        if (depth > kMaxDepth) return fail("nesting deeper than 512 levels");
        ++m_p;  // '['
        out = nlohmann::json::array();
        auto& arr = out.get_ref<nlohmann::json::array_t&>();
        skipWs();
        if (m_p < m_end && *m_p == ']') {
            ++m_p;
            return true;
        }
        for (;;) {
            skipWs();
            arr.emplace_back();
            if (!parseValue(arr.back(), depth)) return false;
            skipWs();
            if (m_p == m_end) return fail("unexpected end of input inside an array");
            if (*m_p == ',') {
                ++m_p;
                continue;
            }
            if (*m_p == ']') {
                ++m_p;
                return true;
            }
            return fail("expected ',' or ']' in an array");
        }
    }

    static int hexValue(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    bool readHex4(uint32_t& v) {
        if (m_end - m_p < 4) return fail("truncated \\u escape");
        v = 0;
        for (int i = 0; i < 4; ++i) {
            const int h = hexValue(m_p[i]);
            if (h < 0) return fail("bad hex digit in \\u escape");
            v = (v << 4) | uint32_t(h);
        }
        m_p += 4;
        return true;
    }

    static void appendUtf8(std::string& s, uint32_t cp) {
        if (cp < 0x80) {
            s.push_back(char(cp));
        } else if (cp < 0x800) {
            s.push_back(char(0xC0 | (cp >> 6)));
            s.push_back(char(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            s.push_back(char(0xE0 | (cp >> 12)));
            s.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
            s.push_back(char(0x80 | (cp & 0x3F)));
        } else {
            s.push_back(char(0xF0 | (cp >> 18)));
            s.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
            s.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
            s.push_back(char(0x80 | (cp & 0x3F)));
        }
    }

    bool parseString(std::string& s) {
        ++m_p;  // opening quote
        for (;;) {
            const char* run = m_p;
            while (m_p < m_end && *m_p != '"' && *m_p != '\\' && static_cast<unsigned char>(*m_p) >= 0x20) ++m_p;
            s.append(run, size_t(m_p - run));
            if (m_p == m_end) return fail("unterminated string");
            const char c = *m_p;
            if (c == '"') {
                ++m_p;
                return true;
            }
            if (c != '\\') return fail("control character in a string (must be escaped)");
            ++m_p;
            if (m_p == m_end) return fail("unterminated escape");
            const char e = *m_p++;
            switch (e) {
            case '"': s.push_back('"'); break;
            case '\\': s.push_back('\\'); break;
            case '/': s.push_back('/'); break;
            case 'b': s.push_back('\b'); break;
            case 'f': s.push_back('\f'); break;
            case 'n': s.push_back('\n'); break;
            case 'r': s.push_back('\r'); break;
            case 't': s.push_back('\t'); break;
            case 'u': {
                uint32_t cp = 0;
                if (!readHex4(cp)) return false;
                if (cp >= 0xD800 && cp <= 0xDBFF) {  // high surrogate: a low one must follow
                    uint32_t lo = 0;
                    if (m_end - m_p < 6 || m_p[0] != '\\' || m_p[1] != 'u') return fail("lone high surrogate in \\u escape");
                    m_p += 2;
                    if (!readHex4(lo)) return false;
                    if (lo < 0xDC00 || lo > 0xDFFF) return fail("bad low surrogate in \\u escape");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    return fail("lone low surrogate in \\u escape");
                }
                appendUtf8(s, cp);
                break;
            }
            default: --m_p; return fail("invalid escape");
            }
        }
    }

    bool parseNumber(nlohmann::json& out) {
        const char* start = m_p;
        const char* p = m_p;
        bool negative = false;
        if (p < m_end && *p == '-') {
            negative = true;
            ++p;
        }
        if (p == m_end || *p < '0' || *p > '9') return fail("invalid value");
        if (*p == '0') {
            ++p;
        } else {
            while (p < m_end && *p >= '0' && *p <= '9') ++p;
        }
        bool isFloat = false;
        if (p < m_end && *p == '.') {
            isFloat = true;
            ++p;
            if (p == m_end || *p < '0' || *p > '9') {
                m_p = p;
                return fail("digits expected after '.'");
            }
            while (p < m_end && *p >= '0' && *p <= '9') ++p;
        }
        if (p < m_end && (*p == 'e' || *p == 'E')) {
            isFloat = true;
            ++p;
            if (p < m_end && (*p == '+' || *p == '-')) ++p;
            if (p == m_end || *p < '0' || *p > '9') {
                m_p = p;
                return fail("digits expected in the exponent");
            }
            while (p < m_end && *p >= '0' && *p <= '9') ++p;
        }
        m_p = p;
        if (!isFloat) {
            if (negative) {
                int64_t v = 0;
                auto r = std::from_chars(start, p, v);
                if (r.ec == std::errc() && r.ptr == p) {
                    out = v;
                    return true;
                }
            } else {
                uint64_t v = 0;
                auto r = std::from_chars(start, p, v);
                if (r.ec == std::errc() && r.ptr == p) {
                    out = v;
                    return true;
                }
            }
        }
        double d = 0;
        auto r = std::from_chars(start, p, d);
        if (r.ptr != p) return fail("invalid number");
        out = d;  // out-of-range values come back as ±inf/0 from from_chars' ec; keep its value
        return true;
    }

    const char* m_p;
    const char* m_begin;
    const char* m_end;
};

}  // namespace

bool parseJson(std::string_view text, nlohmann::json& out, std::string& error) {
    Parser parser(text);
    if (parser.parseDocument(out)) return true;
    error = parser.error;
    out = nullptr;
    return false;
}

}  // namespace verdict::core
