#include "cli/args.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>

namespace verdict::cli {

Result<Args> Args::parse(const std::vector<std::string>& argv, const std::vector<OptionSpec>& specs) {
    Args out;
    bool optionsEnded = false;
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        const bool shortForm = !optionsEnded && a.size() == 2 && a[0] == '-' && std::isalpha(static_cast<unsigned char>(a[1]));
        if (!shortForm && (optionsEnded || a.size() < 2 || a.rfind("--", 0) != 0)) {
            if (a == "--") { optionsEnded = true; continue; }
            out.m_positionals.push_back(a);
            continue;
        }
        std::string name = shortForm ? std::string() : a.substr(2);
        std::optional<std::string> inlineValue;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        const OptionSpec* spec = nullptr;
        for (const auto& s : specs)
            if (shortForm ? s.shortName == a[1] : s.name == name) spec = &s;
        if (!spec) return Error{"unknown option " + (shortForm ? a : "--" + name)};
        name = spec->name;
        if (!spec->repeatable && out.m_values.count(name))
            return Error{"option --" + name + " given twice"};
        if (spec->takesValue) {
            if (inlineValue) {
                out.m_values[name].push_back(*inlineValue);
            } else {
                if (i + 1 >= argv.size()) return Error{"option --" + name + " needs a value (" + spec->valueName + ")"};
                out.m_values[name].push_back(argv[++i]);
            }
        } else {
            if (inlineValue) return Error{"option --" + name + " takes no value"};
            out.m_values[name].push_back("");
        }
    }
    return out;
}

std::optional<std::string> Args::value(const std::string& name) const {
    auto it = m_values.find(name);
    if (it == m_values.end() || it->second.empty()) return std::nullopt;
    return it->second.back();
}

std::vector<std::string> Args::values(const std::string& name) const {
    auto it = m_values.find(name);
    return it == m_values.end() ? std::vector<std::string>{} : it->second;
}

namespace {
Result<long long> parseInteger(const std::string& name, const std::string& text) {
    long long v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || text.empty())
        return Error{"option --" + name + ": '" + text + "' is not an integer"};
    return v;
}
}  // namespace

Result<long long> Args::integer(const std::string& name, long long fallback) const {
    auto v = value(name);
    if (!v) return fallback;
    return parseInteger(name, *v);
}

Result<double> Args::number(const std::string& name, double fallback) const {
    auto v = value(name);
    if (!v) return fallback;
    try {
        size_t used = 0;
        double d = std::stod(*v, &used);
        if (used != v->size()) throw std::invalid_argument("trailing");
        return d;
    } catch (const std::exception&) {
        return Error{"option --" + name + ": '" + *v + "' is not a number"};
    }
}

Result<std::vector<long long>> Args::integerList(const std::string& name, std::vector<long long> fallback) const {
    auto v = value(name);
    if (!v) return fallback;
    std::vector<long long> out;
    std::stringstream ss(*v);
    std::string item;
    while (std::getline(ss, item, ',')) {
        auto n = parseInteger(name, item);
        if (!n) return n.error();
        out.push_back(*n);
    }
    if (out.empty()) return Error{"option --" + name + " is empty"};
    return out;
}

std::string formatOptions(const std::vector<OptionSpec>& specs) {
    std::string out;
    for (const auto& s : specs) {
        std::string left = std::string(s.shortName ? std::string("  -") + s.shortName + ", --" : "  --") + s.name
            + (s.takesValue ? " " + s.valueName : "");
        if (left.size() < 26) left.resize(26, ' ');
        else left += "  ";
        out += left + s.help + "\n";
    }
    return out;
}

Result<double> parseDuration(const std::string& text, const char* option) {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    const std::string unit = end ? end : "";
    if (end == text.c_str() || !(v > 0) || !std::isfinite(v))
        return Error{std::string("--") + option + ": '" + text + "' is not a duration"};
    if (unit == "ms") v /= 1000;
    else if (unit == "m") v *= 60;
    else if (unit == "h") v *= 3600;
    else if (!unit.empty() && unit != "s") return Error{std::string("--") + option + ": unknown unit '" + unit + "' (ms, s, m, h)"};
    return v;
}

OptionSpec dbOption(const std::string& forWhat) {
    return {"db", true, "PATH",
            "results database" + (forWhat.empty() ? std::string() : " " + forWhat) +
                " (default: $VERDICT_DB, else the XDG data dir)"};
}

OptionSpec jsonOption(std::string help) { return {"json", false, "", std::move(help)}; }

OptionSpec helpOption() { return {"help", false, "", "show this help", false, 'h'}; }

OptionSpec threadsOption(const std::string& whose) {
    return {"threads", true, "N", (whose.empty() ? std::string() : whose + ": ") + kThreadsHelp + " (default 0)", false, 't'};
}

Result<int> threadsValue(const Args& args) {
    auto v = args.integer("threads", 0);
    if (!v) return v.error();
    if (*v < 0 || *v > kMaxThreads) return Error{"--threads must be between 0 and " + std::to_string(kMaxThreads)};
    return static_cast<int>(*v);
}

}  // namespace verdict::cli
