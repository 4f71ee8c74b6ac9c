// Statement execution, scopes, loops and macros of the Jinja interpreter.
// Expression evaluation lives in jinja_eval.cpp.
#include "template/jinja_interpreter.h"

#include "template/jinja_builtins.h"
#include "template/jinja_error.h"

#include <chrono>
#include <ctime>

namespace verdict::tok::jinja {

namespace {

// A macro, or the body of a {% call %} block passed to the callee as `caller`.
class MacroObject : public Object {
public:
    MacroObject(std::string name, const std::vector<MacroParam>* params, const Body* body, ScopePtr closure)
        : m_name(std::move(name)), m_params(params), m_body(body), m_closure(std::move(closure)) {}

    std::string typeName() const override { return "Macro"; }
    bool isCallable() const override { return true; }
    Value call(Interpreter& interp, CallArgs& args) override {
        if (!m_closure) fail(ErrorKind::Type, "macro '" + m_name + "' called after its template finished");
        return interp.invokeMacro(m_name, *m_params, *m_body, m_closure, args);
    }
    Value getAttr(std::string_view name) const override {
        if (name == "name") return Value::string(m_name);
        return Object::getAttr(name);
    }
    std::string repr() const override { return "<Macro '" + m_name + "'>"; }
    void releaseReferences() override { m_closure.reset(); }

private:
    std::string m_name;
    const std::vector<MacroParam>* m_params;
    const Body* m_body;
    ScopePtr m_closure;
};

// The `loop` variable of a for loop. Holds the (filtered) items for previtem/nextitem.
class LoopObject : public Object, public std::enable_shared_from_this<LoopObject> {
public:
    std::vector<Value> items;
    std::int64_t index0 = 0;
    int depth0 = 0;
    const Stmt* stmt = nullptr;
    std::weak_ptr<Scope> scope;  // weak: a loop stored in a namespace must not keep scopes alive
    std::vector<Value> lastChanged;
    bool changedSeen = false;

    std::string typeName() const override { return "LoopContext"; }
    bool isCallable() const override { return true; }

    Value getAttr(std::string_view name) const override {
        const auto length = static_cast<std::int64_t>(items.size());
        if (name == "index") return Value::integer(index0 + 1);
        if (name == "index0") return Value::integer(index0);
        if (name == "revindex") return Value::integer(length - index0);
        if (name == "revindex0") return Value::integer(length - index0 - 1);
        if (name == "first") return Value::boolean(index0 == 0);
        if (name == "last") return Value::boolean(index0 == length - 1);
        if (name == "length") return Value::integer(length);
        if (name == "depth") return Value::integer(depth0 + 1);
        if (name == "depth0") return Value::integer(depth0);
        if (name == "previtem")
            return index0 > 0 ? items[static_cast<std::size_t>(index0 - 1)] : Value::undefined("there is no previous item");
        if (name == "nextitem")
            return index0 + 1 < length ? items[static_cast<std::size_t>(index0 + 1)]
                                       : Value::undefined("there is no next item");
        auto self = std::const_pointer_cast<LoopObject>(shared_from_this());
        if (name == "cycle") {
            return Value::object(std::make_shared<FunctionObject>("cycle", [self](Interpreter&, CallArgs& args) {
                if (args.positional.empty()) fail(ErrorKind::Type, "no items for cycling given");
                return args.positional[static_cast<std::size_t>(self->index0) % args.positional.size()];
            }));
        }
        if (name == "changed") {
            return Value::object(std::make_shared<FunctionObject>("changed", [self](Interpreter&, CallArgs& args) {
                const std::vector<Value>& now = args.positional;
                bool same = self->changedSeen && now.size() == self->lastChanged.size();
                for (std::size_t i = 0; same && i < now.size(); ++i) same = equals(now[i], self->lastChanged[i]);
                self->changedSeen = true;
                self->lastChanged = now;
                return Value::boolean(!same);
            }));
        }
        return Object::getAttr(name);
    }

    Value call(Interpreter& interp, CallArgs& args) override {
        if (!stmt->recursive)
            fail(ErrorKind::Type, "the loop must have the 'recursive' marker to be called with a loop");
        if (args.positional.size() != 1) fail(ErrorKind::Type, "loop() takes exactly one argument");
        ScopePtr parent = scope.lock();
        if (!parent) fail(ErrorKind::Type, "recursive loop called after the loop ended");
        return Value::string(interp.renderLoop(*stmt, args.positional[0], parent, depth0 + 1));
    }
};

}  // namespace

// ---- Scope ----

const Value* Scope::find(std::string_view name) const {
    for (const Scope* s = this; s; s = s->m_parent.get()) {
        for (const auto& [k, v] : s->m_vars)
            if (k == name) return &v;
    }
    return nullptr;
}

void Scope::set(std::string_view name, Value value) {
    for (auto& [k, v] : m_vars) {
        if (k == name) {
            v = std::move(value);
            return;
        }
    }
    m_vars.emplace_back(std::string(name), std::move(value));
}

// ---- Interpreter ----

Interpreter::Interpreter(const Program& program, RenderLimits limits, Clock clock)
    : m_program(program), m_limits(limits), m_clock(std::move(clock)) {}

Interpreter::~Interpreter() {
    for (auto& obj : m_tracked) obj->releaseReferences();
}

Interpreter::DepthGuard::DepthGuard(Interpreter& in) : interp(in) {
    if (++interp.m_steps > interp.m_limits.maxSteps) {
        fail(ErrorKind::Limit, "template evaluation took more than " + std::to_string(interp.m_limits.maxSteps) +
                                   " steps (runaway recursion or loop?)");
    }
    if ((interp.m_steps & 4095) == 0 && interp.m_limits.shouldStop && interp.m_limits.shouldStop())
        fail(ErrorKind::Limit, "template rendering cancelled");
    if (++interp.m_nativeDepth > interp.m_limits.maxNativeDepth) {
        fail(ErrorKind::Limit,
             "template evaluation nested deeper than " + std::to_string(interp.m_limits.maxNativeDepth) + " levels");
    }
}

DateTime Interpreter::now() const {
    if (m_clock) return m_clock();
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    localtime_r(&t, &tm);
    return DateTime{tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
}

std::string Interpreter::render(const std::vector<std::pair<std::string, Value>>& variables) {
    auto builtins = std::make_shared<Scope>();
    installGlobals(*builtins);
    auto globals = std::make_shared<Scope>(builtins);
    for (const auto& [name, value] : variables) globals->set(name, value);
    auto top = std::make_shared<Scope>(globals);
    const StringLimitScope stringLimit(m_limits.maxOutputBytes);  // for repr(), tojson, string iteration
    std::string out;
    try {
        execBody(m_program.body, top, out);
    } catch (JinjaError& e) {
        e.setOffsetIfUnknown(m_lastOffset);
        throw;
    }
    return out;
}

void Interpreter::chargeIterations(std::uint64_t n) {
    m_iterations += n;
    if (m_iterations > m_limits.maxLoopIterations) {
        fail(ErrorKind::Limit, "loop iteration limit of " + std::to_string(m_limits.maxLoopIterations) + " exceeded");
    }
}

void Interpreter::checkSize(std::size_t bytes) {
    if (bytes > m_limits.maxOutputBytes) {
        fail(ErrorKind::Limit, "string of " + std::to_string(bytes) + " bytes exceeds the limit of "
                                   + std::to_string(m_limits.maxOutputBytes) + " bytes");
    }
}

void Interpreter::chargeListCopy(std::size_t items) {
    m_work += items * sizeof(Value);
    if (m_work > m_limits.maxWorkBytes) {
        fail(ErrorKind::Limit, "template built more than " + std::to_string(m_limits.maxWorkBytes)
                                   + " bytes of strings and lists (runaway loop?)");
    }
}

void Interpreter::chargeWork(std::size_t bytes) {
    checkSize(bytes);
    m_work += bytes;
    if (m_work > m_limits.maxWorkBytes) {
        fail(ErrorKind::Limit, "template built more than " + std::to_string(m_limits.maxWorkBytes)
                                   + " bytes of strings (runaway loop?)");
    }
}

void Interpreter::emit(std::string& out, std::string_view text) {
    chargeWork(text.size());
    out.append(text);
    if (out.size() > m_limits.maxOutputBytes) {
        fail(ErrorKind::Limit, "rendered output exceeds " + std::to_string(m_limits.maxOutputBytes) + " bytes");
    }
}

Interpreter::Flow Interpreter::execBody(const Body& body, const ScopePtr& scope, std::string& out) {
    for (const auto& s : body) {
        const Flow f = execStmt(*s, scope, out);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

Value Interpreter::applyFilterChain(const std::vector<FilterCall>& filters, Value input, const ScopePtr& scope) {
    for (const auto& f : filters) {
        CallArgs args = evalArgs(f.args, scope);
        m_lastOffset = f.offset;
        input = applyFilter(f.name, input, args);
    }
    return input;
}

Interpreter::Flow Interpreter::execStmt(const Stmt& s, const ScopePtr& scope, std::string& out) {
    DepthGuard guard(*this);
    m_lastOffset = s.offset;
    switch (s.kind) {
    case StmtKind::Text: emit(out, s.text); return Flow::Normal;
    case StmtKind::Print: {
        const Value v = eval(*s.expr, scope);
        if (v.isString()) emit(out, v.str());
        else if (!v.isUndefined()) emit(out, toStr(v));
        return Flow::Normal;
    }
    case StmtKind::If:
        for (const auto& [cond, body] : s.branches) {
            if (truthy(eval(*cond, scope))) return execBody(body, scope, out);
        }
        return execBody(s.elseBody, scope, out);
    case StmtKind::For: {
        const Value iterable = eval(*s.expr, scope);
        return loopInto(s, iterable, scope, 0, out);
    }
    case StmtKind::Set: execSet(s, scope); return Flow::Normal;
    case StmtKind::SetBlock: {
        std::string captured;
        execBody(s.body, std::make_shared<Scope>(scope), captured);
        scope->set(s.targets[0], applyFilterChain(s.filters, Value::string(std::move(captured)), scope));
        return Flow::Normal;
    }
    case StmtKind::Macro: {
        auto macro = std::make_shared<MacroObject>(s.name, &s.params, &s.body, scope);
        track(macro);
        scope->set(s.name, Value::object(std::move(macro)));
        return Flow::Normal;
    }
    case StmtKind::CallBlock: {
        auto caller = std::make_shared<MacroObject>("caller", &s.params, &s.body, scope);
        track(caller);
        const Expr& call = *s.expr;
        const Value callee = eval(*call.a, scope);
        CallArgs args = evalArgs(call.args, scope);
        args.keyword.emplace_back("caller", Value::object(std::move(caller)));
        m_lastOffset = call.offset;
        const Value result = callValue(callee, args);
        emit(out, toStr(result));
        return Flow::Normal;
    }
    case StmtKind::FilterBlock: {
        std::string captured;
        execBody(s.body, std::make_shared<Scope>(scope), captured);
        const Value v = applyFilterChain(s.filters, Value::string(std::move(captured)), scope);
        emit(out, toStr(v));
        return Flow::Normal;
    }
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
    case StmtKind::With: {
        auto inner = std::make_shared<Scope>(scope);
        for (const auto& [name, expr] : s.assignments) inner->set(name, eval(*expr, scope));
        return execBody(s.body, inner, out);
    }
    case StmtKind::Scope: return execBody(s.body, scope, out);
    }
    return Flow::Normal;
}

void Interpreter::execSet(const Stmt& s, const ScopePtr& scope) {
    Value v = eval(*s.expr, scope);
    if (!s.attribute.empty()) {
        const Value* target = scope->find(s.targets[0]);
        if (!target || !target->isObject() || !target->object()->setAttr(s.attribute, v)) {
            m_lastOffset = s.offset;
            fail(ErrorKind::Type, "cannot assign attribute on non-namespace object '" + s.targets[0] + "'");
        }
        return;
    }
    assignTargets(s.targets, v, scope);
}

void Interpreter::assignTargets(const std::vector<std::string>& targets, const Value& value, const ScopePtr& scope) {
    if (targets.size() == 1) {
        scope->set(targets[0], value);
        return;
    }
    const std::vector<Value> parts = iterate(value);
    if (parts.size() < targets.size()) {
        fail(ErrorKind::Value, "not enough values to unpack (expected " + std::to_string(targets.size()) + ", got "
                                   + std::to_string(parts.size()) + ")");
    }
    if (parts.size() > targets.size())
        fail(ErrorKind::Value, "too many values to unpack (expected " + std::to_string(targets.size()) + ")");
    for (std::size_t i = 0; i < targets.size(); ++i) scope->set(targets[i], parts[i]);
}

Interpreter::Flow Interpreter::loopInto(const Stmt& s, const Value& iterable, const ScopePtr& scope, int depth0,
                                        std::string& out) {
    std::vector<Value> items = iterate(iterable);
    if (s.filterCond) {
        std::vector<Value> kept;
        for (auto& item : items) {
            chargeIterations(1);
            auto filterScope = std::make_shared<Scope>(scope);
            assignTargets(s.targets, item, filterScope);
            if (truthy(eval(*s.filterCond, filterScope))) kept.push_back(std::move(item));
        }
        items = std::move(kept);
    }
    if (items.empty()) return execBody(s.elseBody, scope, out);  // break here targets an outer loop

    auto loop = std::make_shared<LoopObject>();
    loop->items = std::move(items);
    loop->depth0 = depth0;
    loop->stmt = &s;
    loop->scope = scope;
    const Value loopValue = Value::object(loop);
    for (std::size_t i = 0; i < loop->items.size(); ++i) {
        chargeIterations(1);
        loop->index0 = static_cast<std::int64_t>(i);
        auto iterationScope = std::make_shared<Scope>(scope);
        iterationScope->set("loop", loopValue);
        assignTargets(s.targets, loop->items[i], iterationScope);
        if (execBody(s.body, iterationScope, out) == Flow::Break) break;
    }
    return Flow::Normal;
}

std::string Interpreter::renderLoop(const Stmt& loop, const Value& iterable, const ScopePtr& scope, int depth0) {
    if (++m_callDepth > m_limits.maxCallDepth) {
        --m_callDepth;
        fail(ErrorKind::Limit, "recursive loop deeper than " + std::to_string(m_limits.maxCallDepth) + " levels");
    }
    std::string out;
    loopInto(loop, iterable, scope, depth0, out);
    --m_callDepth;
    return out;
}

Value Interpreter::invokeMacro(const std::string& name, const std::vector<MacroParam>& params, const Body& body,
                               const ScopePtr& closure, CallArgs& args) {
    struct CallDepth {
        explicit CallDepth(Interpreter& in, const std::string& macro) : interp(in) {
            if (++interp.m_callDepth > interp.m_limits.maxCallDepth) {
                fail(ErrorKind::Limit, "macro '" + macro + "' recursion deeper than "
                                           + std::to_string(interp.m_limits.maxCallDepth) + " calls");
            }
        }
        ~CallDepth() { --interp.m_callDepth; }
        Interpreter& interp;
    } depth(*this, name);

    auto local = std::make_shared<Scope>(closure);
    std::vector<bool> used(args.keyword.size(), false);
    for (std::size_t i = 0; i < params.size(); ++i) {
        const MacroParam& p = params[i];
        const Value* v = nullptr;
        if (i < args.positional.size()) {
            v = &args.positional[i];
        } else {
            for (std::size_t k = 0; k < args.keyword.size(); ++k) {
                if (args.keyword[k].first == p.name) {
                    v = &args.keyword[k].second;
                    used[k] = true;
                }
            }
        }
        if (v) local->set(p.name, *v);
        else if (p.defaultValue) local->set(p.name, eval(*p.defaultValue, local));
        else local->set(p.name, Value::undefined("parameter '" + p.name + "' was not provided"));
    }
    std::vector<Value> extra;
    for (std::size_t i = params.size(); i < args.positional.size(); ++i) extra.push_back(args.positional[i]);
    local->set("varargs", Value::list(std::move(extra), ListKind::Tuple));
    DictData kwargs;
    for (std::size_t k = 0; k < args.keyword.size(); ++k) {
        if (used[k]) continue;
        if (args.keyword[k].first == "caller") local->set("caller", args.keyword[k].second);
        else kwargs.insert(Value::string(args.keyword[k].first), args.keyword[k].second);
    }
    local->set("kwargs", Value::dict(std::move(kwargs)));
    std::string out;
    execBody(body, local, out);
    return Value::string(std::move(out));
}

}  // namespace verdict::tok::jinja
