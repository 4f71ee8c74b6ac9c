#include "verdict/engine/devices.h"

#include "backend/cpu/cpu_amx.h"
#include "backend/cpu/cpu_features.h"
#include "backend/cpu/thread_pool.h"

#ifdef VERDICT_HAVE_CUDA
#include "backend/cuda/cuda_devices.h"
#endif

#include <charconv>
#include <fstream>
#include <string>
#include <thread>

namespace verdict {
namespace {

uint64_t meminfoBytes(const std::string& key) {
    std::ifstream in("/proc/meminfo");
    std::string k;
    uint64_t kb = 0;
    std::string unit;
    while (in >> k >> kb >> unit)
        if (k == key + ":") return kb * 1024;
    return 0;
}

std::string cpuModelName() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(colon + 2);
        }
    return "CPU";
}

std::vector<std::string> cpuFeatureNames() {
    const auto& f = cpu::cpuFeatures();
    std::vector<std::string> out;
    const std::pair<bool, const char*> named[] = {
        {f.avx2, "avx2"},         {f.fma, "fma"},           {f.f16c, "f16c"},
        {f.avx512f, "avx512f"},   {f.avx512bw, "avx512bw"}, {f.avx512vl, "avx512vl"},
        {f.avx512dq, "avx512dq"}, {f.avx512vnni, "avx512vnni"}, {f.avx512bf16, "avx512bf16"},
    };
    for (const auto& [has, name] : named)
        if (has) out.emplace_back(name);
    return out;
}

}  // namespace

DeviceList listDevices() {
    DeviceList list;
    DeviceInfo cpu;
    cpu.id = "cpu";
    cpu.kind = "cpu";
    cpu.name = cpuModelName();
    cpu.totalBytes = meminfoBytes("MemTotal");
    cpu.freeBytes = meminfoBytes("MemAvailable");
    cpu.threads = static_cast<int>(std::thread::hardware_concurrency());
    cpu.simd = cpuSimdLevel();
    cpu.cpuFeatures = cpuFeatureNames();
    const auto& amx = cpu::amxStatus();
    cpu.amx = std::string(cpu::amxStateName(amx.state));
    cpu.amxDetail = amx.detail;
    list.devices.push_back(cpu);
#ifdef VERDICT_HAVE_CUDA
    list.cudaBuilt = true;
    auto probe = cuda::probeDevices();
    list.cudaStatus = probe.status;
    for (auto& d : probe.devices) list.devices.push_back(std::move(d));
#else
    list.cudaStatus = "CUDA backend not built";
#endif
    return list;
}

Result<int> parseDeviceIndex(std::string_view device) {
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

std::string cpuSimdLevel() { return std::string(cpu::simdLevelName(cpu::activeSimdLevel())); }

int physicalCpuCores() { return cpu::ThreadPool::physicalCoreCount(); }

}  // namespace verdict
