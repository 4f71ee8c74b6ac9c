// A quick memory-bandwidth probe for roofline bounds: the best of a few timed passes of a
// STREAM-style triad a[i] = b[i] + s * c[i] over arrays far larger than any cache, split over
// `threads` threads. Bytes counted per element: 3 x 8 (read b and c, write a), as STREAM counts
// them (McCalpin, https://www.cs.virginia.edu/stream/ref.html). Takes ~0.5 s with the default size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

struct BandwidthProbeResult {
    double gbPerS = 0;       // best pass, 1e9 bytes per second
    size_t arrayBytes = 0;   // per array
    int threads = 0;
    int passes = 0;
    std::vector<double> passGbPerS;  // every timed pass, in order
    double minGbPerS = 0;            // the slowest pass
    double medianGbPerS = 0;
    double spread = 0;               // (best - slowest) / best: 0 on a quiet machine
};

BandwidthProbeResult measureMemoryBandwidth(int threads, size_t arrayBytes = size_t{128} << 20, int passes = 4);
// Fills minGbPerS, medianGbPerS and spread from passGbPerS (and gbPerS = the best pass).
void summarizeBandwidthPasses(BandwidthProbeResult& result);

// What the probe is expected to reach: a catalogue figure (peak GB/s of the device) and how
// many cores share it (the probe's threads get their share of it).
struct BandwidthReference {
    double peakGbPerS = 0;
    std::optional<int64_t> cores;
    std::string source;      // "catalog: Intel Xeon Platinum 8480+", "user catalog: this-machine"
};
// The catalogue's figure for this machine: the this-machine entry when the user's file gives it a
// bandwidth, else the built-in CPU entry whose name matches the CPU model ("AMD EPYC 9654 96-Core
// Processor" matches "AMD EPYC 9654 (96 cores)"); nullopt when neither.
std::optional<BandwidthReference> catalogBandwidthForThisMachine();
// The CPU entry of `entries` whose name's words (before any parenthesis) all occur in `cpuModel`
// (case-insensitive, "(R)"/"(TM)" ignored).
struct HardwareEntry;
const HardwareEntry* matchCpuEntry(const std::vector<HardwareEntry>& entries, const std::string& cpuModel);

// Thresholds of the warnings below.
inline constexpr double kBandwidthSpreadWarn = 0.20;    // passes differ by more than 20 % of the best
inline constexpr double kBandwidthBelowCatalog = 0.50;  // best pass under half the expected share of the peak
// One sentence per problem, empty when the probe looks trustworthy: the passes varied a lot (a busy
// machine), or the best pass is far below the reference's share (peak x min(1, threads / cores)).
std::vector<std::string> bandwidthProbeWarnings(const BandwidthProbeResult& result,
                                                const std::optional<BandwidthReference>& reference);

}  // namespace verdict::core
