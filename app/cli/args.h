// Small command-line parser shared by every `verdict` subcommand.
//
// Each command declares its options; anything undeclared is a usage error naming the option.
// Forms: --name value, --name=value, boolean --flag, -x for an option with shortName 'x' (value
// in the next argument), and positionals. "--" ends options; a lone "-" and negative numbers are
// positionals (stdin); an undeclared "-x" (x a letter) is a usage error.
#pragma once

#include "verdict/engine/result.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace verdict::cli {

struct OptionSpec {
    std::string name;     // without the leading "--"
    bool takesValue = false;
    std::string valueName;  // e.g. "N" (help text only)
    std::string help;
    bool repeatable = false;  // --run A --run B
    char shortName = 0;       // optional single-dash alias, e.g. 'p' for -p (0: none)
};

class Args {
public:
    // Parses argv after the subcommand name.
    static Result<Args> parse(const std::vector<std::string>& argv, const std::vector<OptionSpec>& specs);

    const std::vector<std::string>& positionals() const { return m_positionals; }
    bool has(const std::string& name) const { return m_values.count(name) > 0; }
    std::optional<std::string> value(const std::string& name) const;
    std::vector<std::string> values(const std::string& name) const;  // repeatable options

    // Typed reads with a usage error naming the option when the text is not a number.
    Result<long long> integer(const std::string& name, long long fallback) const;
    Result<double> number(const std::string& name, double fallback) const;
    // "1,4,16" -> {1,4,16}
    Result<std::vector<long long>> integerList(const std::string& name, std::vector<long long> fallback) const;

private:
    std::vector<std::string> m_positionals;
    std::map<std::string, std::vector<std::string>> m_values;
};

// Renders the options of a command for --help.
std::string formatOptions(const std::vector<OptionSpec>& specs);

// The options many commands share, each worded once here.
inline constexpr int kMaxThreads = 4096;
inline constexpr const char* kThreadsHelp = "compute threads; 0 = physical cores";
// --db PATH: "results database[ FOR_WHAT] (default: $VERDICT_DB, else the XDG data dir)".
OptionSpec dbOption(const std::string& forWhat = "");
// --json, with what it prints.
OptionSpec jsonOption(std::string help = "print one JSON object (shape: docs/cli.md)");
// --help, -h.
OptionSpec helpOption();
// --threads N, -t ("WHOSE: compute threads …" when the command runs more than one model kind).
OptionSpec threadsOption(const std::string& whose = "");
// The value of --threads: 0 (physical cores) when absent, else 0..kMaxThreads; a usage error
// naming the option otherwise.
Result<int> threadsValue(const Args& args);

// "60s", "90" (seconds), "2m", "2h", "500ms" -> seconds (> 0). Errors name the option:
// "--duration: '2x' ...".
Result<double> parseDuration(const std::string& text, const char* option);

}  // namespace verdict::cli
