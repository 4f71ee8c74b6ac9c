// The `verdict` subcommands. Each command lives in its own file (cmd_<name>.cpp) and is listed
// once in commands.cpp. Exit codes: 0 success, 1 usage error, 2 bad input (file, model, suite),
// 3 runtime failure (e.g. out of memory). Errors go to stderr as one line "verdict NAME: reason".
// Every command that prints results has --json with a stable shape documented in docs/cli.md.
#pragma once

#include <string>
#include <vector>

namespace verdict::core { struct ServiceError; }

namespace verdict::cli {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitRuntime = 3;

struct Command {
    const char* name;
    const char* summary;
    int (*run)(const std::vector<std::string>& args);
};

const std::vector<Command>& commands();
const Command* findCommand(const std::string& name);

// Prints "verdict CMD: message" to stderr and returns the exit code (helper for commands).
int fail(const std::string& command, const std::string& message, int exitCode);

// A workbench service's failure (core/services/service_result.h): bad input 2, storage and
// runtime 3, cancelled 130, a model that cannot be opened openFailureExitCode(device); prints
// "verdict CMD: message".
int failService(const std::string& command, const core::ServiceError& e, const std::string& device);

// One CSV field (RFC 4180): quoted when it holds a comma, quote or line end; quotes doubled.
std::string csvField(const std::string& s);

// Shared by commands: --help text (usage line + option table) to stdout.
void printHelp(const std::string& usage, const std::string& optionsText);

// One function per command (defined in cmd_<name>.cpp).
int runInfo(const std::vector<std::string>& args);
int runGenerate(const std::vector<std::string>& args);
int runLogits(const std::vector<std::string>& args);
int runDevices(const std::vector<std::string>& args);
int runMakeModel(const std::vector<std::string>& args);
int runTokenize(const std::vector<std::string>& args);
int runTemplate(const std::vector<std::string>& args);
int runSuite(const std::vector<std::string>& args);
int runRun(const std::vector<std::string>& args);
int runResults(const std::vector<std::string>& args);
int runDelete(const std::vector<std::string>& args);
int runDiff(const std::vector<std::string>& args);
int runExport(const std::vector<std::string>& args);
int runVerify(const std::vector<std::string>& args);
int runBench(const std::vector<std::string>& args);
int runPerplexity(const std::vector<std::string>& args);
int runQuantCompare(const std::vector<std::string>& args);
int runSoak(const std::vector<std::string>& args);
int runSweep(const std::vector<std::string>& args);
int runServe(const std::vector<std::string>& args);
int runLoad(const std::vector<std::string>& args);
int runDemo(const std::vector<std::string>& args);
int runTco(const std::vector<std::string>& args);
int runHardware(const std::vector<std::string>& args);
int runEndpoints(const std::vector<std::string>& args);
int runReport(const std::vector<std::string>& args);
int runDiscover(const std::vector<std::string>& args);
int runCompare(const std::vector<std::string>& args);
int runVotes(const std::vector<std::string>& args);
int runJudge(const std::vector<std::string>& args);
int runRank(const std::vector<std::string>& args);

}  // namespace verdict::cli
