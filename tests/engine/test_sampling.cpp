// Sampling: each step of the chain on hand-computed cases, the Sampler's greedy path, seeding
// and the distribution it draws from.
#include "sampling/sampler.h"

#include <QtTest/QtTest>

#include <cmath>
#include <map>

using namespace verdict;
using namespace verdict::sampling;

namespace {
std::vector<Candidate> cands(const std::vector<float>& logits) {
    std::vector<Candidate> c;
    for (size_t i = 0; i < logits.size(); ++i) c.push_back({static_cast<int32_t>(i), logits[i], 0.0f});
    return c;
}
std::vector<int32_t> ids(const std::vector<Candidate>& c) {
    std::vector<int32_t> out;
    for (const auto& x : c) out.push_back(x.id);
    return out;
}
}  // namespace

class TestSampling : public QObject {
    Q_OBJECT
private slots:
    void argmaxLowestIdWinsTies() {
        const std::vector<float> l = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
        QCOMPARE(argmax(l.data(), 5), 1);
        const std::vector<float> one = {-3.0f};
        QCOMPARE(argmax(one.data(), 1), 0);
    }

    void greedySamplerIsArgmax() {
        Sampler s(SamplingParams::greedy());
        const std::vector<float> l = {0.1f, 0.3f, 0.3f, -2.0f};
        for (int i = 0; i < 5; ++i) QCOMPARE(s.sample(l), 1);
    }

    void topKKeepsHighestSorted() {
        auto c = cands({1.0f, 5.0f, 3.0f, 5.0f, -1.0f});
        topK(c, 3);
        QCOMPARE(ids(c), (std::vector<int32_t>{1, 3, 2}));
        auto all = cands({1.0f, 5.0f, 3.0f});
        topK(all, 0);  // off: everything, sorted
        QCOMPARE(ids(all), (std::vector<int32_t>{1, 2, 0}));
    }

    void topPKeepsSmallestPrefixReachingP() {
        // probabilities 0.5, 0.3, 0.2
        const std::vector<float> l = {std::log(0.2f), std::log(0.5f), std::log(0.3f)};
        auto c = cands(l);
        topP(c, 0.7f);  // 0.5 < 0.7 <= 0.8
        QCOMPARE(ids(c), (std::vector<int32_t>{1, 2}));
        c = cands(l);
        topP(c, 0.45f);  // the first already reaches it
        QCOMPARE(ids(c), (std::vector<int32_t>{1}));
        c = cands(l);
        topP(c, 0.9f);
        QCOMPARE(c.size(), size_t(3));
        c = cands(l);
        topP(c, 1.0f);  // off
        QCOMPARE(c.size(), size_t(3));
    }

    void minPDropsUnlikely() {
        // p: 0.5, 0.3, 0.2 -> min_p 0.5 keeps p >= 0.25: ids 1, 2
        auto c = cands({std::log(0.2f), std::log(0.5f), std::log(0.3f)});
        minP(c, 0.5f);
        std::vector<int32_t> kept = ids(c);
        std::sort(kept.begin(), kept.end());
        QCOMPARE(kept, (std::vector<int32_t>{1, 2}));
        auto d = cands({0.0f, 1.0f});
        minP(d, 0.0f);
        QCOMPARE(d.size(), size_t(2));
    }

    void penalties() {
        auto c = cands({2.0f, -2.0f, 1.0f, 3.0f});
        const std::vector<int32_t> recent = {0, 1, 0};
        applyPenalties(c, recent, 2.0f, 0.5f, 0.25f);
        QCOMPARE(c[0].logit, 2.0f / 2.0f - 2 * 0.5f - 0.25f);   // positive: divided
        QCOMPARE(c[1].logit, -2.0f * 2.0f - 1 * 0.5f - 0.25f);  // negative: multiplied
        QCOMPARE(c[2].logit, 1.0f);                             // not recent
        QCOMPARE(c[3].logit, 3.0f);
    }

    void penaltiesChangeGreedyChoice() {
        SamplingParams p = SamplingParams::greedy();
        p.repeatPenalty = 4.0f;
        Sampler s(p);
        const std::vector<float> l = {1.0f, 3.0f, 2.0f};
        QCOMPARE(s.sample(l), 1);
        s.accept(1);  // 3 / 4 = 0.75 < 2
        QCOMPARE(s.sample(l), 2);
    }

    void temperatureScales() {
        auto c = cands({1.0f, -4.0f});
        temperature(c, 0.5f);
        QCOMPARE(c[0].logit, 2.0f);
        QCOMPARE(c[1].logit, -8.0f);
    }

    void softmaxSumsToOne() {
        auto c = cands({1.0f, 2.0f, 3.0f, 100.0f});
        softmax(c, true);
        double sum = 0;
        for (const auto& x : c) sum += x.p;
        QVERIFY(std::fabs(sum - 1.0) < 1e-6);
        QCOMPARE(c[0].id, 3);
    }

    void sameSeedSameTokens() {
        SamplingParams p;
        p.temperature = 1.0f;
        p.topK = 0;
        p.topP = 1.0f;
        p.minP = 0.0f;
        p.seed = 1234;
        std::vector<float> l(50);
        for (size_t i = 0; i < l.size(); ++i) l[i] = std::sin(static_cast<float>(i));
        Sampler a(p), b(p);
        std::vector<int32_t> ta, tb;
        for (int i = 0; i < 200; ++i) {
            ta.push_back(a.sample(l));
            tb.push_back(b.sample(l));
        }
        QCOMPARE(ta, tb);
        p.seed = 1235;
        Sampler c(p);
        std::vector<int32_t> tc;
        for (int i = 0; i < 200; ++i) tc.push_back(c.sample(l));
        QVERIFY(ta != tc);
    }

    void drawsFollowTheDistribution() {
        SamplingParams p;
        p.temperature = 1.0f;
        p.topK = 0;
        p.topP = 1.0f;
        p.minP = 0.0f;
        p.seed = 7;
        Sampler s(p);
        const std::vector<float> l = {std::log(0.7f), std::log(0.2f), std::log(0.1f)};
        std::map<int32_t, int> n;
        const int kDraws = 20000;
        for (int i = 0; i < kDraws; ++i) ++n[s.sample(l)];
        QVERIFY(std::fabs(n[0] / double(kDraws) - 0.7) < 0.02);
        QVERIFY(std::fabs(n[1] / double(kDraws) - 0.2) < 0.02);
        QVERIFY(std::fabs(n[2] / double(kDraws) - 0.1) < 0.02);
    }

    void topKOneIsGreedy() {
        SamplingParams p;
        p.temperature = 1.5f;
        p.topK = 1;
        p.seed = 99;
        Sampler s(p);
        const std::vector<float> l = {0.0f, 0.1f, 0.05f};
        for (int i = 0; i < 50; ++i) QCOMPARE(s.sample(l), 1);
    }

    void minPFiltersDraws() {
        SamplingParams p;
        p.temperature = 1.0f;
        p.topK = 0;
        p.topP = 1.0f;
        p.minP = 0.5f;  // keeps p >= 0.35 of the 0.7 token: only id 0
        p.seed = 3;
        Sampler s(p);
        const std::vector<float> l = {std::log(0.7f), std::log(0.2f), std::log(0.1f)};
        for (int i = 0; i < 200; ++i) QCOMPARE(s.sample(l), 0);
    }
};

QTEST_GUILESS_MAIN(TestSampling)
#include "test_sampling.moc"
