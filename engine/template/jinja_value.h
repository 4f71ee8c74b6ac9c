// The value model of the Jinja interpreter: Python's data types as templates see them.
//
// A Value is small and cheap to copy: scalars are stored inline, strings/lists/dicts/objects
// behind a shared pointer. Lists and dicts are never mutated after construction (the sandbox
// is immutable), so sharing them between variables is safe. The only mutable things are
// objects: namespace() attributes and loop state.
#pragma once

#include "template/jinja_error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace verdict::tok::jinja {

class Value;
class Interpreter;

// Which Python sequence type a list value stands for; decides repr(), len() and tojson.
enum class ListKind : std::uint8_t {
    List,        // list
    Tuple,       // tuple: repr "(a, b)", never equal to a list
    Generator,   // result of map/select/items/unique/batch: iterable, no len(), not JSON
    Reversed,    // list_reverseiterator from |reverse: iterable, no len(), not JSON
    ItemsView,   // dict.items(): len() and `in` work, not JSON
    KeysView,    // dict.keys()
    ValuesView,  // dict.values()
};

struct ListData {
    std::vector<Value> items;
    ListKind kind = ListKind::List;
    int depth = 1;  // container nesting (1 + deepest item), bounded by kMaxValueDepth
};

// Deepest nesting of lists/dicts a render may build. Deeper values would make destruction,
// comparison and printing recurse without bound; building one fails with LimitError instead.
inline constexpr int kMaxValueDepth = 512;

// Insertion-ordered mapping with Python key equality (1 == 1.0 == True).
struct DictData {
    std::vector<std::pair<Value, Value>> entries;
    int depth = 1;  // set by Value::dict()

    const Value* find(const Value& key) const;
    const Value* find(std::string_view key) const;
    void insert(Value key, Value value);  // replaces the value of an existing key in place
};

// Arguments of one call: positional then keyword, in source order.
struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;

    // The argument at `index` if given positionally, else the keyword `name`, else nullptr.
    const Value* find(std::size_t index, std::string_view name) const;
    Value get(std::size_t index, std::string_view name, const Value& fallback) const;
};

// Mutable or callable things: namespace(), loop, macros, builtin functions, bound methods.
class Object {
public:
    virtual ~Object() = default;
    virtual std::string typeName() const = 0;
    virtual Value getAttr(std::string_view name) const;  // Undefined when absent
    virtual bool setAttr(std::string_view name, Value value);  // false: not assignable
    virtual bool isCallable() const { return false; }
    virtual Value call(Interpreter& interp, CallArgs& args);  // TypeError unless callable
    virtual std::string repr() const;
    // Drops references to other values/scopes; called when a render ends so that reference
    // cycles (a namespace holding itself, a macro stored in the scope it closes over) are freed.
    virtual void releaseReferences() {}
};

class Value {
public:
    enum class Kind : std::uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Object };

    Value() = default;  // Undefined
    // hint: the error message if the value is used; kind: the error raised then (SecurityError
    // for methods the sandbox refuses, UndefinedError otherwise).
    static Value undefined(std::string hint, ErrorKind kind = ErrorKind::Undefined);
    static Value none();
    static Value boolean(bool v);
    static Value integer(std::int64_t v);
    static Value number(double v);
    static Value string(std::string v);
    // markupsafe.Markup: a str marked safe by |safe or |escape. With autoescape off it prints
    // like a str, but `+` and `%` HTML-escape the plain-str operands (jinja2 behaviour).
    static Value markup(std::string v);
    static Value list(std::vector<Value> items, ListKind kind = ListKind::List);
    static Value dict(DictData data);
    static Value object(std::shared_ptr<Object> obj);

    Kind kind() const { return m_kind; }
    bool isUndefined() const { return m_kind == Kind::Undefined; }
    bool isNone() const { return m_kind == Kind::None; }
    bool isBool() const { return m_kind == Kind::Bool; }
    bool isInt() const { return m_kind == Kind::Int; }
    bool isFloat() const { return m_kind == Kind::Float; }
    bool isNumber() const { return m_kind == Kind::Bool || m_kind == Kind::Int || m_kind == Kind::Float; }
    bool isString() const { return m_kind == Kind::String; }
    bool isMarkup() const { return m_kind == Kind::String && m_int == 1; }
    bool isList() const { return m_kind == Kind::List; }
    bool isDict() const { return m_kind == Kind::Dict; }
    bool isObject() const { return m_kind == Kind::Object; }

    bool boolValue() const { return m_int != 0; }
    std::int64_t intValue() const { return m_int; }  // Bool and Int
    double floatValue() const { return m_kind == Kind::Float ? m_float : static_cast<double>(m_int); }
    const std::string& str() const;
    const ListData& listData() const;
    const std::vector<Value>& items() const { return listData().items; }
    ListKind listKind() const { return listData().kind; }
    const DictData& dictData() const;
    Object* object() const { return static_cast<Object*>(m_ptr.get()); }
    std::shared_ptr<Object> objectPtr() const { return std::static_pointer_cast<Object>(m_ptr); }
    const std::string& undefinedHint() const;
    ErrorKind undefinedKind() const { return static_cast<ErrorKind>(m_int); }

private:
    Kind m_kind = Kind::Undefined;
    std::int64_t m_int = static_cast<std::int64_t>(ErrorKind::Undefined);  // Undefined: its ErrorKind
    double m_float = 0;
    std::shared_ptr<void> m_ptr;  // std::string, ListData, DictData or Object by kind
};

// namespace(): attribute bag that `{% set ns.x = ... %}` may assign into.
class NamespaceObject : public Object {
public:
    std::string typeName() const override { return "Namespace"; }
    Value getAttr(std::string_view name) const override;
    bool setAttr(std::string_view name, Value value) override;
    std::string repr() const override;
    void releaseReferences() override { attrs.entries.clear(); }
    DictData attrs;
};

// A builtin function or a method bound to its receiver.
class FunctionObject : public Object {
public:
    using Fn = std::function<Value(Interpreter&, CallArgs&)>;
    FunctionObject(std::string name, Fn fn) : m_name(std::move(name)), m_fn(std::move(fn)) {}
    std::string typeName() const override { return "builtin_function_or_method"; }
    bool isCallable() const override { return true; }
    Value call(Interpreter& interp, CallArgs& args) override { return m_fn(interp, args); }
    std::string repr() const override { return "<built-in method " + m_name + ">"; }

private:
    std::string m_name;
    Fn m_fn;
};

// ---- Python semantics shared by operators, filters and methods ----

std::string typeName(const Value& v);  // Python type name: "str", "NoneType", "dict", ...
bool truthy(const Value& v);
std::string toStr(const Value& v);  // str(v); Undefined gives ""
void appendStr(std::string& out, const Value& v);
std::string repr(const Value& v);
bool equals(const Value& a, const Value& b);
bool lessThan(const Value& a, const Value& b);  // TypeError when not orderable
// Iterates like Python's iter(): dict gives keys, str gives characters, Undefined nothing.
std::vector<Value> iterate(const Value& v);
std::int64_t length(const Value& v);  // len(); TypeError when unsized
bool contains(const Value& container, const Value& item);  // `item in container`
[[noreturn]] void failUndefined(const Value& v);
// Characters of a string as one-character string Values. LimitError when their Values would take
// more than currentStringLimit() bytes (a long string iterated costs ~50x its size).
std::vector<Value> stringUnits(std::string_view s);

// The longest string the render running on this thread may build (RenderLimits::maxOutputBytes;
// no bound outside a render). repr()/str() of containers and tojson check it while they build,
// because shared items make them unboundedly larger than the values they print: the str() of
// [big] * 1000000 would otherwise be built whole before any other bound is asked.
std::size_t currentStringLimit();
void checkStringLimit(std::size_t bytes);  // LimitError past currentStringLimit()
class StringLimitScope {
public:
    explicit StringLimitScope(std::size_t limit);
    ~StringLimitScope();
    StringLimitScope(const StringLimitScope&) = delete;
    StringLimitScope& operator=(const StringLimitScope&) = delete;

private:
    std::size_t m_previous;
};

}  // namespace verdict::tok::jinja
