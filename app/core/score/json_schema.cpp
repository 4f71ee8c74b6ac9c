#include "core/score/json_schema.h"

#include "core/suite/utf8_text.h"

#include <cmath>
#include <regex>

namespace verdict::core {

namespace {

bool isType(const nlohmann::json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    if (t == "number") return v.is_number();
    if (t == "integer") {
        if (v.is_number_integer() || v.is_number_unsigned()) return true;
        if (v.is_number_float()) {
            const double d = v.get<double>();
            return std::isfinite(d) && d == std::floor(d);
        }
    }
    return false;
}

std::string brief(const nlohmann::json& v) {
    std::string s = v.dump();
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
}

void validate(const nlohmann::json& v, const nlohmann::json& schema, const std::string& path, std::vector<std::string>& errors) {
    if (schema.is_boolean()) {
        if (!schema.get<bool>()) errors.push_back(path + ": no value is allowed here");
        return;
    }
    if (!schema.is_object()) return;
    const std::string at = path.empty() ? "/" : path;
    if (auto t = schema.find("type"); t != schema.end()) {
        bool ok = false;
        std::string names;
        if (t->is_string()) {
            ok = isType(v, t->get<std::string>());
            names = t->get<std::string>();
        } else if (t->is_array()) {
            for (const auto& one : *t)
                if (one.is_string()) {
                    ok = ok || isType(v, one.get<std::string>());
                    names += (names.empty() ? "" : "|") + one.get<std::string>();
                }
        } else {
            ok = true;
        }
        if (!ok) {
            errors.push_back(at + ": expected " + names + ", got " + v.type_name());
            return;  // the other keywords would only add noise
        }
    }
    if (auto e = schema.find("enum"); e != schema.end() && e->is_array()) {
        bool found = false;
        for (const auto& option : *e) found = found || option == v;
        if (!found) errors.push_back(at + ": " + brief(v) + " is not one of " + brief(*e));
    }
    if (auto c = schema.find("const"); c != schema.end() && *c != v) errors.push_back(at + ": expected " + brief(*c));
    if (v.is_number()) {
        const double d = v.get<double>();
        auto num = [&](const char* key, auto bad, const char* what) {
            if (auto it = schema.find(key); it != schema.end() && it->is_number() && bad(d, it->get<double>()))
                errors.push_back(at + ": " + brief(v) + " is " + what + " " + brief(*it));
        };
        num("minimum", [](double x, double m) { return x < m; }, "less than minimum");
        num("maximum", [](double x, double m) { return x > m; }, "greater than maximum");
        num("exclusiveMinimum", [](double x, double m) { return x <= m; }, "not greater than exclusiveMinimum");
        num("exclusiveMaximum", [](double x, double m) { return x >= m; }, "not less than exclusiveMaximum");
    }
    if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        const double len = double(utf8::codePointCount(s));
        if (auto it = schema.find("minLength"); it != schema.end() && it->is_number() && len < it->get<double>())
            errors.push_back(at + ": string shorter than minLength " + brief(*it));
        if (auto it = schema.find("maxLength"); it != schema.end() && it->is_number() && len > it->get<double>())
            errors.push_back(at + ": string longer than maxLength " + brief(*it));
        if (auto it = schema.find("pattern"); it != schema.end() && it->is_string()) {
            try {
                if (!std::regex_search(s, std::regex(it->get<std::string>(), std::regex::ECMAScript)))
                    errors.push_back(at + ": does not match pattern " + it->get<std::string>());
            } catch (const std::regex_error&) {
                errors.push_back(at + ": schema pattern does not compile: " + it->get<std::string>());
            }
        }
    }
    if (v.is_array()) {
        if (auto it = schema.find("minItems"); it != schema.end() && it->is_number() && double(v.size()) < it->get<double>())
            errors.push_back(at + ": fewer than minItems " + brief(*it));
        if (auto it = schema.find("maxItems"); it != schema.end() && it->is_number() && double(v.size()) > it->get<double>())
            errors.push_back(at + ": more than maxItems " + brief(*it));
        if (auto it = schema.find("items"); it != schema.end() && (it->is_object() || it->is_boolean()))
            for (size_t i = 0; i < v.size(); ++i) validate(v[i], *it, path + "/" + std::to_string(i), errors);
    }
    if (v.is_object()) {
        const auto props = schema.find("properties");
        if (auto req = schema.find("required"); req != schema.end() && req->is_array())
            for (const auto& name : *req)
                if (name.is_string() && !v.contains(name.get<std::string>()))
                    errors.push_back(at + ": missing required property '" + name.get<std::string>() + "'");
        for (auto it = v.begin(); it != v.end(); ++it) {
            const bool declared = props != schema.end() && props->is_object() && props->contains(it.key());
            if (declared) {
                validate(it.value(), (*props)[it.key()], path + "/" + it.key(), errors);
            } else if (auto ap = schema.find("additionalProperties"); ap != schema.end()) {
                if (ap->is_boolean() && !ap->get<bool>()) errors.push_back(at + ": property '" + it.key() + "' is not allowed");
                else if (ap->is_object()) validate(it.value(), *ap, path + "/" + it.key(), errors);
            }
        }
    }
    auto countValid = [&](const nlohmann::json& list) {
        int n = 0;
        for (const auto& sub : list) {
            std::vector<std::string> e;
            validate(v, sub, path, e);
            if (e.empty()) ++n;
        }
        return n;
    };
    if (auto a = schema.find("allOf"); a != schema.end() && a->is_array())
        for (const auto& sub : *a) validate(v, sub, path, errors);
    if (auto a = schema.find("anyOf"); a != schema.end() && a->is_array() && countValid(*a) == 0)
        errors.push_back(at + ": matches none of anyOf");
    if (auto a = schema.find("oneOf"); a != schema.end() && a->is_array()) {
        const int n = countValid(*a);
        if (n != 1) errors.push_back(at + ": matches " + std::to_string(n) + " of oneOf (exactly 1 required)");
    }
}


// Length of the balanced {...} / [...] starting at text[0], or 0.
size_t balancedSpan(std::string_view text) {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\') ++i;
            else if (c == '"') inString = false;
            continue;
        }
        if (c == '"') inString = true;
        else if (c == '{' || c == '[') ++depth;
        else if (c == '}' || c == ']') {
            if (--depth == 0) return i + 1;
        }
    }
    return 0;
}

}  // namespace

bool parseJsonText(std::string_view text, nlohmann::json& out, std::string* error) {
    try {
        out = nlohmann::json::parse(text);
        return true;
    } catch (const std::exception& e) {
        if (error) {
            *error = e.what();
            if (const size_t cut = error->find("] "); cut != std::string::npos && (*error)[0] == '[') *error = error->substr(cut + 2);
        }
        return false;
    }
}

std::vector<std::string> validateJsonSchema(const nlohmann::json& value, const nlohmann::json& schema) {
    std::vector<std::string> errors;
    validate(value, schema, "", errors);
    return errors;
}

bool extractJson(std::string_view text, nlohmann::json& out, std::string& error) {
    const std::string_view trimmed = utf8::trim(text);
    if (parseJsonText(trimmed, out, &error)) return true;
    const std::string whole = error;
    if (const size_t fence = trimmed.find("```"); fence != std::string_view::npos) {
        size_t start = trimmed.find('\n', fence);
        const size_t end = start == std::string_view::npos ? std::string_view::npos : trimmed.find("```", start);
        if (end != std::string_view::npos && parseJsonText(trimmed.substr(start + 1, end - start - 1), out, nullptr)) return true;
    }
    int attempts = 0;
    for (size_t i = 0; i < trimmed.size() && attempts < 16; ++i) {
        if (trimmed[i] != '{' && trimmed[i] != '[') continue;
        ++attempts;
        const size_t len = balancedSpan(trimmed.substr(i));
        if (len > 0 && parseJsonText(trimmed.substr(i, len), out, nullptr)) return true;
    }
    error = "no JSON value found (" + whole + ")";
    return false;
}

}  // namespace verdict::core
