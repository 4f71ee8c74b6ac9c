// Python methods on str, list/tuple and dict values, and the argument helpers builtins share.
#include "template/jinja_builtins.h"
#include "template/jinja_error.h"
#include "template/jinja_string.h"

#include <algorithm>
#include <array>

namespace verdict::tok::jinja {

namespace {

constexpr std::array kStringMethods = {
    "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "upper", "lower", "title", "capitalize",
    "casefold", "swapcase", "replace", "startswith", "endswith", "find", "rfind", "index", "rindex", "count",
    "join", "format", "isdigit", "isnumeric", "isdecimal", "isalpha", "isalnum", "isspace", "isupper", "islower",
    "istitle", "zfill", "center", "ljust", "rjust", "partition", "rpartition", "removeprefix", "removesuffix",
};
constexpr std::array kSequenceMethods = {"index", "count", "copy"};
constexpr std::array kListMutators = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"};
constexpr std::array kDictMethods = {"items", "keys", "values", "get", "copy"};
constexpr std::array kDictMutators = {"update", "pop", "popitem", "setdefault", "clear"};

template <std::size_t N>
bool inList(const std::array<const char*, N>& names, std::string_view name) {
    for (const char* n : names)
        if (name == n) return true;
    return false;
}

bool isSequence(const Value& v) {
    return v.isList() && (v.listKind() == ListKind::List || v.listKind() == ListKind::Tuple);
}

bool isMutator(const Value& receiver, std::string_view name) {
    if (isSequence(receiver) && receiver.listKind() == ListKind::List) return inList(kListMutators, name);
    if (receiver.isDict()) return inList(kDictMutators, name);
    return false;
}

[[noreturn]] void unsafe(const Value& receiver, std::string_view name) {
    fail(ErrorKind::Security, "access to attribute '" + std::string(name) + "' of '" + typeName(receiver)
                                  + "' object is unsafe.");
}

const std::string& stringArg(const CallArgs& args, std::size_t index, std::string_view name, std::string_view method) {
    const Value* v = args.find(index, name);
    if (!v) fail(ErrorKind::Type, std::string(method) + "() missing required argument '" + std::string(name) + "'");
    if (!v->isString()) {
        fail(ErrorKind::Type, std::string(method) + "() argument must be str, not " + typeName(*v));
    }
    return v->str();
}

Value stringList(std::vector<std::string> parts) {
    std::vector<Value> out;
    out.reserve(parts.size());
    for (auto& p : parts) out.push_back(Value::string(std::move(p)));
    return Value::list(std::move(out));
}

// startswith/endswith accept a str or a tuple of str, plus optional start/end unit indices.
bool affixTest(const Value& self, const CallArgs& args, bool prefix) {
    const Value* what = args.find(0, "prefix");
    if (!what) fail(ErrorKind::Type, std::string(prefix ? "startswith" : "endswith") + "() takes at least 1 argument");
    std::string_view s = self.str();
    std::string window;
    if (args.positional.size() > 1) {
        const std::int64_t n = static_cast<std::int64_t>(utf8Length(s));
        auto clampIdx = [n](std::int64_t v) { return v < 0 ? std::max<std::int64_t>(0, v + n) : std::min(v, n); };
        const std::int64_t lo = clampIdx(toInteger(args.positional[1], "start"));
        const std::int64_t hi = args.positional.size() > 2 ? clampIdx(toInteger(args.positional[2], "end")) : n;
        if (lo > hi) return false;
        const std::size_t a = utf8OffsetOfUnit(s, static_cast<std::size_t>(lo));
        const std::size_t b = utf8OffsetOfUnit(s, static_cast<std::size_t>(hi));
        window = std::string(s.substr(a, b - a));
        s = window;
    }
    auto one = [&](const Value& v) {
        if (!v.isString()) {
            fail(ErrorKind::Type, std::string(prefix ? "startswith" : "endswith")
                                      + " first arg must be str or a tuple of str, not " + typeName(v));
        }
        const std::string& a = v.str();
        if (a.size() > s.size()) return false;
        return prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
    };
    if (what->isList() && what->listKind() == ListKind::Tuple) {
        for (const auto& v : what->items())
            if (one(v)) return true;
        return false;
    }
    return one(*what);
}

template <class Pred>
bool allUnits(std::string_view s, Pred pred) {
    if (s.empty()) return false;
    for (std::size_t i = 0; i < s.size();) {
        const Utf8Unit u = decodeUtf8At(s, i);
        if (!u.valid || !pred(u.codePoint)) return false;
        i += u.length;
    }
    return true;
}

std::string pad(std::string_view s, std::int64_t width, std::string_view fill, char align) {
    const auto len = static_cast<std::int64_t>(utf8Length(s));
    if (width <= len) return std::string(s);
    const std::int64_t total = width - len;
    std::int64_t left = 0;
    if (align == '>') left = total;
    else if (align == '^') left = total / 2 + (total % 2 & width % 2);  // CPython centres like this
    std::string out;
    for (std::int64_t i = 0; i < left; ++i) out += fill;
    out += s;
    for (std::int64_t i = 0; i < total - left; ++i) out += fill;
    return out;
}

std::optional<Value> plainStringMethod(Interpreter& interp, const Value& self, std::string_view name, CallArgs& args);

// Markup's str methods return Markup again (markupsafe wraps them); the rest behave like str.
std::optional<Value> stringMethod(Interpreter& interp, const Value& self, std::string_view name, CallArgs& args) {
    static constexpr std::array kMarkupKeeping = {"strip", "lstrip", "rstrip", "upper", "lower", "title",
                                                  "capitalize", "casefold", "swapcase", "replace", "zfill",
                                                  "center", "ljust", "rjust", "removeprefix", "removesuffix"};
    std::optional<Value> r = plainStringMethod(interp, self, name, args);
    if (r && self.isMarkup() && r->isString() && inList(kMarkupKeeping, name)) return Value::markup(r->str());
    return r;
}

std::optional<Value> plainStringMethod(Interpreter& interp, const Value& self, std::string_view name, CallArgs& args) {
    const std::string& s = self.str();
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        const auto chars = optionalStringArg(args, 0, "chars");
        return Value::string(pyStrip(s, chars, name != "rstrip", name != "lstrip"));
    }
    if (name == "split" || name == "rsplit") {
        const auto sep = optionalStringArg(args, 0, "sep");
        const std::int64_t maxSplit = intArg(args, 1, "maxsplit", -1);
        return stringList(name == "split" ? pySplit(s, sep, maxSplit) : pyRSplit(s, sep, maxSplit));
    }
    if (name == "splitlines") return stringList(pySplitLines(s, boolArg(args, 0, "keepends", false)));
    if (name == "upper") return Value::string(pyUpper(s));
    if (name == "lower" || name == "casefold") return Value::string(pyLower(s));
    if (name == "title") return Value::string(pyTitle(s));
    if (name == "capitalize") return Value::string(pyCapitalize(s));
    if (name == "swapcase") {
        std::string out;
        for (std::size_t i = 0; i < s.size();) {
            const Utf8Unit u = decodeUtf8At(s, i);
            if (!u.valid) out += s[i];
            else appendUtf8(out, upperCodePoint(u.codePoint) != u.codePoint ? upperCodePoint(u.codePoint)
                                                                             : lowerCodePoint(u.codePoint));
            i += u.length;
        }
        return Value::string(std::move(out));
    }
    if (name == "replace") {
        const std::string& from = stringArg(args, 0, "old", name);
        const std::string& to = stringArg(args, 1, "new", name);
        std::string out = pyReplace(s, from, to, intArg(args, 2, "count", -1), interp.limits().maxOutputBytes);
        interp.chargeWork(out.size());
        return Value::string(std::move(out));
    }
    if (name == "startswith") return Value::boolean(affixTest(self, args, true));
    if (name == "endswith") return Value::boolean(affixTest(self, args, false));
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
        const std::string& sub = stringArg(args, 0, "sub", name);
        std::optional<std::int64_t> start, end;
        if (const Value* v = args.find(1, "start"); v && !v->isNone()) start = toInteger(*v, "start");
        if (const Value* v = args.find(2, "end"); v && !v->isNone()) end = toInteger(*v, "end");
        const bool reverse = name == "rfind" || name == "rindex";
        const std::int64_t at = pyFind(s, sub, start, end, reverse);
        if (at < 0 && (name == "index" || name == "rindex")) fail(ErrorKind::Value, "substring not found");
        return Value::integer(at);
    }
    if (name == "count") return Value::integer(pyCount(s, stringArg(args, 0, "sub", name)));
    if (name == "join") {
        const Value* it = args.find(0, "iterable");
        if (!it) fail(ErrorKind::Type, "join() takes exactly one argument");
        std::string out;
        bool first = true;
        for (const auto& v : iterate(*it)) {
            if (!v.isString())
                fail(ErrorKind::Type, "sequence item: expected str instance, " + typeName(v) + " found");
            interp.chargeWork(v.str().size() + s.size());
            interp.checkSize(out.size() + s.size() + v.str().size());  // the joined string, not just this piece
            if (!first) out += s;
            first = false;
            out += v.str();
        }
        return Value::string(std::move(out));
    }
    if (name == "format") return Value::string(pyStrFormat(interp, s, args));
    if (name == "isdigit" || name == "isnumeric" || name == "isdecimal")
        return Value::boolean(allUnits(s, isDigitCodePoint));
    if (name == "isalpha") return Value::boolean(allUnits(s, isAlphaCodePoint));
    if (name == "isalnum")
        return Value::boolean(allUnits(s, [](char32_t c) { return isAlphaCodePoint(c) || isDigitCodePoint(c); }));
    if (name == "isspace") return Value::boolean(allUnits(s, isPySpace));
    if (name == "isupper" || name == "islower") {
        bool cased = false;
        bool ok = true;
        for (std::size_t i = 0; i < s.size();) {
            const Utf8Unit u = decodeUtf8At(s, i);
            if (u.valid && isCasedCodePoint(u.codePoint)) {
                cased = true;
                const bool isUpper = lowerCodePoint(u.codePoint) != u.codePoint;
                if (isUpper != (name == "isupper")) ok = false;
            }
            i += u.length;
        }
        return Value::boolean(cased && ok);
    }
    if (name == "istitle") return Value::boolean(!s.empty() && pyTitle(s) == s && pyLower(s) != s);
    if (name == "zfill") {
        const std::int64_t width = intArg(args, 0, "width", 0);
        const auto len = static_cast<std::int64_t>(utf8Length(s));
        if (width <= len) return self;
        interp.chargeWork(static_cast<std::uint64_t>(width));
        const bool sign = !s.empty() && (s[0] == '-' || s[0] == '+');
        std::string out = sign ? s.substr(0, 1) : std::string();
        out.append(static_cast<std::size_t>(width - len), '0');
        out += sign ? s.substr(1) : s;
        return Value::string(std::move(out));
    }
    if (name == "center" || name == "ljust" || name == "rjust") {
        const std::int64_t width = intArg(args, 0, "width", 0);
        const auto fill = optionalStringArg(args, 1, "fillchar");
        if (fill && utf8Length(*fill) != 1) fail(ErrorKind::Type, "The fill character must be exactly one character long");
        if (width > static_cast<std::int64_t>(interp.limits().maxOutputBytes / (fill ? fill->size() : 1)))
            fail(ErrorKind::Limit, "padding width too large");
        const char align = name == "center" ? '^' : (name == "ljust" ? '<' : '>');
        std::string out = pad(s, width, fill ? *fill : " ", align);
        interp.chargeWork(out.size());
        return Value::string(std::move(out));
    }
    if (name == "partition" || name == "rpartition") {
        const std::string& sep = stringArg(args, 0, "sep", name);
        if (sep.empty()) fail(ErrorKind::Value, "empty separator");
        const std::size_t at = name == "partition" ? s.find(sep) : s.rfind(sep);
        std::vector<Value> parts;
        if (at == std::string::npos) {
            const bool left = name == "partition";
            parts = {Value::string(left ? s : ""), Value::string(""), Value::string(left ? "" : s)};
        } else {
            parts = {Value::string(s.substr(0, at)), Value::string(sep), Value::string(s.substr(at + sep.size()))};
        }
        return Value::list(std::move(parts), ListKind::Tuple);
    }
    if (name == "removeprefix") {
        const std::string& p = stringArg(args, 0, "prefix", name);
        return Value::string(s.compare(0, p.size(), p) == 0 && s.size() >= p.size() ? s.substr(p.size()) : s);
    }
    if (name == "removesuffix") {
        const std::string& p = stringArg(args, 0, "suffix", name);
        const bool has = !p.empty() && s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
        return Value::string(has ? s.substr(0, s.size() - p.size()) : s);
    }
    return std::nullopt;
}

std::optional<Value> sequenceMethod(const Value& self, std::string_view name, CallArgs& args) {
    if (name == "index" || name == "count") {
        const Value* x = args.find(0, "value");
        if (!x) fail(ErrorKind::Type, std::string(name) + "() takes at least 1 argument");
        std::int64_t n = 0;
        for (std::size_t i = 0; i < self.items().size(); ++i) {
            if (!equals(self.items()[i], *x)) continue;
            if (name == "index") return Value::integer(static_cast<std::int64_t>(i));
            ++n;
        }
        if (name == "index") fail(ErrorKind::Value, repr(*x) + " is not in list");
        return Value::integer(n);
    }
    if (name == "copy" && self.listKind() == ListKind::List) return self;
    return std::nullopt;
}

std::optional<Value> dictMethod(const Value& self, std::string_view name, CallArgs& args) {
    const DictData& d = self.dictData();
    if (name == "items" || name == "keys" || name == "values") {
        std::vector<Value> out;
        out.reserve(d.entries.size());
        for (const auto& [k, v] : d.entries) {
            if (name == "items") out.push_back(Value::list({k, v}, ListKind::Tuple));
            else out.push_back(name == "keys" ? k : v);
        }
        const ListKind kind = name == "items" ? ListKind::ItemsView
                                              : (name == "keys" ? ListKind::KeysView : ListKind::ValuesView);
        return Value::list(std::move(out), kind);
    }
    if (name == "get") {
        const Value* key = args.find(0, "key");
        if (!key) fail(ErrorKind::Type, "get expected at least 1 argument, got 0");
        if (const Value* v = d.find(*key)) return *v;
        return args.get(1, "default", Value::none());
    }
    if (name == "copy") return self;
    return std::nullopt;
}

}  // namespace

// ---- argument helpers ----

std::optional<std::string> optionalStringArg(const CallArgs& args, std::size_t index, std::string_view name) {
    const Value* v = args.find(index, name);
    if (!v || v->isNone()) return std::nullopt;
    if (v->isUndefined()) failUndefined(*v);
    if (!v->isString()) fail(ErrorKind::Type, "argument '" + std::string(name) + "' must be str or None, not " + typeName(*v));
    return v->str();
}

std::int64_t toInteger(const Value& v, std::string_view what) {
    if (v.isInt() || v.isBool()) return v.intValue();
    if (v.isUndefined()) failUndefined(v);
    fail(ErrorKind::Type, concat("'", typeName(v), "' object cannot be interpreted as an integer (", what, ")"));
}

std::int64_t intArg(const CallArgs& args, std::size_t index, std::string_view name, std::int64_t fallback) {
    const Value* v = args.find(index, name);
    if (!v || v->isNone()) return fallback;
    return toInteger(*v, name);
}

bool boolArg(const CallArgs& args, std::size_t index, std::string_view name, bool fallback) {
    const Value* v = args.find(index, name);
    return v ? truthy(*v) : fallback;
}

// ---- method dispatch ----

bool hasMethod(const Value& receiver, std::string_view name) {
    if (receiver.isString()) return inList(kStringMethods, name);
    if (isSequence(receiver)) return inList(kSequenceMethods, name) || isMutator(receiver, name);
    if (receiver.isDict()) return inList(kDictMethods, name) || isMutator(receiver, name);
    return false;
}

std::optional<Value> callMethod(Interpreter& interp, const Value& receiver, std::string_view name, CallArgs& args) {
    if (isMutator(receiver, name)) unsafe(receiver, name);
    if (receiver.isString()) return stringMethod(interp, receiver, name, args);
    if (isSequence(receiver)) return sequenceMethod(receiver, name, args);
    if (receiver.isDict()) return dictMethod(receiver, name, args);
    return std::nullopt;
}

Value boundMethod(const Value& receiver, std::string_view name) {
    if (isMutator(receiver, name)) {
        // jinja2's sandbox hands out an Undefined that raises SecurityError when used.
        return Value::undefined("access to attribute '" + std::string(name) + "' of '" + typeName(receiver)
                                    + "' object is unsafe.",
                                ErrorKind::Security);
    }
    std::string method(name);
    return Value::object(std::make_shared<FunctionObject>(
        method + " of " + typeName(receiver) + " object", [receiver, method](Interpreter& interp, CallArgs& args) {
            if (auto r = callMethod(interp, receiver, method, args)) return *r;
            fail(ErrorKind::Type, "no method " + method);
        }));
}

}  // namespace verdict::tok::jinja
