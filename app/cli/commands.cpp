#include "cli/commands.h"

#include <cstdio>
#include <iostream>

namespace verdict::cli {

const std::vector<Command>& commands() {
    static const std::vector<Command> kCommands = {
        {"info", "model card and memory estimate of a GGUF file", runInfo},
        {"generate", "generate text from a prompt with the built-in engine", runGenerate},
        {"logits", "logits of a token sequence at every position (parity checks)", runLogits},
        {"devices", "the CPU and CUDA GPUs the engine can use", runDevices},
        {"tokenize", "token ids and pieces of a text, as the model tokenizes it", runTokenize},
        {"template", "render a chat conversation with the model's chat template", runTemplate},
        {"make-model", "write a random-weight model of a given shape (benchmarks, tests)", runMakeModel},
        {"suite", "import, list and show test suites (suite import FILE, suite list, suite show NAME)", runSuite},
        {"run", "evaluate a model on a stored suite; resumable", runRun},
        {"results", "stored runs with accuracy and confidence intervals", runResults},
        {"diff", "paired comparison of two runs of one suite (McNemar, bootstrap)", runDiff},
        {"export", "a run's items as CSV or JSON", runExport},
        {"verify", "check the results database's tamper-evident hash chain", runVerify},
    };
    return kCommands;
}

const Command* findCommand(const std::string& name) {
    for (const auto& c : commands())
        if (name == c.name) return &c;
    return nullptr;
}

int fail(const std::string& command, const std::string& message, int exitCode) {
    std::cerr << "verdict " << command << ": " << message << "\n";
    return exitCode;
}

void printHelp(const std::string& usage, const std::string& optionsText) {
    std::cout << "usage: " << usage << "\n\noptions:\n" << optionsText;
}

}  // namespace verdict::cli
