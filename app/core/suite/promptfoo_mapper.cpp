// promptfoo test cases -> SuiteItem: {"vars": {...}, "assert": [{"type": ..., "value": ...}]}
// records, or CSV rows whose plain columns are vars and whose __expected columns are asserts
// ("contains: Paris", "regex: ^\\d+$", "is-json", plain text = equals).
//
// Supported assert types (and their not- forms): equals, contains, icontains, contains-any,
// contains-all, icontains-any, icontains-all, starts-with, regex, is-json, contains-json, bleu.
// Others (llm-rubric, javascript, python, similar, ...) need a model or a JS runtime: the item
// is kept and each such assert is reported as a warning, never silently ignored.
#include "core/suite/item_mapper.h"

#include "core/suite/record_fields.h"
#include "core/suite/utf8_text.h"

namespace verdict::core {

namespace {

MapOutcome reject(std::string why) {
    MapOutcome out;
    out.reason = std::move(why);
    return out;
}

std::string varText(const nlohmann::json& v) {
    if (auto t = fields::scalarText(v)) return *t;
    if (v.is_null()) return "";
    return v.dump();
}

// {{ name }} -> the var's text; unknown names are left as written so the problem stays visible.
std::string substituteVars(const std::string& text, const nlohmann::json& vars) {
    std::string out;
    size_t pos = 0;
    for (;;) {
        const size_t open = text.find("{{", pos);
        if (open == std::string::npos) break;
        const size_t close = text.find("}}", open + 2);
        if (close == std::string::npos) break;
        const std::string name(utf8::trim(std::string_view(text).substr(open + 2, close - open - 2)));
        const auto* v = fields::findPath(vars, name);
        out.append(text, pos, open - pos);
        if (v) out += varText(*v);
        else out.append(text, open, close + 2 - open);
        pos = close + 2;
    }
    out.append(text, pos, std::string::npos);
    return out;
}

nlohmann::json substituteJson(const nlohmann::json& v, const nlohmann::json& vars) {
    if (v.is_string()) return substituteVars(v.get<std::string>(), vars);
    if (v.is_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& e : v) out.push_back(substituteJson(e, vars));
        return out;
    }
    return v;
}

// "a, b,c" or ["a","b"] -> ["a","b","c"] (promptfoo accepts both for the -any/-all forms).
nlohmann::json valueList(const nlohmann::json& v) {
    if (v.is_array()) return v;
    nlohmann::json out = nlohmann::json::array();
    if (!v.is_string()) return out;
    const std::string s = v.get<std::string>();
    size_t start = 0;
    for (;;) {
        const size_t comma = s.find(',', start);
        const auto part = utf8::trim(std::string_view(s).substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (!part.empty()) out.push_back(std::string(part));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

// One promptfoo assertion -> a ScorerSpec, or a warning when the type is not supported here.
bool convertAssert(std::string type, const nlohmann::json& value, const nlohmann::json* threshold,
                   const nlohmann::json& vars, ScorerSpec& spec, std::vector<std::string>& references,
                   std::string& warning) {
    type = fields::lowerAscii(std::string(utf8::trim(type)));
    bool negate = false;
    if (type.rfind("not-", 0) == 0) {
        negate = true;
        type = type.substr(4);
    }
    const nlohmann::json v = substituteJson(value, vars);
    nlohmann::json params = nlohmann::json::object();
    if (type == "equals") {
        if (!v.is_string() && !v.is_number()) {
            warning = "assert 'equals' with a non-text value is not supported; skipped";
            return false;
        }
        spec.name = "exact";
        params["normalize"] = false;
        params["value"] = fields::scalarText(v).value_or("");
        if (!negate) references.push_back(params["value"].get<std::string>());
    } else if (type == "contains" || type == "icontains") {
        spec.name = "contains";
        params["value"] = fields::scalarText(v).value_or("");
        params["ignore_case"] = type[0] == 'i';
    } else if (type == "contains-any" || type == "contains-all" || type == "icontains-any" || type == "icontains-all") {
        spec.name = "contains";
        params["values"] = valueList(v);
        params["mode"] = type.size() >= 4 && type.compare(type.size() - 3, 3, "all") == 0 ? "all" : "any";
        params["ignore_case"] = type[0] == 'i';
    } else if (type == "starts-with") {
        spec.name = "starts_with";
        params["value"] = fields::scalarText(v).value_or("");
    } else if (type == "regex") {
        spec.name = "regex";
        params["pattern"] = fields::scalarText(v).value_or("");
    } else if (type == "is-json" || type == "contains-json") {
        spec.name = "json_valid";
        if (v.is_object()) params["schema"] = v;
        if (type == "contains-json") params["extract"] = true;
    } else if (type == "bleu") {
        spec.name = "bleu";
        params["reference"] = fields::scalarText(v).value_or("");
        params["threshold"] = 0.5;  // promptfoo's default for bleu
    } else {
        warning = "assert type '" + std::string(negate ? "not-" : "") + type +
                  "' is not supported (needs a model or a script runtime); skipped";
        return false;
    }
    if (threshold && threshold->is_number()) params["threshold"] = threshold->get<double>();
    if (negate) params["negate"] = true;
    spec.params = std::move(params);
    return true;
}

// A CSV __expected cell: "contains: Paris", "not-icontains: x", "similar(0.8): text", "is-json",
// anything else = equals.
void parseExpectedCell(const std::string& cell, std::string& type, std::string& value, nlohmann::json& threshold) {
    static const char* const kTypes[] = {
        "equals", "contains", "icontains", "contains-any", "contains-all", "icontains-any", "icontains-all",
        "starts-with", "regex", "is-json", "contains-json", "bleu", "javascript", "python", "grade", "llm-rubric",
        "similar", "levenshtein", "fn", "eval", "rouge-n", "is-xml", "contains-xml", "is-sql", "perplexity",
        "model-graded-closedqa", "factuality", "answer-relevance", "is-valid-openai-tools-call"};
    const std::string t(utf8::trim(cell));
    const size_t colon = t.find(':');
    std::string head = fields::lowerAscii(colon == std::string::npos ? t : t.substr(0, colon));
    std::string rest = colon == std::string::npos ? "" : std::string(utf8::trim(std::string_view(t).substr(colon + 1)));
    if (const size_t paren = head.find('('); paren != std::string::npos && head.back() == ')') {
        threshold = std::atof(head.substr(paren + 1).c_str());
        head = head.substr(0, paren);
    }
    std::string bare = head.rfind("not-", 0) == 0 ? head.substr(4) : head;
    bool known = false;
    for (const char* k : kTypes) known = known || bare == k;
    if (known && (colon != std::string::npos || bare == "is-json" || bare == "contains-json" || bare == "is-xml")) {
        if (bare == "fn" || bare == "eval") head = (head.rfind("not-", 0) == 0 ? "not-" : "") + std::string("javascript");
        if (bare == "grade") head = "llm-rubric";
        type = head;
        value = rest;
        return;
    }
    type = "equals";
    value = t;
}

}  // namespace

MapOutcome mapPromptfoo(nlohmann::json& r, int line, const MapContext& ctx) {
    MapOutcome out;
    SuiteItem& item = out.item;
    nlohmann::json vars = nlohmann::json::object();
    nlohmann::json meta = nlohmann::json::object();
    std::vector<std::pair<std::string, nlohmann::json>> asserts;  // (type, value, threshold) as json
    std::string description, prefix, suffix;

    const auto* varsObj = fields::find(r, "vars");
    if (varsObj && varsObj->is_object()) {  // YAML/JSON test case
        vars = *varsObj;
        if (const auto* a = fields::find(r, "assert")) {
            const nlohmann::json list = a->is_array() ? *a : nlohmann::json::array({*a});
            for (const auto& one : list) {
                const auto* type = one.is_object() ? fields::find(one, "type") : nullptr;
                if (!type || !type->is_string()) return reject("an assert has no type");
                asserts.emplace_back(type->get<std::string>(), one);
            }
        }
        if (const auto* d = fields::find(r, "description")) description = fields::scalarText(*d).value_or("");
        if (const auto* m = fields::find(r, "metadata"); m && m->is_object()) meta = *m;
        for (auto it = r.begin(); it != r.end(); ++it) {
            const std::string k = fields::lowerAscii(it.key());
            if (k != "vars" && k != "assert" && k != "description" && k != "metadata") meta[it.key()] = it.value();
        }
    } else {  // CSV row: __expected*, __description, __metadata:key, __prefix, __suffix; the rest are vars
        for (auto it = r.begin(); it != r.end(); ++it) {
            const std::string k = fields::lowerAscii(it.key());
            const std::string cell = varText(it.value());
            if (k.rfind("__expected", 0) == 0) {
                if (fields::isBlank(cell)) continue;
                std::string type, value;
                nlohmann::json threshold;
                parseExpectedCell(cell, type, value, threshold);
                nlohmann::json one = {{"type", type}, {"value", value}};
                if (!threshold.is_null()) one["threshold"] = threshold;
                asserts.emplace_back(type, one);
            } else if (k == "__description") {
                description = cell;
            } else if (k.rfind("__metadata:", 0) == 0) {
                meta[it.key().substr(11)] = cell;
            } else if (k == "__prefix") {
                prefix = cell;
            } else if (k == "__suffix") {
                suffix = cell;
            } else if (k.rfind("__", 0) == 0) {
                meta[it.key()] = it.value();
            } else {
                vars[it.key()] = it.value();
            }
        }
    }

    // The prompt: a template given at import, else a prompt-like var, else the only var.
    const std::string& tmpl = ctx.promptTemplate;
    if (!tmpl.empty()) {
        item.prompt = substituteVars(tmpl, vars);
        if (const size_t open = item.prompt.find("{{"); open != std::string::npos && item.prompt.find("}}", open) != std::string::npos) {
            const size_t close = item.prompt.find("}}", open);
            return reject("the prompt template uses " + item.prompt.substr(open, close + 2 - open) + " but the test has no such var");
        }
    } else if (const auto* p = fields::findAny(vars, {"prompt", "question", "input", "query", "text"})) {
        item.prompt = varText(*p);
    } else if (vars.size() == 1) {
        item.prompt = varText(vars.begin().value());
    } else {
        std::string names;
        for (auto it = vars.begin(); it != vars.end(); ++it) names += (names.empty() ? "" : ", ") + it.key();
        return reject("no prompt: the vars (" + (names.empty() ? std::string("none") : names) +
                      ") hold no prompt/question/input; import with a prompt template");
    }
    item.prompt = prefix + item.prompt + suffix;
    if (fields::isBlank(item.prompt)) return reject("no prompt (empty after substituting vars)");

    for (const auto& [type, one] : asserts) {
        ScorerSpec spec;
        std::string warning;
        const nlohmann::json value = one.contains("value") ? one["value"] : nlohmann::json();
        const nlohmann::json* threshold = one.contains("threshold") ? &one["threshold"] : nullptr;
        if (convertAssert(type, value, threshold, vars, spec, item.references, warning)) item.scorers.push_back(std::move(spec));
        else out.warnings.push_back(warning);
    }
    item.metadata = std::move(meta);
    item.metadata["vars"] = vars;
    if (!description.empty()) item.metadata["description"] = description;
    std::vector<std::string> used;
    fillIdAndCategory(item, item.metadata, line, ctx, used);  // metadata.id / metadata.category when present
    item.sourceLine = line;
    out.ok = true;
    return out;
}

}  // namespace verdict::core
