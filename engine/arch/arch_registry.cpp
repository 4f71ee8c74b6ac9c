#include "arch/arch_registry.h"
#include "util/quote.h"

namespace verdict::arch {

// Defined in the architecture files.
const Architecture& llamaArchitecture();
const Architecture& qwen2Architecture();
const Architecture& deepseek2Architecture();
const Architecture& gemma2Architecture();
const Architecture& phi3Architecture();
const Architecture& qwen3Architecture();
const Architecture& gemma3Architecture();
const Architecture& gptOssArchitecture();
const Architecture& glm4moeArchitecture();
const Architecture& qwen3moeArchitecture();

namespace {
const std::vector<const Architecture*>& all() {
    static const std::vector<const Architecture*> kAll = {&llamaArchitecture(), &qwen2Architecture(),
                                                          &qwen3Architecture(), &qwen3moeArchitecture(),
                                                          &gemma2Architecture(), &gemma3Architecture(), &phi3Architecture(),
                                                          &deepseek2Architecture(), &gptOssArchitecture(),
                                                          &glm4moeArchitecture()};
    return kAll;
}
}  // namespace

const Architecture* findArchitecture(std::string_view name) {
    for (const Architecture* a : all())
        if (a->name == name) return a;
    return nullptr;
}

std::vector<std::string> supportedArchitectures() {
    std::vector<std::string> out;
    for (const Architecture* a : all()) out.emplace_back(a->name);
    return out;
}

Result<const Architecture*> architectureFor(const gguf::GgufFile& file) {
    auto name = file.getString("general.architecture");
    if (!name) return Error{file.path() + ": metadata key 'general.architecture' is missing or not a string"};
    if (const Architecture* a = findArchitecture(*name)) return a;
    std::string list;
    for (const auto& n : supportedArchitectures()) list += (list.empty() ? "" : ", ") + n;
    return Error{file.path() + ": unsupported architecture " + util::quoteFileText(*name) + " (supported: " + list + ")"};
}

}  // namespace verdict::arch
