#include "core/workspace/demo_resources.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef VERDICT_SOURCE_DIR
#define VERDICT_SOURCE_DIR ""
#endif

namespace verdict::core {
namespace fs = std::filesystem;

namespace {

// models/ + demo/ (installed layout) or resources/models + datasets/demo (source tree).
bool tryRoot(const fs::path& root, DemoResources& out) {
    std::error_code ec;
    for (const auto& [models, suites] : {std::pair{root / "models", root / "demo"},
                                         std::pair{root / "resources" / "models", root / "datasets" / "demo"}}) {
        const fs::path small = models / "demo-small.gguf", large = models / "demo-large.gguf";
        if (!fs::is_regular_file(small, ec) || !fs::is_regular_file(large, ec) || !fs::is_directory(suites, ec)) continue;
        DemoResources r;
        r.smallModel = small.string();
        r.largeModel = large.string();
        r.root = root.string();
        for (const auto& e : fs::directory_iterator(suites, ec))
            if (e.path().extension() == ".jsonl") r.suites.push_back(e.path().string());
        std::sort(r.suites.begin(), r.suites.end());
        if (r.suites.empty()) continue;
        out = std::move(r);
        return true;
    }
    return false;
}

}  // namespace

std::string currentExecutable() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : p.string();
}

Result<DemoResources> findDemoResources(const std::string& exePath) {
    std::vector<fs::path> roots;
    if (const char* env = std::getenv("VERDICT_RESOURCES_DIR"); env && *env) roots.emplace_back(env);
    if (!exePath.empty()) {
        const fs::path dir = fs::path(exePath).parent_path();
        roots.push_back(dir.parent_path() / "share" / "verdict");  // /usr/bin/verdict -> /usr/share/verdict
    }
    if (std::string(VERDICT_SOURCE_DIR).size() > 0) roots.emplace_back(VERDICT_SOURCE_DIR);
    std::string looked;
    for (const fs::path& r : roots) {
        DemoResources out;
        if (tryRoot(r, out)) return out;
        looked += (looked.empty() ? "" : ", ") + r.string();
    }
    return Error{"the demo models and suites were not found (looked in: " + (looked.empty() ? std::string("nowhere") : looked) +
                 "; set VERDICT_RESOURCES_DIR)"};
}

std::string demoSuiteName(const std::string& suiteFile) {
    std::string stem = std::filesystem::path(suiteFile).stem().string();
    if (stem.rfind("demo_", 0) == 0) stem = stem.substr(5);
    return "demo-" + stem;
}

}  // namespace verdict::core
