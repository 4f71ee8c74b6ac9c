// verdict discover [--root DIR ...] [--folder DIR ...] [--ctx N] [--json]: the GGUF models already
// on disk in LM Studio, Ollama, the Hugging Face cache and GPT4All (core/models/model_discovery.h),
// each with its fit badge for the CPU at the default context (core/models/model_fit.h).
// --root DIR looks under DIR instead of $HOME (environment variables ignored); --folder DIR adds
// a folder scanned recursively. JSON shape: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/models/model_discovery.h"
#include "core/models/model_fit.h"
#include "verdict/engine/devices.h"
#include "verdict/engine/model_card.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>

namespace verdict::cli {
namespace {

constexpr uint64_t kDefaultCtx = 4096;  // the engine's default: min(training context, 4096)

void append(std::vector<std::string>& to, const std::vector<std::string>& from) { to.insert(to.end(), from.begin(), from.end()); }

struct DiscoverOptions {
    std::vector<std::string> roots;    // empty: the tools' folders under $HOME (and their environment variables)
    std::vector<std::string> folders;  // scanned recursively as well
    int64_t ctx = 0;                   // the fit badge's context; 0: min(training context, kDefaultCtx)
    bool fit = true;                   // read each model's metadata for the fit badge
};

const OptionTable<DiscoverOptions>& discoverOptions() {
    using S = DiscoverOptions;
    static const OptionTable<S> table = {
        listOption<S>("root", "DIR", "look for the tools' folders under DIR instead of $HOME (repeatable)",
                      [](auto& s) -> auto& { return s.roots; }),
        listOption<S>("folder", "DIR", "also scan DIR and its subfolders for GGUF files (repeatable)",
                      [](auto& s) -> auto& { return s.folders; }),
        intOption<S>("ctx", "N", "context for the fit badge; 0 = min(training context, " + std::to_string(kDefaultCtx) + ")", [](auto& s) -> auto& { return s.ctx; },
                     0, std::numeric_limits<int64_t>::max(), 'c'),
        flagOption<S>("no-fit", "skip reading each model's metadata (no fit badge)", [](S& s) { s.fit = false; }),
    };
    return table;
}

}  // namespace

int runDiscover(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(discoverOptions(), DiscoverOptions{});
    for (OptionSpec spec : {jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("discover", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict discover [--root DIR ...] [--folder DIR ...] [--ctx N] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (!args->positionals().empty()) return fail("discover", "unexpected argument '" + args->positionals()[0] + "'", kExitUsage);
    DiscoverOptions o;
    if (auto e = applyOptions(discoverOptions(), *args, o)) return fail("discover", *e, kExitUsage);
    const bool json = args->has("json");
    const bool withFit = o.fit;

    core::DiscoveryRoots roots;
    const auto& rootDirs = o.roots;
    if (rootDirs.empty()) {
        roots = core::defaultDiscoveryRoots();
    } else {
        for (const auto& r : rootDirs) {
            const core::DiscoveryRoots under = core::discoveryRootsUnder(r);
            append(roots.lmStudio, under.lmStudio);
            append(roots.ollama, under.ollama);
            append(roots.huggingFace, under.huggingFace);
            append(roots.gpt4all, under.gpt4all);
        }
    }
    roots.folders = o.folders;
    const core::DiscoveryResult found = core::discoverModels(roots);

    DeviceInfo cpu;
    if (withFit) {
        const DeviceList devices = listDevices();
        if (!devices.devices.empty()) cpu = devices.devices.front();  // the CPU is listed first
    }

    nlohmann::json models = nlohmann::json::array();
    for (const auto& m : found.models) {
        nlohmann::json jm = {{"source", m.source}, {"name", m.name}, {"path", m.path}, {"bytes", m.bytes},
                             {"fit", nullptr},     {"error", nullptr}};
        if (withFit) {
            auto card = describeModelFile(m.path);
            if (!card) {
                jm["error"] = card.error().message;
            } else {
                const uint64_t ctx = o.ctx > 0 ? static_cast<uint64_t>(o.ctx)
                                                 : (card->nCtxTrain > 0 ? std::min<uint64_t>(card->nCtxTrain, kDefaultCtx) : kDefaultCtx);
                const core::FitVerdict v = core::assessFit(*card, ctx, cpu);
                jm["fit"] = {{"fit", std::string(core::fitName(v.fit))}, {"device", cpu.id}, {"ctx", ctx},
                             {"need_bytes", v.needBytes}, {"have_bytes", v.haveBytes}, {"reason", v.reason}};
            }
        }
        models.push_back(std::move(jm));
    }

    if (json) {
        nlohmann::json j = {{"models", models}, {"warnings", found.warnings}};
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return kExitOk;
    }
    if (models.empty()) std::printf("no GGUF models found (LM Studio, Ollama, Hugging Face cache, GPT4All)\n");
    for (const auto& jm : models) {
        std::string fit = "-";
        if (!jm["fit"].is_null()) fit = jm["fit"]["fit"].get<std::string>();
        else if (!jm["error"].is_null()) fit = "unreadable";
        std::printf("%-12s %-9s %10s  %s\n             %s\n", jm["source"].get<std::string>().c_str(), fit.c_str(),
                    core::formatDecimalBytes(jm["bytes"].get<uint64_t>()).c_str(), jm["name"].get<std::string>().c_str(),
                    jm["path"].get<std::string>().c_str());
        if (!jm["fit"].is_null()) std::printf("             %s\n", jm["fit"]["reason"].get<std::string>().c_str());
        else if (!jm["error"].is_null()) std::printf("             %s\n", jm["error"].get<std::string>().c_str());
    }
    for (const auto& w : found.warnings) std::fprintf(stderr, "verdict discover: warning: %s\n", w.c_str());
    return kExitOk;
}

}  // namespace verdict::cli
