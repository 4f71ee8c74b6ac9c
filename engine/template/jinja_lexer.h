// Lexer for the Jinja subset: template text -> flat token stream.
//
// Whitespace handling reproduces jinja2 3.1 configured like transformers does:
// trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False, plus the '-' and '+'
// modifiers. Newlines are normalised to "\n" first and one trailing newline is dropped.
// Text, {% raw %} content and the inside of tags are all resolved here, so the parser only
// sees: Data, VariableBegin ... VariableEnd, BlockBegin ... BlockEnd, End.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::tok::jinja {

enum class TokenType {
    Data,           // literal template text, whitespace control already applied
    VariableBegin,  // {{
    VariableEnd,    // }}
    BlockBegin,     // {%
    BlockEnd,       // %}
    Name,           // identifier or keyword
    String,         // string literal, escapes decoded
    Integer,        // integer literal, value = decimal digits
    Float,          // float literal, value = text without underscores
    Operator,       // + - * / // % ** ~ == != < <= > >= = . : | , ; ( ) [ ] { }
    End,            // end of template
};

struct Token {
    TokenType type = TokenType::End;
    std::string value;
    std::size_t offset = 0;  // byte offset in LexedTemplate::text
};

struct LexedTemplate {
    std::string text;  // the source after newline normalisation (offsets refer to it)
    std::vector<Token> tokens;
};

// Throws JinjaError(ErrorKind::Syntax) with the offset of the offending character.
LexedTemplate lexTemplate(std::string_view source);

// The text offsets refer to: \r\n and \r become \n, one trailing newline is dropped.
std::string normaliseNewlines(std::string_view source);

// 1-based line and column (in code points) of a byte offset in `text`.
struct SourcePosition {
    int line = 1;
    int column = 1;
};
SourcePosition positionOf(std::string_view text, std::size_t offset);

}  // namespace verdict::tok::jinja
