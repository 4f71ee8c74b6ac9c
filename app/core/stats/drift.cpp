#include "core/stats/drift.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace verdict::core {

double studentT975(int64_t df) {
    if (df < 1) df = 1;
    if (df == 1) return std::tan(M_PI * (0.975 - 0.5));             // Cauchy
    if (df == 2) return (2 * 0.975 - 1) / std::sqrt(2 * 0.975 * (1 - 0.975));
    // df 3..9, where the expansion below is off by up to 4e-3: the tabulated values (NIST/SEMATECH
    // e-Handbook 1.3.6.7.2, "Critical values of the Student's t distribution", to 6 decimals).
    static constexpr double kSmall[] = {3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157};
    if (df <= 9) return kSmall[df - 3];
    const double z = 1.959963984540054, n = static_cast<double>(df);
    const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, z9 = z7 * z * z;
    const double g1 = (z3 + z) / 4;
    const double g2 = (5 * z5 + 16 * z3 + 3 * z) / 96;
    const double g3 = (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / 384;
    const double g4 = (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / 92160;
    return z + g1 / n + g2 / (n * n) + g3 / (n * n * n) + g4 / (n * n * n * n);
}

LinearTrend linearTrend(std::span<const double> xs, std::span<const double> ys) {
    std::vector<std::pair<double, double>> p;
    for (size_t i = 0; i < std::min(xs.size(), ys.size()); ++i)
        if (std::isfinite(xs[i]) && std::isfinite(ys[i])) p.emplace_back(xs[i], ys[i]);
    LinearTrend t;
    t.n = static_cast<int64_t>(p.size());
    if (p.empty()) return t;
    double mx = 0, my = 0;
    for (const auto& [x, y] : p) mx += x, my += y;
    mx /= static_cast<double>(p.size());
    my /= static_cast<double>(p.size());
    double sxx = 0, sxy = 0, syy = 0;
    for (const auto& [x, y] : p) {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
        syy += (y - my) * (y - my);
    }
    t.intercept = my;
    if (p.size() < 2 || sxx <= 0) return t;
    t.slope = sxy / sxx;
    t.intercept = my - t.slope * mx;
    double sse = 0;
    for (const auto& [x, y] : p) {
        const double r = y - (t.intercept + t.slope * x);
        sse += r * r;
    }
    t.r2 = syy > 0 ? std::max(0.0, 1 - sse / syy) : 0;
    if (p.size() >= 3) {
        const double se = std::sqrt(sse / static_cast<double>(p.size() - 2) / sxx);
        const double half = studentT975(t.n - 2) * se;
        t.slopeCi = Interval{t.slope - half, t.slope + half};
    }
    return t;
}

Spread spreadOf(std::span<const double> values) {
    Spread s;
    std::vector<double> v;
    for (double x : values)
        if (std::isfinite(x)) v.push_back(x);
    s.n = static_cast<int64_t>(v.size());
    if (v.empty()) return s;
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / static_cast<double>(v.size());
    s.min = *std::min_element(v.begin(), v.end());
    s.max = *std::max_element(v.begin(), v.end());
    if (v.size() >= 2) {
        double ss = 0;
        for (double x : v) ss += (x - s.mean) * (x - s.mean);
        s.stddev = std::sqrt(ss / static_cast<double>(v.size() - 1));
    }
    s.cv = s.mean != 0 ? s.stddev / s.mean : 0;
    return s;
}

}  // namespace verdict::core
