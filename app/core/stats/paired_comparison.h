// Two runs on the same suite, compared item by item (paired): McNemar's exact test on the
// discordant pairs and a paired bootstrap interval for the accuracy difference. Pure functions.
#pragma once

#include "core/stats/proportion.h"
#include "core/stats/quantile.h"

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace verdict::core {

inline constexpr int kBootstrapResamples = 10000;
inline constexpr uint64_t kBootstrapSeed = 20240229;  // fixed: the same runs give the same interval

struct PairedOutcome {
    std::string itemId;
    bool a = false;  // run A answered correctly
    bool b = false;  // run B answered correctly
};

// McNemar's exact test: under H0 each discordant pair is A-only or B-only with probability 1/2,
// so with n = b + c and k = min(b, c) the two-sided p-value is
//   p = min(1, 2 * sum_{i=0..k} C(n, i) / 2^n).
// (McNemar, Psychometrika 12 (1947); exact binomial form as in Fagerland et al., BMC Med Res
// Methodol 13:91 (2013).) b = c = 0 gives 1.
double mcnemarExactPValue(int64_t b, int64_t c);

// Uniform index in [0, n) from a 64-bit Mersenne Twister draw, by rejection (no modulo bias).
// Spelled out so the interval is the same with every standard library.
struct BootstrapRng {
    explicit BootstrapRng(uint64_t seed);
    uint64_t next() { return m_engine(); }  // std::mt19937_64: its sequence is fixed by the C++ standard
    uint64_t below(uint64_t n);     // n > 0
private:
    std::mt19937_64 m_engine;
};

// Percentile bootstrap 95 % interval of accuracy(A) - accuracy(B): resample the n pairs with
// replacement `resamples` times, take the 2.5th and 97.5th percentiles (quantileSorted) of the
// resampled differences. Empty input gives [0, 0].
Interval pairedBootstrapDifference(std::span<const PairedOutcome> pairs, int resamples = kBootstrapResamples,
                                   uint64_t seed = kBootstrapSeed);

// The same over any paired differences (e.g. rubric score of A minus that of B per item): the
// percentile bootstrap 95 % interval of their mean. pairedBootstrapDifference is this over the
// differences +1 / 0 / -1 (same draws, same interval). Empty input gives [0, 0].
Interval pairedBootstrapMean(std::span<const double> differences, int resamples = kBootstrapResamples,
                             uint64_t seed = kBootstrapSeed);

struct PairedComparison {
    int64_t nPairs = 0;
    int64_t bothRight = 0;
    int64_t aOnly = 0;       // b: A right, B wrong
    int64_t bOnly = 0;       // c: A wrong, B right
    int64_t bothWrong = 0;
    double accuracyA = 0;
    double accuracyB = 0;
    double difference = 0;   // accuracyA - accuracyB
    Interval differenceCi;   // paired bootstrap 95 %
    int resamples = 0;
    uint64_t seed = 0;
    double mcnemarP = 1;
    std::vector<std::string> aRightBWrong;  // item ids, input order
    std::vector<std::string> bRightAWrong;
};

PairedComparison comparePaired(std::span<const PairedOutcome> pairs, int resamples = kBootstrapResamples,
                               uint64_t seed = kBootstrapSeed);

}  // namespace verdict::core
