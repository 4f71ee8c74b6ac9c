#include "gguf/gguf_value.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace verdict::gguf {

std::string_view valueTypeName(ValueType t) {
    switch (t) {
        case ValueType::UInt8: return "u8";
        case ValueType::Int8: return "i8";
        case ValueType::UInt16: return "u16";
        case ValueType::Int16: return "i16";
        case ValueType::UInt32: return "u32";
        case ValueType::Int32: return "i32";
        case ValueType::Float32: return "f32";
        case ValueType::Bool: return "bool";
        case ValueType::String: return "string";
        case ValueType::Array: return "array";
        case ValueType::UInt64: return "u64";
        case ValueType::Int64: return "i64";
        case ValueType::Float64: return "f64";
    }
    return "?";
}

bool isValidValueType(uint32_t id) { return id <= static_cast<uint32_t>(ValueType::Float64); }

uint32_t scalarSize(ValueType t) {
    switch (t) {
        case ValueType::UInt8: case ValueType::Int8: case ValueType::Bool: return 1;
        case ValueType::UInt16: case ValueType::Int16: return 2;
        case ValueType::UInt32: case ValueType::Int32: case ValueType::Float32: return 4;
        case ValueType::UInt64: case ValueType::Int64: case ValueType::Float64: return 8;
        case ValueType::String: case ValueType::Array: return 0;
    }
    return 0;
}

Value Value::stringArray(const std::vector<std::string>& items) {
    std::vector<Value> v;
    v.reserve(items.size());
    for (const auto& s : items) v.push_back(str(s));
    return array(ValueType::String, std::move(v));
}

Value Value::f32Array(const std::vector<float>& items) {
    std::vector<Value> v;
    v.reserve(items.size());
    for (float f : items) v.push_back(f32(f));
    return array(ValueType::Float32, std::move(v));
}

Value Value::i32Array(const std::vector<int32_t>& items) {
    std::vector<Value> v;
    v.reserve(items.size());
    for (int32_t i : items) v.push_back(i32(i));
    return array(ValueType::Int32, std::move(v));
}

std::optional<uint64_t> Value::asUInt() const {
    if (auto* u = std::get_if<uint64_t>(&data)) return *u;
    if (auto* i = std::get_if<int64_t>(&data); i && *i >= 0) return static_cast<uint64_t>(*i);
    return std::nullopt;
}

std::optional<int64_t> Value::asInt() const {
    if (auto* i = std::get_if<int64_t>(&data)) return *i;
    if (auto* u = std::get_if<uint64_t>(&data); u && *u <= uint64_t(std::numeric_limits<int64_t>::max()))
        return static_cast<int64_t>(*u);
    return std::nullopt;
}

std::optional<double> Value::asFloat() const {
    if (auto* d = std::get_if<double>(&data)) return *d;
    if (auto* i = std::get_if<int64_t>(&data)) return static_cast<double>(*i);
    if (auto* u = std::get_if<uint64_t>(&data)) return static_cast<double>(*u);
    return std::nullopt;
}

std::optional<bool> Value::asBool() const {
    if (auto* b = std::get_if<bool>(&data)) return *b;
    return std::nullopt;
}

const std::string* Value::asString() const { return std::get_if<std::string>(&data); }
const std::vector<Value>* Value::asArray() const { return std::get_if<std::vector<Value>>(&data); }

std::string Value::toDisplayString(size_t maxItems) const {
    std::ostringstream os;
    if (auto* s = asString()) {
        std::string t = s->size() > 120 ? s->substr(0, 117) + "..." : *s;
        os << '"';
        for (char c : t) {
            if (c == '\n') os << "\\n";
            else if (c == '"') os << "\\\"";
            else os << c;
        }
        os << '"';
    } else if (auto* a = asArray()) {
        os << valueTypeName(elemType) << "[" << a->size() << "] {";
        for (size_t i = 0; i < a->size() && i < maxItems; ++i) os << (i ? ", " : "") << (*a)[i].toDisplayString(0);
        if (a->size() > maxItems) os << ", ...";
        os << "}";
    } else if (auto b = asBool()) {
        os << (*b ? "true" : "false");
    } else if (auto* d = std::get_if<double>(&data)) {
        os << *d;
    } else if (auto* i = std::get_if<int64_t>(&data)) {
        os << *i;
    } else if (auto* u = std::get_if<uint64_t>(&data)) {
        os << *u;
    }
    return os.str();
}

}  // namespace verdict::gguf
