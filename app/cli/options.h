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

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
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

// A comma-separated list of integers ("128,512") into a std::vector of integers, each in [lo, hi].
template <class S, class Field>
BoundOption<S> intListOption(std::string name, std::string valueName, std::string help, Field field, long long lo,
                             long long hi, char shortName = 0) {
    BoundOption<S> o;
    o.spec = {name, true, valueName, std::move(help), false, shortName};
    o.apply = [name, field, lo, hi](const Args& args, S& s) -> std::optional<std::string> {
        auto v = args.integerList(name, {});
        if (!v) return v.error().message;
        auto& f = field(s);
        f.clear();
        for (long long x : *v) {
            if (x < lo || x > hi) return rangeMessage(name, lo, hi);
            f.push_back(static_cast<typename std::remove_reference_t<decltype(f)>::value_type>(x));
        }
        return std::nullopt;
    };
    o.shownDefault = [field](const S& s) {
        std::string out;
        for (const auto& x : field(s)) out += (out.empty() ? "" : ",") + std::to_string(x);
        return out;
    };
    return o;
}

// A comma-separated list of numbers ("2,5.5") into a std::vector<double>, each in [lo, hi].
template <class S, class Field>
BoundOption<S> numberListOption(std::string name, std::string valueName, std::string help, Field field, double lo,
                                double hi) {
    BoundOption<S> o;
    o.spec = {name, true, valueName, std::move(help)};
    o.apply = [name, field, lo, hi](const Args& args, S& s) -> std::optional<std::string> {
        const std::string text = args.value(name).value_or("");
        auto& f = field(s);
        f.clear();
        size_t pos = 0;
        while (true) {
            const size_t comma = text.find(',', pos);
            const std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            char* end = nullptr;
            const double v = std::strtod(part.c_str(), &end);
            if (part.empty() || *end != '\0') return "--" + name + ": '" + part + "' is not a number";
            if (!(v >= lo && v <= hi))
                return "--" + name + " values must be between " + formatOptionNumber(lo) + " and " + formatOptionNumber(hi);
            f.push_back(v);
            if (comma == std::string::npos) break;
            pos = comma + 1;
        }
        return std::nullopt;
    };
    o.shownDefault = [field](const S& s) {
        std::string out;
        for (double x : field(s)) out += (out.empty() ? "" : ",") + formatOptionNumber(x);
        return out;
    };
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

// Seconds as a person writes them in --help: "1h", "30m", "60s", "0.5s".
inline std::string formatDurationSeconds(double s) {
    auto whole = [s](double unit) { return s >= unit && static_cast<double>(static_cast<long long>(s / unit)) * unit == s; };
    if (whole(3600)) return formatOptionNumber(s / 3600) + "h";
    if (s >= 600 && whole(60)) return formatOptionNumber(s / 60) + "m";
    return formatOptionNumber(s) + "s";
}

// A duration in seconds (a double field): "2h", "30m", "90s", "500ms" or a bare number of seconds
// (parseDuration); > 0, or 0 too when `allowZero` ("0", "0s").
template <class S, class Field>
BoundOption<S> durationOption(std::string name, std::string help, Field field, char shortName = 0, bool allowZero = false) {
    BoundOption<S> o;
    o.spec = {name, true, "T", std::move(help), false, shortName};
    o.apply = [name, field, allowZero](const Args& args, S& s) -> std::optional<std::string> {
        const std::string text = args.value(name).value_or("");
        if (allowZero && (text == "0" || text == "0s" || text == "0ms")) {
            field(s) = 0;
            return std::nullopt;
        }
        auto v = parseDuration(text, name.c_str());
        if (!v) return v.error().message;
        field(s) = *v;
        return std::nullopt;
    };
    o.shownDefault = [field](const S& s) { return formatDurationSeconds(field(s)); };
    return o;
}

// A duration kept as whole milliseconds in an integer field (a request timeout), written as
// durationOption's (> 0; "90s", "2m", "500ms" or bare seconds) and capped at 1e9 ms.
template <class S, class Field>
BoundOption<S> millisecondsOption(std::string name, std::string help, Field field, char shortName = 0) {
    BoundOption<S> o;
    o.spec = {name, true, "T", std::move(help), false, shortName};
    o.apply = [name, field](const Args& args, S& s) -> std::optional<std::string> {
        auto v = parseDuration(args.value(name).value_or(""), name.c_str());
        if (!v) return v.error().message;
        auto& f = field(s);
        f = static_cast<std::remove_reference_t<decltype(f)>>(std::min(*v * 1000, 1e9));
        return std::nullopt;
    };
    o.shownDefault = [field](const S& s) { return formatDurationSeconds(static_cast<double>(field(s)) / 1000.0); };
    return o;
}

// A std::optional<double> field, unset by default, > 0 when given: "--NAME must be a positive
// number" + `unit` (" of milliseconds") otherwise.
template <class S, class Field>
BoundOption<S> positiveNumberOption(std::string name, std::string valueName, std::string help, Field field,
                                    std::string unit = "") {
    BoundOption<S> o;
    o.spec = {name, true, valueName, std::move(help)};
    o.apply = [name, field, unit](const Args& args, S& s) -> std::optional<std::string> {
        auto v = args.number(name, 0);
        if (!v) return v.error().message;
        if (!(*v > 0)) return "--" + name + " must be a positive number" + unit;
        field(s) = *v;
        return std::nullopt;
    };
    o.shownDefault = [field](const S& s) { return field(s) ? formatOptionNumber(*field(s)) : std::string(); };
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

// A std::optional<std::string> field, unset by default: an option whose absence means something
// else than any text (a catalog file: the XDG one; --judge: every judge), so even "" counts as given.
template <class S, class Field>
BoundOption<S> optionalTextOption(std::string name, std::string valueName, std::string help, Field field, char shortName = 0) {
    BoundOption<S> o;
    o.spec = {name, true, valueName, std::move(help), false, shortName};
    o.apply = [name, field](const Args& args, S& s) -> std::optional<std::string> {
        field(s) = args.value(name).value_or("");
        return std::nullopt;
    };
    o.shownDefault = [field](const S& s) { return field(s) ? std::string(*field(s)) : std::string(); };
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

// The options of every command that generates text (run, compare, generate), bound to the
// generation parameters (core/run/model_backend.h GenerationParams) that `gen` picks out of the
// settings: one wording and one set of bounds; the defaults are the struct's.
//   temperatureOption<S>(gen)  --temp
//   samplingOptions<S>(gen)    --top-k, --top-p, --min-p, --repeat-penalty, --stop
template <class S, class G>
BoundOption<S> temperatureOption(G gen) {
    return numberOption<S>("temp", "T", "temperature; 0 = greedy", [gen](auto& s) -> auto& { return gen(s).temperature; },
                           0, 100);
}

template <class S, class G>
OptionTable<S> samplingOptions(G gen) {
    return {
        intOption<S>("top-k", "K", "top-k; 0 = off", [gen](auto& s) -> auto& { return gen(s).topK; }, 0, 1'000'000),
        numberOption<S>("top-p", "P", "top-p; 1 = off", [gen](auto& s) -> auto& { return gen(s).topP; }, 0, 1),
        numberOption<S>("min-p", "P", "min-p; 0 = off", [gen](auto& s) -> auto& { return gen(s).minP; }, 0, 1),
        numberOption<S>("repeat-penalty", "R", "repetition penalty; 1 = off",
                        [gen](auto& s) -> auto& { return gen(s).repeatPenalty; }, 0.01, 100),
        listOption<S>("stop", "STR", "stop generating when the output contains STR (repeatable)",
                      [gen](auto& s) -> auto& { return gen(s).stop; }),
    };
}

// --kv-type f32|f16: the KV cache element type of the commands that run the engine directly
// (generate, bench, perplexity); the default is each command's struct's (bench: f16, as llama-bench).
template <class S, class Field>
BoundOption<S> kvTypeOption(Field field) {
    return textOption<S>("kv-type", "TYPE", "KV cache element type: f32 or f16", field, {"f32", "f16"});
}

// Tables one after the other (shared rows between a command's own).
template <class S>
OptionTable<S> concatOptions(std::vector<OptionTable<S>> parts) {
    OptionTable<S> out;
    for (auto& p : parts)
        for (auto& o : p) out.push_back(std::move(o));
    return out;
}

// The rows of `inner` bound to the part of a bigger struct that `part` picks (a generic lambda
// [](auto& s) -> auto& { return s.assumptions; }): a shared table (the cost assumptions, a
// service's settings) inside a command's own, so that one table declares all its options and
// applyOptions reads them in declaration order.
template <class Outer, class Inner, class Part>
OptionTable<Outer> nestedOptions(const OptionTable<Inner>& inner, Part part) {
    OptionTable<Outer> out;
    for (const auto& o : inner) {
        BoundOption<Outer> b;
        b.spec = o.spec;
        b.apply = [apply = o.apply, part](const Args& args, Outer& s) { return apply(args, part(s)); };
        b.shownDefault = [shown = o.shownDefault, part](const Outer& s) { return shown(part(s)); };
        out.push_back(std::move(b));
    }
    return out;
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
