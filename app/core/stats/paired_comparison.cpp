#include "core/stats/paired_comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace verdict::core {

double mcnemarExactPValue(int64_t b, int64_t c) {
    const int64_t n = b + c;
    if (n <= 0) return 1.0;
    const int64_t k = std::min(b, c);
    // Sum the binomial tail in log space: C(n, i) / 2^n overflows doubles for n > ~1000.
    const double logHalfN = static_cast<double>(n) * std::log(0.5);
    const double lgN1 = std::lgamma(static_cast<double>(n) + 1.0);
    double tail = 0;
    for (int64_t i = 0; i <= k; ++i) {
        const double logC = lgN1 - std::lgamma(static_cast<double>(i) + 1.0) - std::lgamma(static_cast<double>(n - i) + 1.0);
        tail += std::exp(logC + logHalfN);
    }
    return std::min(1.0, 2.0 * tail);
}

BootstrapRng::BootstrapRng(uint64_t seed) : m_engine(seed) {}

uint64_t BootstrapRng::below(uint64_t n) {
    // Accept draws below the largest multiple of n that fits in 2^64.
    const uint64_t limit = std::numeric_limits<uint64_t>::max() - (std::numeric_limits<uint64_t>::max() % n + 1) % n;
    for (;;) {
        const uint64_t x = next();
        if (x <= limit) return x % n;
    }
}

Interval pairedBootstrapMean(std::span<const double> differences, int resamples, uint64_t seed) {
    if (differences.empty() || resamples <= 0) return {0, 0};
    BootstrapRng rng(seed);
    const uint64_t n = differences.size();
    std::vector<double> stats(static_cast<size_t>(resamples));
    for (double& s : stats) {
        double sum = 0;
        for (uint64_t j = 0; j < n; ++j) sum += differences[rng.below(n)];
        s = sum / static_cast<double>(n);
    }
    std::sort(stats.begin(), stats.end());
    return {quantileSorted(stats, 0.025), quantileSorted(stats, 0.975)};
}

Interval pairedBootstrapDifference(std::span<const PairedOutcome> pairs, int resamples, uint64_t seed) {
    std::vector<double> diff(pairs.size());  // +1 A-only, -1 B-only, 0 concordant
    for (size_t i = 0; i < pairs.size(); ++i) diff[i] = double(int(pairs[i].a) - int(pairs[i].b));
    return pairedBootstrapMean(diff, resamples, seed);
}

PairedComparison comparePaired(std::span<const PairedOutcome> pairs, int resamples, uint64_t seed) {
    PairedComparison r;
    r.nPairs = static_cast<int64_t>(pairs.size());
    r.resamples = resamples;
    r.seed = seed;
    for (const PairedOutcome& p : pairs) {
        if (p.a && p.b) ++r.bothRight;
        else if (p.a) { ++r.aOnly; r.aRightBWrong.push_back(p.itemId); }
        else if (p.b) { ++r.bOnly; r.bRightAWrong.push_back(p.itemId); }
        else ++r.bothWrong;
    }
    if (r.nPairs > 0) {
        const double n = static_cast<double>(r.nPairs);
        r.accuracyA = static_cast<double>(r.bothRight + r.aOnly) / n;
        r.accuracyB = static_cast<double>(r.bothRight + r.bOnly) / n;
        r.difference = static_cast<double>(r.aOnly - r.bOnly) / n;
    }
    r.differenceCi = pairedBootstrapDifference(pairs, resamples, seed);
    r.mcnemarP = mcnemarExactPValue(r.aOnly, r.bOnly);
    return r;
}

}  // namespace verdict::core
