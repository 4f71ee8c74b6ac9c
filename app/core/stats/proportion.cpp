#include "core/stats/proportion.h"

#include <algorithm>
#include <cmath>

namespace verdict::core {

Interval wilsonInterval(int64_t successes, int64_t n, double z) {
    if (n <= 0) return {0.0, 1.0};
    successes = std::clamp<int64_t>(successes, 0, n);
    const double nn = static_cast<double>(n);
    const double p = static_cast<double>(successes) / nn;
    const double z2 = z * z;
    const double denom = 1.0 + z2 / nn;
    const double centre = (p + z2 / (2.0 * nn)) / denom;
    const double half = z / denom * std::sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn));
    // Exact ends at p = 0 / 1 (the formula gives them up to rounding).
    const double lo = successes == 0 ? 0.0 : std::max(0.0, centre - half);
    const double hi = successes == n ? 1.0 : std::min(1.0, centre + half);
    return {lo, hi};
}

}  // namespace verdict::core
