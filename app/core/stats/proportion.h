// Confidence intervals for a proportion (accuracy = correct / n). Pure functions.
#pragma once

#include <cstdint>

namespace verdict::core {

// Two-sided 95 % normal quantile, Phi^-1(0.975).
inline constexpr double kZ95 = 1.959963984540054;

struct Interval {
    double lo = 0;
    double hi = 0;
};

// Wilson score interval (E. B. Wilson, JASA 22 (1927) 209-212):
//   centre = (p + z^2/(2n)) / (1 + z^2/n)
//   half   = z / (1 + z^2/n) * sqrt(p(1-p)/n + z^2/(4n^2))
// with p = successes / n. Stays inside [0, 1] and is sensible at p = 0 or 1, unlike the Wald
// interval. n = 0 gives [0, 1] (nothing known). successes is clamped to [0, n].
Interval wilsonInterval(int64_t successes, int64_t n, double z = kZ95);

}  // namespace verdict::core
