// Tree-walking interpreter for parsed Jinja templates.
//
// Scoping follows jinja2: `if` opens no scope; every for-loop iteration, macro call, with-block
// and set/filter block body gets its own child scope, so a plain `set` inside a loop never
// leaks out (namespace() attributes are the sanctioned way). Undefined follows jinja2's
// default Undefined: prints as "", is falsy, iterates as empty, and raises on attribute/item
// access, calls and arithmetic.
//
// Every resource is bounded (RenderLimits): loop iterations, output size, bytes built by string
// operations, macro recursion, native recursion. Hitting a bound raises ErrorKind::Limit.
#pragma once

#include "template/jinja_ast.h"
#include "template/jinja_value.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace verdict::tok::jinja {

struct RenderLimits {
    std::size_t maxOutputBytes = std::size_t{64} << 20;  // rendered text (and any single string)
    std::uint64_t maxLoopIterations = 1'000'000;         // for-loop iterations, summed over the render
    std::uint64_t maxWorkBytes = std::uint64_t{2} << 30;  // bytes produced by string operations
    int maxCallDepth = 200;                               // nested macro calls
    int maxNativeDepth = 1000;                            // nested evaluation frames (~0.5 MB of stack)
    // Statements and expressions evaluated, summed over the render: bounds the time of a template
    // that loops without output (exponential macro recursion) to about a second.
    std::uint64_t maxSteps = 20'000'000;
    // Asked every few thousand steps; true ends the render with a LimitError ("cancelled"), so a
    // SIGTERM or a client that went away stops a slow template at once.
    std::function<bool()> shouldStop;
};

// Wall-clock time as strftime_now() sees it (local time, no zone).
struct DateTime {
    int year = 1970;
    int month = 1;   // 1..12
    int day = 1;     // 1..31
    int hour = 0;
    int minute = 0;
    int second = 0;
};

// One level of variables. Lookups walk up the parent chain.
class Scope {
public:
    explicit Scope(std::shared_ptr<Scope> parent = nullptr) : m_parent(std::move(parent)) {}
    const Value* find(std::string_view name) const;
    void set(std::string_view name, Value value);

private:
    std::shared_ptr<Scope> m_parent;
    std::vector<std::pair<std::string, Value>> m_vars;
};
using ScopePtr = std::shared_ptr<Scope>;

class Interpreter {
public:
    using Clock = std::function<DateTime()>;

    Interpreter(const Program& program, RenderLimits limits, Clock clock);
    ~Interpreter();
    Interpreter(const Interpreter&) = delete;
    Interpreter& operator=(const Interpreter&) = delete;

    // Renders the whole template with `variables` visible as globals. Throws JinjaError.
    std::string render(const std::vector<std::pair<std::string, Value>>& variables);

    // ---- services used by filters, tests, methods and objects ----
    Value callValue(const Value& callee, CallArgs& args);
    Value applyFilter(std::string_view name, const Value& input, CallArgs& args);
    bool applyTest(std::string_view name, const Value& input, CallArgs& args);
    Value getAttribute(const Value& obj, std::string_view name);  // attribute, then item
    Value getItem(const Value& obj, const Value& key);            // item, then attribute
    // Resolves a dotted attribute path like "function.name" or "0" (selectattr, map, sort).
    Value getAttributePath(const Value& obj, std::string_view path);
    void chargeIterations(std::uint64_t n);
    void chargeWork(std::size_t bytes);  // also checks the single-string size bound
    void checkSize(std::size_t bytes);   // only the single-string size bound (a string being built)
    void chargeListCopy(std::size_t items);  // work of copying list items (sizeof(Value) bytes each)
    // Keeps `obj` to call releaseReferences() when the render ends (namespaces, macros).
    void track(std::shared_ptr<Object> obj) { m_tracked.push_back(std::move(obj)); }
    const RenderLimits& limits() const { return m_limits; }
    DateTime now() const;

    // Used by macro and loop objects.
    Value invokeMacro(const std::string& name, const std::vector<MacroParam>& params, const Body& body,
                      const ScopePtr& closure, CallArgs& args);
    std::string renderLoop(const Stmt& loop, const Value& iterable, const ScopePtr& scope, int depth0);

private:
    enum class Flow { Normal, Break, Continue };

    Flow loopInto(const Stmt& loop, const Value& iterable, const ScopePtr& scope, int depth0, std::string& out);
    Flow execBody(const Body& body, const ScopePtr& scope, std::string& out);
    Flow execStmt(const Stmt& s, const ScopePtr& scope, std::string& out);
    void execSet(const Stmt& s, const ScopePtr& scope);
    void assignTargets(const std::vector<std::string>& targets, const Value& value, const ScopePtr& scope);
    void emit(std::string& out, std::string_view text);
    Value applyFilterChain(const std::vector<FilterCall>& filters, Value input, const ScopePtr& scope);

    Value eval(const Expr& e, const ScopePtr& scope);
    Value evalCall(const Expr& e, const ScopePtr& scope);
    CallArgs evalArgs(const ArgsExpr& args, const ScopePtr& scope);
    Value evalBinary(BinaryOp op, const Value& a, const Value& b);
    Value evalSlice(const Value& obj, const Value* start, const Value* stop, const Value* step);

    struct DepthGuard {
        explicit DepthGuard(Interpreter& in);
        ~DepthGuard() { --interp.m_nativeDepth; }
        Interpreter& interp;
    };

    const Program& m_program;
    RenderLimits m_limits;
    Clock m_clock;
    std::uint64_t m_iterations = 0;
    std::uint64_t m_steps = 0;
    std::uint64_t m_work = 0;
    int m_callDepth = 0;
    int m_nativeDepth = 0;
    std::size_t m_lastOffset = 0;
    std::vector<std::shared_ptr<Object>> m_tracked;  // offset of the node being evaluated, for error positions
};

// Python semantics of the binary operators (exposed for filters like sum).
Value pyAdd(Interpreter& interp, const Value& a, const Value& b);

}  // namespace verdict::tok::jinja
