// verdict devices [--json]: the CPU and the CUDA GPUs the engine can use.
#include "cli/args.h"
#include "cli/commands.h"
#include "core/models/model_card_json.h"
#include "verdict/engine/devices.h"

#include <iostream>
#include <nlohmann/json.hpp>

namespace verdict::cli {

int runDevices(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = {
        jsonOption("print JSON (shape: docs/cli.md)"),
        helpOption(),
    };
    auto args = Args::parse(argv, specs);
    if (!args) return fail("devices", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict devices [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (!args->positionals().empty()) return fail("devices", "takes no arguments", kExitUsage);
    const DeviceList list = listDevices();
    if (args->has("json")) {
        nlohmann::ordered_json j;
        j["cuda_built"] = list.cudaBuilt;
        j["cuda_status"] = list.cudaStatus;
        j["devices"] = nlohmann::ordered_json::array();
        for (const auto& d : list.devices) {
            nlohmann::ordered_json dj = {
                {"id", d.id}, {"kind", d.kind}, {"name", d.name},
                {"compute_capability", d.kind == "cuda" ? std::to_string(d.computeMajor) + "." + std::to_string(d.computeMinor) : ""},
                {"total_bytes", d.totalBytes}, {"free_bytes", d.freeBytes}, {"threads", d.threads}};
            if (d.kind == "cpu") {
                dj["simd"] = d.simd;
                dj["cpu_features"] = d.cpuFeatures;
                dj["amx"] = {{"state", d.amx}, {"detail", d.amxDetail}};
            }
            j["devices"].push_back(std::move(dj));
        }
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    for (const auto& d : list.devices) {
        std::cout << d.id << "  " << d.name;
        if (d.kind == "cuda") std::cout << "  (sm_" << d.computeMajor << d.computeMinor << ", " << d.threads << " SMs)";
        else std::cout << "  (" << d.threads << " threads)";
        std::cout << "  " << core::formatBytes(d.freeBytes) << " free of " << core::formatBytes(d.totalBytes) << "\n";
        if (d.kind == "cpu") {
            std::cout << "     kernels " << d.simd << ";";
            for (const auto& f : d.cpuFeatures) std::cout << " " << f;
            std::cout << "\n     AMX " << d.amx << ": " << d.amxDetail << "\n";
        }
    }
    std::cout << "CUDA: " << list.cudaStatus << "\n";
    return kExitOk;
}

}  // namespace verdict::cli
