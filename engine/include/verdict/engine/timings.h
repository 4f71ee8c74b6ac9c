// What a session measured: times (wall clock, steady_clock) and memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace verdict {

struct Timings {
    double loadMs = 0;            // Model::open, file mapping to ready (includes paging the weights in)
    int64_t promptTokens = 0;     // tokens evaluated for the prompt (after any reused cache prefix)
    double promptMs = 0;          // time to evaluate them (prefill)
    double prefillTps = 0;        // promptTokens / promptMs, tokens per second
    double ttftMs = 0;            // generate() start to the first generated token chosen
    int64_t decodeTokens = 0;     // tokens generated after the first (each one a decode step)
    double decodeMs = 0;          // total time of those decode steps
    double decodeTps = 0;         // decodeTokens / decodeMs, tokens per second
    std::vector<double> stepMs;   // latency of every decode step (evaluate + sample), in order
};

struct MemoryUse {
    uint64_t weightsBytes = 0;    // tensor data the model uses (mapped from the file, not copied)
    uint64_t repackedBytes = 0;   // of weightsBytes, the CPU kernels' repacked copies (in place of
                                  // their mapped pages, which are dropped; VERDICT_CPU_REPACK=0: none)
    uint64_t kvBytes = 0;         // this session's KV cache (allocated size)
    uint64_t scratchBytes = 0;    // this session's activation and logits buffers
    uint64_t peakRssBytes = 0;    // process peak resident set (VmHWM from /proc/self/status); 0 if unknown
    // GPU sessions (device != "cpu"): device memory from the backend's own allocator. weights and
    // scratch/workspace are the model's (shared by its sessions), kv this session's; peak is the
    // model's high-water mark of all of it; deviceUsed is cudaMemGetInfo's total - free (every
    // process on the device) as a cross-check. All 0 on the CPU.
    std::string device = "cpu";
    uint64_t vramWeightsBytes = 0;
    uint64_t vramKvBytes = 0;
    uint64_t vramScratchBytes = 0;
    uint64_t vramWorkspaceBytes = 0;
    uint64_t vramPeakBytes = 0;
    uint64_t vramDeviceUsedBytes = 0;
    uint64_t vramDeviceTotalBytes = 0;
};

// Peak resident set size of this process in bytes (VmHWM), 0 where /proc is not available.
uint64_t peakRssBytes();
// Resident set size now (VmRSS) of process `pid` (<= 0: this one), 0 when it cannot be read.
uint64_t residentBytes(int64_t pid = 0);

}  // namespace verdict
