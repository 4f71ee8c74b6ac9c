// `--device DEV`, shared by every command that opens a local model (generate, bench, perplexity,
// logits, serve, run, compare, sweep, demo). The value goes to ModelOptions::device unchanged.
#pragma once

#include "cli/args.h"
#include "verdict/engine/timings.h"

#include <nlohmann/json.hpp>

#include <string>

namespace verdict::cli {

// The option's table row. endpoints: the command also takes http:// references (they ignore it).
OptionSpec deviceOptionSpec(bool endpoints = false);

// Reads --device (default "cpu") and checks it before any model is loaded. Returns kExitOk and
// sets *device, or prints "verdict CMD: reason" and returns the exit code: kExitUsage for a string
// that is no device (the engine's message), kExitRuntime for a GPU this build or machine cannot use.
// localModel false (every model is an endpoint): only the spelling is checked, the device is unused.
int readDeviceOption(const std::string& command, const Args& args, std::string* device, bool localModel = true);

// `--gpu-layers N`, right after --device in the same tables: partial offload, the first N
// transformer blocks on the GPU and the rest with the output head on the CPU
// (ModelOptions::gpuLayers). N >= 0 or "all" (the default, -1: every block on the GPU).
OptionSpec gpuLayersOptionSpec();

// Reads --gpu-layers after readDeviceOption has set `device`. Returns kExitOk and sets *gpuLayers
// (-1 for "all" or when absent), or prints "verdict CMD: reason" and returns kExitUsage for a value
// that is neither an integer >= 0 nor "all", or for the option given with the cpu device.
int readGpuLayersOption(const std::string& command, const Args& args, const std::string& device, int* gpuLayers);

// Exit code for a model that failed to open on `device` (a checked one): kExitRuntime on a GPU (it
// could not take the model: memory, kernels, driver), else kExitBadInput (the file).
int openFailureExitCode(const std::string& device);

// The "memory" object of `generate --json` and `bench --json` (docs/cli.md): host bytes, then the
// device, gpu_layers (Model::gpuLayers(): blocks on the GPU, 0 on the CPU) and the VRAM fields
// (always present, 0 on the CPU).
nlohmann::json memoryUseJson(const MemoryUse& m, int gpuLayers);

}  // namespace verdict::cli
