// A practical subset of JSON Schema (draft 2020-12 keyword meanings) for grading structured
// output: type (a name or a list; "integer" = a number without fraction), properties, required,
// additionalProperties (false or a schema), items (one schema for every element), enum, const,
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength (in code points),
// minItems, maxItems, pattern (ECMAScript, searched), anyOf, allOf, oneOf. Other keywords are
// ignored, as the specification says unknown keywords must be. $ref is not supported.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

// Every violation, each with a JSON-pointer-like path ("/items/2/price: 3 is less than minimum 5").
// Empty = valid.
std::vector<std::string> validateJsonSchema(const nlohmann::json& value, const nlohmann::json& schema);

// The whole `text` as JSON; false with the parser's message (without its "[json.exception...]"
// prefix) in `error` when given.
bool parseJsonText(std::string_view text, nlohmann::json& out, std::string* error);

// The first JSON object or array in `text`: the whole text when it parses, else the body of a
// ```json fenced block, else the first balanced {...} or [...] that parses. False when none.
bool extractJson(std::string_view text, nlohmann::json& out, std::string& error);

}  // namespace verdict::core
