// Parser for the Jinja subset: tokens -> Program (jinja_ast.h).
//
// Operator precedence follows jinja2's parser exactly (it differs from Python in places):
//   a if c else b  <  or  <  and  <  not  <  comparisons/in  <  + -  <  ~  <  * / // %  <  **
//   <  unary - +  <  filters |f and tests `is t`  <  postfix . [] ()
// Supported statements: if/elif/else, for (unpacking, `if` filter, else, recursive), set
// (names, tuples, namespace attributes, blocks), macro, call, filter, with, break, continue,
// block, generation, raw (in the lexer), comments. extends/include/import are rejected.
#pragma once

#include "template/jinja_ast.h"

#include <memory>
#include <string_view>

namespace verdict::tok::jinja {

// Deepest nesting accepted (parser recursion levels: about two per parenthesis or block);
// deeper input is a syntax error instead of a stack overflow. jinja2 itself stops near 80
// nested parentheses (Python's recursion limit), so real templates stay far below.
inline constexpr int kMaxParseDepth = 400;
// Deepest expression tree accepted (nodes from root to leaf), e.g. a chain a.b.c... of 300.
inline constexpr int kMaxExprDepth = 300;

// Throws JinjaError(ErrorKind::Syntax) with the byte offset of the offending token.
std::shared_ptr<const Program> parseTemplate(std::string_view source);

}  // namespace verdict::tok::jinja
