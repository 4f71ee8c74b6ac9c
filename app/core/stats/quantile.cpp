#include "core/stats/quantile.h"

#include <algorithm>
#include <cmath>

namespace verdict::core {

double quantileSorted(std::span<const double> sorted, double q) {
    if (sorted.empty()) return 0.0;
    q = std::clamp(q, 0.0, 1.0);
    const double h = static_cast<double>(sorted.size() - 1) * q;
    const size_t lo = static_cast<size_t>(std::floor(h));
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace verdict::core
