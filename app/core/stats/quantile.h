// The one quantile of the workbench: accuracy intervals (bootstrap), preference intervals and
// latency percentiles (P50/P90/P95/P99) all read sorted values through it.
#pragma once

#include <span>

namespace verdict::core {

// Quantile q in [0, 1] (clamped) of ascending values by linear interpolation between order
// statistics (Hyndman & Fan type 7, the default of R and of numpy.percentile, which vLLM's
// benchmark_serving uses): h = (n - 1) q, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
// Empty input gives 0. P99 is quantileSorted(values, 0.99).
double quantileSorted(std::span<const double> sorted, double q);

}  // namespace verdict::core
