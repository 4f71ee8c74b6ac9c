// A quick memory-bandwidth probe for roofline bounds: the best of a few timed passes of a
// STREAM-style triad a[i] = b[i] + s * c[i] over arrays far larger than any cache, split over
// `threads` threads. Bytes counted per element: 3 x 8 (read b and c, write a), as STREAM counts
// them (McCalpin, https://www.cs.virginia.edu/stream/ref.html). Takes ~0.5 s with the default size.
#pragma once

#include <cstddef>

namespace verdict::core {

struct BandwidthProbeResult {
    double gbPerS = 0;       // best pass, 1e9 bytes per second
    size_t arrayBytes = 0;   // per array
    int threads = 0;
    int passes = 0;
};

BandwidthProbeResult measureMemoryBandwidth(int threads, size_t arrayBytes = size_t{128} << 20, int passes = 4);

}  // namespace verdict::core
