// verdict endpoints list|show ID [--json] [--providers-file PATH]: the provider presets the
// endpoint commands (--provider ID) and the window's Add endpoint dialog use — built-in
// resources/providers.json + the user file — each price with its source and date. JSON: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/endpoints/provider_catalog.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace verdict::cli {
namespace {

std::string money(const core::PriceFigure& f) {
    if (!f.value) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", *f.value);
    return buf;
}

const char* flag(const std::optional<bool>& b) { return !b ? "?" : *b ? "yes" : "no"; }

void printList(const core::ProviderCatalog& catalog) {
    std::printf("%-13s %-11s %-7s %-44s %-20s %s\n", "id", "kind", "auth", "base URL", "key variable", "priced models");
    for (const core::ProviderPreset& p : catalog.entries())
        std::printf("%-13s %-11s %-7s %-44s %-20s %zu\n", p.id.c_str(), core::providerKindName(p.kind),
                    core::endpointAuthName(p.auth), p.baseUrl.substr(0, 44).c_str(),
                    p.keyEnv.empty() ? "-" : p.keyEnv.c_str(), p.prices.size());
    std::printf("\nPrices are USD per 1M tokens with a source and date: verdict endpoints show ID.\n");
}

void printShow(const core::ProviderPreset& p) {
    std::printf("%s  %s  (%s, %s)\n", p.id.c_str(), p.name.c_str(), core::providerKindName(p.kind),
                core::providerOriginName(p.origin));
    std::printf("  base URL       %s\n", p.baseUrl.c_str());
    std::printf("  auth           %s%s%s\n", core::endpointAuthName(p.auth), p.keyEnv.empty() ? "" : ", key in $",
                p.keyEnv.c_str());
    std::printf("  routes         chat %s, completions %s, models %s\n", p.chatRoute.c_str(),
                p.completionsRoute.empty() ? "-" : p.completionsRoute.c_str(), p.modelsRoute.empty() ? "-" : p.modelsRoute.c_str());
    if (!p.query.empty()) std::printf("  query          %s (api_version %s)\n", p.query.c_str(), p.apiVersion.c_str());
    std::printf("  supports       stream usage %s, logprobs %s, echo %s, tool calls %s, reasoning field %s\n",
                flag(p.supports.streamUsage), flag(p.supports.logprobs), flag(p.supports.echo), flag(p.supports.toolCalls),
                p.supports.reasoningField ? p.supports.reasoningField->c_str() : "?");
    std::printf("  concurrency    %s\n", p.maxConcurrency ? std::to_string(*p.maxConcurrency).c_str() : "unknown");
    if (!p.docsUrl.empty()) std::printf("  docs           %s\n", p.docsUrl.c_str());
    if (!p.notes.empty()) std::printf("  notes          %s\n", p.notes.c_str());
    if (p.prices.empty()) {
        std::printf("  prices         none: %s\n", p.pricesNote.c_str());
        return;
    }
    std::printf("  prices (USD per 1M tokens):\n");
    for (const core::ModelPrice& m : p.prices) {
        std::printf("    %s: input %s, cached input %s, output %s\n", m.model.c_str(), money(m.input).c_str(),
                    money(m.cachedInput).c_str(), money(m.output).c_str());
        const std::pair<const char*, const core::PriceFigure*> figures[] = {
            {"input", &m.input}, {"cached input", &m.cachedInput}, {"output", &m.output}};
        for (const auto& [name, f] : figures) {
            std::printf("      %-12s %s (as of %s)%s%s\n", name, f->source.c_str(), f->asOf.c_str(), f->url.empty() ? "" : " ",
                        f->url.c_str());
            if (!f->note.empty()) std::printf("      %-12s note: %s\n", "", f->note.c_str());
        }
    }
}

struct EndpointsOptions {
    std::optional<std::string> providersFile;  // unset: the XDG one (core::loadProviderCatalog)
};

const OptionTable<EndpointsOptions>& endpointsOptions() {
    using S = EndpointsOptions;
    static const OptionTable<S> table = {
        optionalTextOption<S>("providers-file", "PATH",
                              "user provider catalog merged over the built-in one (default: $XDG_CONFIG_HOME/verdict/providers.json)",
                              [](auto& s) -> auto& { return s.providersFile; }),
    };
    return table;
}

}  // namespace

int runEndpoints(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(endpointsOptions(), EndpointsOptions{});
    for (OptionSpec spec : {jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    const std::string usage = "verdict endpoints list|show ID [--json] [--providers-file PATH]";
    auto args = Args::parse(argv, specs);
    if (!args) return fail("endpoints", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp(usage, formatOptions(specs));
        return kExitOk;
    }
    const auto& pos = args->positionals();
    if (pos.empty()) return fail("endpoints", "missing subcommand (usage: " + usage + ")", kExitUsage);
    const std::string& sub = pos[0];
    if (sub != "list" && sub != "show") return fail("endpoints", "unknown subcommand '" + sub + "' (list or show)", kExitUsage);
    if (sub == "list" && pos.size() != 1) return fail("endpoints", "list takes no arguments", kExitUsage);
    if (sub == "show" && pos.size() != 2) return fail("endpoints", "show takes one provider id", kExitUsage);

    EndpointsOptions o;
    if (auto e = applyOptions(endpointsOptions(), *args, o)) return fail("endpoints", *e, kExitUsage);
    std::string userFile;
    auto catalog = core::loadProviderCatalog(o.providersFile, &userFile);
    if (!catalog) return fail("endpoints", catalog.error().message, kExitBadInput);
    const bool json = args->has("json");
    const auto dump = [](const nlohmann::json& j) {
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    };
    if (sub == "list") {
        if (json) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& p : catalog->entries()) list.push_back(core::providerPresetJson(p));
            dump({{"schema_version", core::kProvidersSchemaVersion},
                  {"user_file", userFile.empty() ? nlohmann::json(nullptr) : nlohmann::json(userFile)},
                  {"providers", list}});
        } else {
            printList(*catalog);
            if (!userFile.empty()) std::printf("user file: %s\n", userFile.c_str());
        }
        return kExitOk;
    }
    auto preset = catalog->lookup(pos[1]);
    if (!preset) return fail("endpoints", preset.error().message, kExitBadInput);
    if (json) dump({{"provider", core::providerPresetJson(**preset)}});
    else printShow(**preset);
    return kExitOk;
}

}  // namespace verdict::cli
