// Projection across hardware: an estimate of the throughput on one catalog device from a
// measurement on another, with the roofline ratio (docs/tco.md "Projection"):
//   decode tok/s on B  = decode tok/s on A  x bandwidth(B) / bandwidth(A)   (decode reads every weight per token)
//   prefill tok/s on B = prefill tok/s on A x FLOPS(B) / FLOPS(A)           (prefill is matrix-matrix work)
// A projection is always an estimate: it carries estimated = true and the basis (the ratio and the
// figures it used), and it is kept apart from the measured figures it started from.
#pragma once

#include "core/tco/hardware_catalog.h"
#include "verdict/engine/result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

struct ThroughputProjection {
    std::string fromId;                  // where it was measured
    std::string toId;                    // the device it is estimated for
    bool estimated = true;               // always true: never a measurement
    double measuredDecodeTps = 0;        // the input, unchanged
    std::optional<double> measuredPrefillTps;
    double decodeRatio = 0;              // bandwidth(to) / bandwidth(from)
    std::optional<double> prefillRatio;  // FLOPS(to) / FLOPS(from); nullopt without prefill input
    double decodeTps = 0;                // measuredDecodeTps x decodeRatio
    std::optional<double> prefillTps;
    std::string basis;                   // "decode x 3350 GB/s / 1008 GB/s (memory bandwidth ratio 3.323); ..."
    std::vector<std::string> caveats;    // why the estimate may be off for this pair
};

// Errors: non-positive or non-finite throughput; a device without memory bandwidth (or, when
// prefill is given, without FP16 TFLOPS), naming the entry and the field to set.
// `modelBytes` (optional, the weights' size) adds a caveat when the model does not fit the
// target's memory.
Result<ThroughputProjection> projectThroughput(const HardwareEntry& measuredOn, const HardwareEntry& target,
                                               double decodeTps, std::optional<double> prefillTps,
                                               std::optional<double> modelBytes = std::nullopt);

nlohmann::json projectionJson(const ThroughputProjection& p);

}  // namespace verdict::core
