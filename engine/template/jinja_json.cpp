// JSON conversion with Python json.dumps output rules: see jinja_json.h.
#include "template/jinja_json.h"

#include "template/jinja_error.h"
#include "template/jinja_string.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace verdict::tok::jinja {

namespace {

Value fromJsonAt(const nlohmann::ordered_json& j, int depth) {
    if (depth > kMaxJsonDepth) fail(ErrorKind::Limit, "JSON input nested deeper than " + std::to_string(kMaxJsonDepth));
    switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::integer(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
        const auto u = j.get<std::uint64_t>();
        if (u <= static_cast<std::uint64_t>(INT64_MAX)) return Value::integer(static_cast<std::int64_t>(u));
        return Value::number(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float: return Value::number(j.get<double>());
    case nlohmann::json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::json::value_t::array: {
        std::vector<Value> items;
        items.reserve(j.size());
        for (const auto& e : j) items.push_back(fromJsonAt(e, depth + 1));
        return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
        DictData d;
        d.entries.reserve(j.size());
        for (auto it = j.begin(); it != j.end(); ++it)
            d.entries.emplace_back(Value::string(it.key()), fromJsonAt(it.value(), depth + 1));
        return Value::dict(std::move(d));
    }
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded: break;
    }
    return Value::none();
}

void appendJsonString(std::string& out, std::string_view s, bool ensureAscii) {
    out += '"';
    char buf[16];
    for (std::size_t i = 0; i < s.size();) {
        const Utf8Unit u = decodeUtf8At(s, i);
        const char32_t c = u.codePoint;
        if (!u.valid) {
            // Python would hold this byte as a lone surrogate (surrogateescape).
            if (ensureAscii) {
                std::snprintf(buf, sizeof buf, "\\udc%02x", static_cast<unsigned>(static_cast<unsigned char>(s[i])));
                out += buf;
            } else {
                out += s[i];
            }
        } else if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c == '\b') out += "\\b";
        else if (c == '\f') out += "\\f";
        else if (c < 0x20) {
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
            out += buf;
        } else if (ensureAscii && c > 0x7F) {
            if (c >= 0x10000) {
                const char32_t v = c - 0x10000;
                std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                              static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
            } else {
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
            }
            out += buf;
        } else {
            out.append(s.substr(i, u.length));
        }
        i += u.length;
    }
    out += '"';
}

std::string jsonFloat(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
    return pyFloatRepr(d);
}

class Dumper {
public:
    Dumper(const JsonDumpOptions& o, std::string& out) : m_o(o), m_out(out) {
        m_itemSep = o.itemSeparator ? *o.itemSeparator : (o.indent ? "," : ", ");
        m_keySep = o.keySeparator ? *o.keySeparator : ": ";
    }

    void dump(const Value& v, int level) {
        if (level > kMaxJsonDepth) fail(ErrorKind::Limit, "value nested too deeply for tojson");
        checkStringLimit(m_out.size());  // shared items and indents: the text can outgrow the value by far
        switch (v.kind()) {
        case Value::Kind::None: m_out += "null"; return;
        case Value::Kind::Bool: m_out += v.boolValue() ? "true" : "false"; return;
        case Value::Kind::Int: m_out += std::to_string(v.intValue()); return;
        case Value::Kind::Float: m_out += jsonFloat(v.floatValue()); return;
        case Value::Kind::String: appendJsonString(m_out, v.str(), m_o.ensureAscii); return;
        case Value::Kind::List:
            if (v.listKind() == ListKind::List || v.listKind() == ListKind::Tuple) {
                dumpList(v.items(), level);
                return;
            }
            break;
        case Value::Kind::Dict: dumpDict(v.dictData(), level); return;
        default: break;
        }
        fail(ErrorKind::Type, "Object of type " + typeName(v) + " is not JSON serializable");
    }

private:
    void newline(int level) {
        m_out += '\n';
        for (int i = 0; i < level; ++i) {
            m_out += *m_o.indent;
            checkStringLimit(m_out.size());
        }
    }

    void dumpList(const std::vector<Value>& items, int level) {
        if (items.empty()) {
            m_out += "[]";
            return;
        }
        m_out += '[';
        if (m_o.indent) newline(level + 1);
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (i) {
                m_out += m_itemSep;
                if (m_o.indent) newline(level + 1);
            }
            dump(items[i], level + 1);
        }
        if (m_o.indent) newline(level);
        m_out += ']';
    }

    std::string keyString(const Value& k) {
        switch (k.kind()) {
        case Value::Kind::String: return k.str();
        case Value::Kind::Bool: return k.boolValue() ? "true" : "false";
        case Value::Kind::None: return "null";
        case Value::Kind::Int: return std::to_string(k.intValue());
        case Value::Kind::Float: return jsonFloat(k.floatValue());
        default:
            fail(ErrorKind::Type, "keys must be str, int, float, bool or None, not " + typeName(k));
        }
    }

    void dumpDict(const DictData& d, int level) {
        if (d.entries.empty()) {
            m_out += "{}";
            return;
        }
        std::vector<std::pair<std::string, const Value*>> entries;
        entries.reserve(d.entries.size());
        for (const auto& [k, v] : d.entries) entries.emplace_back(keyString(k), &v);
        if (m_o.sortKeys)
            std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        m_out += '{';
        if (m_o.indent) newline(level + 1);
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (i) {
                m_out += m_itemSep;
                if (m_o.indent) newline(level + 1);
            }
            appendJsonString(m_out, entries[i].first, m_o.ensureAscii);
            m_out += m_keySep;
            dump(*entries[i].second, level + 1);
        }
        if (m_o.indent) newline(level);
        m_out += '}';
    }

    const JsonDumpOptions& m_o;
    std::string& m_out;
    std::string m_itemSep;
    std::string m_keySep;
};

}  // namespace

Value valueFromJson(const nlohmann::ordered_json& json) { return fromJsonAt(json, 0); }

std::string dumpJson(const Value& value, const JsonDumpOptions& options) {
    std::string out;
    Dumper(options, out).dump(value, 0);
    return out;
}

}  // namespace verdict::tok::jinja
