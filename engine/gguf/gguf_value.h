// GGUF metadata values: the 13 value types of the format, including nested arrays.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace verdict::gguf {

// gguf_type from the GGUF spec (ggml/docs/gguf.md). Stored on disk: never renumber.
enum class ValueType : uint32_t {
    UInt8 = 0,
    Int8 = 1,
    UInt16 = 2,
    Int16 = 3,
    UInt32 = 4,
    Int32 = 5,
    Float32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    UInt64 = 10,
    Int64 = 11,
    Float64 = 12,
};

std::string_view valueTypeName(ValueType t);
bool isValidValueType(uint32_t id);
// Byte size of a fixed-size scalar type; 0 for String and Array.
uint32_t scalarSize(ValueType t);

// One metadata value. Integers keep their sign class (unsigned in `uint64_t`, signed in
// `int64_t`), floats widen to double; `type` remembers the exact on-disk type so that writing the
// value back is bit-exact. Arrays hold their element type and elements.
struct Value {
    ValueType type = ValueType::UInt8;
    ValueType elemType = ValueType::UInt8;  // arrays only
    std::variant<uint64_t, int64_t, double, bool, std::string, std::vector<Value>> data;

    // Constructors for writers and tests.
    static Value u8(uint8_t v) { return {ValueType::UInt8, ValueType::UInt8, uint64_t{v}}; }
    static Value u16(uint16_t v) { return {ValueType::UInt16, ValueType::UInt8, uint64_t{v}}; }
    static Value u32(uint32_t v) { return {ValueType::UInt32, ValueType::UInt8, uint64_t{v}}; }
    static Value u64(uint64_t v) { return {ValueType::UInt64, ValueType::UInt8, v}; }
    static Value i8(int8_t v) { return {ValueType::Int8, ValueType::UInt8, int64_t{v}}; }
    static Value i16(int16_t v) { return {ValueType::Int16, ValueType::UInt8, int64_t{v}}; }
    static Value i32(int32_t v) { return {ValueType::Int32, ValueType::UInt8, int64_t{v}}; }
    static Value i64(int64_t v) { return {ValueType::Int64, ValueType::UInt8, v}; }
    static Value f32(float v) { return {ValueType::Float32, ValueType::UInt8, double{v}}; }
    static Value f64(double v) { return {ValueType::Float64, ValueType::UInt8, v}; }
    static Value boolean(bool v) { return {ValueType::Bool, ValueType::UInt8, v}; }
    static Value str(std::string v) { return {ValueType::String, ValueType::UInt8, std::move(v)}; }
    static Value array(ValueType elem, std::vector<Value> items) {
        return {ValueType::Array, elem, std::move(items)};
    }
    static Value stringArray(const std::vector<std::string>& items);
    static Value f32Array(const std::vector<float>& items);
    static Value i32Array(const std::vector<int32_t>& items);

    // Typed reads. Integers convert between widths when the value fits; nullopt otherwise.
    std::optional<uint64_t> asUInt() const;
    std::optional<int64_t> asInt() const;
    std::optional<double> asFloat() const;  // any numeric type
    std::optional<bool> asBool() const;
    const std::string* asString() const;
    const std::vector<Value>* asArray() const;

    // Short human-readable rendering (arrays abbreviated), for `verdict info`.
    std::string toDisplayString(size_t maxItems = 8) const;
};

}  // namespace verdict::gguf
