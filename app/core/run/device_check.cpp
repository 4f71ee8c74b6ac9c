#include "core/run/device_check.h"

#include "verdict/engine/devices.h"
#include "verdict/engine/model.h"

namespace verdict::core {

DeviceCheck checkDevice(const std::string& device) {
    auto index = parseDeviceIndex(device);
    if (!index) return {DeviceStatus::Invalid, "", index.error().message};
    if (*index < 0) return {DeviceStatus::Usable, "cpu", ""};
    const std::string id = "cuda:" + std::to_string(*index);
    const DeviceList list = listDevices();
    for (const DeviceInfo& d : list.devices)
        if (d.id == id) return {DeviceStatus::Usable, id, ""};
    std::string why;
    if (!list.cudaBuilt) {
        why = "this build of Verdict has no CUDA backend (configured without the CUDA Toolkit, or with VERDICT_ENABLE_CUDA=OFF)";
    } else {
        int gpus = 0;
        for (const DeviceInfo& d : list.devices) gpus += d.kind == "cuda" ? 1 : 0;
        why = gpus == 0 ? "CUDA reports " + list.cudaStatus
                        : "there is no such GPU (CUDA: " + list.cudaStatus + "; cuda:0 to cuda:" +
                              std::to_string(gpus - 1) + ")";
    }
    return {DeviceStatus::Unavailable, id,
            "device " + id + (device != id ? " (\"" + device + "\")" : std::string()) + " cannot be used: " + why +
                "; run on cpu instead (see `verdict devices`)"};
}

std::string describeDevice(const Model& model) {
    const std::string id = model.device();
    if (id == "cpu") return "cpu (" + model.deviceName() + ", " + std::to_string(model.threads()) + " threads)";
    const int onGpu = model.gpuLayers();
    const int64_t blocks = model.shape().nLayer;
    if (onGpu < blocks)  // partial offload: the rest of the blocks and the output head stay on the CPU
        return id + " (" + model.deviceName() + ", " + std::to_string(onGpu) + "/" + std::to_string(blocks) +
               " layers; rest on cpu)";
    return id + " (" + model.deviceName() + ")";
}

Result<std::shared_ptr<const Model>> openLocalModel(const std::string& path, int threads, const std::string& device,
                                                    int gpuLayers, const std::atomic<bool>* cancel) {
    ModelOptions mo;
    mo.threads = threads;
    mo.cancel = cancel;
    mo.device = device;
    mo.gpuLayers = gpuLayers;
    return Model::open(path, mo);
}

}  // namespace verdict::core
