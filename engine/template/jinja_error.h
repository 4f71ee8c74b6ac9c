// Errors raised inside the Jinja-subset interpreter (lexer, parser, evaluation).
//
// The interpreter uses a C++ exception internally so that deeply nested evaluation can unwind
// in one step; ChatTemplate catches it at the API boundary and turns it into a verdict::Error.
// Nothing of this type ever escapes the engine.
#pragma once

#include <cstddef>
#include <exception>
#include <string>
#include <utility>

namespace verdict::tok::jinja {

// What went wrong, named after the Python exception jinja2/transformers raises for the same
// failure, so that messages can be compared with the reference ("TemplateError: ...").
enum class ErrorKind {
    Syntax,     // TemplateSyntaxError: the template text cannot be parsed
    Template,   // TemplateError: raise_exception(msg) was called by the template
    Undefined,  // UndefinedError: use of an undefined value (attribute, call, arithmetic)
    Type,       // TypeError: operation on the wrong kind of value
    Value,      // ValueError: right kind, bad value (unpacking, slice step 0, int("x"))
    Security,   // SecurityError: mutating call refused by the immutable sandbox
    Runtime,    // TemplateRuntimeError: a filter or test that does not exist was applied
    Limit,      // LimitError: a resource bound (iterations, output size, recursion) was hit
};

const char* errorKindName(ErrorKind kind);

inline constexpr std::size_t kNoOffset = static_cast<std::size_t>(-1);

class JinjaError : public std::exception {
public:
    JinjaError(ErrorKind kind, std::string message, std::size_t offset = kNoOffset)
        : m_kind(kind), m_message(std::move(message)), m_offset(offset) {}

    ErrorKind kind() const { return m_kind; }
    const std::string& message() const { return m_message; }
    // Byte offset into the (newline-normalised) template source, or kNoOffset.
    std::size_t offset() const { return m_offset; }
    void setOffsetIfUnknown(std::size_t offset) {
        if (m_offset == kNoOffset) m_offset = offset;
    }
    const char* what() const noexcept override { return m_message.c_str(); }

private:
    ErrorKind m_kind;
    std::string m_message;
    std::size_t m_offset;
};

[[noreturn]] inline void fail(ErrorKind kind, std::string message) {
    throw JinjaError(kind, std::move(message));
}

}  // namespace verdict::tok::jinja
