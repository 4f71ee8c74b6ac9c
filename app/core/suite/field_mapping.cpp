#include "core/suite/field_mapping.h"

#include "core/suite/utf8_text.h"

namespace verdict::core {

namespace {
constexpr std::string_view kTargets[] = {"prompt", "reference", "category", "id", "choices", "answer", "input", "system"};

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    size_t start = 0;
    for (;;) {
        const size_t at = s.find(sep, start);
        out.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
        if (at == std::string_view::npos) break;
        start = at + 1;
    }
    return out;
}
}  // namespace

Result<FieldMapping> FieldMapping::parse(std::string_view spec) {
    FieldMapping m;
    for (auto entry : split(spec, ',')) {
        entry = utf8::trim(entry);
        if (entry.empty()) continue;
        const size_t eq = entry.find('=');
        if (eq == std::string_view::npos)
            return Error{"field mapping entry '" + std::string(entry) + "' has no '=' (expected target=source)"};
        std::string target(utf8::trim(entry.substr(0, eq)));
        for (char& c : target)
            if (c >= 'A' && c <= 'Z') c = char(c + 32);
        if (target == "references" || target == "expected" || target == "target") target = "reference";
        if (target == "question") target = "prompt";
        bool known = false;
        for (auto t : kTargets) known = known || t == target;
        if (!known)
            return Error{"field mapping: unknown target '" + target +
                         "' (known: prompt, reference, category, id, choices, answer, input, system)"};
        const auto sourceSpec = utf8::trim(entry.substr(eq + 1));
        for (auto src : split(sourceSpec, '|')) {
            src = utf8::trim(src);
            if (src.empty()) return Error{"field mapping entry '" + std::string(entry) + "' has an empty source"};
            m.entries.emplace_back(target, std::string(src));
        }
    }
    if (m.entries.empty()) return Error{"field mapping is empty"};
    if (!m.has("prompt") && !m.has("input")) return Error{"field mapping needs a prompt (or input) source"};
    return m;
}

std::vector<std::string> FieldMapping::sources(std::string_view target) const {
    std::vector<std::string> out;
    for (const auto& [t, s] : entries)
        if (t == target) out.push_back(s);
    return out;
}

std::string FieldMapping::toString() const {
    std::string out;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) out += entries[i].first == entries[i - 1].first ? "|" : ",";
        if (i == 0 || entries[i].first != entries[i - 1].first) out += entries[i].first + "=";
        out += entries[i].second;
    }
    return out;
}

}  // namespace verdict::core
