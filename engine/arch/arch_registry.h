// The list of architectures the engine can run. Adding one = one new file + one line in
// arch_registry.cpp.
#pragma once

#include "arch/architecture.h"

#include <string>
#include <string_view>
#include <vector>

namespace verdict::arch {

// nullptr when the name is not supported.
const Architecture* findArchitecture(std::string_view name);

// Names of every supported architecture, e.g. {"llama", "qwen2"}.
std::vector<std::string> supportedArchitectures();

// Reads general.architecture and looks it up; the error lists the supported names.
Result<const Architecture*> architectureFor(const gguf::GgufFile& file);

}  // namespace verdict::arch
