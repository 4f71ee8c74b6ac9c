#include "core/stats/preference.h"

#include "core/stats/paired_comparison.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace verdict::core {

namespace {

// +1 when a verdict prefers the answer shown first, -1 the second, 0 a tie.
int firstPositionScore(PairwiseChoice shownFirstWins, PairwiseChoice c) {
    if (c == PairwiseChoice::Tie) return 0;
    return c == shownFirstWins ? 1 : -1;
}

}  // namespace

CombinedJudgment combineOrders(const OrderedJudgment& j) {
    if (!j.aFirst || !j.bFirst) return {};
    if (*j.aFirst == *j.bFirst) return {*j.aFirst, OrderAgreement::Consistent};
    // They differ, so the two scores never cancel: (A, B) = +2, (A, tie) = +1, (tie, A) = -1 ...
    const int lean = firstPositionScore(PairwiseChoice::A, *j.aFirst) + firstPositionScore(PairwiseChoice::B, *j.bFirst);
    return {PairwiseChoice::Tie, lean > 0 ? OrderAgreement::FavoursFirst : OrderAgreement::FavoursSecond};
}

WinRate winRate(std::span<const std::optional<PairwiseChoice>> outcomes) {
    WinRate r;
    r.items = static_cast<int64_t>(outcomes.size());
    for (const auto& o : outcomes) {
        if (!o) ++r.errors;
        else if (*o == PairwiseChoice::A) ++r.winsA;
        else if (*o == PairwiseChoice::B) ++r.winsB;
        else ++r.ties;
    }
    r.decided = r.winsA + r.winsB;
    if (r.decided > 0) r.winRateA = static_cast<double>(r.winsA) / static_cast<double>(r.decided);
    r.winRateACi = wilsonInterval(r.winsA, r.decided);
    return r;
}

PositionBias positionBias(std::span<const OrderedJudgment> judgments) {
    PositionBias b;
    for (const OrderedJudgment& j : judgments) {
        switch (combineOrders(j).agreement) {
        case OrderAgreement::Consistent: ++b.consistent; break;
        case OrderAgreement::FavoursFirst: ++b.favoursFirst; break;
        case OrderAgreement::FavoursSecond: ++b.favoursSecond; break;
        case OrderAgreement::Error: ++b.errors; break;
        }
    }
    b.usable = b.consistent + b.favoursFirst + b.favoursSecond;
    if (b.usable > 0) b.flipRate = static_cast<double>(b.favoursFirst + b.favoursSecond) / static_cast<double>(b.usable);
    return b;
}

Kappa cohensKappa(std::span<const std::pair<std::optional<PairwiseChoice>, std::optional<PairwiseChoice>>> labels) {
    constexpr int k = 3;  // A, B, tie
    std::array<std::array<double, k>, k> p{};
    Kappa r;
    for (const auto& [x, y] : labels) {
        if (!x || !y) continue;
        p[static_cast<size_t>(*x)][static_cast<size_t>(*y)] += 1;
        ++r.n;
    }
    if (r.n == 0) return r;
    const double n = static_cast<double>(r.n);
    std::array<double, k> row{}, col{};  // p_i. (rater 1), p_.j (rater 2)
    for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j) {
            p[i][j] /= n;
            row[i] += p[i][j];
            col[j] += p[i][j];
        }
    for (int i = 0; i < k; ++i) {
        r.observed += p[i][i];
        r.expected += row[i] * col[i];
    }
    if (r.expected >= 1.0 - 1e-12) return r;  // both raters gave one and the same label throughout
    const double kappa = (r.observed - r.expected) / (1.0 - r.expected);
    r.kappa = kappa;
    // Fleiss, Cohen & Everitt (1969), as in SAS PROC FREQ's "Simple Kappa Coefficient":
    //   var = (A + B - C) / (n (1 - p_e)^2)
    //   A = sum_i p_ii (1 - (p_i. + p_.i)(1 - kappa))^2
    //   B = (1 - kappa)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
    //   C = (kappa - p_e (1 - kappa))^2
    double a = 0, b = 0;
    for (int i = 0; i < k; ++i) {
        a += p[i][i] * std::pow(1.0 - (row[i] + col[i]) * (1.0 - kappa), 2);
        for (int j = 0; j < k; ++j)
            if (i != j) b += p[i][j] * std::pow(col[i] + row[j], 2);
    }
    b *= std::pow(1.0 - kappa, 2);
    const double c = std::pow(kappa - r.expected * (1.0 - kappa), 2);
    const double var = std::max(0.0, (a + b - c) / (n * std::pow(1.0 - r.expected, 2)));
    r.standardError = std::sqrt(var);
    r.ci = {std::max(-1.0, kappa - kZ95 * r.standardError), std::min(1.0, kappa + kZ95 * r.standardError)};
    return r;
}

namespace {

// Players that player `from` reaches along "won or tied against" edges (or, reversed, the
// players that reach it).
std::vector<bool> reachable(int players, const std::vector<std::vector<bool>>& scored, int from, bool reversed) {
    std::vector<bool> seen(static_cast<size_t>(players), false);
    std::vector<int> stack{from};
    seen[static_cast<size_t>(from)] = true;
    while (!stack.empty()) {
        const int v = stack.back();
        stack.pop_back();
        for (int w = 0; w < players; ++w) {
            const bool edge = reversed ? scored[static_cast<size_t>(w)][static_cast<size_t>(v)]
                                       : scored[static_cast<size_t>(v)][static_cast<size_t>(w)];
            if (edge && !seen[static_cast<size_t>(w)]) {
                seen[static_cast<size_t>(w)] = true;
                stack.push_back(w);
            }
        }
    }
    return seen;
}

// Ford's condition; on failure the players of a group that never won or tied against the rest.
std::vector<int> losingGroupOf(int players, std::span<const Comparison> comparisons) {
    std::vector<std::vector<bool>> scored(static_cast<size_t>(players), std::vector<bool>(static_cast<size_t>(players), false));
    for (const Comparison& c : comparisons) {
        if (c.scoreI > 0) scored[static_cast<size_t>(c.i)][static_cast<size_t>(c.j)] = true;
        if (c.scoreI < 1) scored[static_cast<size_t>(c.j)][static_cast<size_t>(c.i)] = true;
    }
    // Strongly connected iff every player reaches 0 and 0 reaches every player.
    const std::vector<bool> toZero = reachable(players, scored, 0, true);
    std::vector<int> group;
    if (std::find(toZero.begin(), toZero.end(), false) != toZero.end()) {
        // The players that cannot reach 0 never won or tied against anyone who can: they lose as a group.
        for (int v = 0; v < players; ++v)
            if (!toZero[static_cast<size_t>(v)]) group.push_back(v);
        return group;
    }
    const std::vector<bool> fromZero = reachable(players, scored, 0, false);
    // Those 0 reaches never scored against the rest.
    if (std::find(fromZero.begin(), fromZero.end(), false) != fromZero.end())
        for (int v = 0; v < players; ++v)
            if (fromZero[static_cast<size_t>(v)]) group.push_back(v);
    return group;
}

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double logLikelihood(std::span<const double> theta, std::span<const Comparison> comparisons) {
    double ll = 0;
    for (const Comparison& c : comparisons) {
        const double d = theta[static_cast<size_t>(c.i)] - theta[static_cast<size_t>(c.j)];
        // log sigma(d) = -log(1 + e^-d), written to stay finite for large |d|.
        const double logP = -std::log1p(std::exp(-std::abs(d))) + std::min(d, 0.0);
        const double logQ = -std::log1p(std::exp(-std::abs(d))) + std::min(-d, 0.0);
        ll += c.scoreI * logP + (1.0 - c.scoreI) * logQ;
    }
    return ll;
}

// Solves H x = g in place (H symmetric positive definite, m x m) by Gaussian elimination with
// partial pivoting. False when H is singular.
bool solve(std::vector<std::vector<double>>& h, std::vector<double>& g) {
    const size_t m = g.size();
    for (size_t col = 0; col < m; ++col) {
        size_t pivot = col;
        for (size_t r = col + 1; r < m; ++r)
            if (std::abs(h[r][col]) > std::abs(h[pivot][col])) pivot = r;
        if (std::abs(h[pivot][col]) < 1e-300) return false;
        std::swap(h[pivot], h[col]);
        std::swap(g[pivot], g[col]);
        for (size_t r = col + 1; r < m; ++r) {
            const double f = h[r][col] / h[col][col];
            for (size_t c = col; c < m; ++c) h[r][c] -= f * h[col][c];
            g[r] -= f * g[col];
        }
    }
    for (size_t r = m; r-- > 0;) {
        for (size_t c = r + 1; c < m; ++c) g[r] -= h[r][c] * g[c];
        g[r] /= h[r][r];
    }
    return true;
}

// Maximum-likelihood strengths in natural units (P(i beats j) = sigma(theta_i - theta_j)), mean
// 0; Ford's condition must hold. Newton's method on theta_1..m-1 with theta_0 = 0, halving a step
// that lowers the (concave) log-likelihood.
std::vector<double> fitNatural(int players, std::span<const Comparison> comparisons) {
    const size_t m = static_cast<size_t>(players);
    std::vector<double> theta(m, 0.0);
    double ll = logLikelihood(theta, comparisons);
    for (int iter = 0; iter < 200; ++iter) {
        std::vector<double> grad(m, 0.0);
        std::vector<std::vector<double>> hess(m, std::vector<double>(m, 0.0));  // minus the Hessian
        for (const Comparison& c : comparisons) {
            const size_t i = static_cast<size_t>(c.i), j = static_cast<size_t>(c.j);
            const double p = logistic(theta[i] - theta[j]);
            const double g = c.scoreI - p, w = p * (1.0 - p);
            grad[i] += g;
            grad[j] -= g;
            hess[i][i] += w;
            hess[j][j] += w;
            hess[i][j] -= w;
            hess[j][i] -= w;
        }
        double gmax = 0;
        for (size_t v = 1; v < m; ++v) gmax = std::max(gmax, std::abs(grad[v]));
        if (gmax < 1e-10) break;
        std::vector<std::vector<double>> h(m - 1, std::vector<double>(m - 1));
        std::vector<double> step(grad.begin() + 1, grad.end());
        for (size_t r = 1; r < m; ++r)
            for (size_t c = 1; c < m; ++c) h[r - 1][c - 1] = hess[r][c];
        if (!solve(h, step)) break;
        double scale = 1.0;
        std::vector<double> next(m);
        for (int halving = 0; halving < 60; ++halving, scale /= 2) {
            next[0] = 0;
            for (size_t v = 1; v < m; ++v) next[v] = theta[v] + scale * step[v - 1];
            const double nll = logLikelihood(next, comparisons);
            if (nll >= ll - 1e-12) {
                ll = std::max(ll, nll);
                break;
            }
        }
        theta = next;
    }
    double mean = 0;
    for (double t : theta) mean += t;
    mean /= static_cast<double>(m);
    for (double& t : theta) t -= mean;
    return theta;
}

// Elo scale: 400 points per factor of 10 in the odds, mean 1000.
double toElo(double naturalStrength) { return 1000.0 + 400.0 * naturalStrength / std::log(10.0); }

}  // namespace

BradleyTerry bradleyTerry(int players, std::span<const Comparison> comparisons, int resamples, uint64_t seed) {
    BradleyTerry r;
    r.players = players;
    if (players < 2 || comparisons.empty()) {
        r.notEstimable = "fewer than two players, or no comparison between them";
        return r;
    }
    for (const Comparison& c : comparisons)
        if (c.i < 0 || c.j < 0 || c.i >= players || c.j >= players || c.i == c.j || !(c.scoreI >= 0 && c.scoreI <= 1)) {
            r.notEstimable = "a comparison names an unknown player, a player against itself, or a score outside [0, 1]";
            return r;
        }
    r.losingGroup = losingGroupOf(players, comparisons);
    if (!r.losingGroup.empty()) {
        r.notEstimable = "a group of players lost every comparison against the others (or never met them): "
                         "no finite maximum-likelihood strengths";
        return r;
    }
    for (double t : fitNatural(players, comparisons)) r.rating.push_back(toElo(t));
    if (resamples <= 0) return r;

    // Bootstrap over items: an item brings all of its comparisons.
    std::map<int, std::vector<Comparison>> byItem;
    for (const Comparison& c : comparisons) byItem[c.item].push_back(c);
    std::vector<const std::vector<Comparison>*> items;
    for (const auto& [id, list] : byItem) items.push_back(&list);
    BootstrapRng rng(seed);
    std::vector<std::vector<double>> samples(static_cast<size_t>(players));
    std::vector<Comparison> drawn;
    r.resamples = resamples;
    for (int s = 0; s < resamples; ++s) {
        drawn.clear();
        for (size_t k = 0; k < items.size(); ++k) {
            const auto& list = *items[rng.below(items.size())];
            drawn.insert(drawn.end(), list.begin(), list.end());
        }
        if (!losingGroupOf(players, drawn).empty()) {
            ++r.resamplesWithoutEstimate;
            continue;
        }
        const std::vector<double> theta = fitNatural(players, drawn);
        for (size_t v = 0; v < theta.size(); ++v) samples[v].push_back(toElo(theta[v]));
    }
    if (r.resamplesWithoutEstimate < resamples)
        for (auto& s : samples) {
            std::sort(s.begin(), s.end());
            r.ci.push_back({quantileSorted(s, 0.025), quantileSorted(s, 0.975)});
        }
    return r;
}

}  // namespace verdict::core
