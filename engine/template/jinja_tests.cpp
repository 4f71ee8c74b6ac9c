// Builtin tests (`x is defined`, `x is divisibleby 3`, ...) following jinja2's tests module, and
// the global functions templates may call (range, dict, namespace, raise_exception, ...).
#include "template/jinja_builtins.h"
#include "template/jinja_error.h"
#include "template/jinja_string.h"

#include <cmath>
#include <unordered_map>

namespace verdict::tok::jinja {

namespace {

const Value& firstArg(const CallArgs& a, std::string_view test) {
    if (a.positional.empty()) fail(ErrorKind::Type, "test '" + std::string(test) + "' needs an argument");
    return a.positional[0];
}

bool isSeq(const Value& v) { return v.isList() && (v.listKind() == ListKind::List || v.listKind() == ListKind::Tuple); }

bool tDefined(Interpreter&, const Value& v, CallArgs&) { return !v.isUndefined(); }
bool tUndefined(Interpreter&, const Value& v, CallArgs&) { return v.isUndefined(); }
bool tNone(Interpreter&, const Value& v, CallArgs&) { return v.isNone(); }
bool tBoolean(Interpreter&, const Value& v, CallArgs&) { return v.isBool(); }
bool tTrue(Interpreter&, const Value& v, CallArgs&) { return v.isBool() && v.boolValue(); }
bool tFalse(Interpreter&, const Value& v, CallArgs&) { return v.isBool() && !v.boolValue(); }
bool tString(Interpreter&, const Value& v, CallArgs&) { return v.isString(); }
bool tNumber(Interpreter&, const Value& v, CallArgs&) { return v.isNumber(); }
bool tInteger(Interpreter&, const Value& v, CallArgs&) { return v.isInt(); }
bool tFloat(Interpreter&, const Value& v, CallArgs&) { return v.isFloat(); }
bool tMapping(Interpreter&, const Value& v, CallArgs&) { return v.isDict(); }
bool tIterable(Interpreter&, const Value& v, CallArgs&) {
    return v.isString() || v.isList() || v.isDict() || v.isUndefined();
}
bool tSequence(Interpreter&, const Value& v, CallArgs&) {
    return v.isString() || isSeq(v) || v.isDict() || v.isUndefined();
}
bool tCallable(Interpreter&, const Value& v, CallArgs&) {
    return (v.isObject() && v.object()->isCallable()) || v.isUndefined();
}

double numeric(const Value& v, std::string_view test) {
    if (v.isUndefined()) failUndefined(v);
    if (!v.isNumber()) fail(ErrorKind::Type, "test '" + std::string(test) + "' needs a number, not " + typeName(v));
    return v.floatValue();
}

bool tOdd(Interpreter&, const Value& v, CallArgs&) {
    if (v.isInt() || v.isBool()) return (v.intValue() % 2) != 0;
    return std::fmod(numeric(v, "odd"), 2.0) != 0.0;
}
bool tEven(Interpreter&, const Value& v, CallArgs&) {
    if (v.isInt() || v.isBool()) return (v.intValue() % 2) == 0;
    return std::fmod(numeric(v, "even"), 2.0) == 0.0;
}
bool tDivisibleBy(Interpreter&, const Value& v, CallArgs& a) {
    const Value& n = firstArg(a, "divisibleby");
    if ((v.isInt() || v.isBool()) && (n.isInt() || n.isBool())) {
        if (n.intValue() == 0) fail(ErrorKind::Value, "ZeroDivisionError: integer division or modulo by zero");
        return n.intValue() == -1 || v.intValue() % n.intValue() == 0;
    }
    const double d = numeric(n, "divisibleby");
    if (d == 0.0) fail(ErrorKind::Value, "ZeroDivisionError: float modulo");
    return std::fmod(numeric(v, "divisibleby"), d) == 0.0;
}

bool tEq(Interpreter&, const Value& v, CallArgs& a) { return equals(v, firstArg(a, "eq")); }
bool tNe(Interpreter&, const Value& v, CallArgs& a) { return !equals(v, firstArg(a, "ne")); }
bool tLt(Interpreter&, const Value& v, CallArgs& a) { return lessThan(v, firstArg(a, "lt")); }
bool tGt(Interpreter&, const Value& v, CallArgs& a) { return lessThan(firstArg(a, "gt"), v); }
bool tLe(Interpreter&, const Value& v, CallArgs& a) {
    const Value& o = firstArg(a, "le");
    return lessThan(v, o) || equals(v, o);
}
bool tGe(Interpreter&, const Value& v, CallArgs& a) {
    const Value& o = firstArg(a, "ge");
    return lessThan(o, v) || equals(v, o);
}
bool tIn(Interpreter&, const Value& v, CallArgs& a) { return contains(firstArg(a, "in"), v); }

bool tSameAs(Interpreter&, const Value& v, CallArgs& a) {
    const Value& o = firstArg(a, "sameas");
    if (v.kind() != o.kind()) return false;
    switch (v.kind()) {
    case Value::Kind::List: return &v.listData() == &o.listData();
    case Value::Kind::Dict: return &v.dictData() == &o.dictData();
    case Value::Kind::Object: return v.object() == o.object();
    default: return equals(v, o);
    }
}

bool tLower(Interpreter& in, const Value& v, CallArgs&) {
    CallArgs none;
    return v.isString() && truthy(*callMethod(in, v, "islower", none));
}
bool tUpper(Interpreter& in, const Value& v, CallArgs&) {
    CallArgs none;
    return v.isString() && truthy(*callMethod(in, v, "isupper", none));
}
bool tEscaped(Interpreter&, const Value&, CallArgs&) { return false; }
bool tFilter(Interpreter&, const Value& v, CallArgs&) { return v.isString() && findFilter(v.str()) != nullptr; }
bool tTest(Interpreter&, const Value& v, CallArgs&) { return v.isString() && findTest(v.str()) != nullptr; }

// ---- globals ----

Value gRange(Interpreter& in, CallArgs& a) {
    if (!a.keyword.empty()) fail(ErrorKind::Type, "range() takes no keyword arguments");
    if (a.positional.empty() || a.positional.size() > 3)
        fail(ErrorKind::Type, "range expected 1 to 3 arguments, got " + std::to_string(a.positional.size()));
    std::int64_t start = 0;
    std::int64_t stop = 0;
    std::int64_t step = 1;
    if (a.positional.size() == 1) {
        stop = toInteger(a.positional[0], "range");
    } else {
        start = toInteger(a.positional[0], "range");
        stop = toInteger(a.positional[1], "range");
        if (a.positional.size() == 3) step = toInteger(a.positional[2], "range");
    }
    if (step == 0) fail(ErrorKind::Value, "range() arg 3 must not be zero");
    // Count without overflow, then bound it before materialising anything.
    long double span = static_cast<long double>(stop) - static_cast<long double>(start);
    long double count = step > 0 ? std::ceil(span / step) : std::ceil(span / step);
    if (count < 0) count = 0;
    // jinja2's sandbox refuses ranges over MAX_RANGE = 100000 items (sandbox.py safe_range).
    constexpr long double kSandboxMaxRange = 100000;
    if (count > kSandboxMaxRange) {
        fail(ErrorKind::Limit, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    }
    if (count > static_cast<long double>(in.limits().maxLoopIterations)) {
        fail(ErrorKind::Limit, "range() of " + std::to_string(static_cast<unsigned long long>(count))
                                   + " items exceeds the loop iteration limit of "
                                   + std::to_string(in.limits().maxLoopIterations));
    }
    std::vector<Value> out;
    out.reserve(static_cast<std::size_t>(count));
    for (std::int64_t i = 0, v = start; i < static_cast<std::int64_t>(count); ++i) {
        out.push_back(Value::integer(v));
        if (i + 1 < static_cast<std::int64_t>(count)) v += step;  // not past the last: it may not fit
    }
    return Value::list(std::move(out));
}

void mergePairs(DictData& d, const Value& source) {
    if (source.isDict()) {
        for (const auto& [k, v] : source.dictData().entries) d.insert(k, v);
        return;
    }
    for (const auto& pair : iterate(source)) {
        const std::vector<Value> kv = iterate(pair);
        if (kv.size() != 2) fail(ErrorKind::Value, "dictionary update sequence element has length " + std::to_string(kv.size()) + "; 2 is required");
        d.insert(kv[0], kv[1]);
    }
}

Value gDict(Interpreter&, CallArgs& a) {
    if (a.positional.size() > 1) fail(ErrorKind::Type, "dict expected at most 1 argument");
    DictData d;
    if (!a.positional.empty()) mergePairs(d, a.positional[0]);
    for (const auto& [k, v] : a.keyword) d.insert(Value::string(k), v);
    return Value::dict(std::move(d));
}

Value gNamespace(Interpreter& in, CallArgs& a) {
    auto ns = std::make_shared<NamespaceObject>();
    for (const auto& p : a.positional) {
        DictData d;
        mergePairs(d, p);
        for (auto& [k, v] : d.entries) ns->attrs.insert(Value::string(toStr(k)), v);
    }
    for (const auto& [k, v] : a.keyword) ns->attrs.insert(Value::string(k), v);
    in.track(ns);
    return Value::object(std::move(ns));
}

Value gRaiseException(Interpreter&, CallArgs& a) {
    const Value* msg = a.find(0, "message");
    throw JinjaError(ErrorKind::Template, msg ? toStr(*msg) : std::string());
}

Value gStrftimeNow(Interpreter& in, CallArgs& a) {
    const Value* fmt = a.find(0, "format");
    if (!fmt || !fmt->isString()) fail(ErrorKind::Type, "strftime_now() needs a format string");
    return Value::string(pyStrftime(fmt->str(), in.now()));
}

class JoinerObject : public Object {
public:
    explicit JoinerObject(std::string sep) : m_sep(std::move(sep)) {}
    std::string typeName() const override { return "Joiner"; }
    bool isCallable() const override { return true; }
    Value call(Interpreter&, CallArgs&) override {
        if (!m_used) {
            m_used = true;
            return Value::string("");
        }
        return Value::string(m_sep);
    }

private:
    std::string m_sep;
    bool m_used = false;
};

Value gJoiner(Interpreter&, CallArgs& a) {
    return Value::object(std::make_shared<JoinerObject>(toStr(a.get(0, "sep", Value::string(", ")))));
}

class CyclerObject : public Object, public std::enable_shared_from_this<CyclerObject> {
public:
    explicit CyclerObject(std::vector<Value> items) : m_items(std::move(items)) {}
    std::string typeName() const override { return "Cycler"; }
    Value getAttr(std::string_view name) const override {
        auto self = std::const_pointer_cast<CyclerObject>(shared_from_this());
        if (name == "current") return m_items[m_pos];
        if (name == "next") {
            return Value::object(std::make_shared<FunctionObject>("next", [self](Interpreter&, CallArgs&) {
                Value v = self->m_items[self->m_pos];
                self->m_pos = (self->m_pos + 1) % self->m_items.size();
                return v;
            }));
        }
        if (name == "reset") {
            return Value::object(std::make_shared<FunctionObject>("reset", [self](Interpreter&, CallArgs&) {
                self->m_pos = 0;
                return Value::none();
            }));
        }
        return Object::getAttr(name);
    }

private:
    std::vector<Value> m_items;
    std::size_t m_pos = 0;
};

Value gCycler(Interpreter&, CallArgs& a) {
    if (a.positional.empty()) fail(ErrorKind::Type, "at least one item has to be provided");
    return Value::object(std::make_shared<CyclerObject>(a.positional));
}

}  // namespace

TestFn findTest(std::string_view name) {
    static const std::unordered_map<std::string_view, TestFn> table = {
        {"defined", tDefined},   {"undefined", tUndefined}, {"none", tNone},         {"boolean", tBoolean},
        {"true", tTrue},         {"false", tFalse},         {"string", tString},     {"number", tNumber},
        {"integer", tInteger},   {"float", tFloat},         {"mapping", tMapping},   {"iterable", tIterable},
        {"sequence", tSequence}, {"callable", tCallable},   {"odd", tOdd},           {"even", tEven},
        {"divisibleby", tDivisibleBy}, {"eq", tEq},         {"equalto", tEq},        {"==", tEq},
        {"ne", tNe},             {"!=", tNe},               {"lt", tLt},             {"lessthan", tLt},
        {"<", tLt},              {"le", tLe},               {"<=", tLe},             {"gt", tGt},
        {"greaterthan", tGt},    {">", tGt},                {"ge", tGe},             {">=", tGe},
        {"in", tIn},             {"sameas", tSameAs},       {"lower", tLower},       {"upper", tUpper},
        {"escaped", tEscaped},   {"filter", tFilter},       {"test", tTest},
    };
    const auto it = table.find(name);
    return it == table.end() ? nullptr : it->second;
}

void installGlobals(Scope& scope) {
    auto fn = [&scope](const char* name, FunctionObject::Fn f) {
        scope.set(name, Value::object(std::make_shared<FunctionObject>(name, std::move(f))));
    };
    fn("range", gRange);
    fn("dict", gDict);
    fn("namespace", gNamespace);
    fn("raise_exception", gRaiseException);
    fn("strftime_now", gStrftimeNow);
    fn("joiner", gJoiner);
    fn("cycler", gCycler);
}

}  // namespace verdict::tok::jinja
