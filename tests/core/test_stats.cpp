// Statistics against values computed by hand; the arithmetic is written next to each case.
// z = 1.959963984540054, z^2 = 3.8414588206941254.
#include "core/stats/accuracy.h"
#include "core/stats/paired_comparison.h"
#include "core/stats/proportion.h"

#include <QtTest/QtTest>

#include <cmath>
#include <random>

using namespace verdict::core;

namespace {

struct WilsonCase {
    int64_t x = 0, n = 0;
    double lo = 0, hi = 0;
};

std::vector<PairedOutcome> pairsOf(int bothRight, int aOnly, int bOnly, int bothWrong) {
    std::vector<PairedOutcome> v;
    int id = 0;
    auto add = [&](int count, bool a, bool b) {
        for (int i = 0; i < count; ++i) {
            std::string name = "i";  // appended, not "i" + ...: GCC 12 warns falsely (-Wrestrict) on that
            name += std::to_string(id++);
            v.push_back({name, a, b});
        }
    };
    add(bothRight, true, true);
    add(aOnly, true, false);
    add(bOnly, false, true);
    add(bothWrong, false, false);
    return v;
}

}  // namespace

Q_DECLARE_METATYPE(WilsonCase)

class TestStats : public QObject {
    Q_OBJECT
private slots:
    void wilson_data() {
        QTest::addColumn<WilsonCase>("c");
        // 8/10: p = 0.8, z^2/n = 0.38414588, denom = 1.38414588
        //   centre = (0.8 + 3.84145882/20) / 1.38414588 = 0.99207294 / 1.38414588 = 0.71674016
        //   half   = 1.95996398 / 1.38414588 * sqrt(0.8*0.2/10 + 3.84145882/400)
        //          = 1.41600 * sqrt(0.016 + 0.00960365) = 1.41600 * 0.16001137 = 0.22657769
        //   -> [0.49016247, 0.94331785]
        QTest::newRow("8/10") << WilsonCase{8, 10, 0.49016247, 0.94331785};
        // 50/100: p = 0.5, denom = 1.03841459, centre = 0.5
        //   half = 1.95996398 / 1.03841459 * sqrt(0.0025 + 3.84145882/40000)
        //        = 1.88745757 * sqrt(0.00259604) = 1.88745757 * 0.05095137 = 0.09616847
        //   -> [0.40383153, 0.59616847]
        QTest::newRow("50/100") << WilsonCase{50, 100, 0.40383153, 0.59616847};
        // 0/10: lo = 0; hi = centre + half = 2 * (z^2/20) / denom = 0.38414588 / 1.38414588 = 0.27753280
        QTest::newRow("0/10") << WilsonCase{0, 10, 0.0, 0.27753280};
        // 10/10: mirror image of 0/10: lo = 1 - 0.27753280 = 0.72246720, hi = 1
        QTest::newRow("10/10") << WilsonCase{10, 10, 0.72246720, 1.0};
        // 1/3: p = 1/3, z^2/n = 1.28048627, denom = 2.28048627
        //   centre = (0.33333333 + 0.64024314) / 2.28048627 = 0.42691617
        //   half   = 1.95996398 / 2.28048627 * sqrt(0.22222222/3 + 3.84145882/36)
        //          = 0.85944830 * sqrt(0.07407407 + 0.10670719) = 0.85944830 * 0.42518379 = 0.36542423
        //   -> [0.06149194, 0.79234040]
        QTest::newRow("1/3") << WilsonCase{1, 3, 0.06149194, 0.79234040};
        // Nothing observed: the whole range.
        QTest::newRow("0/0") << WilsonCase{0, 0, 0.0, 1.0};
    }
    void wilson() {
        QFETCH(WilsonCase, c);
        const Interval i = wilsonInterval(c.x, c.n);
        QVERIFY2(std::abs(i.lo - c.lo) < 1e-7, qPrintable(QString::number(i.lo, 'g', 12)));
        QVERIFY2(std::abs(i.hi - c.hi) < 1e-7, qPrintable(QString::number(i.hi, 'g', 12)));
    }

    void accuracyPerCategory() {
        // math: right, right, wrong (an error) -> 2/3; text: right, wrong -> 1/2;
        // one unscored item in "text" is left out; overall 3/5 = 0.6.
        std::vector<ItemOutcome> o = {
            {"1", "math", true, false},  {"2", "math", true, false},   {"3", "math", false, true},
            {"4", "text", true, false},  {"5", "text", false, false},  {"6", "text", std::nullopt, true},
        };
        const AccuracySummary s = summarizeAccuracy(o);
        QCOMPARE(s.nItems, int64_t(6));
        QCOMPARE(s.nUnscored, int64_t(1));
        QCOMPARE(s.nErrors, int64_t(2));
        QCOMPARE(s.overall.n, int64_t(5));
        QCOMPARE(s.overall.correct, int64_t(3));
        QCOMPARE(s.overall.accuracy, 0.6);
        QCOMPARE(s.byCategory.size(), size_t(2));
        QCOMPARE(s.byCategory.at("math").correct, int64_t(2));
        QCOMPARE(s.byCategory.at("math").n, int64_t(3));
        QVERIFY(std::abs(s.byCategory.at("math").accuracy - 2.0 / 3.0) < 1e-15);
        QCOMPARE(s.byCategory.at("text").accuracy, 0.5);
        // The per-cell interval is Wilson's: 3/5 checked against the formula by hand:
        // p = 0.6, z^2/n = 0.76829176, denom = 1.76829176, centre = (0.6 + 0.38414588)/1.76829176 = 0.55655175
        // half = 1.95996398/1.76829176 * sqrt(0.048 + 0.03841459) = 1.10839400 * 0.29396358 = 0.32582747
        // -> [0.23072428, 0.88237923]
        QVERIFY(std::abs(s.overall.ci.lo - 0.23072428) < 1e-7);
        QVERIFY(std::abs(s.overall.ci.hi - 0.88237923) < 1e-7);
        const AccuracySummary empty = summarizeAccuracy({});
        QCOMPARE(empty.overall.n, int64_t(0));
        QCOMPARE(empty.overall.ci.hi, 1.0);
    }

    void mcnemar_data() {
        QTest::addColumn<int>("b");
        QTest::addColumn<int>("c");
        QTest::addColumn<double>("p");
        // n = 6, k = 1: 2 * (C(6,0) + C(6,1)) / 2^6 = 2 * 7 / 64 = 0.21875
        QTest::newRow("1,5") << 1 << 5 << 0.21875;
        QTest::newRow("5,1 symmetric") << 5 << 1 << 0.21875;
        // n = 10, k = 0: 2 * 1 / 1024 = 0.001953125
        QTest::newRow("0,10") << 0 << 10 << 0.001953125;
        // n = 11, k = 2: 2 * (1 + 11 + 55) / 2048 = 134 / 2048 = 0.0654296875
        QTest::newRow("2,9") << 2 << 9 << 0.0654296875;
        // b = c: the tail reaches past the middle, 2 * tail >= 1 -> 1
        QTest::newRow("3,3") << 3 << 3 << 1.0;
        QTest::newRow("0,0") << 0 << 0 << 1.0;
        // n = 30, k = 0: 2 / 2^30 = 1.862645149230957e-09
        QTest::newRow("0,30") << 0 << 30 << 1.862645149230957e-09;
        // n = 100, k = 40: 2 * P(Bin(100, 1/2) <= 40) = 2 * 0.0284439668 = 0.0568879336
        // (exact sum of C(100, i) for i <= 40 over 2^100; exceeds double's range term by term)
        QTest::newRow("40,60") << 40 << 60 << 0.05688793364098079;
    }
    void mcnemar() {
        QFETCH(int, b);
        QFETCH(int, c);
        QFETCH(double, p);
        const double got = mcnemarExactPValue(b, c);
        QVERIFY2(std::abs(got - p) <= 1e-12 * std::max(1.0, p) + p * 1e-9, qPrintable(QString::number(got, 'g', 17)));
    }

    void quantileType7() {
        const std::vector<double> v = {1, 2, 3, 4};
        // h = (4 - 1) q: q = 0.5 -> h = 1.5 -> 2 + 0.5 * (3 - 2) = 2.5
        QCOMPARE(quantileSorted(v, 0.5), 2.5);
        // q = 0.025 -> h = 0.075 -> 1 + 0.075 * 1 = 1.075
        QVERIFY(std::abs(quantileSorted(v, 0.025) - 1.075) < 1e-12);
        // q = 0.975 -> h = 2.925 -> 3 + 0.925 * 1 = 3.925
        QVERIFY(std::abs(quantileSorted(v, 0.975) - 3.925) < 1e-12);
        QCOMPARE(quantileSorted(v, 0.0), 1.0);
        QCOMPARE(quantileSorted(v, 1.0), 4.0);
        QCOMPARE(quantileSorted(std::vector<double>{7}, 0.3), 7.0);
        QCOMPARE(quantileSorted({}, 0.5), 0.0);
    }

    void rngIsTheStandardEngine() {
        // C++ standard [rand.predef]: the 10000th output of a default-constructed mt19937_64
        // (seed 5489) is 9981545732273789042.
        BootstrapRng rng(5489);
        uint64_t x = 0;
        for (int i = 0; i < 10000; ++i) x = rng.next();
        QCOMPARE(x, uint64_t(9981545732273789042ULL));
        // below(n) is in range and about uniform: 30000 draws over 3 bins, each within 5 % of 10000.
        BootstrapRng r2(1);
        int bins[3] = {0, 0, 0};
        for (int i = 0; i < 30000; ++i) ++bins[r2.below(3)];
        for (int b : bins) QVERIFY2(b > 9500 && b < 10500, qPrintable(QString::number(b)));
        QCOMPARE(r2.below(1), uint64_t(0));
    }

    void bootstrapDegenerate() {
        // Every pair concordant: every resampled difference is 0.
        auto same = pairsOf(7, 0, 0, 3);
        Interval i = pairedBootstrapDifference(same);
        QCOMPARE(i.lo, 0.0);
        QCOMPARE(i.hi, 0.0);
        // Every pair A-only: every resampled difference is 1.
        auto aWins = pairsOf(0, 5, 0, 0);
        i = pairedBootstrapDifference(aWins);
        QCOMPARE(i.lo, 1.0);
        QCOMPARE(i.hi, 1.0);
        QCOMPARE(pairedBootstrapDifference({}).hi, 0.0);
    }

    void bootstrapMatchesNormalApproximation() {
        // 200 pairs, b = 30 A-only, c = 10 B-only: difference = (30 - 10) / 200 = 0.1.
        // Per-pair d in {+1, -1, 0}: E[d^2] = 40/200 = 0.2, var = 0.2 - 0.1^2 = 0.19,
        // SE of the mean = sqrt(0.19 / 200) = 0.0308221; normal 95 %: 0.1 +- 1.96 * 0.0308221
        // = [0.0396, 0.1604]. The percentile bootstrap must agree within 0.012 (its grid is 0.005).
        auto pairs = pairsOf(100, 30, 10, 60);
        const Interval i = pairedBootstrapDifference(pairs);
        QVERIFY2(std::abs(i.lo - 0.0396) < 0.012, qPrintable(QString::number(i.lo)));
        QVERIFY2(std::abs(i.hi - 0.1604) < 0.012, qPrintable(QString::number(i.hi)));
        // Fixed seed: the same interval every time; another seed gives a (slightly) different one.
        const Interval again = pairedBootstrapDifference(pairs);
        QCOMPARE(again.lo, i.lo);
        QCOMPARE(again.hi, i.hi);
    }

    void comparePairedCounts() {
        // 4 both right, 3 A-only (b), 1 B-only (c), 2 both wrong; n = 10.
        // accuracy A = (4 + 3) / 10 = 0.7, B = (4 + 1) / 10 = 0.5, difference = 0.2
        // McNemar: n = 4, k = 1: 2 * (1 + 4) / 16 = 0.625
        auto pairs = pairsOf(4, 3, 1, 2);
        const PairedComparison c = comparePaired(pairs);
        QCOMPARE(c.nPairs, int64_t(10));
        QCOMPARE(c.bothRight, int64_t(4));
        QCOMPARE(c.aOnly, int64_t(3));
        QCOMPARE(c.bOnly, int64_t(1));
        QCOMPARE(c.bothWrong, int64_t(2));
        QCOMPARE(c.accuracyA, 0.7);
        QCOMPARE(c.accuracyB, 0.5);
        QVERIFY(std::abs(c.difference - 0.2) < 1e-15);
        QCOMPARE(c.mcnemarP, 0.625);
        QCOMPARE(c.aRightBWrong, (std::vector<std::string>{"i4", "i5", "i6"}));
        QCOMPARE(c.bRightAWrong, (std::vector<std::string>{"i7"}));
        QVERIFY(c.differenceCi.lo <= c.difference && c.difference <= c.differenceCi.hi);
        QCOMPARE(c.resamples, kBootstrapResamples);
        QCOMPARE(c.seed, kBootstrapSeed);
    }
};

QTEST_GUILESS_MAIN(TestStats)
#include "test_stats.moc"
