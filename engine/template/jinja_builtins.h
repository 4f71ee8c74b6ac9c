// Builtin filters, tests, methods and globals of the Jinja interpreter.
//
// Filters follow jinja2 3.1 (with transformers' `tojson`); tests follow jinja2's tests module;
// methods are the Python str/list/dict methods templates call (`.strip()`, `.items()`,
// `.get()` ...). Mutating methods (list.append, dict.update, ...) exist only to fail with
// SecurityError, as in jinja2's ImmutableSandboxedEnvironment.
#pragma once

#include "template/jinja_interpreter.h"
#include "template/jinja_value.h"

#include <optional>
#include <string>
#include <string_view>

namespace verdict::tok::jinja {

using FilterFn = Value (*)(Interpreter& interp, const Value& input, CallArgs& args);
using TestFn = bool (*)(Interpreter& interp, const Value& input, CallArgs& args);

// nullptr when there is no filter/test of that name.
FilterFn findFilter(std::string_view name);
TestFn findTest(std::string_view name);

// Python methods of str, list/tuple and dict values.
bool hasMethod(const Value& receiver, std::string_view name);
// nullopt when `receiver` has no method `name`.
std::optional<Value> callMethod(Interpreter& interp, const Value& receiver, std::string_view name, CallArgs& args);
// The method as a callable value (for `x.strip` without a call).
Value boundMethod(const Value& receiver, std::string_view name);

// Installs range, dict, namespace, raise_exception, strftime_now, joiner, cycler.
void installGlobals(Scope& scope);

// Python's `fmt % args` for strings (also the `format` filter).
std::string pyPercentFormat(Interpreter& interp, std::string_view fmt, const Value& args);
// `fmt % args` on a str or Markup value: Markup escapes the arguments and stays Markup.
Value percentFormat(Interpreter& interp, const Value& fmt, const Value& args);
// Python's str.format(*args, **kwargs) (auto/explicit indices, names, .attr/[key], !r/!s, specs).
std::string pyStrFormat(Interpreter& interp, std::string_view fmt, CallArgs& args);
// Python's time.strftime for the C locale.
std::string pyStrftime(std::string_view fmt, const DateTime& t);

// Argument helpers shared by the builtin files.
std::optional<std::string> optionalStringArg(const CallArgs& args, std::size_t index, std::string_view name);
std::int64_t intArg(const CallArgs& args, std::size_t index, std::string_view name, std::int64_t fallback);
bool boolArg(const CallArgs& args, std::size_t index, std::string_view name, bool fallback);
std::int64_t toInteger(const Value& v, std::string_view what);  // TypeError unless int/bool

}  // namespace verdict::tok::jinja
