// Syntax tree of a parsed Jinja template.
//
// Two node types keep the tree simple to walk: Expr (evaluates to a Value) and Stmt (writes
// output). Each is one struct with a kind tag; a field is used only by the kinds named in its
// comment. Every node records the byte offset of its token for error messages.
#pragma once

#include "template/jinja_value.h"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace verdict::tok::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class ExprKind {
    Literal,    // literal
    Name,       // name
    List,       // items
    Tuple,      // items
    Dict,       // items = key0, value0, key1, value1, ...
    Attribute,  // a.name
    Subscript,  // a[b]
    Slice,      // a[b:c:d]; any of b, c, d may be null
    Call,       // a(args)
    Filter,     // a | name(args)
    Test,       // a is [not] name(args); negated
    Negate,     // -a
    Plus,       // +a
    Binary,     // a op b
    Compare,    // items[0] ops[0] items[1] ops[1] items[2] ... (chained)
    And,        // a and b
    Or,         // a or b
    Not,        // not a
    CondExpr,   // a if b else c (c may be null)
};

enum class BinaryOp { Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Concat };
enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

struct ArgsExpr {
    std::vector<ExprPtr> positional;
    std::vector<std::pair<std::string, ExprPtr>> keyword;
    ExprPtr starArgs;    // *expr
    ExprPtr starKwargs;  // **expr
};

struct Expr {
    ExprKind kind = ExprKind::Literal;
    std::size_t offset = 0;
    int depth = 1;  // longest path to a leaf (bounded by the parser)
    Value literal;
    std::string name;
    std::vector<ExprPtr> items;
    std::vector<CompareOp> ops;
    BinaryOp binaryOp = BinaryOp::Add;
    ExprPtr a, b, c, d;
    ArgsExpr args;
    bool negated = false;
};

struct FilterCall {
    std::string name;
    ArgsExpr args;
    std::size_t offset = 0;
};

struct MacroParam {
    std::string name;
    ExprPtr defaultValue;  // null: required
};

enum class StmtKind {
    Text,         // text
    Print,        // {{ expr }}
    If,           // branches (cond, body)..., elseBody
    For,          // for targets in expr [if filterCond] [recursive]: body [else elseBody]
    Set,          // set targets = expr | set targets[0].attribute = expr
    SetBlock,     // set targets[0] [| filters] %}body{% endset
    Macro,        // macro name(params) body
    CallBlock,    // call(params) expr body: expr is the Call, body becomes `caller`
    FilterBlock,  // filter filters body
    Break,
    Continue,
    With,         // with assignments: body
    Scope,        // {% block %} / {% generation %}: body rendered in place
};

struct Stmt {
    StmtKind kind = StmtKind::Text;
    std::size_t offset = 0;
    std::string text;
    ExprPtr expr;
    std::vector<std::pair<ExprPtr, Body>> branches;
    Body body;
    Body elseBody;
    std::vector<std::string> targets;  // assignment names; >1 means tuple unpacking
    std::string attribute;             // Set on a namespace: targets[0].attribute
    ExprPtr filterCond;
    bool recursive = false;
    std::string name;
    std::vector<MacroParam> params;
    std::vector<FilterCall> filters;
    std::vector<std::pair<std::string, ExprPtr>> assignments;
};

// A parsed template: the statement list plus the normalised source for error positions.
struct Program {
    std::string source;
    Body body;
};

}  // namespace verdict::tok::jinja
