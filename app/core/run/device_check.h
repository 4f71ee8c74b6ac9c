// The device a local model runs on (`--device`, the window's device box): checked before a model
// is loaded, so a typo or a GPU this machine cannot offer fails at once instead of after minutes
// of reading weights; and described in one string for what runs and sweeps record.
//
// Device strings are the engine's (ModelOptions::device): "cpu", "cuda" (= "cuda:0"), "cuda:N".
// Endpoint references ignore the device: the server decides where it runs.
#pragma once

#include "verdict/engine/result.h"

#include <atomic>
#include <memory>
#include <string>

namespace verdict {
class Model;
}

namespace verdict::core {

enum class DeviceStatus {
    Usable,       // the engine may open models there (loading can still fail: memory, kernels)
    Invalid,      // not a device string: a usage error
    Unavailable,  // a well-formed GPU this build or machine cannot use (no CUDA backend, no driver, no such index)
};

struct DeviceCheck {
    DeviceStatus status = DeviceStatus::Usable;
    std::string id;       // normalized: "cpu" or "cuda:N" (empty when Invalid)
    std::string message;  // why not, naming the string as given; empty when Usable
};

// Parses `device` with the engine's own rules (its message for a bad string) and, for a GPU,
// asks listDevices() whether that GPU is there. Never fails for "cpu".
DeviceCheck checkDevice(const std::string& device);

// What runs and sweeps store as their device: "cpu (CPU NAME, N threads)" or
// "cuda:0 (NVIDIA H200)", or "cuda:0 (NVIDIA H200, 12/32 layers; rest on cpu)" when only some
// blocks were offloaded (--gpu-layers) — the device the model actually runs on (Model::device()) and its name.
std::string describeDevice(const Model& model);

// Opens a local model the way every service does (suite runs, sweeps): `threads` compute threads
// (<= 0: physical cores), on `device`, its first `gpuLayers` blocks there (< 0: all), `cancel`
// stopping the load when set. The engine's message (file, key, tensor) when it cannot.
Result<std::shared_ptr<const Model>> openLocalModel(const std::string& path, int threads, const std::string& device,
                                                    int gpuLayers, const std::atomic<bool>* cancel);

}  // namespace verdict::core
