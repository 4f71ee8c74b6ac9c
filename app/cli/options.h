// Options bound to the fields of a settings struct: one declaration per option (name, value name,
// help, field, bounds) and no default written down anywhere else. The default an option shows in
// --help is the field's value in a default-constructed struct, which is also what the window's
// controls start from; a command reads its options with applyOptions.
//
//   OptionTable<SuiteRunSettings> table = {
//       intOption<SuiteRunSettings>("shots", "K", "few-shot examples", [](auto& s) -> auto& { return s.prompting.shots; }, 0, 64),
//   };
//   auto specs = specsOf(table, SuiteRunSettings{});   // help text with "(default 0)"
//   ... Args::parse(argv, specs) ...
//   if (auto e = applyOptions(table, args, settings)) fail(*e);
#pragma once

#include "cli/args.h"

#include <charconv>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace verdict::cli {

template <class S>
struct BoundOption {
    OptionSpec spec;
    // Reads the option (called only when it was given); returns a usage error message, if any.
    std::function<std::optional<std::string>(const Args&, S&)> apply;
    // The value shown as "(default …)" in --help; "" shows none.
    std::function<std::string(const S&)> shownDefault;
};

template <class S>
using OptionTable = std::vector<BoundOption<S>>;

// A number as a person writes it: 0.95, 1, 1e+06 (shortest form that reads back the same).
inline std::string formatOptionNumber(double v) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// "--NAME must be between LO and HI" ("at least LO" when HI is the type's limit).
inline std::string rangeMessage(const std::string& name, long long lo, long long hi) {
    if (hi == std::numeric_limits<long long>::max() || hi == std::numeric_limits<int32_t>::max())
        return "--" + name + " must be at least " + std::to_string(lo);
    return "--" + name + " must be between " + std::to_string(lo) + " and " + std::to_string(hi);
}

// An integer field (int, int32_t, int64_t, uint64_t …) in [lo, hi].
template <class S, class Field>
BoundOption<S> intOption(std::string name, std::string valueName, std::string help, Field field, long long lo,
                         long long hi, char shortName = 0) {
    BoundOption<S> o;
    o.spec = {name, true, valueName, std::move(help), false, shortName};
    o.apply = [name, field, lo, hi](const Args& args, S& s) -> std::optional<std::string> {
        auto v = args.integer(name, 0);
        if (!v) return v.error().message;
        if (*v < lo || *v > hi) return rangeMessage(name, lo, hi);
        auto& f = field(s);
        f = static_cast<std::remove_reference_t<decltype(f)>>(*v);
        return std::nullopt;
    };
    o.shownDefault = [field](const S& s) { return std::to_string(field(s)); };
    return o;
}

// A std::optional<int64_t> field, unset by default, in [lo, hi] when given.
template <class S, class Field>
BoundOption<S> optionalIntOption(std::string name, std::string valueName, std::string help, Field field, long long lo,
                                 long long hi) {
    BoundOption<S> o;
    o.spec = {name, true, valueName, std::move(help)};
    o.apply = [name, field, lo, hi](const Args& args, S& s) -> std::optional<std::string> {
        auto v = args.integer(name, 0);
        if (!v) return v.error().message;
        if (*v < lo || *v > hi) return rangeMessage(name, lo, hi);
        field(s) = *v;
        return std::nullopt;
    };
    o.shownDefault = [field](const S& s) { return field(s) ? std::to_string(*field(s)) : std::string(); };
    return o;
}

// A double field in [lo, hi].
template <class S, class Field>
BoundOption<S> numberOption(std::string name, std::string valueName, std::string help, Field field, double lo, double hi) {
    BoundOption<S> o;
    o.spec = {name, true, valueName, std::move(help)};
    o.apply = [name, field, lo, hi](const Args& args, S& s) -> std::optional<std::string> {
        auto v = args.number(name, 0);
        if (!v) return v.error().message;
        if (!(*v >= lo && *v <= hi))
            return "--" + name + " must be between " + formatOptionNumber(lo) + " and " + formatOptionNumber(hi);
        field(s) = *v;
        return std::nullopt;
    };
    o.shownDefault = [field](const S& s) { return formatOptionNumber(field(s)); };
    return o;
}

// A string field; `choices` non-empty: one of them.
template <class S, class Field>
BoundOption<S> textOption(std::string name, std::string valueName, std::string help, Field field,
                          std::vector<std::string> choices = {}, char shortName = 0) {
    BoundOption<S> o;
    o.spec = {name, true, valueName, std::move(help), false, shortName};
    o.apply = [name, field, choices](const Args& args, S& s) -> std::optional<std::string> {
        std::string v = args.value(name).value_or("");
        if (!choices.empty()) {
            bool known = false;
            std::string list;
            for (const auto& c : choices) {
                known = known || c == v;
                list += (list.empty() ? "" : choices.size() > 2 ? ", " : " or ") + c;
            }
            if (!known) return "--" + name + " must be " + list;
        }
        field(s) = std::move(v);
        return std::nullopt;
    };
    o.shownDefault = [field](const S& s) { return std::string(field(s)); };
    return o;
}

// A repeatable string option appended to a vector field.
template <class S, class Field>
BoundOption<S> listOption(std::string name, std::string valueName, std::string help, Field field) {
    BoundOption<S> o;
    o.spec = {name, true, valueName, std::move(help), true};
    o.apply = [name, field](const Args& args, S& s) -> std::optional<std::string> {
        for (auto& v : args.values(name)) field(s).push_back(v);
        return std::nullopt;
    };
    o.shownDefault = [](const S&) { return std::string(); };
    return o;
}

// A flag: `set` changes the struct when it is given.
template <class S>
BoundOption<S> flagOption(std::string name, std::string help, std::function<void(S&)> set) {
    BoundOption<S> o;
    o.spec = {name, false, "", std::move(help)};
    o.apply = [set](const Args&, S& s) -> std::optional<std::string> {
        set(s);
        return std::nullopt;
    };
    o.shownDefault = [](const S&) { return std::string(); };
    return o;
}

// The specs for Args::parse and --help, each help ending with the default of `defaults`.
template <class S>
std::vector<OptionSpec> specsOf(const OptionTable<S>& table, const S& defaults) {
    std::vector<OptionSpec> specs;
    for (const auto& o : table) {
        OptionSpec spec = o.spec;
        if (std::string d = o.shownDefault(defaults); !d.empty()) spec.help += " (default " + d + ")";
        specs.push_back(std::move(spec));
    }
    return specs;
}

// Applies every option that was given, in declaration order; the first usage error, if any.
template <class S>
std::optional<std::string> applyOptions(const OptionTable<S>& table, const Args& args, S& s) {
    for (const auto& o : table)
        if (args.has(o.spec.name))
            if (auto e = o.apply(args, s)) return e;
    return std::nullopt;
}

}  // namespace verdict::cli
