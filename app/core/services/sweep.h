// A latency sweep of a local GGUF model: the use case behind `verdict sweep MODEL` and the
// Performance screen's "Run sweeps" for a model file. Both fill a SweepSettings and call
// runModelSweep; the defaults written here are the only ones (the CLI's --help prints them, the
// window's controls start from them), so the same choices store the same sweep from either.
//
//   SweepSettings s;                       // prompt 128,512 x gen 128 x batch 1, 3 reps, 1 warm-up
//   s.spec.batches = {1, 4, 16};
//   auto done = runModelSweep(db, "m.gguf", s, events, cancel);
//
// An endpoint is measured by a load test instead (perf/load_runner.h, `verdict load`).
#pragma once

#include "core/perf/sweep_runner.h"
#include "core/services/service_result.h"
#include "core/store/database.h"

#include <atomic>
#include <functional>
#include <string>

namespace verdict::core {

// The largest batch a sweep point may ask for (the engine target's sessions).
inline constexpr int kMaxSweepBatch = 32;

struct SweepSettings {
    SweepSpec spec;              // the grid (perf/sweep_runner.h): prompt 128,512; gen 128; batch 1; 3 reps; 1 warm-up; seed 1
    int threads = 0;             // <= 0: physical cores
    std::string name;            // "": the model file's name
    double bandwidthGbPerS = 0;  // the roofline's bandwidth; <= 0: measured on the CPU, none on a GPU
    std::string device = "cpu";  // "cpu", "cuda", "cuda:N"
    int gpuLayers = -1;          // blocks on the GPU, the rest on the CPU; < 0: all
};

struct SweepEvents {
    std::function<void()> loading;                       // before the model is opened
    std::function<void(const SweepProgress&)> progress;  // per point phase (SweepOptions::progress)
};

// Checks the grid (BadInput naming the field), identifies the file (BadInput: missing, unreadable),
// opens it on the device (ModelOpen; Cancelled when `cancel` is set while it loads), then measures
// and stores every point (Storage when the database refuses a write). A stop between points keeps
// what was measured: the outcome says cancelled.
ServiceResult<SweepOutcome> runModelSweep(Database& db, const std::string& modelPath, const SweepSettings& settings,
                                          const SweepEvents& events = {}, const std::atomic<bool>* cancel = nullptr);

}  // namespace verdict::core
