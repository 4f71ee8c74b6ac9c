#include "cli/device_option.h"

#include "cli/commands.h"
#include "core/run/device_check.h"

namespace verdict::cli {

OptionSpec deviceOptionSpec(bool endpoints) {
    return {"device", true, "DEV",
            std::string("where local models run: cpu (default), cuda or cuda:N (see verdict devices)") +
                (endpoints ? "; endpoints ignore it" : "")};
}

int readDeviceOption(const std::string& command, const Args& args, std::string* device, bool localModel) {
    const std::string given = args.value("device").value_or("cpu");
    const core::DeviceCheck c = core::checkDevice(given);
    switch (c.status) {
    case core::DeviceStatus::Usable: *device = c.id; return kExitOk;
    case core::DeviceStatus::Invalid: return fail(command, "--device: " + c.message, kExitUsage);
    case core::DeviceStatus::Unavailable:
        if (!localModel) {
            *device = c.id;
            return kExitOk;
        }
        return fail(command, c.message, kExitRuntime);
    }
    return fail(command, "--device: unexpected check result", kExitRuntime);
}

OptionSpec gpuLayersOptionSpec() {
    return {"gpu-layers", true, "N",
            "with a GPU --device: the first N transformer blocks on the GPU, the rest on the CPU; "
            "all (default) offloads every block"};
}

int readGpuLayersOption(const std::string& command, const Args& args, const std::string& device, int* gpuLayers) {
    *gpuLayers = -1;
    const auto given = args.value("gpu-layers");
    if (!given) return kExitOk;
    if (*given != "all") {
        // Digits only: no sign, no spaces, no suffix; capped so the int cannot overflow.
        const bool digits = !given->empty() && given->size() <= 9 &&
                            given->find_first_not_of("0123456789") == std::string::npos;
        if (!digits)
            return fail(command, "--gpu-layers: \"" + *given + "\" is not a block count (an integer >= 0, or all)",
                        kExitUsage);
        *gpuLayers = std::stoi(*given);
    }
    if (device == "cpu") return fail(command, "--gpu-layers needs --device cuda[:N] (the device is cpu)", kExitUsage);
    return kExitOk;
}

int openFailureExitCode(const std::string& device) { return device == "cpu" ? kExitBadInput : kExitRuntime; }

nlohmann::json memoryUseJson(const MemoryUse& m, int gpuLayers) {
    return {{"weights_bytes", m.weightsBytes},
            {"repacked_bytes", m.repackedBytes},
            {"kv_bytes", m.kvBytes},
            {"scratch_bytes", m.scratchBytes},
            {"peak_rss_bytes", m.peakRssBytes},
            {"device", m.device},
            {"gpu_layers", gpuLayers},
            {"vram_weights_bytes", m.vramWeightsBytes},
            {"vram_kv_bytes", m.vramKvBytes},
            {"vram_scratch_bytes", m.vramScratchBytes},
            {"vram_workspace_bytes", m.vramWorkspaceBytes},
            {"vram_peak_bytes", m.vramPeakBytes},
            {"vram_device_used_bytes", m.vramDeviceUsedBytes},
            {"vram_device_total_bytes", m.vramDeviceTotalBytes}};
}

}  // namespace verdict::cli
