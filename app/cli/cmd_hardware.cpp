// verdict hardware list|show ID [--json] [--hardware-file PATH]: the hardware catalog the cost
// model uses (built-in resources/hardware.json + this machine + the user file), each figure with
// its source and date. JSON shapes: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/tco/hardware_catalog.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace verdict::cli {
namespace {

std::string cell(const core::HardwareFigure& f, const char* format) {
    if (!f.value) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, format, *f.value);
    return buf;
}

void printList(const core::HardwareCatalog& catalog) {
    std::printf("%-13s %-4s %-36s %7s %8s %8s %6s %8s %9s\n", "id", "kind", "name", "mem GB", "BW GB/s", "FP16 TF",
                "TDP W", "price $", "cloud $/h");
    for (const core::HardwareEntry& e : catalog.entries())
        std::printf("%-13s %-4s %-36s %7s %8s %8s %6s %8s %9s\n", e.id.c_str(), core::hardwareKindName(e.kind),
                    e.name.substr(0, 36).c_str(), cell(e.memoryGb, "%.0f").c_str(),
                    cell(e.memoryBandwidthGbs, "%.0f").c_str(), cell(e.fp16TflopsDense, "%.1f").c_str(),
                    cell(e.tdpW, "%.0f").c_str(), cell(e.purchaseUsd, "%.0f").c_str(),
                    cell(e.cloudUsdPerHour, "%.3f").c_str());
    std::printf("\nTFLOPS are dense FP16/BF16 tensor peaks; prices are indicative (sources: verdict hardware show ID).\n");
}

void printShow(const core::HardwareEntry& e) {
    std::printf("%s  %s  (%s%s%s, %s)\n", e.id.c_str(), e.name.c_str(), core::hardwareKindName(e.kind),
                e.vendor.empty() ? "" : ", ", e.vendor.c_str(), core::hardwareOriginName(e.origin));
    if (e.cores) std::printf("  cores                 %lld\n", static_cast<long long>(*e.cores));
    const std::pair<const char*, const core::HardwareFigure*> figures[] = {
        {"memory_gb", &e.memoryGb},       {"memory_bandwidth_gbs", &e.memoryBandwidthGbs},
        {"fp16_tflops_dense", &e.fp16TflopsDense}, {"tdp_w", &e.tdpW},
        {"purchase_usd", &e.purchaseUsd}, {"cloud_usd_per_hour", &e.cloudUsdPerHour}};
    for (const auto& [name, f] : figures) {
        std::printf("  %-21s %-10s %s (as of %s)\n", name, cell(*f, "%g").c_str(), f->source.c_str(), f->asOf.c_str());
        if (!f->url.empty()) std::printf("  %-21s %-10s %s\n", "", "", f->url.c_str());
        if (!f->note.empty()) std::printf("  %-21s %-10s note: %s\n", "", "", f->note.c_str());
    }
    if (!e.notes.empty()) std::printf("  notes: %s\n", e.notes.c_str());
}

struct HardwareOptions {
    std::optional<std::string> hardwareFile;  // unset: the XDG one (core::loadHardwareCatalog)
};

const OptionTable<HardwareOptions>& hardwareOptions() {
    using S = HardwareOptions;
    static const OptionTable<S> table = {
        optionalTextOption<S>("hardware-file", "PATH",
                              "user catalog merged over the built-in one (default: $XDG_CONFIG_HOME/verdict/hardware.json)",
                              [](auto& s) -> auto& { return s.hardwareFile; }),
    };
    return table;
}

}  // namespace

int runHardware(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(hardwareOptions(), HardwareOptions{});
    for (OptionSpec spec : {jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    const std::string usage = "verdict hardware list|show ID [--json] [--hardware-file PATH]";
    auto args = Args::parse(argv, specs);
    if (!args) return fail("hardware", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp(usage, formatOptions(specs));
        return kExitOk;
    }
    const auto& pos = args->positionals();
    if (pos.empty()) return fail("hardware", "missing subcommand (usage: " + usage + ")", kExitUsage);
    const std::string& sub = pos[0];
    if (sub != "list" && sub != "show") return fail("hardware", "unknown subcommand '" + sub + "' (list or show)", kExitUsage);
    if (sub == "list" && pos.size() != 1) return fail("hardware", "list takes no arguments", kExitUsage);
    if (sub == "show" && pos.size() != 2) return fail("hardware", "show takes one hardware id", kExitUsage);

    HardwareOptions o;
    if (auto e = applyOptions(hardwareOptions(), *args, o)) return fail("hardware", *e, kExitUsage);
    std::string userFile;
    auto catalog = core::loadHardwareCatalog(o.hardwareFile, &userFile);
    if (!catalog) return fail("hardware", catalog.error().message, kExitBadInput);
    const bool json = args->has("json");
    const auto dump = [](const nlohmann::json& j) {
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    };

    if (sub == "list") {
        if (json) {
            nlohmann::json list = nlohmann::json::array();
            for (const auto& e : catalog->entries()) list.push_back(core::hardwareEntryJson(e));
            dump({{"schema_version", core::kHardwareSchemaVersion},
                  {"user_file", userFile.empty() ? nlohmann::json(nullptr) : nlohmann::json(userFile)},
                  {"hardware", list}});
        } else {
            printList(*catalog);
            if (!userFile.empty()) std::printf("user file: %s\n", userFile.c_str());
        }
        return kExitOk;
    }
    auto entry = catalog->lookup(pos[1]);
    if (!entry) return fail("hardware", entry.error().message, kExitBadInput);
    if (json)
        dump({{"hardware", core::hardwareEntryJson(**entry)}});
    else
        printShow(**entry);
    return kExitOk;
}

}  // namespace verdict::cli
