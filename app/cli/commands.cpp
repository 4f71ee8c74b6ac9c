#include "cli/commands.h"

#include <cstdio>
#include <iostream>

namespace verdict::cli {

const std::vector<Command>& commands() {
    static const std::vector<Command> kCommands = {
        {"info", "model card and memory estimate of a GGUF file", runInfo},
        {"devices", "the CPU and CUDA GPUs the engine can use", runDevices},
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
