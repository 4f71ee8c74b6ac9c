// Where the bundled demo models (resources/models) and demo suites (datasets/demo) are: the
// source tree in a build directory, share/verdict next to an installed binary, or
// $VERDICT_RESOURCES_DIR (a folder holding models/ and demo/ or resources/models and
// datasets/demo). The CLI's `verdict demo` and the window's first start use the same lookup.
#pragma once

#include "verdict/engine/result.h"

#include <string>
#include <vector>

namespace verdict::core {

struct DemoResources {
    std::string smallModel;           // demo-small.gguf
    std::string largeModel;           // demo-large.gguf
    std::vector<std::string> suites;  // datasets/demo/*.jsonl, sorted
    std::string root;                 // where they were found (for messages)
};

// exePath: the running binary (for the installed layout). Errors list every place looked at.
Result<DemoResources> findDemoResources(const std::string& exePath);

// The name a demo suite file is stored under: datasets/demo/demo_tasks.jsonl -> "demo-tasks".
std::string demoSuiteName(const std::string& suiteFile);

// The running binary's path (/proc/self/exe), "" when unknown.
std::string currentExecutable();

}  // namespace verdict::core
