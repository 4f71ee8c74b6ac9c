#include "core/score/tool_call_scorer.h"

#include "core/score/json_schema.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace verdict::core {

namespace {

using nlohmann::json;

constexpr ToolCallError kAllErrors[] = {
    ToolCallError::NoCall,          ToolCallError::UnexpectedCall, ToolCallError::WrongCount,
    ToolCallError::WrongFunction,   ToolCallError::InvalidJson,    ToolCallError::MissingArgument,
    ToolCallError::ExtraArgument,   ToolCallError::WrongType,      ToolCallError::WrongValue,
    ToolCallError::WrongAnswer,
};

// Severity of a per-call error: higher = worse. Only the per-call classes take part.
int severity(ToolCallError e) {
    switch (e) {
    case ToolCallError::WrongFunction: return 5;
    case ToolCallError::MissingArgument: return 4;
    case ToolCallError::ExtraArgument: return 3;
    case ToolCallError::WrongType: return 2;
    case ToolCallError::WrongValue: return 1;
    default: return 0;
    }
}

std::string brief(const std::string& s, size_t max = 60) {
    return s.size() > max ? s.substr(0, max - 3) + "..." : s;
}

std::string brief(const json& v) { return brief(v.dump()); }

// BFCL's standardize_string: drop spaces and , . / - _ * ^, lower-case, ' -> ".
std::string standardise(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case ' ': case ',': case '.': case '/': case '-': case '_': case '*': case '^': continue;
        case '\'': out.push_back('"'); break;
        default: out.push_back(char(std::tolower(static_cast<unsigned char>(c))));
        }
    }
    return out;
}

bool valueEqual(const json& got, const json& want) {
    if (got.is_number() && want.is_number()) return got == want;  // nlohmann compares numerically
    if (got.is_boolean() && want.is_boolean()) return got.get<bool>() == want.get<bool>();
    if (got.is_null() || want.is_null()) return got.is_null() && want.is_null();
    if (got.is_string() && want.is_string())
        return standardise(got.get_ref<const std::string&>()) == standardise(want.get_ref<const std::string&>());
    if (got.is_array() && want.is_array()) {
        if (got.size() != want.size()) return false;
        for (size_t i = 0; i < got.size(); ++i)
            if (!valueEqual(got[i], want[i])) return false;
        return true;
    }
    if (got.is_object() && want.is_object()) {
        if (got.size() != want.size()) return false;
        for (auto it = want.begin(); it != want.end(); ++it) {
            auto g = got.find(it.key());
            if (g == got.end() || !valueEqual(*g, it.value())) return false;
        }
        return true;
    }
    return false;
}

// An expected argument's acceptable values as a list (a stray single value is read as one).
json acceptable(const json& entry) { return entry.is_array() ? entry : json::array({entry}); }

bool mayBeOmitted(const json& list) {
    return std::any_of(list.begin(), list.end(), [](const json& v) { return v.is_null(); });
}

// The schema with only its type structure: value-only keywords dropped, oneOf read as anyOf.
json typeOnly(const json& schema) {
    if (!schema.is_object()) return schema;
    static const char* const kValueKeywords[] = {"enum", "const", "minimum", "maximum", "exclusiveMinimum",
                                                 "exclusiveMaximum", "minLength", "maxLength", "pattern",
                                                 "minItems", "maxItems"};
    json out = json::object();
    for (auto it = schema.begin(); it != schema.end(); ++it) {
        const std::string& k = it.key();
        if (std::find(std::begin(kValueKeywords), std::end(kValueKeywords), k) != std::end(kValueKeywords)) continue;
        const json& v = it.value();
        if (k == "properties" && v.is_object()) {
            json props = json::object();
            for (auto p = v.begin(); p != v.end(); ++p) props[p.key()] = typeOnly(p.value());
            out[k] = std::move(props);
        } else if ((k == "items" || k == "additionalProperties") && v.is_object()) {
            out[k] = typeOnly(v);
        } else if ((k == "anyOf" || k == "allOf" || k == "oneOf") && v.is_array()) {
            json list = json::array();
            for (const auto& sub : v) list.push_back(typeOnly(sub));
            json& target = out[k == "oneOf" ? std::string("anyOf") : k];
            if (target.is_array()) for (auto& sub : list) target.push_back(std::move(sub));
            else target = std::move(list);
        } else {
            out[k] = v;
        }
    }
    return out;
}

// The function object named `name` in `tools` (OpenAI form or bare), or nullptr.
const json* findTool(const json& tools, const std::string& name) {
    if (!tools.is_array()) return nullptr;
    for (const auto& t : tools) {
        if (!t.is_object()) continue;
        const json* fn = &t;
        if (auto f = t.find("function"); f != t.end() && f->is_object()) fn = &*f;
        if (auto n = fn->find("name"); n != fn->end() && n->is_string() && n->get_ref<const std::string&>() == name)
            return fn;
    }
    return nullptr;
}

// The (normalised) schema of parameter `arg` of `fn`, or null when there is none.
json parameterSchema(const json* fn, const std::string& arg) {
    if (!fn) return nullptr;
    auto params = fn->find("parameters");
    if (params == fn->end() || !params->is_object()) return nullptr;
    auto props = params->find("properties");
    if (props == params->end() || !props->is_object()) return nullptr;
    auto p = props->find(arg);
    if (p == props->end()) return nullptr;
    return typeOnly(normalizeToolSchema(*p));
}

// "/: expected integer, got string" -> "expected integer, got string"; "/a/0: x" -> "at /a/0: x".
std::string violationText(const std::string& v) {
    if (v.rfind("/: ", 0) == 0) return v.substr(3);
    return "at " + v;
}

struct CallCheck {
    ToolCallError error = ToolCallError::None;
    std::string detail;
};

CallCheck checkCall(const json& tools, const ExpectedCall& want, const std::string& name, const json& args) {
    if (name != want.name) {
        std::string d = name + ": expected a call to '" + want.name + "'";
        if (tools.is_array() && !tools.empty() && !findTool(tools, name)) d += " ('" + name + "' is not among the tools offered)";
        return {ToolCallError::WrongFunction, d};
    }
    const json& expectedArgs = want.arguments.is_object() ? want.arguments : json::object();
    auto passed = [&](const std::string& key, const json& list) {
        auto it = args.find(key);
        if (it == args.end()) return false;
        return !(it->is_null() && mayBeOmitted(list));
    };
    for (auto it = expectedArgs.begin(); it != expectedArgs.end(); ++it) {
        const json list = acceptable(it.value());
        if (!mayBeOmitted(list) && !passed(it.key(), list))
            return {ToolCallError::MissingArgument, name + ": missing argument '" + it.key() + "'"};
    }
    for (auto it = args.begin(); it != args.end(); ++it)
        if (!expectedArgs.contains(it.key()))
            return {ToolCallError::ExtraArgument, name + ": unexpected argument '" + it.key() + "'"};
    const json* fn = findTool(tools, name);
    for (auto it = expectedArgs.begin(); it != expectedArgs.end(); ++it) {
        const json list = acceptable(it.value());
        if (!passed(it.key(), list)) continue;
        const json schema = parameterSchema(fn, it.key());
        if (schema.is_null()) continue;
        const auto violations = validateJsonSchema(args.at(it.key()), schema);
        if (!violations.empty())
            return {ToolCallError::WrongType,
                    name + ": '" + it.key() + "' has the wrong type: " + violationText(violations.front())};
    }
    for (auto it = expectedArgs.begin(); it != expectedArgs.end(); ++it) {
        const json list = acceptable(it.value());
        if (!passed(it.key(), list)) continue;
        const json& got = args.at(it.key());
        const bool ok = std::any_of(list.begin(), list.end(), [&](const json& v) { return valueEqual(got, v); });
        if (!ok) {
            json shown = json::array();
            for (const auto& v : list)
                if (!v.is_null()) shown.push_back(v);
            return {ToolCallError::WrongValue,
                    name + ": '" + it.key() + "' is " + brief(got) + ", expected one of " + brief(shown.dump(), 120)};
        }
    }
    return {};
}

std::string callsWord(size_t n) { return std::to_string(n) + (n == 1 ? " call" : " calls"); }

std::string namesOf(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
}

std::string at(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

// One expected call's arguments in the stored form: every value a list. `where` names the place.
Result<json> argumentLists(const json& args, const std::string& where) {
    if (!args.is_object()) return Error{where + ": expected an object"};
    for (auto it = args.begin(); it != args.end(); ++it)
        if (!it->is_array()) return Error{where + "." + it.key() + ": expected a list of acceptable values"};
    return args;
}

Result<std::string> callName(const json& call, const std::string& where) {
    auto n = call.find("name");
    if (n == call.end() || n->is_null()) return Error{where + ": no \"name\""};
    if (!n->is_string() || n->get_ref<const std::string&>().empty())
        return Error{where + ": \"name\" must be a non-empty string"};
    return n->get<std::string>();
}

}  // namespace

std::optional<std::string> toolCallProblem(const json& tools, const ToolCall& call) {
    if (!tools.is_array() || tools.empty()) return std::nullopt;
    const json* fn = findTool(tools, call.name);
    if (!fn) {
        std::string names;
        for (const auto& t : tools) {
            const json& f = t.is_object() && t.contains("function") ? t["function"] : t;
            if (f.is_object() && f.contains("name") && f["name"].is_string())
                names += (names.empty() ? "" : ", ") + f["name"].get<std::string>();
        }
        return "no function named '" + call.name + "' (the tools are: " + names + ")";
    }
    const json args = json::parse(call.arguments, nullptr, false);
    if (args.is_discarded() || !args.is_object()) return std::string("the arguments are not a JSON object");
    auto params = fn->find("parameters");
    if (params == fn->end() || !params->is_object()) return std::nullopt;
    const auto violations = validateJsonSchema(args, normalizeToolSchema(*params));
    if (violations.empty()) return std::nullopt;
    return "arguments: " + violationText(violations.front());
}

const char* toolCallErrorName(ToolCallError e) {
    switch (e) {
    case ToolCallError::None: return "";
    case ToolCallError::NoCall: return "no_call";
    case ToolCallError::UnexpectedCall: return "unexpected_call";
    case ToolCallError::WrongCount: return "wrong_count";
    case ToolCallError::WrongFunction: return "wrong_function";
    case ToolCallError::InvalidJson: return "invalid_json";
    case ToolCallError::MissingArgument: return "missing_argument";
    case ToolCallError::ExtraArgument: return "extra_argument";
    case ToolCallError::WrongType: return "wrong_type";
    case ToolCallError::WrongValue: return "wrong_value";
    case ToolCallError::WrongAnswer: return "wrong_answer";
    }
    return "";
}

std::vector<std::string> toolCallErrorNames() {
    std::vector<std::string> out;
    for (ToolCallError e : kAllErrors) out.emplace_back(toolCallErrorName(e));
    return out;
}

ToolCallVerdict scoreToolCalls(const json& tools, const std::vector<ExpectedCall>& expected,
                               const std::vector<ToolCall>& actual) {
    ToolCallVerdict v;
    std::vector<json> parsed;
    std::vector<std::string> names;
    int invalid = -1;
    for (size_t i = 0; i < actual.size(); ++i) {
        const ToolCall& c = actual[i];
        json args = json::parse(c.arguments, nullptr, false);
        const bool isObject = !args.is_discarded() && args.is_object();
        v.calls.push_back({{"name", c.name}, {"arguments", isObject ? args : json(c.arguments)}});
        parsed.push_back(isObject ? std::move(args) : json::object());
        names.push_back(c.name);
        if (invalid < 0 && (!isObject || c.name.empty())) invalid = int(i);
    }
    auto fail = [&](ToolCallError e, std::string detail) {
        v.pass = false;
        v.error = e;
        v.detail = std::move(detail);
        return v;
    };
    if (expected.empty() && actual.empty()) {
        v.pass = true;
        v.detail = "no call, as expected";
        return v;
    }
    if (expected.empty()) return fail(ToolCallError::UnexpectedCall, "no call was due, got " + callsWord(actual.size()) + ": " + namesOf(names));
    if (actual.empty()) {
        std::vector<std::string> want;
        for (const auto& e : expected) want.push_back(e.name);
        return fail(ToolCallError::NoCall, "expected " + callsWord(expected.size()) + " (" + namesOf(want) + "), got none");
    }
    if (invalid >= 0) {
        const ToolCall& c = actual[size_t(invalid)];
        if (c.name.empty()) return fail(ToolCallError::InvalidJson, "call " + std::to_string(invalid + 1) + " has no function name");
        return fail(ToolCallError::InvalidJson, c.name + ": arguments are not a JSON object: " + (c.arguments.empty() ? std::string("(empty)") : brief(c.arguments)));
    }
    if (expected.size() != actual.size())
        return fail(ToolCallError::WrongCount, "expected " + callsWord(expected.size()) + ", got " + std::to_string(actual.size()));

    const size_t n = expected.size();
    // check[e][a]: expected call e against actual call a (only what an assignment can use).
    const bool anyOrder = n <= 8;
    std::vector<std::vector<CallCheck>> check(n, std::vector<CallCheck>(n));
    for (size_t e = 0; e < n; ++e)
        for (size_t a = 0; a < n; ++a)
            if (anyOrder || a == e) check[e][a] = checkCall(tools, expected[e], actual[a].name, parsed[a]);

    std::vector<size_t> perm(n);
    std::iota(perm.begin(), perm.end(), size_t(0));
    std::vector<size_t> best;
    int bestWorst = 0, bestFailing = 0;
    do {
        int worst = 0, failing = 0;
        for (size_t e = 0; e < n; ++e) {
            const int s = severity(check[e][perm[e]].error);
            worst = std::max(worst, s);
            failing += s > 0 ? 1 : 0;
        }
        if (best.empty() || worst < bestWorst || (worst == bestWorst && failing < bestFailing)) {
            best = perm;
            bestWorst = worst;
            bestFailing = failing;
        }
        if (worst == 0) break;
    } while (anyOrder && std::next_permutation(perm.begin(), perm.end()));

    if (bestWorst == 0) {
        v.pass = true;
        v.detail = n == 1 ? "the call matches" : "all " + std::to_string(n) + " calls match";
        return v;
    }
    for (size_t e = 0; e < n; ++e) {
        const CallCheck& c = check[e][best[e]];
        if (severity(c.error) == bestWorst) return fail(c.error, c.detail);
    }
    return v;  // not reached
}

Result<json> normalizeTools(const json& tools) {
    if (tools.is_null()) return json::array();
    if (!tools.is_array() && !tools.is_object()) return Error{"tools: expected a list of tools or one tool"};
    const json list = tools.is_array() ? tools : json::array({tools});
    json out = json::array();
    for (size_t i = 0; i < list.size(); ++i) {
        const json& t = list[i];
        std::string where = at("tools", i);
        if (!t.is_object()) return Error{where + ": expected an object"};
        json fn;
        if (auto f = t.find("function"); f != t.end() && !t.contains("name")) {
            if (auto ty = t.find("type"); ty != t.end() && *ty != "function")
                return Error{where + ": type " + ty->dump() + " is not supported (only \"function\")"};
            where += ".function";
            if (!f->is_object()) return Error{where + ": expected an object"};
            fn = *f;
        } else {
            fn = t;
        }
        auto name = callName(fn, where);
        if (!name) return name.error();
        if (auto p = fn.find("parameters"); p != fn.end() && !p->is_null()) {
            if (!p->is_object()) return Error{where + ".parameters: expected an object"};
            *p = normalizeToolSchema(*p);
        } else {
            fn["parameters"] = {{"type", "object"}, {"properties", json::object()}};
        }
        out.push_back({{"type", "function"}, {"function", std::move(fn)}});
    }
    return out;
}

json normalizeToolSchema(const json& schema) {
    if (!schema.is_object()) return schema;
    auto mapType = [](const std::string& t, bool& any) -> std::string {
        std::string l;
        for (char c : t) l.push_back(char(std::tolower(static_cast<unsigned char>(c))));
        if (l == "any") any = true;
        if (l == "dict") return "object";
        if (l == "float" || l == "double") return "number";
        if (l == "tuple" || l == "list") return "array";
        if (l == "str") return "string";
        if (l == "int") return "integer";
        if (l == "bool") return "boolean";
        for (const char* known : {"object", "array", "string", "number", "integer", "boolean", "null"})
            if (l == known) return l;
        return t;
    };
    json out = json::object();
    for (auto it = schema.begin(); it != schema.end(); ++it) {
        const std::string& k = it.key();
        const json& v = it.value();
        if (k == "type") {
            bool any = false;
            if (v.is_string()) {
                json t = mapType(v.get<std::string>(), any);
                if (!any) out[k] = std::move(t);
            } else if (v.is_array()) {
                json t = json::array();
                for (const auto& one : v) t.push_back(one.is_string() ? json(mapType(one.get<std::string>(), any)) : one);
                if (!any) out[k] = std::move(t);
            } else {
                out[k] = v;
            }
        } else if ((k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions") && v.is_object()) {
            json m = json::object();
            for (auto p = v.begin(); p != v.end(); ++p) m[p.key()] = normalizeToolSchema(p.value());
            out[k] = std::move(m);
        } else if ((k == "items" || k == "additionalProperties" || k == "not") && v.is_object()) {
            out[k] = normalizeToolSchema(v);
        } else if ((k == "items" || k == "prefixItems" || k == "anyOf" || k == "allOf" || k == "oneOf") && v.is_array()) {
            json list = json::array();
            for (const auto& sub : v) list.push_back(normalizeToolSchema(sub));
            out[k] = std::move(list);
        } else {
            out[k] = v;
        }
    }
    return out;
}

Result<std::vector<ExpectedCall>> expectedCallsFromPlain(const json& j) {
    if (!j.is_array()) return Error{"expected_calls: expected a list of calls"};
    std::vector<ExpectedCall> out;
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string where = at("expected_calls", i);
        const json& c = j[i];
        if (!c.is_object()) return Error{where + ": expected an object"};
        auto name = callName(c, where);
        if (!name) return name.error();
        ExpectedCall e;
        e.name = *name;
        if (auto a = c.find("arguments"); a != c.end() && !a->is_null()) {
            if (!a->is_object()) return Error{where + ".arguments: expected an object"};
            for (auto it = a->begin(); it != a->end(); ++it) e.arguments[it.key()] = json::array({it.value()});
        }
        if (auto a = c.find("accept"); a != c.end() && !a->is_null()) {
            if (!a->is_object()) return Error{where + ".accept: expected an object"};
            for (auto it = a->begin(); it != a->end(); ++it) {
                if (!it->is_array() || it->empty())
                    return Error{where + ".accept." + it.key() + ": expected a list of acceptable values"};
                e.arguments[it.key()] = it.value();
            }
        }
        out.push_back(std::move(e));
    }
    return out;
}

Result<std::vector<ExpectedCall>> expectedCallsFromBfcl(const json& groundTruth) {
    if (!groundTruth.is_array()) return Error{"ground_truth: expected a list of calls"};
    std::vector<ExpectedCall> out;
    for (size_t i = 0; i < groundTruth.size(); ++i) {
        const std::string where = at("ground_truth", i);
        const json& c = groundTruth[i];
        if (!c.is_object() || c.size() != 1)
            return Error{where + ": expected an object with one key, the function's name"};
        ExpectedCall e;
        e.name = c.begin().key();
        if (e.name.empty()) return Error{where + ": the function's name is empty"};
        const json& args = c.begin().value();
        if (!args.is_object()) return Error{where + "." + e.name + ": expected an object of arguments"};
        for (auto it = args.begin(); it != args.end(); ++it) {
            if (!it->is_array())
                return Error{where + "." + e.name + "." + it.key() + ": expected a list of acceptable values"};
            json list = json::array();
            for (const auto& v : *it) list.push_back(v.is_string() && v.get_ref<const std::string&>().empty() ? json(nullptr) : v);
            e.arguments[it.key()] = std::move(list);
        }
        out.push_back(std::move(e));
    }
    return out;
}

json expectedCallsToJson(const std::vector<ExpectedCall>& calls) {
    json out = json::array();
    for (const auto& c : calls)
        out.push_back({{"name", c.name}, {"arguments", c.arguments.is_object() ? c.arguments : json::object()}});
    return out;
}

Result<std::vector<ExpectedCall>> expectedCallsFromJson(const json& j) {
    if (!j.is_array()) return Error{"expected_calls: expected a list of calls"};
    std::vector<ExpectedCall> out;
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string where = at("expected_calls", i);
        const json& c = j[i];
        if (!c.is_object()) return Error{where + ": expected an object"};
        auto name = callName(c, where);
        if (!name) return name.error();
        ExpectedCall e;
        e.name = *name;
        if (auto a = c.find("arguments"); a != c.end() && !a->is_null()) {
            auto args = argumentLists(*a, where + ".arguments");
            if (!args) return args.error();
            e.arguments = std::move(*args);
        }
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace verdict::core
