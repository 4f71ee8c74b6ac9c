#include "backend/gpu/gpu_model.h"

#include <charconv>
#include <string>

namespace verdict::gpu {

Result<int> parseDevice(std::string_view device) {
    if (device.empty() || device == "cpu") return -1;
    if (device == "cuda" || device == "gpu") return 0;
    const std::string_view prefix = "cuda:";
    if (device.substr(0, prefix.size()) == prefix) {
        const std::string_view n = device.substr(prefix.size());
        int index = -1;
        const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
        if (ec == std::errc() && end == n.data() + n.size() && !n.empty() && index >= 0 && index < 1024) return index;
    }
    return Error{"unknown device \"" + std::string(device) + "\": expected cpu, cuda or cuda:N (see `verdict devices`)"};
}

#ifndef VERDICT_HAVE_CUDA
Result<std::unique_ptr<GpuModel>> openGpuModel(const detail::ModelImpl&, int device, int64_t) {
    return Error{"device cuda:" + std::to_string(device)
                 + " requested, but this build of Verdict has no CUDA backend (nvcc was not found when it was "
                   "configured); use --device cpu, or rebuild with the CUDA Toolkit in /usr/local/cuda"};
}
#endif

}  // namespace verdict::gpu
