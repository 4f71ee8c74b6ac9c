// Recursive-descent parser for the Jinja subset: see jinja_parser.h.
#include "template/jinja_parser.h"

#include "template/jinja_error.h"
#include "template/jinja_lexer.h"

#include <charconv>
#include <cstdlib>
#include <initializer_list>

namespace verdict::tok::jinja {

namespace {

std::string describe(const Token& t) {
    switch (t.type) {
    case TokenType::Data: return "template text";
    case TokenType::VariableBegin: return "'{{'";
    case TokenType::VariableEnd: return "end of print statement '}}'";
    case TokenType::BlockBegin: return "'{%'";
    case TokenType::BlockEnd: return "end of statement block '%}'";
    case TokenType::String: return "string literal";
    case TokenType::Integer:
    case TokenType::Float: return "number " + t.value;
    case TokenType::End: return "end of template";
    case TokenType::Name:
    case TokenType::Operator: return "'" + t.value + "'";
    }
    return "token";
}

class Parser {
public:
    explicit Parser(LexedTemplate lexed) : m_lx(std::move(lexed)) {}

    std::shared_ptr<const Program> run() {
        auto program = std::make_shared<Program>();
        program->body = parseBody({});
        program->source = std::move(m_lx.text);
        return program;
    }

private:
    // ---- token helpers ----
    const Token& cur() const { return m_lx.tokens[m_pos]; }
    const Token& peek(std::size_t n = 1) const {
        const std::size_t i = m_pos + n;
        return m_lx.tokens[i < m_lx.tokens.size() ? i : m_lx.tokens.size() - 1];
    }
    const Token& advance() {
        const Token& t = m_lx.tokens[m_pos];
        if (m_pos + 1 < m_lx.tokens.size()) ++m_pos;
        return t;
    }
    bool isOp(std::string_view op) const { return cur().type == TokenType::Operator && cur().value == op; }
    bool isName(std::string_view name) const { return cur().type == TokenType::Name && cur().value == name; }
    bool skipOp(std::string_view op) {
        if (!isOp(op)) return false;
        advance();
        return true;
    }
    bool skipName(std::string_view name) {
        if (!isName(name)) return false;
        advance();
        return true;
    }

    [[noreturn]] void error(std::string message, std::size_t offset) const {
        throw JinjaError(ErrorKind::Syntax, std::move(message), offset);
    }
    [[noreturn]] void unexpected(std::string_view expected) const {
        error("expected " + std::string(expected) + ", got " + describe(cur()), cur().offset);
    }
    void expectOp(std::string_view op) {
        if (!skipOp(op)) unexpected("'" + std::string(op) + "'");
    }
    void expectBlockEnd() {
        if (cur().type != TokenType::BlockEnd) unexpected("end of statement block '%}'");
        advance();
    }
    std::string expectName() {
        if (cur().type != TokenType::Name) unexpected("a name");
        return advance().value;
    }

    struct DepthGuard {
        explicit DepthGuard(Parser& p) : parser(p) {
            if (++parser.m_depth > kMaxParseDepth)
                parser.error("template nested too deeply (limit " + std::to_string(kMaxParseDepth) + ")",
                             parser.cur().offset);
        }
        ~DepthGuard() { --parser.m_depth; }
        Parser& parser;
    };

    // Records the depth of a finished node and bounds it: long left-nested chains (a.b.c...,
    // x|f|g..., 1+1+...) are built by loops, not recursion, but are walked recursively later.
    ExprPtr finish(ExprPtr e) const {
        int depth = 0;
        auto see = [&depth](const ExprPtr& child) {
            if (child && child->depth > depth) depth = child->depth;
        };
        see(e->a);
        see(e->b);
        see(e->c);
        see(e->d);
        for (const auto& item : e->items) see(item);
        for (const auto& arg : e->args.positional) see(arg);
        for (const auto& [name, arg] : e->args.keyword) see(arg);
        see(e->args.starArgs);
        see(e->args.starKwargs);
        e->depth = depth + 1;
        if (e->depth > kMaxExprDepth)
            error("expression nested too deeply (limit " + std::to_string(kMaxExprDepth) + ")", e->offset);
        return e;
    }

    static ExprPtr node(ExprKind kind, std::size_t offset) {
        auto e = std::make_unique<Expr>();
        e->kind = kind;
        e->offset = offset;
        return e;
    }

    // ---- statements ----

    // Parses until a block tag whose name is in `endTags` (left unconsumed: the position is at
    // its BlockBegin) or, with no end tags, until the end of the template.
    Body parseBody(std::initializer_list<std::string_view> endTags) {
        DepthGuard guard(*this);
        Body body;
        std::string names;
        for (auto n : endTags) names += (names.empty() ? "'" : " or '") + std::string(n) + "'";
        const Expected saved = m_expected;
        if (endTags.size() != 0) m_expected = Expected{names, m_openTag, m_openOffset};
        struct Restore {
            Expected& slot;
            Expected saved;
            ~Restore() { slot = saved; }
        } restore{m_expected, saved};
        while (true) {
            const Token& t = cur();
            if (t.type == TokenType::End) {
                if (endTags.size() == 0) return body;
                error("unexpected end of template: '" + m_openTag + "' block is never closed (expected " + names + ")",
                      m_openOffset);
            }
            if (t.type == TokenType::Data) {
                auto s = std::make_unique<Stmt>();
                s->kind = StmtKind::Text;
                s->offset = t.offset;
                s->text = t.value;
                body.push_back(std::move(s));
                advance();
            } else if (t.type == TokenType::VariableBegin) {
                advance();
                auto s = std::make_unique<Stmt>();
                s->kind = StmtKind::Print;
                s->offset = cur().offset;
                s->expr = parseTuple(true);
                if (cur().type != TokenType::VariableEnd) unexpected("end of print statement '}}'");
                advance();
                body.push_back(std::move(s));
            } else if (t.type == TokenType::BlockBegin) {
                const Token& name = peek();
                if (name.type != TokenType::Name) {
                    advance();
                    unexpected("a statement name");
                }
                for (auto e : endTags)
                    if (name.value == e) return body;
                body.push_back(parseStatement());
            } else {
                unexpected("template text or a tag");
            }
        }
    }

    StmtPtr parseStatement() {
        advance();  // {%
        const std::size_t offset = cur().offset;
        const std::string tag = advance().value;
        auto s = std::make_unique<Stmt>();
        s->offset = offset;
        // The block being opened, for "never closed" / "unknown tag" messages of its body.
        const std::string savedTag = m_openTag;
        const std::size_t savedOffset = m_openOffset;
        m_openTag = tag;
        m_openOffset = offset;
        struct Restore {
            Parser& p;
            std::string tag;
            std::size_t offset;
            ~Restore() { p.m_openTag = tag; p.m_openOffset = offset; }
        } restore{*this, savedTag, savedOffset};
        if (tag == "if") parseIf(*s);
        else if (tag == "for") parseFor(*s);
        else if (tag == "set") parseSet(*s);
        else if (tag == "macro") parseMacro(*s);
        else if (tag == "call") parseCallBlock(*s);
        else if (tag == "filter") parseFilterBlock(*s);
        else if (tag == "with") parseWith(*s);
        else if (tag == "block" || tag == "generation") parseScope(*s, tag);
        else if (tag == "break" || tag == "continue") {
            if (m_loopDepth == 0) error("'" + tag + "' outside of a for loop", offset);
            s->kind = tag == "break" ? StmtKind::Break : StmtKind::Continue;
            expectBlockEnd();
        } else if (tag == "extends" || tag == "include" || tag == "import" || tag == "from") {
            error("'" + tag + "' is not supported in chat templates (no template loader)", offset);
        } else {
            std::string message = "encountered unknown tag '" + tag + "'";
            if (!m_expected.names.empty()) {
                message += "; expected " + m_expected.names + " to close '" + m_expected.tag + "' (line "
                           + std::to_string(positionOf(m_lx.text, m_expected.offset).line) + ")";
            }
            error(message, offset);
        }
        return s;
    }

    // Consumes "{% name" of an end/middle tag the body stopped at.
    void consumeTag(std::string_view name) {
        advance();  // {%
        if (!isName(name)) unexpected("'" + std::string(name) + "'");
        advance();
    }

    void parseIf(Stmt& s) {
        s.kind = StmtKind::If;
        while (true) {
            ExprPtr cond = parseTuple(false);
            expectBlockEnd();
            Body body = parseBody({"elif", "else", "endif"});
            s.branches.emplace_back(std::move(cond), std::move(body));
            const std::string next = peek().value;
            consumeTag(next);
            if (next == "elif") continue;
            if (next == "else") {
                expectBlockEnd();
                s.elseBody = parseBody({"endif"});
                consumeTag("endif");
            }
            expectBlockEnd();
            return;
        }
    }

    std::vector<std::string> parseTargets() {
        std::vector<std::string> names;
        const bool paren = skipOp("(");
        do {
            if (paren && isOp(")")) break;
            names.push_back(expectName());
        } while (skipOp(","));
        if (paren) expectOp(")");
        return names;
    }

    void parseFor(Stmt& s) {
        s.kind = StmtKind::For;
        s.targets = parseTargets();
        if (!skipName("in")) unexpected("'in'");
        s.expr = parseTuple(false, true);
        if (skipName("if")) s.filterCond = parseExpression(true);
        if (skipName("recursive")) s.recursive = true;
        expectBlockEnd();
        ++m_loopDepth;
        s.body = parseBody({"endfor", "else"});
        --m_loopDepth;
        if (peek().value == "else") {
            consumeTag("else");
            expectBlockEnd();
            s.elseBody = parseBody({"endfor"});
        }
        consumeTag("endfor");
        expectBlockEnd();
    }

    void parseSet(Stmt& s) {
        if (isOp("(")) {
            s.targets = parseTargets();
        } else {
            s.targets.push_back(expectName());
            if (skipOp(".")) {
                s.attribute = expectName();
            } else {
                while (skipOp(",")) s.targets.push_back(expectName());
            }
        }
        if (skipOp("=")) {
            s.kind = StmtKind::Set;
            s.expr = parseTuple(true);
            expectBlockEnd();
            return;
        }
        if (s.targets.size() != 1 || !s.attribute.empty()) unexpected("'='");
        s.kind = StmtKind::SetBlock;
        while (skipOp("|")) s.filters.push_back(parseFilterCall());
        expectBlockEnd();
        s.body = parseBody({"endset"});
        consumeTag("endset");
        expectBlockEnd();
    }

    std::vector<MacroParam> parseParams() {
        std::vector<MacroParam> params;
        expectOp("(");
        while (!isOp(")")) {
            if (!params.empty()) expectOp(",");
            if (isOp(")")) break;
            MacroParam p;
            p.name = expectName();
            if (skipOp("=")) p.defaultValue = parseExpression(true);
            params.push_back(std::move(p));
        }
        expectOp(")");
        return params;
    }

    void parseMacro(Stmt& s) {
        s.kind = StmtKind::Macro;
        s.name = expectName();
        s.params = parseParams();
        expectBlockEnd();
        const int savedLoops = m_loopDepth;
        m_loopDepth = 0;  // break/continue cannot cross a macro boundary
        s.body = parseBody({"endmacro"});
        m_loopDepth = savedLoops;
        consumeTag("endmacro");
        if (cur().type == TokenType::Name) advance();  // optional repeated name
        expectBlockEnd();
    }

    void parseCallBlock(Stmt& s) {
        s.kind = StmtKind::CallBlock;
        if (isOp("(")) s.params = parseParams();
        s.expr = parseExpression(true);
        if (s.expr->kind != ExprKind::Call) error("expected a call after {% call %}", s.expr->offset);
        expectBlockEnd();
        const int savedLoops = m_loopDepth;
        m_loopDepth = 0;
        s.body = parseBody({"endcall"});
        m_loopDepth = savedLoops;
        consumeTag("endcall");
        expectBlockEnd();
    }

    void parseFilterBlock(Stmt& s) {
        s.kind = StmtKind::FilterBlock;
        do {
            s.filters.push_back(parseFilterCall());
        } while (skipOp("|"));
        expectBlockEnd();
        s.body = parseBody({"endfilter"});
        consumeTag("endfilter");
        expectBlockEnd();
    }

    void parseWith(Stmt& s) {
        s.kind = StmtKind::With;
        while (cur().type != TokenType::BlockEnd) {
            if (!s.assignments.empty()) expectOp(",");
            std::string name = expectName();
            expectOp("=");
            s.assignments.emplace_back(std::move(name), parseExpression(true));
        }
        expectBlockEnd();
        s.body = parseBody({"endwith"});
        consumeTag("endwith");
        expectBlockEnd();
    }

    void parseScope(Stmt& s, const std::string& tag) {
        s.kind = StmtKind::Scope;
        if (tag == "block") {
            s.name = expectName();
            while (skipName("scoped") || skipName("required")) {}
        }
        expectBlockEnd();
        const std::string endTag = "end" + tag;
        s.body = tag == "block" ? parseBody({"endblock"}) : parseBody({"endgeneration"});
        consumeTag(endTag);
        if (cur().type == TokenType::Name) advance();
        expectBlockEnd();
    }

    // ---- expressions ----

    bool isTupleEnd(bool forIterable) const {
        const Token& t = cur();
        if (t.type == TokenType::VariableEnd || t.type == TokenType::BlockEnd || t.type == TokenType::End) return true;
        if (t.type == TokenType::Operator && (t.value == ")" || t.value == "]" || t.value == "}")) return true;
        if (forIterable && t.type == TokenType::Name && (t.value == "if" || t.value == "recursive")) return true;
        return false;
    }

    // Comma-separated expressions; one without a trailing comma is returned as itself.
    // withCondExpr = false parses `or`-level items (for-loop iterables and if conditions).
    ExprPtr parseTuple(bool withCondExpr, bool forIterable = false) {
        const std::size_t offset = cur().offset;
        std::vector<ExprPtr> items;
        bool isTuple = false;
        while (true) {
            if (!items.empty()) {
                if (!skipOp(",")) break;
                isTuple = true;
            }
            if (isTupleEnd(forIterable)) break;
            items.push_back(withCondExpr ? parseExpression(true) : parseOr());
        }
        if (!isTuple) {
            if (items.empty()) unexpected("an expression");
            return std::move(items[0]);
        }
        auto e = node(ExprKind::Tuple, offset);
        e->items = std::move(items);
        return finish(std::move(e));
    }

    ExprPtr parseExpression(bool withCondExpr) {
        DepthGuard guard(*this);
        ExprPtr expr = parseOr();
        while (withCondExpr && isName("if")) {
            auto e = node(ExprKind::CondExpr, advance().offset);
            e->b = parseOr();
            if (skipName("else")) e->c = parseExpression(true);
            e->a = std::move(expr);
            expr = finish(std::move(e));
        }
        return expr;
    }

    ExprPtr parseOr() {
        ExprPtr left = parseAnd();
        while (isName("or")) {
            auto e = node(ExprKind::Or, advance().offset);
            e->a = std::move(left);
            e->b = parseAnd();
            left = finish(std::move(e));
        }
        return left;
    }

    ExprPtr parseAnd() {
        ExprPtr left = parseNot();
        while (isName("and")) {
            auto e = node(ExprKind::And, advance().offset);
            e->a = std::move(left);
            e->b = parseNot();
            left = finish(std::move(e));
        }
        return left;
    }

    ExprPtr parseNot() {
        if (isName("not")) {
            DepthGuard guard(*this);
            auto e = node(ExprKind::Not, advance().offset);
            e->a = parseNot();
            return finish(std::move(e));
        }
        return parseCompare();
    }

    ExprPtr parseCompare() {
        const std::size_t offset = cur().offset;
        ExprPtr first = parseMath1();
        std::vector<ExprPtr> operands;
        std::vector<CompareOp> ops;
        while (true) {
            CompareOp op;
            if (isOp("==")) op = CompareOp::Eq;
            else if (isOp("!=")) op = CompareOp::Ne;
            else if (isOp("<")) op = CompareOp::Lt;
            else if (isOp("<=")) op = CompareOp::Le;
            else if (isOp(">")) op = CompareOp::Gt;
            else if (isOp(">=")) op = CompareOp::Ge;
            else if (isName("in")) op = CompareOp::In;
            else if (isName("not") && peek().type == TokenType::Name && peek().value == "in") {
                advance();
                op = CompareOp::NotIn;
            } else break;
            advance();
            ops.push_back(op);
            operands.push_back(parseMath1());
        }
        if (ops.empty()) return first;
        auto e = node(ExprKind::Compare, offset);
        e->items.push_back(std::move(first));
        for (auto& o : operands) e->items.push_back(std::move(o));
        e->ops = std::move(ops);
        return finish(std::move(e));
    }

    ExprPtr binary(BinaryOp op, ExprPtr left, ExprPtr right, std::size_t offset) {
        auto e = node(ExprKind::Binary, offset);
        e->binaryOp = op;
        e->a = std::move(left);
        e->b = std::move(right);
        return finish(std::move(e));
    }

    ExprPtr parseMath1() {
        ExprPtr left = parseConcat();
        while (isOp("+") || isOp("-")) {
            const Token& t = advance();
            const BinaryOp op = t.value == "+" ? BinaryOp::Add : BinaryOp::Sub;
            left = binary(op, std::move(left), parseConcat(), t.offset);
        }
        return left;
    }

    ExprPtr parseConcat() {
        ExprPtr left = parseMath2();
        while (isOp("~")) {
            const std::size_t offset = advance().offset;
            left = binary(BinaryOp::Concat, std::move(left), parseMath2(), offset);
        }
        return left;
    }

    ExprPtr parseMath2() {
        ExprPtr left = parsePow();
        while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
            const Token& t = advance();
            BinaryOp op = BinaryOp::Mul;
            if (t.value == "/") op = BinaryOp::Div;
            else if (t.value == "//") op = BinaryOp::FloorDiv;
            else if (t.value == "%") op = BinaryOp::Mod;
            left = binary(op, std::move(left), parsePow(), t.offset);
        }
        return left;
    }

    ExprPtr parsePow() {
        ExprPtr left = parseUnary(true);
        while (isOp("**")) {
            const std::size_t offset = advance().offset;
            left = binary(BinaryOp::Pow, std::move(left), parseUnary(true), offset);
        }
        return left;
    }

    ExprPtr parseUnary(bool withFilter) {
        DepthGuard guard(*this);
        ExprPtr e;
        if (isOp("-") || isOp("+")) {
            const Token& t = advance();
            e = node(t.value == "-" ? ExprKind::Negate : ExprKind::Plus, t.offset);
            e->a = parseUnary(false);
            e = finish(std::move(e));
        } else {
            e = parsePrimary();
        }
        e = parsePostfix(std::move(e));
        if (withFilter) e = parseFilterExpr(std::move(e));
        return e;
    }

    ExprPtr parsePrimary() {
        const Token& t = cur();
        const std::size_t offset = t.offset;
        if (t.type == TokenType::Name) {
            const std::string& n = t.value;
            auto e = node(ExprKind::Literal, offset);
            if (n == "true" || n == "True") e->literal = Value::boolean(true);
            else if (n == "false" || n == "False") e->literal = Value::boolean(false);
            else if (n == "none" || n == "None") e->literal = Value::none();
            else {
                e->kind = ExprKind::Name;
                e->name = n;
            }
            advance();
            return e;
        }
        if (t.type == TokenType::String) {
            std::string s;
            while (cur().type == TokenType::String) s += advance().value;  // "a" "b" == "ab"
            auto e = node(ExprKind::Literal, offset);
            e->literal = Value::string(std::move(s));
            return e;
        }
        if (t.type == TokenType::Integer) {
            std::int64_t v = 0;
            const auto r = std::from_chars(t.value.data(), t.value.data() + t.value.size(), v);
            auto e = node(ExprKind::Literal, offset);
            if (r.ec == std::errc()) e->literal = Value::integer(v);
            else error("integer literal too large: " + t.value, offset);
            advance();
            return e;
        }
        if (t.type == TokenType::Float) {
            auto e = node(ExprKind::Literal, offset);
            e->literal = Value::number(std::strtod(t.value.c_str(), nullptr));
            advance();
            return e;
        }
        if (isOp("(")) {
            advance();
            if (skipOp(")")) {
                auto e = node(ExprKind::Tuple, offset);
                return e;
            }
            ExprPtr inner = parseTuple(true);
            expectOp(")");
            return inner;
        }
        if (isOp("[")) {
            advance();
            auto e = node(ExprKind::List, offset);
            while (!isOp("]")) {
                if (!e->items.empty()) expectOp(",");
                if (isOp("]")) break;
                e->items.push_back(parseExpression(true));
            }
            expectOp("]");
            return finish(std::move(e));
        }
        if (isOp("{")) {
            advance();
            auto e = node(ExprKind::Dict, offset);
            while (!isOp("}")) {
                if (!e->items.empty()) expectOp(",");
                if (isOp("}")) break;
                e->items.push_back(parseExpression(true));
                expectOp(":");
                e->items.push_back(parseExpression(true));
            }
            expectOp("}");
            return finish(std::move(e));
        }
        unexpected("an expression");
    }

    ExprPtr parsePostfix(ExprPtr e) {
        while (true) {
            if (isOp(".")) {
                const std::size_t offset = advance().offset;
                if (cur().type == TokenType::Name) {
                    auto a = node(ExprKind::Attribute, offset);
                    a->name = advance().value;
                    a->a = std::move(e);
                    e = finish(std::move(a));
                } else if (cur().type == TokenType::Integer) {
                    // foo.0 is foo[0]
                    auto a = node(ExprKind::Subscript, offset);
                    a->a = std::move(e);
                    a->b = parsePrimary();
                    e = finish(std::move(a));
                } else {
                    unexpected("an attribute name");
                }
            } else if (isOp("[")) {
                e = parseSubscript(std::move(e));
            } else if (isOp("(")) {
                e = parseCall(std::move(e));
            } else {
                return e;
            }
        }
    }

    ExprPtr parseSubscript(ExprPtr target) {
        const std::size_t offset = advance().offset;  // [
        ExprPtr start;
        if (!isOp(":")) {
            start = parseExpression(true);
            if (skipOp("]")) {
                auto e = node(ExprKind::Subscript, offset);
                e->a = std::move(target);
                e->b = std::move(start);
                return finish(std::move(e));
            }
        }
        auto e = node(ExprKind::Slice, offset);
        e->a = std::move(target);
        e->b = std::move(start);
        expectOp(":");
        if (!isOp("]") && !isOp(":")) e->c = parseExpression(true);
        if (skipOp(":") && !isOp("]")) e->d = parseExpression(true);
        expectOp("]");
        return finish(std::move(e));
    }

    void parseArgs(ArgsExpr& args) {
        expectOp("(");
        bool first = true;
        while (!isOp(")")) {
            if (!first) {
                expectOp(",");
                if (isOp(")")) break;
            }
            first = false;
            if (skipOp("*")) {
                args.starArgs = parseExpression(true);
            } else if (skipOp("**")) {
                args.starKwargs = parseExpression(true);
            } else if (cur().type == TokenType::Name && peek().type == TokenType::Operator && peek().value == "=") {
                std::string key = advance().value;
                advance();  // =
                args.keyword.emplace_back(std::move(key), parseExpression(true));
            } else {
                if (!args.keyword.empty()) error("positional argument follows keyword argument", cur().offset);
                args.positional.push_back(parseExpression(true));
            }
        }
        expectOp(")");
    }

    ExprPtr parseCall(ExprPtr callee) {
        auto e = node(ExprKind::Call, cur().offset);
        parseArgs(e->args);
        e->a = std::move(callee);
        return finish(std::move(e));
    }

    FilterCall parseFilterCall() {
        FilterCall f;
        f.offset = cur().offset;
        f.name = expectName();
        while (isOp(".") && peek().type == TokenType::Name) {
            advance();
            f.name += "." + advance().value;
        }
        if (isOp("(")) parseArgs(f.args);
        return f;
    }

    ExprPtr parseFilterExpr(ExprPtr e) {
        while (true) {
            if (isOp("|")) {
                advance();
                FilterCall f = parseFilterCall();
                auto n = node(ExprKind::Filter, f.offset);
                n->name = std::move(f.name);
                n->args = std::move(f.args);
                n->a = std::move(e);
                e = finish(std::move(n));
            } else if (isName("is")) {
                e = parseTest(std::move(e));
            } else if (isOp("(")) {
                e = parseCall(std::move(e));
            } else {
                return e;
            }
        }
    }

    ExprPtr parseTest(ExprPtr subject) {
        auto e = node(ExprKind::Test, advance().offset);  // is
        e->negated = skipName("not");
        e->name = expectName();
        while (isOp(".") && peek().type == TokenType::Name) {
            advance();
            e->name += "." + advance().value;
        }
        const Token& t = cur();
        // Exactly jinja2's rule: any following name is the argument unless it is else/or/and.
        static const char* const kStopWords[] = {"else", "or", "and"};
        bool bareArgument = false;
        if (t.type == TokenType::Name) {
            bareArgument = true;
            for (const char* w : kStopWords)
                if (t.value == w) bareArgument = false;
        } else if (t.type == TokenType::String || t.type == TokenType::Integer || t.type == TokenType::Float) {
            bareArgument = true;
        } else if (t.type == TokenType::Operator && (t.value == "[" || t.value == "{")) {
            bareArgument = true;
        }
        if (isName("is")) error("you cannot chain multiple tests with 'is'", cur().offset);
        if (isOp("(")) {
            parseArgs(e->args);
        } else if (bareArgument) {
            // `x is divisibleby 3`, `x is sameas none`: one primary argument without parentheses.
            e->args.positional.push_back(parsePostfix(parsePrimary()));
        }
        e->a = std::move(subject);
        return finish(std::move(e));
    }

    LexedTemplate m_lx;
    std::size_t m_pos = 0;
    int m_depth = 0;
    int m_loopDepth = 0;
    std::string m_openTag;        // innermost block statement being parsed
    std::size_t m_openOffset = 0;
    struct Expected {
        std::string names;  // end tags the innermost body waits for
        std::string tag;    // the block they close
        std::size_t offset = 0;
    } m_expected;
};

}  // namespace

std::shared_ptr<const Program> parseTemplate(std::string_view source) {
    return Parser(lexTemplate(source)).run();
}

}  // namespace verdict::tok::jinja
