// Statistics of judged preferences (issue 21): a pairwise judgment asked in both orders, win
// rates, agreement between two judges (Cohen's kappa) and Bradley-Terry strengths for more than
// two runs. Pure functions; definitions and sources in docs/metrics.md ("Preference").
#pragma once

#include "core/judge/judge_verdict.h"
#include "core/stats/paired_comparison.h"  // kBootstrapSeed
#include "core/stats/proportion.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace verdict::core {

// --- One item judged in both orders ---------------------------------------------------------

// What a pairwise judge said with A's answer shown first and with B's shown first, both already
// mapped back to the runs (in the second order "[[A]]" names run B). nullopt: unparseable.
struct OrderedJudgment {
    std::optional<PairwiseChoice> aFirst;
    std::optional<PairwiseChoice> bFirst;
};

// How the two orders relate (MT-Bench, Zheng et al. 2023, Table 2: consistent, biased toward the
// first or the second position).
enum class OrderAgreement {
    Consistent,     // both orders gave the same verdict
    FavoursFirst,   // each order preferred the answer shown first (or one did and the other tied)
    FavoursSecond,  // each order preferred the answer shown second (or one did and the other tied)
    Error,          // at least one order unparseable
};

struct CombinedJudgment {
    std::optional<PairwiseChoice> outcome;  // nullopt when an order is unparseable
    OrderAgreement agreement = OrderAgreement::Error;
};

// The verdict of one item: the common verdict when both orders agree, a tie when they differ
// (a verdict that flips with the order says more about position than about the answers).
CombinedJudgment combineOrders(const OrderedJudgment& j);

// --- Win rate -----------------------------------------------------------------------------------

struct WinRate {
    int64_t items = 0;      // every item given, errors included
    int64_t winsA = 0;
    int64_t winsB = 0;
    int64_t ties = 0;
    int64_t errors = 0;     // no usable verdict (unparseable): never counted as anything else
    int64_t decided = 0;    // winsA + winsB
    std::optional<double> winRateA;  // winsA / decided; ties shown apart, not halved
    Interval winRateACi{0.0, 1.0};   // Wilson 95 % over the decided items
};

// Counts of outcomes (nullopt = error) and A's win rate among the decided ones.
WinRate winRate(std::span<const std::optional<PairwiseChoice>> outcomes);

// Position bias of a set of items judged in both orders: how many were consistent, how many
// favoured either position, and the flip rate = (favoursFirst + favoursSecond) / usable.
struct PositionBias {
    int64_t usable = 0;          // items with both orders parsed
    int64_t consistent = 0;
    int64_t favoursFirst = 0;
    int64_t favoursSecond = 0;
    int64_t errors = 0;
    std::optional<double> flipRate;  // nullopt when usable = 0
};
PositionBias positionBias(std::span<const OrderedJudgment> judgments);

// --- Agreement between two raters ---------------------------------------------------------------

struct Kappa {
    int64_t n = 0;                 // items both raters labelled
    double observed = 0;           // p_o: share of items with the same label
    double expected = 0;           // p_e: agreement expected from the raters' own label shares
    std::optional<double> kappa;   // (p_o - p_e) / (1 - p_e); nullopt when n = 0 or p_e = 1
    double standardError = 0;      // Fleiss, Cohen & Everitt (1969) large-sample SE
    Interval ci{-1.0, 1.0};        // kappa +- 1.96 SE, clamped to [-1, 1]
};

// Cohen's kappa (Cohen 1960) of two raters' labels of the same items, pairs (rater 1, rater 2)
// with labels from a small set (here PairwiseChoice). Pairs where either label is missing are
// left out.
Kappa cohensKappa(std::span<const std::pair<std::optional<PairwiseChoice>, std::optional<PairwiseChoice>>> labels);

// --- Bradley-Terry --------------------------------------------------------------------------------

// One comparison of two players (runs) on one item: scoreI is 1 (i won), 0.5 (tie) or 0 (j won).
struct Comparison {
    int item = 0;      // index of the item (the bootstrap resamples items, keeping their comparisons)
    int i = 0;
    int j = 0;
    double scoreI = 0.5;
};

inline constexpr int kBradleyTerryResamples = 1000;

struct BradleyTerry {
    int players = 0;
    // Ratings on the Elo scale (400 points = odds of 10 to 1, mean 1000, as FastChat's
    // leaderboard); empty when the maximum-likelihood estimate does not exist.
    std::vector<double> rating;
    std::vector<Interval> ci;       // bootstrap 95 % percentile intervals (empty: not computed)
    std::string notEstimable;       // why there is no finite estimate ("" when there is)
    std::vector<int> losingGroup;   // the players that lost every comparison against the others
    int resamples = 0;              // bootstrap resamples drawn
    int resamplesWithoutEstimate = 0;  // resamples where one group beat the rest in every comparison
};

// Maximum-likelihood Bradley-Terry strengths with ties counted as half a win for each side
// (FastChat's compute_bt: P(i beats j) = 1 / (1 + 10^((R_j - R_i) / 400))). The estimate exists
// only when no group of players lost every comparison against the others (Ford 1957: the graph
// with an edge i -> j when i won or tied against j at least once is strongly connected);
// otherwise `notEstimable` names the players that did.
// resamples > 0: percentile intervals from resampling the items with replacement (FastChat
// resamples battles; items keep a run's comparisons on one prompt together); resamples without
// an estimate are left out and counted.
BradleyTerry bradleyTerry(int players, std::span<const Comparison> comparisons, int resamples = kBradleyTerryResamples,
                          uint64_t seed = kBootstrapSeed);

}  // namespace verdict::core
