// ROUGE-L and BLEU against values computed by hand (the arithmetic is in the comments), with CJK
// character segmentation.
#include "core/score/bleu.h"
#include "core/score/rouge.h"
#include "core/score/scorer.h"

#include <QtTest/QtTest>

#include <cmath>

using namespace verdict::core;

class TestScoreOverlap : public QObject {
    Q_OBJECT
private slots:
    void rougeTokenization() {
        QCOMPARE(rougeTokens("The cat's hat, 2 times!"), (std::vector<std::string>{"the", "cat", "s", "hat", "2", "times"}));
        QCOMPARE(rougeTokens("我喜欢 cats。"), (std::vector<std::string>{"我", "喜", "欢", "cats"}));
        QCOMPARE(rougeTokens("Ｃａｔ"), std::vector<std::string>{"cat"});
    }

    void rougeLHandValues() {
        // hyp: the cat sat on the mat (6 tokens); ref: the cat is on the mat (6 tokens).
        // LCS = "the cat on the mat" = 5, so P = R = F = 5/6.
        auto r = rougeL("the cat sat on the mat", "the cat is on the mat");
        QVERIFY(std::fabs(r.precision - 5.0 / 6) < 1e-12);
        QVERIFY(std::fabs(r.recall - 5.0 / 6) < 1e-12);
        QVERIFY(std::fabs(r.f1 - 5.0 / 6) < 1e-12);
        // Chinese, one token per character: hyp 我喜欢猫 (4), ref 我很喜欢狗 (5); LCS 我喜欢 = 3.
        // P = 3/4, R = 3/5, F = 2 * 0.75 * 0.6 / 1.35 = 2/3.
        r = rougeL("我喜欢猫", "我很喜欢狗");
        QVERIFY(std::fabs(r.precision - 0.75) < 1e-12);
        QVERIFY(std::fabs(r.recall - 0.6) < 1e-12);
        QVERIFY(std::fabs(r.f1 - 2.0 / 3) < 1e-12);
        // Order matters for LCS: "b a" vs "a b" share a subsequence of length 1: F = 1/2.
        QVERIFY(std::fabs(rougeL("b a", "a b").f1 - 0.5) < 1e-12);
        QCOMPARE(rougeL("", "a").f1, 0.0);
    }

    void rougeScorerBestReference() {
        auto s = makeScorer({"rouge_l", {{"threshold", 0.8}}});
        QVERIFY(s.ok());
        SuiteItem item;
        item.references = {"completely different words", "the cat is on the mat"};
        auto r = (*s)->score(item, "the cat sat on the mat");
        QVERIFY(std::fabs(r.score - 5.0 / 6) < 1e-12);
        QVERIFY(r.pass);  // 0.833 >= 0.8
        auto low = (*s)->score(item, "a dog");
        QVERIFY(!low.pass);
    }

    void bleu13aTokenizer() {
        // mteval-v13a: punctuation split off, but '.' and ',' stay inside numbers and '-' is split
        // after a digit; the apostrophe is not split.
        QCOMPARE(bleuTokens("Hello, world! It's 3.5-4.0 km."),
                 (std::vector<std::string>{"Hello", ",", "world", "!", "It's", "3.5", "-", "4.0", "km", "."}));
        QCOMPARE(bleuTokens("我喜欢猫。"), (std::vector<std::string>{"我", "喜", "欢", "猫", "。"}));
        QCOMPARE(bleuTokens("a &amp; b"), (std::vector<std::string>{"a", "&", "b"}));
    }

    void sentenceBleuHandValues() {
        // hyp: the cat sat on the mat / ref: the cat is on the mat.
        //   1-grams 5/6 (the x2, cat, on, mat; "sat" misses), 2-grams 3/5 (the cat, on the, the mat),
        //   3-grams 1/4 (on the mat), 4-grams 0/3 -> exp smoothing: 1 / (2 * 3) = 1/6.
        //   BP = 1 (6 vs 6). BLEU = 100 * (5/6 * 3/5 * 1/4 * 1/6)^(1/4) = 37.9918.
        QVERIFY(std::fabs(sentenceBleu("the cat sat on the mat", {"the cat is on the mat"}) - 37.99178428257963) < 1e-9);
        // hyp: a dog runs / ref: a dog runs fast. 1-3-grams all match, no 4-gram in the hypothesis,
        //   so the effective order is 3; BP = exp(1 - 4/3). BLEU = 71.6531.
        QVERIFY(std::fabs(sentenceBleu("a dog runs", {"a dog runs fast"}) - 71.65313105737893) < 1e-9);
        // Chinese by character: hyp 我喜欢猫 (4) / ref 我很喜欢猫 (5): 1-grams 4/4, 2-grams 2/3
        //   (喜欢, 欢猫), 3-grams 1/2 (喜欢猫), 4-grams 0/1 -> 1/2 after smoothing. BP = exp(1 - 5/4).
        //   BLEU = 100 * (1 * 2/3 * 1/2 * 1/2)^(1/4) * exp(-1/4) = 49.7609.
        QVERIFY(std::fabs(sentenceBleu("我喜欢猫", {"我很喜欢猫"}) - 49.76093899250712) < 1e-9);
        // Brevity: hyp "the cat" vs the 6-token ref: p1 = p2 = 1, effective order 2, BP = exp(1 - 3).
        QVERIFY(std::fabs(sentenceBleu("the cat", {"the cat is on the mat"}) - 13.53352832366127) < 1e-9);
        QCOMPARE(sentenceBleu("the cat is on the mat", {"the cat is on the mat"}), 100.0);
        QCOMPARE(sentenceBleu("", {"the cat"}), 0.0);
    }

    void multipleReferencesClipAndClosestLength() {
        // "the the the" vs refs "the cat" and "the the dog": unigram clip uses the max count in any
        // one reference (2), so p1 = 2/3; bigrams: "the the" x2, best ref count 1 -> 1/2; no
        // trigram match -> 1/(2*1); hyp length 3 is closest to ref length 3 -> BP = 1.
        // BLEU = 100 * (2/3 * 1/2 * 1/2)^(1/3) (effective order 3) = 100 * (1/6)^(1/3).
        const double expected = 100.0 * std::cbrt(1.0 / 6.0);
        QVERIFY(std::fabs(sentenceBleu("the the the", {"the cat", "the the dog"}) - expected) < 1e-9);
    }

    void corpusBleuHandValue() {
        // Statistics summed over both sentences: correct [5+3, 3+2, 1+1, 0+0] = [8, 5, 2, 0],
        // total [6+3, 5+2, 4+1, 3+0] = [9, 7, 5, 3], hyp length 9, ref length 6 + 4 = 10.
        // p4 smoothed to 1/(2*3). BP = exp(1 - 10/9). BLEU = 40.5884 (all 4 orders: no effective order).
        const double bleu = corpusBleu({"the cat sat on the mat", "a dog runs"}, {{"the cat is on the mat"}, {"a dog runs fast"}});
        QVERIFY(std::fabs(bleu - 40.58841603380761) < 1e-9);
    }

    void bleuScorer() {
        auto s = makeScorer({"bleu", {{"threshold", 0.3}}});
        QVERIFY(s.ok());
        SuiteItem item;
        item.references = {"the cat is on the mat"};
        auto r = (*s)->score(item, "the cat sat on the mat");
        QVERIFY(std::fabs(r.score - 0.3799178428257963) < 1e-12);
        QVERIFY(r.pass);
    }
};

QTEST_GUILESS_MAIN(TestScoreOverlap)
#include "test_score_overlap.moc"
