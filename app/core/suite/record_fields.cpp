#include "core/suite/record_fields.h"

#include "core/suite/utf8_text.h"

namespace verdict::core::fields {

namespace {
bool equalsIgnoreCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = char(x + 32);
        if (y >= 'A' && y <= 'Z') y = char(y + 32);
        if (x != y) return false;
    }
    return true;
}
}  // namespace

std::string lowerAscii(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = char(c + 32);
    return out;
}

const nlohmann::json* find(const nlohmann::json& obj, std::string_view name) {
    if (!obj.is_object()) return nullptr;
    auto it = obj.find(name);
    if (it != obj.end()) return &*it;
    for (auto i = obj.begin(); i != obj.end(); ++i)
        if (equalsIgnoreCase(i.key(), name)) return &i.value();
    return nullptr;
}

const nlohmann::json* findAny(const nlohmann::json& obj, std::initializer_list<std::string_view> names, std::string* which) {
    for (auto n : names)
        if (const auto* v = find(obj, n)) {
            if (which) *which = std::string(n);
            return v;
        }
    return nullptr;
}

const nlohmann::json* findPath(const nlohmann::json& obj, std::string_view path) {
    if (const auto* whole = find(obj, path)) return whole;  // a key may itself contain dots
    const nlohmann::json* cur = &obj;
    size_t start = 0;
    while (cur && start <= path.size()) {
        const size_t dot = path.find('.', start);
        const auto part = path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        if (cur->is_array()) {
            size_t idx = 0;
            bool numeric = !part.empty();
            for (char c : part) numeric = numeric && c >= '0' && c <= '9';
            if (!numeric) return nullptr;
            for (char c : part) idx = idx * 10 + size_t(c - '0');
            cur = idx < cur->size() ? &(*cur)[idx] : nullptr;
        } else {
            cur = find(*cur, part);
        }
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    return cur;
}

std::optional<std::string> scalarText(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer() || v.is_number_unsigned() || v.is_boolean()) return v.dump();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        // Range first: converting a double outside int64's range is undefined (fuzz_suite_import
        // found 9.999e+83 as an answer).
        if (d > -1e15 && d < 1e15 && d == double(int64_t(d))) return std::to_string(int64_t(d));
        return v.dump();
    }
    return std::nullopt;
}

std::optional<std::string> takeText(nlohmann::json& v) {
    if (v.is_string()) return std::move(v.get_ref<std::string&>());
    return scalarText(v);
}

std::vector<std::string> textList(const nlohmann::json& v) {
    std::vector<std::string> out;
    if (v.is_array()) {
        for (const auto& e : v)
            if (auto t = scalarText(e)) out.push_back(*t);
    } else if (auto t = scalarText(v)) {
        out.push_back(*t);
    }
    return out;
}

bool isBlank(std::string_view s) { return utf8::trim(s).empty(); }

nlohmann::json rest(const nlohmann::json& obj, const std::vector<std::string>& used) {
    nlohmann::json out = nlohmann::json::object();
    if (!obj.is_object()) return out;
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        bool skip = false;
        for (const auto& u : used)
            if (equalsIgnoreCase(it.key(), u)) {
                skip = true;
                break;
            }
        if (!skip) out[it.key()] = it.value();
    }
    return out;
}

}  // namespace verdict::core::fields
