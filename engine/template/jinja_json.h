// JSON in and out of the Jinja value model.
//
// In: nlohmann::ordered_json (key order kept: tool schemas print in the order they were given).
// Out: exactly Python's json.dumps(x, ensure_ascii=False, indent=..., separators=...,
// sort_keys=False), which is what transformers installs as the `tojson` filter:
// ", " and ": " separators without indent, "," and ": " with one; non-ASCII written raw;
// no HTML escaping; floats in Python repr form; NaN/Infinity spelled like Python.
#pragma once

#include "template/jinja_value.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace verdict::tok::jinja {

struct JsonDumpOptions {
    bool ensureAscii = false;
    std::optional<std::string> indent;  // nullopt: single line; otherwise the per-level indent
    std::optional<std::string> itemSeparator;  // nullopt: ", " (single line) or "," (indented)
    std::optional<std::string> keySeparator;   // nullopt: ": "
    bool sortKeys = false;
};

// Converts JSON input (messages, tools, extra variables). Throws JinjaError(Limit) past
// kMaxJsonDepth levels of nesting.
Value valueFromJson(const nlohmann::ordered_json& json);
inline constexpr int kMaxJsonDepth = 256;  // below kMaxValueDepth

// json.dumps; throws JinjaError(Type) for values JSON cannot hold (generators, Undefined, ...).
std::string dumpJson(const Value& value, const JsonDumpOptions& options);

}  // namespace verdict::tok::jinja
