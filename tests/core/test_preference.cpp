// Preference statistics (core/stats/preference.h) against values computed by hand; the
// arithmetic is written next to each case. z = 1.959963984540054.
#include "core/stats/paired_comparison.h"
#include "core/stats/preference.h"

#include <QtTest/QtTest>

#include <cmath>

using namespace verdict::core;

namespace {

constexpr auto A = PairwiseChoice::A;
constexpr auto B = PairwiseChoice::B;
constexpr auto T = PairwiseChoice::Tie;
using Label = std::optional<PairwiseChoice>;

bool near(double x, double y, double tol = 1e-9) { return std::abs(x - y) <= tol; }

// `count` comparisons of i against j on fresh items with score s for i.
void add(std::vector<Comparison>& v, int i, int j, double s, int count) {
    for (int k = 0; k < count; ++k) v.push_back({static_cast<int>(v.size()), i, j, s});
}

std::vector<std::pair<Label, Label>> table(const std::vector<std::vector<int>>& counts) {
    const PairwiseChoice labels[] = {A, B, T};
    std::vector<std::pair<Label, Label>> v;
    for (size_t i = 0; i < counts.size(); ++i)
        for (size_t j = 0; j < counts[i].size(); ++j)
            for (int k = 0; k < counts[i][j]; ++k) v.emplace_back(labels[i], labels[j]);
    return v;
}

}  // namespace

class TestPreference : public QObject {
    Q_OBJECT
private slots:
    void combineOrdersFollowsTheFlipRule() {
        // Same verdict in both orders: that verdict.
        for (PairwiseChoice c : {A, B, T}) {
            const CombinedJudgment j = combineOrders({c, c});
            QCOMPARE(*j.outcome, c);
            QCOMPARE(j.agreement, OrderAgreement::Consistent);
        }
        // (A first: A wins, B first: B wins): each order chose the answer shown first -> tie.
        struct Row { Label aFirst, bFirst; OrderAgreement agreement; };
        const Row rows[] = {
            {A, B, OrderAgreement::FavoursFirst},  {B, A, OrderAgreement::FavoursSecond},
            {A, T, OrderAgreement::FavoursFirst},  {T, A, OrderAgreement::FavoursSecond},
            {B, T, OrderAgreement::FavoursSecond}, {T, B, OrderAgreement::FavoursFirst},
        };
        for (const Row& r : rows) {
            const CombinedJudgment j = combineOrders({r.aFirst, r.bFirst});
            QCOMPARE(*j.outcome, T);
            QCOMPARE(j.agreement, r.agreement);
        }
        // An unparseable order: no outcome, whatever the other said.
        QVERIFY(!combineOrders({std::nullopt, A}).outcome);
        QCOMPARE(combineOrders({B, std::nullopt}).agreement, OrderAgreement::Error);
        QCOMPARE(combineOrders({}).agreement, OrderAgreement::Error);
    }

    void winRateKeepsTiesAndErrorsApart() {
        const std::vector<Label> outcomes = {A, A, A, B, T, std::nullopt, T};
        const WinRate w = winRate(outcomes);
        QCOMPARE(w.items, 7);
        QCOMPARE(w.winsA, 3);
        QCOMPARE(w.winsB, 1);
        QCOMPARE(w.ties, 2);
        QCOMPARE(w.errors, 1);
        QCOMPARE(w.decided, 4);
        QVERIFY(near(*w.winRateA, 0.75));
        // Wilson 3 of 4: centre (0.75 + 0.480182) / 1.960365 = 0.627527,
        // half 1.959964 / 1.960365 * sqrt(0.046875 + 0.060023) = 0.326885 -> [0.300642, 0.954413].
        QVERIFY(near(w.winRateACi.lo, 0.300642, 1e-6));
        QVERIFY(near(w.winRateACi.hi, 0.954413, 1e-6));
        const WinRate none = winRate(std::vector<Label>{T, std::nullopt});
        QVERIFY(!none.winRateA);
        QCOMPARE(none.winRateACi.lo, 0.0);
        QCOMPARE(none.winRateACi.hi, 1.0);
    }

    void positionBiasCountsFlips() {
        const std::vector<OrderedJudgment> j = {
            {A, A}, {B, B}, {T, T},        // consistent: 3
            {A, B}, {T, B}, {A, T},        // favour the first shown: 3
            {B, A},                        // favours the second: 1
            {std::nullopt, A}, {A, std::nullopt},  // errors: 2
        };
        const PositionBias b = positionBias(j);
        QCOMPARE(b.consistent, 3);
        QCOMPARE(b.favoursFirst, 3);
        QCOMPARE(b.favoursSecond, 1);
        QCOMPARE(b.errors, 2);
        QCOMPARE(b.usable, 7);
        QVERIFY(near(*b.flipRate, 4.0 / 7.0));
        QVERIFY(!positionBias(std::vector<OrderedJudgment>{{std::nullopt, std::nullopt}}).flipRate);
    }

    void kappaOfTwoLabels() {
        // Rater 1 rows, rater 2 columns: [[20, 5], [10, 15]], n = 50.
        // p_o = 35/50 = 0.7; marginals rows (0.5, 0.5), columns (0.6, 0.4); p_e = 0.3 + 0.2 = 0.5;
        // kappa = 0.2 / 0.5 = 0.4.
        // A = 0.4 (1 - 1.1 * 0.6)^2 + 0.3 (1 - 0.9 * 0.6)^2 = 0.04624 + 0.06348 = 0.10972
        // B = 0.36 (0.1 (0.6 + 0.5)^2 + 0.2 (0.4 + 0.5)^2) = 0.36 * 0.283 = 0.10188
        // C = (0.4 - 0.5 * 0.6)^2 = 0.01
        // var = 0.2016 / (50 * 0.25) = 0.016128, SE = 0.126996; CI 0.4 -+ 0.248908.
        const Kappa k = cohensKappa(table({{20, 5, 0}, {10, 15, 0}, {0, 0, 0}}));
        QCOMPARE(k.n, 50);
        QVERIFY(near(k.observed, 0.7));
        QVERIFY(near(k.expected, 0.5));
        QVERIFY(near(*k.kappa, 0.4));
        QVERIFY(near(k.standardError, std::sqrt(0.016128)));
        QVERIFY(near(k.ci.lo, 0.4 - 1.959963984540054 * std::sqrt(0.016128)));
        QVERIFY(near(k.ci.hi, 0.4 + 1.959963984540054 * std::sqrt(0.016128)));
    }

    void kappaOfThreeLabels() {
        // [[5, 1, 0], [2, 4, 1], [0, 1, 2]], n = 16: p_o = 11/16 = 0.6875;
        // rows (6, 7, 3)/16, columns (7, 6, 3)/16: p_e = (42 + 42 + 9)/256 = 0.36328125;
        // kappa = 0.32421875 / 0.63671875 = 0.509202.
        // A = 5/16 (1 - 13/16 k')^2 + 4/16 (1 - 13/16 k')^2 + 2/16 (1 - 6/16 k')^2, k' = 1 - kappa
        // B = k'^2 (1/16 (7/16 + 7/16)^2 + 2/16 (6/16 + 6/16)^2 + 1/16 (6/16 + 3/16)^2 + 1/16 (3/16 + 7/16)^2)
        // C = (kappa - p_e k')^2; SE = sqrt((A + B - C) / (16 (1 - p_e)^2)) = 0.182550.
        const Kappa k = cohensKappa(table({{5, 1, 0}, {2, 4, 1}, {0, 1, 2}}));
        const double kappa = 0.32421875 / 0.63671875, kp = 1 - kappa;
        const double a = 9.0 / 16 * std::pow(1 - 13.0 / 16 * kp, 2) + 2.0 / 16 * std::pow(1 - 6.0 / 16 * kp, 2);
        const double b = kp * kp * (1.0 / 16 * std::pow(14.0 / 16, 2) + 2.0 / 16 * std::pow(12.0 / 16, 2) +
                                    1.0 / 16 * std::pow(9.0 / 16, 2) + 1.0 / 16 * std::pow(10.0 / 16, 2));
        const double c = std::pow(kappa - 0.36328125 * kp, 2);
        const double se = std::sqrt((a + b - c) / (16 * std::pow(0.63671875, 2)));
        QVERIFY(near(*k.kappa, kappa));
        QVERIFY(near(k.standardError, se));
        QVERIFY(near(se, 0.182550, 1e-6));
    }

    void kappaEdges() {
        // Perfect agreement: kappa 1, SE 0 (A = sum p_ii (1 - 0)^2 = 1, B = 0, C = 1).
        const Kappa perfect = cohensKappa(table({{3, 0, 0}, {0, 2, 0}, {0, 0, 0}}));
        QVERIFY(near(*perfect.kappa, 1.0));
        QVERIFY(near(perfect.standardError, 0.0));
        // One label throughout from both raters: p_e = 1, kappa undefined.
        QVERIFY(!cohensKappa(table({{4, 0, 0}, {0, 0, 0}, {0, 0, 0}})).kappa);
        // Missing labels are left out; nothing left: n = 0.
        const std::vector<std::pair<Label, Label>> gaps = {{A, std::nullopt}, {std::nullopt, B}};
        const Kappa none = cohensKappa(gaps);
        QCOMPARE(none.n, 0);
        QVERIFY(!none.kappa);
    }

    void bradleyTerryTwoPlayers() {
        // 7 wins to 3: theta_A - theta_B = ln(7/3); on the Elo scale 400 log10(7/3) = 147.190714,
        // around the mean 1000: 1073.595357 and 926.404643.
        std::vector<Comparison> c;
        add(c, 0, 1, 1.0, 7);
        add(c, 0, 1, 0.0, 3);
        BradleyTerry bt = bradleyTerry(2, c, 0);
        QVERIFY2(bt.notEstimable.empty(), bt.notEstimable.c_str());
        QVERIFY(near(bt.rating[0], 1000 + 73.59535705891889, 1e-7));
        QVERIFY(near(bt.rating[1], 1000 - 73.59535705891889, 1e-7));
        QVERIFY(bt.ci.empty());
        // 6 wins, 2 losses, 2 ties: ties count half for each side, 7 to 3 again.
        std::vector<Comparison> ties;
        add(ties, 0, 1, 1.0, 6);
        add(ties, 1, 0, 1.0, 2);  // B named first this time
        add(ties, 0, 1, 0.5, 2);
        bt = bradleyTerry(2, ties, 0);
        QVERIFY(near(bt.rating[0], 1000 + 73.59535705891889, 1e-7));
    }

    void bradleyTerryThreePlayers() {
        // Counts matching strengths 4 : 2 : 1 exactly (A-B 2:1, B-C 2:1, A-C 4:1), so the
        // likelihood equations (observed wins = expected wins: A 6 = 3*2/3 + 5*4/5, B 3, C 2)
        // hold there: theta = ln(4, 2, 1) - ln 2; Elo 1000 + 400 log10 2 * (1, 0, -1).
        std::vector<Comparison> c;
        add(c, 0, 1, 1.0, 2);
        add(c, 0, 1, 0.0, 1);
        add(c, 1, 2, 1.0, 2);
        add(c, 1, 2, 0.0, 1);
        add(c, 0, 2, 1.0, 4);
        add(c, 2, 0, 1.0, 1);
        const BradleyTerry bt = bradleyTerry(3, c, 0);
        QVERIFY2(bt.notEstimable.empty(), bt.notEstimable.c_str());
        QVERIFY(near(bt.rating[0], 1120.411998265592, 1e-7));
        QVERIFY(near(bt.rating[1], 1000.0, 1e-7));
        QVERIFY(near(bt.rating[2], 879.588001734408, 1e-7));
        // A cycle of equal records: all equal.
        std::vector<Comparison> cycle;
        add(cycle, 0, 1, 1.0, 2);
        add(cycle, 0, 1, 0.0, 1);
        add(cycle, 1, 2, 1.0, 2);
        add(cycle, 1, 2, 0.0, 1);
        add(cycle, 2, 0, 1.0, 2);
        add(cycle, 2, 0, 0.0, 1);
        for (double r : bradleyTerry(3, cycle, 0).rating) QVERIFY(near(r, 1000.0, 1e-7));
    }

    void bradleyTerryWithoutFiniteEstimate() {
        // B and C never won or tied against A: strengths run off to infinity.
        std::vector<Comparison> c;
        add(c, 0, 1, 1.0, 3);
        add(c, 0, 2, 1.0, 2);
        add(c, 1, 2, 0.5, 2);
        BradleyTerry bt = bradleyTerry(3, c, 0);
        QVERIFY(!bt.notEstimable.empty());
        QVERIFY(bt.rating.empty());
        QCOMPARE(bt.losingGroup, (std::vector<int>{1, 2}));
        // A beat everyone; the losing group is everyone else, found from A's side too.
        std::vector<Comparison> d;
        add(d, 1, 0, 1.0, 2);
        add(d, 1, 2, 1.0, 2);
        add(d, 0, 2, 0.5, 1);
        QCOMPARE(bradleyTerry(3, d, 0).losingGroup, (std::vector<int>{0, 2}));
        // A player nobody met.
        std::vector<Comparison> e;
        add(e, 0, 1, 1.0, 1);
        add(e, 0, 1, 0.0, 1);
        QCOMPARE(bradleyTerry(3, e, 0).losingGroup, (std::vector<int>{2}));
        // Bad input: a clean refusal, not a crash.
        QVERIFY(!bradleyTerry(2, std::vector<Comparison>{{0, 0, 5, 1.0}}, 0).notEstimable.empty());
        QVERIFY(!bradleyTerry(2, std::vector<Comparison>{{0, 0, 1, 2.0}}, 0).notEstimable.empty());
        QVERIFY(!bradleyTerry(1, std::vector<Comparison>{}, 0).notEstimable.empty());
    }

    void bradleyTerryBootstrap() {
        std::vector<Comparison> c;
        add(c, 0, 1, 1.0, 7);
        add(c, 0, 1, 0.0, 3);
        const BradleyTerry bt = bradleyTerry(2, c, 1000, 7);
        QCOMPARE(bt.resamples, 1000);
        // A resample holds none of B's 3 wins with probability 0.7^10 = 2.8 %: some have no estimate.
        QVERIFY(bt.resamplesWithoutEstimate > 0);
        QVERIFY(bt.resamplesWithoutEstimate < 100);
        QCOMPARE(bt.ci.size(), size_t(2));
        for (int p = 0; p < 2; ++p) {
            QVERIFY(bt.ci[p].lo <= bt.rating[p] && bt.rating[p] <= bt.ci[p].hi);
            QVERIFY(bt.ci[p].hi - bt.ci[p].lo > 50);  // ten items: wide
        }
        // Symmetric around the mean with two players; the same seed gives the same interval.
        QVERIFY(near(bt.ci[0].lo - 1000, 1000 - bt.ci[1].hi, 1e-6));
        const BradleyTerry again = bradleyTerry(2, c, 1000, 7);
        QCOMPARE(again.ci[0].lo, bt.ci[0].lo);
        QCOMPARE(again.resamplesWithoutEstimate, bt.resamplesWithoutEstimate);
        // Items keep their comparisons together: one item with a win each way never separates.
        std::vector<Comparison> paired;
        for (int item = 0; item < 5; ++item) {
            paired.push_back({item, 0, 1, 1.0});
            paired.push_back({item, 0, 1, 0.0});
        }
        const BradleyTerry even = bradleyTerry(2, paired, 200, 1);
        QCOMPARE(even.resamplesWithoutEstimate, 0);
        QVERIFY(near(even.ci[0].lo, 1000.0, 1e-7) && near(even.ci[0].hi, 1000.0, 1e-7));
    }

    void pairedBootstrapMeanOfScores() {
        const std::vector<double> same = {2.0, 2.0, 2.0};
        const Interval i = pairedBootstrapMean(same, 500, 3);
        QVERIFY(near(i.lo, 2.0) && near(i.hi, 2.0));
        QCOMPARE(pairedBootstrapMean({}, 500, 3).lo, 0.0);
        // Over +1 / 0 / -1 it is the accuracy-difference bootstrap, draw for draw.
        std::vector<PairedOutcome> pairs;
        std::vector<double> diffs;
        for (int k = 0; k < 40; ++k) {
            const bool a = k % 3 != 0, b = k % 4 == 0;
            pairs.push_back({std::to_string(k), a, b});
            diffs.push_back(double(int(a) - int(b)));
        }
        const Interval x = pairedBootstrapDifference(pairs, 2000, 11), y = pairedBootstrapMean(diffs, 2000, 11);
        QCOMPARE(x.lo, y.lo);
        QCOMPARE(x.hi, y.hi);
    }
};

QTEST_APPLESS_MAIN(TestPreference)
#include "test_preference.moc"
