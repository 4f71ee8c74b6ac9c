// Expression evaluation of the Jinja interpreter: operators with Python semantics, jinja2's
// attribute/item lookup rules, calls, filters and tests.
#include "template/jinja_builtins.h"
#include "template/jinja_error.h"
#include "template/jinja_interpreter.h"
#include "template/jinja_string.h"

#include <cmath>
#include <limits>

namespace verdict::tok::jinja {

namespace {

[[noreturn]] void unsupportedOperands(const char* op, const Value& a, const Value& b) {
    fail(ErrorKind::Type, std::string("unsupported operand type(s) for ") + op + ": '" + typeName(a) + "' and '"
                              + typeName(b) + "'");
}

[[noreturn]] void integerOverflow() {
    fail(ErrorKind::Limit, "integer result outside the 64-bit range supported by this engine");
}

void requireDefined(const Value& a, const Value& b) {
    if (a.isUndefined()) failUndefined(a);
    if (b.isUndefined()) failUndefined(b);
}

bool isSequence(const Value& v) {
    return v.isList() && (v.listKind() == ListKind::List || v.listKind() == ListKind::Tuple);
}

// Python object_type_repr as jinja2 uses it in Undefined messages.
std::string objectTypeRepr(const Value& v) {
    if (v.isNone()) return "'None'";
    return concat("'", typeName(v), " object'");
}

Value noAttribute(const Value& obj, std::string_view name) {
    return Value::undefined(objectTypeRepr(obj) + " has no attribute '" + std::string(name) + "'");
}

Value repeat(Interpreter& interp, const Value& seq, std::int64_t n) {
    if (n < 0) n = 0;
    const auto count = static_cast<std::uint64_t>(n);
    if (seq.isString()) {
        const std::string& s = seq.str();
        if (!s.empty() && count > interp.limits().maxOutputBytes / s.size()) {
            fail(ErrorKind::Limit, "string repetition larger than " + std::to_string(interp.limits().maxOutputBytes)
                                       + " bytes");
        }
        interp.chargeWork(s.size() * count);
        std::string out;
        out.reserve(s.size() * count);
        for (std::uint64_t i = 0; i < count; ++i) out += s;
        return seq.isMarkup() ? Value::markup(std::move(out)) : Value::string(std::move(out));
    }
    const auto& items = seq.items();
    if (!items.empty() && count > interp.limits().maxLoopIterations / items.size())
        fail(ErrorKind::Limit, "list repetition larger than " + std::to_string(interp.limits().maxLoopIterations) + " items");
    interp.chargeIterations(count * items.size());
    std::vector<Value> out;
    out.reserve(items.size() * count);
    for (std::uint64_t i = 0; i < count; ++i) out.insert(out.end(), items.begin(), items.end());
    return Value::list(std::move(out), seq.listKind());
}

double floatOperand(const Value& v) { return v.floatValue(); }

Value pyPow(const Value& a, const Value& b) {
    if (!a.isFloat() && !b.isFloat() && b.intValue() >= 0) {
        std::int64_t base = a.intValue();
        std::int64_t exp = b.intValue();
        std::int64_t result = 1;
        while (exp > 0) {
            if (exp & 1) {
                if (__builtin_mul_overflow(result, base, &result)) integerOverflow();
            }
            exp >>= 1;
            if (exp > 0 && __builtin_mul_overflow(base, base, &base)) integerOverflow();
        }
        return Value::integer(result);
    }
    const double x = floatOperand(a);
    const double y = floatOperand(b);
    if (x == 0.0 && y < 0) fail(ErrorKind::Value, "ZeroDivisionError: 0.0 cannot be raised to a negative power");
    return Value::number(std::pow(x, y));
}

}  // namespace

Value pyAdd(Interpreter& interp, const Value& a, const Value& b) {
    requireDefined(a, b);
    if (a.isNumber() && b.isNumber()) {
        if (a.isFloat() || b.isFloat()) return Value::number(a.floatValue() + b.floatValue());
        std::int64_t r = 0;
        if (__builtin_add_overflow(a.intValue(), b.intValue(), &r)) integerOverflow();
        return Value::integer(r);
    }
    if (a.isString() && b.isString()) {
        interp.chargeWork(a.str().size() + b.str().size());
        if (a.isMarkup() != b.isMarkup()) {
            // Markup + str escapes the str side (markupsafe's __add__ / __radd__).
            return Value::markup(a.isMarkup() ? a.str() + htmlEscape(b.str()) : htmlEscape(a.str()) + b.str());
        }
        std::string out;
        out.reserve(a.str().size() + b.str().size());
        out += a.str();
        out += b.str();
        return a.isMarkup() ? Value::markup(std::move(out)) : Value::string(std::move(out));
    }
    if (isSequence(a) && isSequence(b) && a.listKind() == b.listKind()) {
        // Bounded like repetition, and the copy counted as work: `ns.l = ns.l + ns.l` doubles a list
        // per step (40 steps: a trillion items), and copying big lists in a loop takes time.
        const std::size_t n = a.items().size() + b.items().size();
        if (n > interp.limits().maxLoopIterations)
            fail(ErrorKind::Limit, "list concatenation larger than " + std::to_string(interp.limits().maxLoopIterations) + " items");
        interp.chargeListCopy(n);
        std::vector<Value> out = a.items();
        out.insert(out.end(), b.items().begin(), b.items().end());
        return Value::list(std::move(out), a.listKind());
    }
    if (a.isString()) fail(ErrorKind::Type, "can only concatenate str (not \"" + typeName(b) + "\") to str");
    if (isSequence(a)) {
        fail(ErrorKind::Type, "can only concatenate " + typeName(a) + " (not \"" + typeName(b) + "\") to " + typeName(a));
    }
    unsupportedOperands("+", a, b);
}

Value Interpreter::evalBinary(BinaryOp op, const Value& a, const Value& b) {
    if (op == BinaryOp::Concat) {
        // Size check before building: a runaway `s ~ s` loop fails without allocating the result.
        const std::string left = a.isString() ? std::string() : toStr(a);
        const std::string right = b.isString() ? std::string() : toStr(b);
        const std::string& l = a.isString() ? a.str() : left;
        const std::string& r = b.isString() ? b.str() : right;
        chargeWork(l.size() + r.size());
        std::string out;
        out.reserve(l.size() + r.size());
        out += l;
        out += r;
        return Value::string(std::move(out));
    }
    if (op == BinaryOp::Add) return pyAdd(*this, a, b);
    requireDefined(a, b);
    if (op == BinaryOp::Mul) {
        if ((a.isString() || isSequence(a)) && (b.isInt() || b.isBool())) return repeat(*this, a, b.intValue());
        if ((b.isString() || isSequence(b)) && (a.isInt() || a.isBool())) return repeat(*this, b, a.intValue());
    }
    if (op == BinaryOp::Mod && a.isString()) return percentFormat(*this, a, b);
    if (!a.isNumber() || !b.isNumber()) {
        static const char* const kSymbols[] = {"+", "-", "*", "/", "//", "%", "**", "~"};
        unsupportedOperands(kSymbols[static_cast<int>(op)], a, b);
    }
    const bool useFloat = a.isFloat() || b.isFloat();
    const std::int64_t x = a.intValue();
    const std::int64_t y = b.intValue();
    std::int64_t r = 0;
    switch (op) {
    case BinaryOp::Sub:
        if (useFloat) return Value::number(a.floatValue() - b.floatValue());
        if (__builtin_sub_overflow(x, y, &r)) integerOverflow();
        return Value::integer(r);
    case BinaryOp::Mul:
        if (useFloat) return Value::number(a.floatValue() * b.floatValue());
        if (__builtin_mul_overflow(x, y, &r)) integerOverflow();
        return Value::integer(r);
    case BinaryOp::Div:
        if (b.floatValue() == 0.0) fail(ErrorKind::Value, "ZeroDivisionError: division by zero");
        return Value::number(a.floatValue() / b.floatValue());
    case BinaryOp::FloorDiv:
        if (b.floatValue() == 0.0) fail(ErrorKind::Value, "ZeroDivisionError: integer division or modulo by zero");
        if (useFloat) return Value::number(std::floor(a.floatValue() / b.floatValue()));
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) integerOverflow();
        r = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --r;
        return Value::integer(r);
    case BinaryOp::Mod:
        if (b.floatValue() == 0.0) fail(ErrorKind::Value, "ZeroDivisionError: integer division or modulo by zero");
        if (useFloat) {
            double m = std::fmod(a.floatValue(), b.floatValue());
            if (m != 0.0 && ((m < 0) != (b.floatValue() < 0))) m += b.floatValue();
            return Value::number(m);
        }
        if (y == -1) return Value::integer(0);
        r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return Value::integer(r);
    case BinaryOp::Pow: return pyPow(a, b);
    default: break;
    }
    return Value();
}

Value Interpreter::evalSlice(const Value& obj, const Value* start, const Value* stop, const Value* step) {
    if (obj.isUndefined()) failUndefined(obj);
    // jinja2 compiles slices to a plain Python subscript (not environment.getitem), so every
    // failure is a TypeError rather than an Undefined.
    auto index = [](const Value* v) -> std::optional<std::int64_t> {
        if (!v || v->isNone()) return std::nullopt;
        if (v->isInt() || v->isBool()) return v->intValue();
        fail(ErrorKind::Type, "slice indices must be integers or None or have an __index__ method");
    };
    if (obj.isDict()) fail(ErrorKind::Type, "unhashable type: 'slice'");
    if (!(obj.isString() || isSequence(obj))) fail(ErrorKind::Type, "'" + typeName(obj) + "' object is not subscriptable");
    const auto a = index(start);
    const auto b = index(stop);
    const auto c = index(step);
    const std::int64_t st = c ? *c : 1;
    if (st == 0) fail(ErrorKind::Value, "slice step cannot be zero");

    std::vector<std::size_t> bounds;
    std::int64_t n = 0;
    if (obj.isString()) {
        bounds = utf8Boundaries(obj.str());
        n = static_cast<std::int64_t>(bounds.size()) - 1;
    } else {
        n = static_cast<std::int64_t>(obj.items().size());
    }
    // CPython's PySlice_AdjustIndices.
    auto adjust = [n, st](std::optional<std::int64_t> v, bool isStart) {
        if (!v) {
            if (st > 0) return isStart ? std::int64_t{0} : n;
            return isStart ? n - 1 : std::int64_t{-1};
        }
        std::int64_t i = *v;
        if (i < 0) {
            i += n;
            if (i < 0) i = st < 0 ? -1 : 0;
        } else if (i >= n) {
            i = st < 0 ? n - 1 : n;
        }
        return i;
    };
    const std::int64_t lo = adjust(a, true);
    const std::int64_t hi = adjust(b, false);
    std::vector<std::int64_t> picks;
    for (std::int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) picks.push_back(i);

    if (obj.isString()) {
        const std::string& s = obj.str();
        std::string out;
        if (st == 1 && !picks.empty()) {
            out = s.substr(bounds[picks.front()], bounds[picks.back() + 1] - bounds[picks.front()]);
        } else {
            for (auto i : picks) out.append(s, bounds[i], bounds[i + 1] - bounds[i]);
        }
        return Value::string(std::move(out));
    }
    std::vector<Value> out;
    out.reserve(picks.size());
    for (auto i : picks) out.push_back(obj.items()[static_cast<std::size_t>(i)]);
    return Value::list(std::move(out), obj.listKind());
}

Value Interpreter::getAttribute(const Value& obj, std::string_view name) {
    switch (obj.kind()) {
    case Value::Kind::Undefined: failUndefined(obj);
    case Value::Kind::Object: return obj.object()->getAttr(name);
    case Value::Kind::Dict:
        if (hasMethod(obj, name)) return boundMethod(obj, name);
        if (const Value* v = obj.dictData().find(name)) return *v;
        return noAttribute(obj, name);
    default:
        if (hasMethod(obj, name)) return boundMethod(obj, name);
        return noAttribute(obj, name);
    }
}

Value Interpreter::getItem(const Value& obj, const Value& key) {
    switch (obj.kind()) {
    case Value::Kind::Undefined: failUndefined(obj);
    case Value::Kind::Dict:
        if (const Value* v = obj.dictData().find(key)) return *v;
        break;
    case Value::Kind::List:
        if (isSequence(obj) && (key.isInt() || key.isBool())) {
            const auto n = static_cast<std::int64_t>(obj.items().size());
            std::int64_t i = key.intValue();
            if (i < 0) i += n;
            if (i >= 0 && i < n) return obj.items()[static_cast<std::size_t>(i)];
            return Value::undefined(objectTypeRepr(obj) + " has no element " + repr(key));
        }
        break;
    case Value::Kind::String:
        if (key.isInt() || key.isBool()) {
            const std::vector<std::size_t> b = utf8Boundaries(obj.str());
            const auto n = static_cast<std::int64_t>(b.size()) - 1;
            std::int64_t i = key.intValue();
            if (i < 0) i += n;
            if (i >= 0 && i < n) return Value::string(obj.str().substr(b[i], b[i + 1] - b[i]));
            return Value::undefined(objectTypeRepr(obj) + " has no element " + repr(key));
        }
        break;
    default: break;
    }
    if (key.isString()) {
        if (obj.isObject()) return obj.object()->getAttr(key.str());
        if (hasMethod(obj, key.str())) return boundMethod(obj, key.str());
        return noAttribute(obj, key.str());
    }
    return Value::undefined(objectTypeRepr(obj) + " has no element " + repr(key));
}

Value Interpreter::getAttributePath(const Value& obj, std::string_view path) {
    Value cur = obj;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = path.find('.', start);
        const std::string_view part = path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        bool digits = !part.empty();
        for (char c : part) digits = digits && c >= '0' && c <= '9';
        cur = digits ? getItem(cur, Value::integer(std::stoll(std::string(part)))) : getItem(cur, Value::string(std::string(part)));
        if (dot == std::string_view::npos) return cur;
        start = dot + 1;
    }
}

Value Interpreter::callValue(const Value& callee, CallArgs& args) {
    if (callee.isObject() && callee.object()->isCallable()) return callee.object()->call(*this, args);
    if (callee.isUndefined()) failUndefined(callee);
    fail(ErrorKind::Type, concat("'", typeName(callee), "' object is not callable"));
}

Value Interpreter::applyFilter(std::string_view name, const Value& input, CallArgs& args) {
    const FilterFn fn = findFilter(name);
    // jinja2 reports an unknown filter met while rendering (e.g. llama.cpp's from_json, which
    // jinja2 lacks) as TemplateRuntimeError "No filter named 'x' found.".
    if (!fn) fail(ErrorKind::Runtime, "No filter named '" + std::string(name) + "' found.");
    return fn(*this, input, args);
}

bool Interpreter::applyTest(std::string_view name, const Value& input, CallArgs& args) {
    const TestFn fn = findTest(name);
    if (!fn) fail(ErrorKind::Runtime, "No test named '" + std::string(name) + "' found.");
    return fn(*this, input, args);
}

CallArgs Interpreter::evalArgs(const ArgsExpr& args, const ScopePtr& scope) {
    CallArgs out;
    out.positional.reserve(args.positional.size());
    for (const auto& e : args.positional) out.positional.push_back(eval(*e, scope));
    for (const auto& [name, e] : args.keyword) out.keyword.emplace_back(name, eval(*e, scope));
    if (args.starArgs) {
        for (auto& v : iterate(eval(*args.starArgs, scope))) out.positional.push_back(std::move(v));
    }
    if (args.starKwargs) {
        const Value kw = eval(*args.starKwargs, scope);
        if (!kw.isDict()) fail(ErrorKind::Type, "argument after ** must be a mapping, not " + typeName(kw));
        for (const auto& [k, v] : kw.dictData().entries) out.keyword.emplace_back(toStr(k), v);
    }
    return out;
}

Value Interpreter::evalCall(const Expr& e, const ScopePtr& scope) {
    const Expr& callee = *e.a;
    if (callee.kind == ExprKind::Attribute) {
        const Value receiver = eval(*callee.a, scope);
        if (receiver.isUndefined()) failUndefined(receiver);
        CallArgs args = evalArgs(e.args, scope);
        m_lastOffset = e.offset;
        if (!receiver.isObject()) {
            if (auto r = callMethod(*this, receiver, callee.name, args)) return *r;
        }
        return callValue(getAttribute(receiver, callee.name), args);
    }
    const Value fn = eval(callee, scope);
    CallArgs args = evalArgs(e.args, scope);
    m_lastOffset = e.offset;
    return callValue(fn, args);
}

Value Interpreter::eval(const Expr& e, const ScopePtr& scope) {
    DepthGuard guard(*this);
    m_lastOffset = e.offset;
    switch (e.kind) {
    case ExprKind::Literal: return e.literal;
    case ExprKind::Name: {
        if (const Value* v = scope->find(e.name)) return *v;
        return Value::undefined("'" + e.name + "' is undefined");
    }
    case ExprKind::List:
    case ExprKind::Tuple: {
        std::vector<Value> items;
        items.reserve(e.items.size());
        for (const auto& item : e.items) items.push_back(eval(*item, scope));
        return Value::list(std::move(items), e.kind == ExprKind::Tuple ? ListKind::Tuple : ListKind::List);
    }
    case ExprKind::Dict: {
        DictData d;
        for (std::size_t i = 0; i + 1 < e.items.size(); i += 2) {
            Value k = eval(*e.items[i], scope);
            if (k.isList() && k.listKind() != ListKind::Tuple) fail(ErrorKind::Type, "unhashable type: 'list'");
            if (k.isDict()) fail(ErrorKind::Type, "unhashable type: 'dict'");
            d.insert(std::move(k), eval(*e.items[i + 1], scope));
        }
        return Value::dict(std::move(d));
    }
    case ExprKind::Attribute: {
        const Value obj = eval(*e.a, scope);
        m_lastOffset = e.offset;
        return getAttribute(obj, e.name);
    }
    case ExprKind::Subscript: {
        const Value obj = eval(*e.a, scope);
        const Value key = eval(*e.b, scope);
        m_lastOffset = e.offset;
        return getItem(obj, key);
    }
    case ExprKind::Slice: {
        const Value obj = eval(*e.a, scope);
        Value start, stop, step;
        if (e.b) start = eval(*e.b, scope);
        if (e.c) stop = eval(*e.c, scope);
        if (e.d) step = eval(*e.d, scope);
        m_lastOffset = e.offset;
        return evalSlice(obj, e.b ? &start : nullptr, e.c ? &stop : nullptr, e.d ? &step : nullptr);
    }
    case ExprKind::Call: return evalCall(e, scope);
    case ExprKind::Filter: {
        const Value input = eval(*e.a, scope);
        CallArgs args = evalArgs(e.args, scope);
        m_lastOffset = e.offset;
        return applyFilter(e.name, input, args);
    }
    case ExprKind::Test: {
        const Value input = eval(*e.a, scope);
        CallArgs args = evalArgs(e.args, scope);
        m_lastOffset = e.offset;
        return Value::boolean(applyTest(e.name, input, args) != e.negated);
    }
    case ExprKind::Negate:
    case ExprKind::Plus: {
        const Value v = eval(*e.a, scope);
        if (v.isUndefined()) failUndefined(v);
        if (!v.isNumber()) {
            fail(ErrorKind::Type, std::string("bad operand type for unary ") + (e.kind == ExprKind::Negate ? "-" : "+")
                                      + ": '" + typeName(v) + "'");
        }
        if (e.kind == ExprKind::Plus) return v.isFloat() ? v : Value::integer(v.intValue());
        if (v.isFloat()) return Value::number(-v.floatValue());
        if (v.intValue() == std::numeric_limits<std::int64_t>::min()) integerOverflow();
        return Value::integer(-v.intValue());
    }
    case ExprKind::Binary: {
        const Value a = eval(*e.a, scope);
        const Value b = eval(*e.b, scope);
        m_lastOffset = e.offset;
        return evalBinary(e.binaryOp, a, b);
    }
    case ExprKind::Compare: {
        Value left = eval(*e.items[0], scope);
        for (std::size_t i = 0; i < e.ops.size(); ++i) {
            Value right = eval(*e.items[i + 1], scope);
            m_lastOffset = e.offset;
            bool r = false;
            switch (e.ops[i]) {
            case CompareOp::Eq: r = equals(left, right); break;
            case CompareOp::Ne: r = !equals(left, right); break;
            case CompareOp::Lt: r = lessThan(left, right); break;
            case CompareOp::Gt: r = lessThan(right, left); break;
            case CompareOp::Le: r = lessThan(left, right) || equals(left, right); break;
            case CompareOp::Ge: r = lessThan(right, left) || equals(left, right); break;
            case CompareOp::In: r = contains(right, left); break;
            case CompareOp::NotIn: r = !contains(right, left); break;
            }
            if (!r) return Value::boolean(false);
            left = std::move(right);
        }
        return Value::boolean(true);
    }
    case ExprKind::And: {
        Value a = eval(*e.a, scope);
        return truthy(a) ? eval(*e.b, scope) : a;
    }
    case ExprKind::Or: {
        Value a = eval(*e.a, scope);
        return truthy(a) ? a : eval(*e.b, scope);
    }
    case ExprKind::Not: return Value::boolean(!truthy(eval(*e.a, scope)));
    case ExprKind::CondExpr:
        if (truthy(eval(*e.b, scope))) return eval(*e.a, scope);
        if (e.c) return eval(*e.c, scope);
        return Value::undefined("the inline if-expression evaluated to false and no else section was defined");
    }
    return Value();
}

}  // namespace verdict::tok::jinja
