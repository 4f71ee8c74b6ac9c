// Builtin filters on strings and scalars, tojson, and the filter registry.
// Sequence filters (map, select, sort, unique, ...) live in jinja_filters_seq.cpp.
#include "template/jinja_builtins.h"
#include "template/jinja_error.h"
#include "template/jinja_json.h"
#include "template/jinja_string.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_map>

namespace verdict::tok::jinja {

void registerSequenceFilters(std::unordered_map<std::string_view, FilterFn>& table);

namespace {

Value str(std::string s) { return Value::string(std::move(s)); }
// soft_str(x).method() keeps Markup-ness in jinja2.
Value like(const Value& input, std::string s) {
    return input.isMarkup() ? Value::markup(std::move(s)) : Value::string(std::move(s));
}

Value fTrim(Interpreter&, const Value& v, CallArgs& a) {
    return like(v, pyStrip(toStr(v), optionalStringArg(a, 0, "chars"), true, true));
}
Value fUpper(Interpreter&, const Value& v, CallArgs&) { return like(v, pyUpper(toStr(v))); }
Value fLower(Interpreter&, const Value& v, CallArgs&) { return like(v, pyLower(toStr(v))); }
Value fTitle(Interpreter&, const Value& v, CallArgs&) { return str(jinjaTitle(toStr(v))); }
Value fCapitalize(Interpreter&, const Value& v, CallArgs&) { return like(v, pyCapitalize(toStr(v))); }
Value fString(Interpreter&, const Value& v, CallArgs&) { return v.isString() ? v : str(toStr(v)); }
Value fSafe(Interpreter&, const Value& v, CallArgs&) { return v.isMarkup() ? v : Value::markup(toStr(v)); }

Value fEscape(Interpreter& in, const Value& v, CallArgs&) {
    if (v.isMarkup()) return v;
    std::string out = htmlEscape(toStr(v));
    in.chargeWork(out.size());
    return Value::markup(std::move(out));
}

Value fForceEscape(Interpreter& in, const Value& v, CallArgs&) {
    std::string out = htmlEscape(toStr(v));
    in.chargeWork(out.size());
    return Value::markup(std::move(out));
}

Value fReplace(Interpreter& in, const Value& v, CallArgs& a) {
    const Value* from = a.find(0, "old");
    const Value* to = a.find(1, "new");
    if (!from || !to) fail(ErrorKind::Type, "replace() requires 'old' and 'new' arguments");
    std::string out = pyReplace(toStr(v), toStr(*from), toStr(*to), intArg(a, 2, "count", -1), in.limits().maxOutputBytes);
    in.chargeWork(out.size());
    return str(std::move(out));
}

Value fDefault(Interpreter&, const Value& v, CallArgs& a) {
    const Value fallback = a.get(0, "default_value", Value::string(""));
    const bool boolean = boolArg(a, 1, "boolean", false);
    if (v.isUndefined() || (boolean && !truthy(v))) return fallback;
    return v;
}

Value fLength(Interpreter&, const Value& v, CallArgs&) { return Value::integer(length(v)); }

Value fTojson(Interpreter& in, const Value& v, CallArgs& a) {
    // transformers: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
    JsonDumpOptions o;
    o.ensureAscii = boolArg(a, 0, "ensure_ascii", false);
    if (const Value* indent = a.find(1, "indent"); indent && !indent->isNone()) {
        if (indent->isString()) {
            o.indent = indent->str();
        } else {
            const std::int64_t n = std::max<std::int64_t>(0, toInteger(*indent, "indent"));
            in.checkSize(static_cast<std::uint64_t>(n));
            o.indent = std::string(static_cast<std::size_t>(n), ' ');
        }
    }
    if (const Value* seps = a.find(2, "separators"); seps && !seps->isNone()) {
        const std::vector<Value> parts = iterate(*seps);
        if (parts.size() != 2 || !parts[0].isString() || !parts[1].isString())
            fail(ErrorKind::Value, "separators must be a pair of strings");
        o.itemSeparator = parts[0].str();
        o.keySeparator = parts[1].str();
    }
    o.sortKeys = boolArg(a, 3, "sort_keys", false);
    std::string out = dumpJson(v, o);
    in.chargeWork(out.size());
    return str(std::move(out));
}

Value fIndent(Interpreter& in, const Value& v, CallArgs& a) {
    // jinja2 3.1 do_indent: the text gets a newline appended before splitlines(), so a trailing
    // newline survives; lines after the first are indented unless blank (blank=False).
    std::string indention;
    const Value width = a.get(0, "width", Value::integer(4));
    if (width.isString()) {
        indention = width.str();
    } else {
        const std::int64_t n = std::max<std::int64_t>(0, toInteger(width, "width"));
        in.checkSize(static_cast<std::uint64_t>(n));
        indention.assign(static_cast<std::size_t>(n), ' ');
    }
    const bool first = boolArg(a, 1, "first", false);
    const bool blank = boolArg(a, 2, "blank", false);
    const std::string s = toStr(v) + "\n";
    const std::vector<std::string> lines = pySplitLines(s, false);
    std::string rv;
    if (blank) {
        for (std::size_t i = 0; i < lines.size(); ++i) {
            if (i) rv += "\n" + indention;
            rv += lines[i];
            in.checkSize(rv.size());  // every line gets the indent: the result can outgrow the input by far
        }
    } else if (!lines.empty()) {
        rv = lines[0];
        for (std::size_t i = 1; i < lines.size(); ++i) {
            rv += "\n";
            if (!lines[i].empty()) rv += indention;
            rv += lines[i];
            in.checkSize(rv.size());
        }
    }
    if (first) rv = indention + rv;
    in.chargeWork(rv.size());
    return like(v, std::move(rv));
}

// Python float() of a string: surrounding whitespace, sign, inf/nan, underscores between digits.
bool parsePyFloat(const std::string& text, double& out) {
    std::string s = pyStrip(text, std::nullopt, true, true);
    std::string clean;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '_') {
            if (i == 0 || i + 1 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1]))
                || !std::isdigit(static_cast<unsigned char>(s[i + 1])))
                return false;
            continue;
        }
        clean += s[i];
    }
    if (clean.empty()) return false;
    const std::string lower = pyLower(clean);
    const std::string body = (lower[0] == '+' || lower[0] == '-') ? lower.substr(1) : lower;
    if (body == "inf" || body == "infinity" || body == "nan") {
        out = body == "nan" ? std::nan("") : HUGE_VAL;
        if (lower[0] == '-') out = -out;
        return true;
    }
    for (char c : body)
        if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' || c == '-')) return false;
    char* end = nullptr;
    out = std::strtod(clean.c_str(), &end);
    return end && *end == 0;
}

// Python int(text, base).
bool parsePyInt(const std::string& text, int base, std::int64_t& out) {
    std::string s = pyStrip(text, std::nullopt, true, true);
    bool negative = false;
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    if (i + 1 < s.size() && s[i] == '0') {
        const char p = static_cast<char>(s[i + 1] | 0x20);
        const int prefixBase = p == 'x' ? 16 : (p == 'o' ? 8 : (p == 'b' ? 2 : 0));
        if (prefixBase && (base == 0 || base == prefixBase)) {
            base = prefixBase;
            i += 2;
            if (i < s.size() && s[i] == '_') ++i;
        }
    }
    if (base == 0) base = 10;
    if (i >= s.size()) return false;
    unsigned long long v = 0;
    for (; i < s.size(); ++i) {
        if (s[i] == '_' && i + 1 < s.size() && s[i + 1] != '_') continue;
        const char c = static_cast<char>(s[i] | 0x20);
        int d = -1;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'z') d = c - 'a' + 10;
        if (d < 0 || d >= base) return false;
        if (v > (static_cast<unsigned long long>(INT64_MAX) + 1) / static_cast<unsigned>(base)) return false;
        v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
    }
    if (v > static_cast<unsigned long long>(INT64_MAX) + (negative ? 1 : 0)) return false;
    out = negative ? static_cast<std::int64_t>(0ULL - v) : static_cast<std::int64_t>(v);
    return true;
}

Value fInt(Interpreter&, const Value& v, CallArgs& a) {
    const Value fallback = a.get(0, "default", Value::integer(0));
    const std::int64_t base = intArg(a, 1, "base", 10);
    if (v.isInt() || v.isBool()) return Value::integer(v.intValue());
    if (v.isFloat()) {
        const double d = v.floatValue();
        if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
        return Value::integer(static_cast<std::int64_t>(std::trunc(d)));
    }
    if (v.isString()) {
        std::int64_t i = 0;
        if (parsePyInt(v.str(), static_cast<int>(base), i)) return Value::integer(i);
        double d = 0;
        if (parsePyFloat(v.str(), d) && std::isfinite(d) && std::fabs(d) < 9.2e18)
            return Value::integer(static_cast<std::int64_t>(std::trunc(d)));
    }
    return fallback;
}

Value fFloat(Interpreter&, const Value& v, CallArgs& a) {
    const Value fallback = a.get(0, "default", Value::number(0.0));
    if (v.isNumber()) return Value::number(v.floatValue());
    double d = 0;
    if (v.isString() && parsePyFloat(v.str(), d)) return Value::number(d);
    return fallback;
}

Value fAbs(Interpreter&, const Value& v, CallArgs&) {
    if (v.isFloat()) return Value::number(std::fabs(v.floatValue()));
    if (v.isInt() || v.isBool()) {
        if (v.intValue() == INT64_MIN) fail(ErrorKind::Limit, "integer result outside the 64-bit range");
        return Value::integer(v.intValue() < 0 ? -v.intValue() : v.intValue());
    }
    if (v.isUndefined()) failUndefined(v);
    fail(ErrorKind::Type, "bad operand type for abs(): '" + typeName(v) + "'");
}

Value fRound(Interpreter&, const Value& v, CallArgs& a) {
    const std::int64_t precision = intArg(a, 0, "precision", 0);
    const std::string method = toStr(a.get(1, "method", Value::string("common")));
    if (method != "common" && method != "ceil" && method != "floor")
        fail(ErrorKind::Type, "method must be common, ceil or floor");
    if (v.isUndefined()) failUndefined(v);
    if (!v.isNumber()) fail(ErrorKind::Type, "type " + typeName(v) + " doesn't define __round__ method");
    if (method == "common") {
        if (!v.isFloat()) return Value::integer(v.intValue());  // round(int, n) stays an int
        // Python's round(): correctly rounded decimal, ties to even; printf does the same.
        if (precision > 300 || !std::isfinite(v.floatValue())) return v;
        char buf[512];
        std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::max<std::int64_t>(precision, 0)), v.floatValue());
        double r = std::strtod(buf, nullptr);
        if (precision < 0) {
            const double scale = std::pow(10.0, static_cast<double>(-precision));
            r = std::nearbyint(v.floatValue() / scale) * scale;
        }
        return Value::number(r);
    }
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = v.floatValue() * scale;
    return Value::number((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
}

Value fWordcount(Interpreter&, const Value& v, CallArgs&) {
    const std::string s = toStr(v);
    std::int64_t words = 0;
    bool inWord = false;
    for (std::size_t i = 0; i < s.size();) {
        const Utf8Unit u = decodeUtf8At(s, i);
        const bool wordChar = u.valid && (isAlphaCodePoint(u.codePoint) || isDigitCodePoint(u.codePoint) || u.codePoint == '_');
        if (wordChar && !inWord) ++words;
        inWord = wordChar;
        i += u.length;
    }
    return Value::integer(words);
}

Value fCenter(Interpreter& in, const Value& v, CallArgs& a) {
    CallArgs m;
    m.positional.push_back(Value::integer(intArg(a, 0, "width", 80)));
    return *callMethod(in, str(toStr(v)), "center", m);
}

Value fFormat(Interpreter& in, const Value& v, CallArgs& a) {
    if (!a.positional.empty() && !a.keyword.empty())
        fail(ErrorKind::Type, "can't handle positional and keyword arguments at the same time");
    Value args;
    if (!a.keyword.empty()) {
        DictData d;
        for (const auto& [k, val] : a.keyword) d.insert(Value::string(k), val);
        args = Value::dict(std::move(d));
    } else {
        args = Value::list(a.positional, ListKind::Tuple);
    }
    return percentFormat(in, v.isString() ? v : str(toStr(v)), args);
}

Value fTruncate(Interpreter&, const Value& v, CallArgs& a) {
    const std::string s = toStr(v);
    const std::int64_t len = intArg(a, 0, "length", 255);
    const bool killwords = boolArg(a, 1, "killwords", false);
    const std::string end = toStr(a.get(2, "end", Value::string("...")));
    const std::int64_t leeway = intArg(a, 3, "leeway", 5);
    const auto endLen = static_cast<std::int64_t>(utf8Length(end));
    if (len < endLen) fail(ErrorKind::Value, "expected length >= " + std::to_string(endLen));
    const auto units = static_cast<std::int64_t>(utf8Length(s));
    if (units <= len || units - len <= leeway) return str(s);  // (no len + leeway: it can overflow)
    std::string head = s.substr(0, utf8OffsetOfUnit(s, static_cast<std::size_t>(len - endLen)));
    if (killwords) return str(head + end);
    const std::size_t space = head.rfind(' ');
    if (space != std::string::npos) head.resize(space);
    return str(head + end);
}

Value fStriptags(Interpreter&, const Value& v, CallArgs&) {
    const std::string s = toStr(v);
    std::string noTags;
    bool inTag = false;
    for (char c : s) {
        if (c == '<') inTag = true;
        else if (c == '>' && inTag) inTag = false;
        else if (!inTag) noTags += c;
    }
    return str(pyStrip(noTags, std::nullopt, true, true));
}

Value fAttr(Interpreter& in, const Value& v, CallArgs& a) {
    const Value* name = a.find(0, "name");
    if (!name || !name->isString()) fail(ErrorKind::Type, "attr() needs an attribute name");
    if (v.isUndefined()) failUndefined(v);
    if (v.isDict()) {
        // jinja2's attr filter does getattr only: dict keys are not attributes.
        if (hasMethod(v, name->str())) return boundMethod(v, name->str());
        return Value::undefined("'dict object' has no attribute '" + name->str() + "'");
    }
    return in.getAttribute(v, name->str());
}

Value fPprint(Interpreter&, const Value& v, CallArgs&) { return str(repr(v)); }

}  // namespace

FilterFn findFilter(std::string_view name) {
    static const std::unordered_map<std::string_view, FilterFn> table = [] {
        std::unordered_map<std::string_view, FilterFn> t = {
            {"trim", fTrim},         {"upper", fUpper},         {"lower", fLower},
            {"title", fTitle},       {"capitalize", fCapitalize}, {"string", fString},
            {"safe", fSafe},         {"escape", fEscape},       {"e", fEscape},
            {"forceescape", fForceEscape}, {"replace", fReplace},    {"default", fDefault},
            {"d", fDefault},         {"length", fLength},       {"count", fLength},
            {"tojson", fTojson},     {"indent", fIndent},       {"int", fInt},
            {"float", fFloat},       {"abs", fAbs},             {"round", fRound},
            {"wordcount", fWordcount}, {"center", fCenter},     {"format", fFormat},
            {"truncate", fTruncate}, {"striptags", fStriptags}, {"attr", fAttr},
            {"pprint", fPprint},
        };
        registerSequenceFilters(t);
        return t;
    }();
    const auto it = table.find(name);
    return it == table.end() ? nullptr : it->second;
}

}  // namespace verdict::tok::jinja
