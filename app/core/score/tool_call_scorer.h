// Function-calling evaluation: grades the tool calls a model made against the calls a suite item
// expects (SuiteItem::expectedCalls), names the error class, and converts the expected calls and
// the tools offered from the shapes suites come in. Pure functions.
//
// Grading (after BFCL's AST checker), first rule that applies wins:
//  1. Nothing expected and no call: pass. Nothing expected, some call: UnexpectedCall. Something
//     expected, no call: NoCall.
//  2. Any call whose arguments text is not a JSON object (does not parse, or parses to something
//     else), or whose function name is "": InvalidJson. The text is taken as the model wrote it
//     (an empty text is not read as {}).
//  3. A different number of calls than expected: WrongCount ("expected 2 calls, got 1").
//  4. Calls are matched to expected calls in any order (parallel calls). Every assignment is tried
//     (up to 8 calls; with more, calls are matched in order) and the first that passes wins. When
//     none passes, the verdict is the error of the best assignment: the one whose worst error is
//     least severe, then the one with the fewest failing calls, then the first in lexicographic
//     order (in-order first). Severity, most to least: WrongFunction, MissingArgument,
//     ExtraArgument, WrongType, WrongValue. The reported error is that assignment's worst; the
//     detail is that of the first expected call having it.
//  Per call (a call and the expected call it is matched to), first failing check wins:
//   - name differs: WrongFunction (the detail says when the name is not among `tools` either);
//   - an expected argument whose acceptable list has no null is absent: MissingArgument
//     (arguments in key order);
//   - the call passes an argument that is not among the expected ones: ExtraArgument;
//   - a value does not fit the type structure of the tool's schema for that parameter
//     (`validateJsonSchema(value, properties[name])` with the value-only keywords — enum, const,
//     minimum/maximum, exclusive*, min/maxLength, pattern, min/maxItems — left out, and oneOf read
//     as anyOf, so that a value outside an enum is a WrongValue, as BFCL counts it): WrongType.
//     Skipped when the tool or the parameter has no schema;
//   - a value equal to none of the acceptable values: WrongValue.
//  An argument the model passed as null is taken as left out when its list holds null (OpenAI
//  strict mode passes optional parameters as null); otherwise it is checked like any value.
//
// Value equality: numbers numerically (2 == 2.0); booleans exactly; null only to null; strings
// after BFCL's standardisation (remove spaces and , . / - _ * ^, lower-case ASCII, ' read as "), so
// "New York, NY" == "new york ny"; a string never equals a number (nor the reverse); arrays element
// by element in order, objects key by key (same key set), with the same rule.
//
// ToolCallError::WrongAnswer is for callers grading multi-step items whose final answer is wrong;
// scoreToolCalls never returns it.
#pragma once

#include "core/suite/suite_item.h"

#include <verdict/engine/result.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

enum class ToolCallError {
    None,
    NoCall,
    UnexpectedCall,
    WrongCount,
    WrongFunction,
    InvalidJson,
    MissingArgument,
    ExtraArgument,
    WrongType,
    WrongValue,
    WrongAnswer
};

// "", "no_call", "unexpected_call", "wrong_count", "wrong_function", "invalid_json",
// "missing_argument", "extra_argument", "wrong_type", "wrong_value", "wrong_answer"
const char* toolCallErrorName(ToolCallError e);
// Every name but None's, in the enum's order (the report's order).
std::vector<std::string> toolCallErrorNames();

struct ToolCallVerdict {
    bool pass = false;
    ToolCallError error = ToolCallError::None;
    std::string detail;  // one line for a person: "get_weather: missing argument 'city'"
    // The model's calls, all of them, in order: [{"name", "arguments": the parsed object, or the raw
    // text when it is not a JSON object}].
    nlohmann::json calls = nlohmann::json::array();
};

// `tools`: OpenAI form [{"type":"function","function":{"name","description","parameters"}}] (as
// normalizeTools returns; a bare list of function objects is read too, and BFCL type names are
// normalised on the fly). Null or [] = no schemas: WrongType is never reported.
ToolCallVerdict scoreToolCalls(const nlohmann::json& tools, const std::vector<ExpectedCall>& expected,
                               const std::vector<ToolCall>& actual);

// What a tool layer that checks calls against the offered schemas would answer, knowing nothing
// of the expected calls: "no function named 'f' (the tools are: a, b)", "the arguments are not a
// JSON object", or the first JSON-schema violation of the arguments against the function's
// parameters (required, types, enum, additionalProperties ...: "arguments: missing required
// property 'city'"). nullopt when the call is well-formed. Used to give a model the reason back
// for a retry without telling it the answer. Tools null or [] = nothing to check against.
std::optional<std::string> toolCallProblem(const nlohmann::json& tools, const ToolCall& call);

// Accepts OpenAI tools ([{"type":"function","function":{...}}]), a bare list of function objects
// ([{"name","description","parameters"}], BFCL's "function"), or one such object (either kind);
// null gives []. Returns the OpenAI form, each function's keys kept, with every parameters schema
// normalised (normalizeToolSchema; a function without parameters gets {"type":"object",
// "properties":{}}). Errors name the place: "tools[1]: no \"name\"", "tools[0].parameters: expected
// an object" (OpenAI form: "tools[0].function.parameters: ...").
Result<nlohmann::json> normalizeTools(const nlohmann::json& tools);

// BFCL's Python type names to JSON Schema, recursively (properties, items, prefixItems,
// additionalProperties, patternProperties, anyOf / allOf / oneOf, not, $defs / definitions):
// "dict" -> "object", "float" -> "number", "tuple" / "list" -> "array", "str" -> "string",
// "int" -> "integer", "bool" -> "boolean", "any" -> no type constraint (in a list of types, too),
// JSON type names in any case ("String") -> lower case. Unknown type names and every other keyword
// are kept as they are.
nlohmann::json normalizeToolSchema(const nlohmann::json& schema);

// Verdict's plain shape: [{"name": "f", "arguments": {"city": "Paris"}, "accept": {"unit":
// ["celsius", null]}}]. Each argument's single value becomes a one-value list (an array value is
// one value: [[1, 2]]); an "accept" list replaces that argument's list, or adds the argument
// (null = may be left out). An empty array = no call is due. Errors name the place
// ("expected_calls[0]: no \"name\"", "expected_calls[0].accept.unit: expected a list of acceptable
// values").
Result<std::vector<ExpectedCall>> expectedCallsFromPlain(const nlohmann::json& j);

// BFCL ground truth: [{"f": {"city": ["Paris", "paris"], "unit": ["celsius", ""]}}] ("" in a list =
// may be left out, becomes null). Errors name the place ("ground_truth[0]: expected an object with
// one key, the function's name").
Result<std::vector<ExpectedCall>> expectedCallsFromBfcl(const nlohmann::json& groundTruth);

// The stored form, both ways: [{"name": "f", "arguments": {"city": ["Paris"], "unit": ["celsius",
// null]}}]. Reading checks the shape (every argument a list) and names the place of an error
// ("expected_calls[0].arguments.city: expected a list of acceptable values").
nlohmann::json expectedCallsToJson(const std::vector<ExpectedCall>& calls);
Result<std::vector<ExpectedCall>> expectedCallsFromJson(const nlohmann::json& j);

}  // namespace verdict::core
