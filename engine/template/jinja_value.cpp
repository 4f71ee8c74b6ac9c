// Value model and the Python semantics of equality, ordering, str(), iteration and len().
#include "template/jinja_value.h"

#include "template/jinja_error.h"
#include "template/jinja_string.h"

#include <algorithm>
#include <cmath>

namespace verdict::tok::jinja {

namespace {
const std::string kEmpty;

// repr() of nested containers recurses; a namespace can hold itself, so bound the depth.
constexpr int kMaxReprDepth = 200;
thread_local int t_reprDepth = 0;
thread_local std::size_t t_stringLimit = static_cast<std::size_t>(-1);

struct ReprDepthGuard {
    ReprDepthGuard() {
        if (++t_reprDepth > kMaxReprDepth) {
            t_reprDepth = 0;
            fail(ErrorKind::Limit, "value nested too deeply to convert to a string");
        }
    }
    ~ReprDepthGuard() {
        if (t_reprDepth > 0) --t_reprDepth;
    }
};
}  // namespace

std::size_t currentStringLimit() { return t_stringLimit; }

void checkStringLimit(std::size_t bytes) {
    if (bytes > t_stringLimit) {
        fail(ErrorKind::Limit, "string of more than " + std::to_string(t_stringLimit) + " bytes (the limit) while converting a value");
    }
}

StringLimitScope::StringLimitScope(std::size_t limit) : m_previous(t_stringLimit) { t_stringLimit = limit; }
StringLimitScope::~StringLimitScope() { t_stringLimit = m_previous; }

// ---- construction and access ----

Value Value::undefined(std::string hint, ErrorKind kind) {
    Value v;
    v.m_int = static_cast<std::int64_t>(kind);
    if (!hint.empty()) v.m_ptr = std::make_shared<std::string>(std::move(hint));
    return v;
}

Value Value::none() {
    Value v;
    v.m_kind = Kind::None;
    return v;
}

Value Value::boolean(bool b) {
    Value v;
    v.m_kind = Kind::Bool;
    v.m_int = b ? 1 : 0;
    return v;
}

Value Value::integer(std::int64_t i) {
    Value v;
    v.m_kind = Kind::Int;
    v.m_int = i;
    return v;
}

Value Value::number(double d) {
    Value v;
    v.m_kind = Kind::Float;
    v.m_float = d;
    return v;
}

Value Value::string(std::string s) {
    Value v;
    v.m_kind = Kind::String;
    v.m_int = 0;
    v.m_ptr = std::make_shared<std::string>(std::move(s));
    return v;
}

Value Value::markup(std::string s) {
    Value v = string(std::move(s));
    v.m_int = 1;
    return v;
}

namespace {
int containerDepth(const Value& v) {
    if (v.isList()) return v.listData().depth;
    if (v.isDict()) return v.dictData().depth;
    return 0;
}

int checkedDepth(int childDepth) {
    if (childDepth + 1 > kMaxValueDepth)
        fail(ErrorKind::Limit, "list or dict nested deeper than " + std::to_string(kMaxValueDepth) + " levels");
    return childDepth + 1;
}
}  // namespace

Value Value::list(std::vector<Value> items, ListKind kind) {
    Value v;
    v.m_kind = Kind::List;
    auto data = std::make_shared<ListData>();
    int deepest = 0;
    for (const auto& item : items) deepest = std::max(deepest, containerDepth(item));
    data->depth = checkedDepth(deepest);
    data->items = std::move(items);
    data->kind = kind;
    v.m_ptr = std::move(data);
    return v;
}

Value Value::dict(DictData data) {
    int deepest = 0;
    for (const auto& [k, item] : data.entries) deepest = std::max({deepest, containerDepth(k), containerDepth(item)});
    data.depth = checkedDepth(deepest);
    Value v;
    v.m_kind = Kind::Dict;
    v.m_ptr = std::make_shared<DictData>(std::move(data));
    return v;
}

Value Value::object(std::shared_ptr<Object> obj) {
    Value v;
    v.m_kind = Kind::Object;
    v.m_ptr = std::move(obj);
    return v;
}

const std::string& Value::str() const {
    return m_kind == Kind::String ? *static_cast<const std::string*>(m_ptr.get()) : kEmpty;
}

const ListData& Value::listData() const { return *static_cast<const ListData*>(m_ptr.get()); }

const DictData& Value::dictData() const { return *static_cast<const DictData*>(m_ptr.get()); }

const std::string& Value::undefinedHint() const {
    return (m_kind == Kind::Undefined && m_ptr) ? *static_cast<const std::string*>(m_ptr.get()) : kEmpty;
}

// ---- DictData / CallArgs ----

const Value* DictData::find(const Value& key) const {
    if (key.isString()) return find(std::string_view(key.str()));
    for (const auto& [k, v] : entries)
        if (equals(k, key)) return &v;
    return nullptr;
}

const Value* DictData::find(std::string_view key) const {
    for (const auto& [k, v] : entries)
        if (k.isString() && k.str() == key) return &v;
    return nullptr;
}

void DictData::insert(Value key, Value value) {
    for (auto& [k, v] : entries) {
        if (equals(k, key)) {
            v = std::move(value);
            return;
        }
    }
    entries.emplace_back(std::move(key), std::move(value));
}

const Value* CallArgs::find(std::size_t index, std::string_view name) const {
    if (index < positional.size()) return &positional[index];
    for (const auto& [k, v] : keyword)
        if (k == name) return &v;
    return nullptr;
}

Value CallArgs::get(std::size_t index, std::string_view name, const Value& fallback) const {
    const Value* v = find(index, name);
    return v ? *v : fallback;
}

// ---- objects ----

Value Object::getAttr(std::string_view name) const {
    return Value::undefined(concat("'", typeName(), " object' has no attribute '", name, "'"));
}

bool Object::setAttr(std::string_view, Value) { return false; }

Value Object::call(Interpreter&, CallArgs&) { fail(ErrorKind::Type, "'" + typeName() + "' object is not callable"); }

std::string Object::repr() const { return concat("<", typeName(), " object>"); }

Value NamespaceObject::getAttr(std::string_view name) const {
    if (const Value* v = attrs.find(name)) return *v;
    return Value::undefined("'Namespace object' has no attribute '" + std::string(name) + "'");
}

bool NamespaceObject::setAttr(std::string_view name, Value value) {
    attrs.insert(Value::string(std::string(name)), std::move(value));
    return true;
}

std::string NamespaceObject::repr() const {
    std::string out = "<Namespace {";
    bool first = true;
    for (const auto& [k, v] : attrs.entries) {
        if (!first) out += ", ";
        first = false;
        out += jinja::repr(k) + ": " + jinja::repr(v);
        checkStringLimit(out.size());
    }
    return out + "}>";
}

// ---- Python semantics ----

std::string typeName(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::None: return "NoneType";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::String: return "str";
    case Value::Kind::Dict: return "dict";
    case Value::Kind::Object: return v.object()->typeName();
    case Value::Kind::List:
        switch (v.listKind()) {
        case ListKind::List: return "list";
        case ListKind::Tuple: return "tuple";
        case ListKind::Generator: return "generator";
        case ListKind::Reversed: return "list_reverseiterator";
        case ListKind::ItemsView: return "dict_items";
        case ListKind::KeysView: return "dict_keys";
        case ListKind::ValuesView: return "dict_values";
        }
    }
    return "object";
}

bool truthy(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return false;
    case Value::Kind::Bool:
    case Value::Kind::Int: return v.intValue() != 0;
    case Value::Kind::Float: return v.floatValue() != 0.0;
    case Value::Kind::String: return !v.str().empty();
    case Value::Kind::List:
        if (v.listKind() == ListKind::Generator || v.listKind() == ListKind::Reversed) return true;
        return !v.items().empty();
    case Value::Kind::Dict: return !v.dictData().entries.empty();
    case Value::Kind::Object: return true;
    }
    return false;
}

std::string toStr(const Value& v) {
    if (v.isString()) return v.str();
    if (v.isUndefined()) return {};
    return repr(v);
}

void appendStr(std::string& out, const Value& v) {
    if (v.isString()) out += v.str();
    else if (!v.isUndefined()) out += repr(v);
}

namespace {
std::string joinRepr(const std::vector<Value>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += repr(items[i]);
        checkStringLimit(out.size());
    }
    return out;
}
}  // namespace

std::string repr(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return v.boolValue() ? "True" : "False";
    case Value::Kind::Int: return std::to_string(v.intValue());
    case Value::Kind::Float: return pyFloatRepr(v.floatValue());
    case Value::Kind::String: return v.isMarkup() ? "Markup(" + pyReprString(v.str()) + ")" : pyReprString(v.str());
    case Value::Kind::Object: {
        ReprDepthGuard guard;
        return v.object()->repr();
    }
    case Value::Kind::Dict: {
        ReprDepthGuard guard;
        std::string out = "{";
        bool first = true;
        for (const auto& [k, val] : v.dictData().entries) {
            if (!first) out += ", ";
            first = false;
            out += repr(k) + ": " + repr(val);
            checkStringLimit(out.size());
        }
        return out + "}";
    }
    case Value::Kind::List: {
        ReprDepthGuard guard;
        const auto& items = v.items();
        switch (v.listKind()) {
        case ListKind::List: return concat("[", joinRepr(items), "]");
        case ListKind::Tuple: return items.size() == 1 ? concat("(", repr(items[0]), ",)") : concat("(", joinRepr(items), ")");
        case ListKind::Generator: return "<generator object>";
        case ListKind::Reversed: return "<list_reverseiterator object>";
        case ListKind::ItemsView: return concat("dict_items([", joinRepr(items), "])");
        case ListKind::KeysView: return concat("dict_keys([", joinRepr(items), "])");
        case ListKind::ValuesView: return concat("dict_values([", joinRepr(items), "])");
        }
    }
    }
    return {};
}

bool equals(const Value& a, const Value& b) {
    if (a.isNumber() && b.isNumber()) {
        if (a.isFloat() || b.isFloat()) return a.floatValue() == b.floatValue();
        return a.intValue() == b.intValue();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.str() == b.str();
    case Value::Kind::Object: return a.object() == b.object();
    case Value::Kind::List: {
        if (&a.listData() == &b.listData()) return true;
        const ListKind ka = a.listKind();
        const ListKind kb = b.listKind();
        const bool sequenceA = ka == ListKind::List || ka == ListKind::Tuple;
        if (ka != kb || !sequenceA) return false;  // generators compare by identity
        const auto& x = a.items();
        const auto& y = b.items();
        if (x.size() != y.size()) return false;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (!equals(x[i], y[i])) return false;
        return true;
    }
    case Value::Kind::Dict: {
        const auto& x = a.dictData().entries;
        if (x.size() != b.dictData().entries.size()) return false;
        for (const auto& [k, v] : x) {
            const Value* other = b.dictData().find(k);
            if (!other || !equals(v, *other)) return false;
        }
        return true;
    }
    default: return false;
    }
}

bool lessThan(const Value& a, const Value& b) {
    if (a.isNumber() && b.isNumber()) {
        if (a.isFloat() || b.isFloat()) return a.floatValue() < b.floatValue();
        return a.intValue() < b.intValue();
    }
    if (a.isString() && b.isString()) return a.str() < b.str();  // UTF-8 byte order == code point order
    if (a.isList() && b.isList() && a.listKind() == b.listKind()
        && (a.listKind() == ListKind::List || a.listKind() == ListKind::Tuple)) {
        const auto& x = a.items();
        const auto& y = b.items();
        for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (equals(x[i], y[i])) continue;
            return lessThan(x[i], y[i]);
        }
        return x.size() < y.size();
    }
    if (a.isUndefined() || b.isUndefined()) failUndefined(a.isUndefined() ? a : b);
    fail(ErrorKind::Type, "'<' not supported between instances of '" + typeName(a) + "' and '" + typeName(b) + "'");
}

std::vector<Value> stringUnits(std::string_view s) {
    std::vector<Value> out;
    for (std::size_t i = 0; i < s.size();) {
        if ((out.size() & 4095) == 0) checkStringLimit(out.size() * sizeof(Value));
        const std::size_t n = decodeUtf8At(s, i).length;
        out.push_back(Value::string(std::string(s.substr(i, n))));
        i += n;
    }
    return out;
}

std::vector<Value> iterate(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::String: return stringUnits(v.str());
    case Value::Kind::List: return v.items();
    case Value::Kind::Dict: {
        std::vector<Value> keys;
        keys.reserve(v.dictData().entries.size());
        for (const auto& [k, val] : v.dictData().entries) keys.push_back(k);
        return keys;
    }
    default: fail(ErrorKind::Type, "'" + typeName(v) + "' object is not iterable");
    }
}

std::int64_t length(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined: return 0;
    case Value::Kind::String: return static_cast<std::int64_t>(utf8Length(v.str()));
    case Value::Kind::Dict: return static_cast<std::int64_t>(v.dictData().entries.size());
    case Value::Kind::List:
        if (v.listKind() != ListKind::Generator && v.listKind() != ListKind::Reversed)
            return static_cast<std::int64_t>(v.items().size());
        [[fallthrough]];
    default: fail(ErrorKind::Type, "object of type '" + typeName(v) + "' has no len()");
    }
}

bool contains(const Value& container, const Value& item) {
    switch (container.kind()) {
    case Value::Kind::Undefined: return false;
    case Value::Kind::String:
        if (!item.isString())
            fail(ErrorKind::Type, "'in <string>' requires string as left operand, not " + typeName(item));
        return container.str().find(item.str()) != std::string::npos;
    case Value::Kind::List:
        for (const auto& x : container.items())
            if (equals(x, item)) return true;
        return false;
    case Value::Kind::Dict: return container.dictData().find(item) != nullptr;
    default: fail(ErrorKind::Type, "argument of type '" + typeName(container) + "' is not iterable");
    }
}

void failUndefined(const Value& v) {
    const std::string& hint = v.undefinedHint();
    fail(v.undefinedKind(), hint.empty() ? std::string("value is undefined") : hint);
}

}  // namespace verdict::tok::jinja

namespace verdict::tok::jinja {

const char* errorKindName(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::Syntax: return "TemplateSyntaxError";
    case ErrorKind::Template: return "TemplateError";
    case ErrorKind::Undefined: return "UndefinedError";
    case ErrorKind::Type: return "TypeError";
    case ErrorKind::Value: return "ValueError";
    case ErrorKind::Security: return "SecurityError";
    case ErrorKind::Runtime: return "TemplateRuntimeError";
    case ErrorKind::Limit: return "LimitError";
    }
    return "Error";
}

}  // namespace verdict::tok::jinja
