// Drift over time (soak tests): the least-squares line through (time, value) points with a 95 %
// interval for its slope, and the spread of a percentile across repeated bursts. Pure functions.
//
// Slope b = Sxy / Sxx (ordinary least squares); its standard error sqrt(SSE / (n − 2) / Sxx); the
// interval b ± t(0.975, n − 2) · se (Student's t, the textbook interval for a regression slope,
// e.g. NIST/SEMATECH e-Handbook of Statistical Methods 4.1.4.2). "Drifting" = the interval
// excludes 0.
#pragma once

#include "core/stats/proportion.h"

#include <cstdint>
#include <optional>
#include <span>

namespace verdict::core {

// Student's t quantile at 0.975 for df degrees of freedom (df >= 1): exact for df 1 and 2, the
// tabulated values (6 decimals) for 3..9, else the Cornish-Fisher expansion of Abramowitz & Stegun
// 26.7.5 around the normal quantile 1.959964 (error below 1e-5 from df = 10).
double studentT975(int64_t df);

struct LinearTrend {
    int64_t n = 0;
    double slope = 0;              // value units per x unit
    double intercept = 0;
    std::optional<Interval> slopeCi;  // 95 %; nullopt below 3 points (no residual degree of freedom)
    double r2 = 0;                 // 1 − SSE / Syy (0 when every y is the same)
    bool drifting() const { return slopeCi && (slopeCi->lo > 0 || slopeCi->hi < 0); }
};

// Points with a non-finite x or y are left out. n < 2 or all x equal: slope 0, no interval.
LinearTrend linearTrend(std::span<const double> x, std::span<const double> y);

struct Spread {
    int64_t n = 0;
    double mean = 0, stddev = 0;   // sample standard deviation (n − 1); 0 for n < 2
    double cv = 0;                 // stddev / mean (0 when the mean is 0)
    double min = 0, max = 0;
};
Spread spreadOf(std::span<const double> values);

}  // namespace verdict::core
