// Compute devices the engine can run on: the CPU always, CUDA GPUs when the build has the CUDA
// backend and a driver is present. "No driver" and "no device" are normal answers, not errors.
#pragma once

#include "verdict/engine/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace verdict {

struct DeviceInfo {
    std::string id;            // "cpu", "cuda:0", ...
    std::string name;          // CPU model name or GPU product name
    std::string kind;          // "cpu" | "cuda"
    int computeMajor = 0;      // CUDA compute capability (0 for the CPU)
    int computeMinor = 0;
    uint64_t totalBytes = 0;   // device memory (system RAM for the CPU)
    uint64_t freeBytes = 0;    // free now (MemAvailable for the CPU)
    int threads = 0;           // CPU: hardware threads; CUDA: multiprocessors
    // CPU only: the kernels' SIMD level, the instruction-set extensions the kernels look for, and
    // whether AMX tiles may be used ("absent", "not_enabled_by_os", "not_permitted", "faults",
    // "off", "usable") with the reason in words.
    std::string simd;
    std::vector<std::string> cpuFeatures;
    std::string amx;
    std::string amxDetail;
};

struct DeviceList {
    std::vector<DeviceInfo> devices;  // the CPU first
    bool cudaBuilt = false;           // the CUDA backend was compiled in
    std::string cudaStatus;           // e.g. "2 devices", "no driver (cudaErrorInsufficientDriver)"
};

DeviceList listDevices();

// The --device grammar: "" or "cpu" -> -1, "cuda" or "gpu" -> 0, "cuda:N" -> N. Anything else is
// an error naming the accepted forms. Says nothing about whether the device exists (listDevices).
Result<int> parseDeviceIndex(std::string_view device);

// The CPU kernels this process uses ("avx512", "avx2", "scalar"; VERDICT_SIMD can lower it) and
// the physical core count the engine's thread pool defaults to (llama-bench reports both).
std::string cpuSimdLevel();
int physicalCpuCores();

}  // namespace verdict
