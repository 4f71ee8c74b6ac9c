// Multiple choice: letter extraction from generated text (with its usual traps), the mc_letter
// scorer, and log-likelihood acc / acc_norm as lm-evaluation-harness defines them.
#include "core/score/choice_extract.h"
#include "core/score/mc_loglik.h"
#include "core/score/scorer.h"

#include <QtTest/QtTest>

using namespace verdict::core;

namespace {
struct LetterCase {
    const char* name;
    std::string output;
    int numChoices;
    int expected;  // -1 = no choice
};
}  // namespace

Q_DECLARE_METATYPE(LetterCase)

class TestScoreMc : public QObject {
    Q_OBJECT
private slots:
    void letters_data() {
        QTest::addColumn<LetterCase>("c");
        const std::vector<LetterCase> cases = {
            {"bare letter", "B", 4, 1},
            {"letter and period", "B.", 4, 1},
            {"parenthesised", "(B)", 4, 1},
            {"letter then text", "C) 29 is prime", 4, 2},
            {"answer is (B)", "The answer is (B)", 4, 1},
            {"answer is B.", "After checking each option, the answer is B.", 4, 1},
            {"Answer: C", "Answer: C", 4, 2},
            {"lower-case answer", "answer: d", 4, 3},
            {"markdown bold", "**C**", 4, 2},
            {"Chinese colon", "答案：B", 4, 1},
            {"Chinese full-width letter", "答案是Ｃ", 4, 2},
            {"Chinese correct answer", "经过分析，正确答案为 D。", 4, 3},
            {"Chinese choose", "我选B", 4, 1},
            {"phrase beats leading letter", "A is wrong; the answer is C", 4, 2},
            {"article A is not a choice", "A good choice would be C", 4, 2},
            {"two letters, no phrase", "B or C", 4, -1},
            {"pronoun I is not a choice", "I think it's D", 10, 3},
            {"letter out of range", "The answer is E", 4, -1},
            {"option B is correct", "Option B is correct.", 4, 1},
            {"correct answer with colon", "The correct answer is: (A) because 2 is even", 4, 0},
            {"answer is a ... (article)", "the answer is a bit unclear, but I'd say B", 4, 1},
            {"single A", "A", 4, 0},
            {"last phrase wins", "The answer is B. Wait, no: the answer is D.", 4, 3},
            {"nothing", "I am not sure.", 4, -1},
        };
        for (const auto& c : cases) QTest::addRow("%s", c.name) << c;
    }
    void letters() {
        QFETCH(LetterCase, c);
        const ChoicePick p = extractChoice(c.output, size_t(c.numChoices));
        QVERIFY2(p.index == c.expected, (std::to_string(p.index) + " via " + p.how).c_str());
    }

    void choiceTextFallback() {
        const std::vector<std::string> choices = {"Sydney", "Canberra", "Melbourne"};
        QCOMPARE(extractChoice("Canberra.", 3, choices).index, 1);
        QCOMPARE(extractChoice("canberra", 3, choices).how, std::string("choice text"));
        QCOMPARE(extractChoice("Brisbane", 3, choices).index, -1);
    }

    void mcLetterScorer() {
        auto s = makeScorer({"mc_letter", {}});
        QVERIFY(s.ok());
        SuiteItem item;
        item.choices = {"3", "4", "5", "6"};
        item.gold = 1;
        auto good = (*s)->score(item, "The answer is (B).");
        QVERIFY(good.pass);
        QCOMPARE(good.extracted, std::string("B"));
        auto bad = (*s)->score(item, "答案：C");
        QVERIFY(!bad.pass);
        QCOMPARE(bad.extracted, std::string("C"));
        QVERIFY(bad.detail.find("expected B") != std::string::npos);
        auto none = (*s)->score(item, "no idea");
        QVERIFY(!none.pass);
        QVERIFY(none.extracted.empty());
        SuiteItem noGold;
        QVERIFY(!(*s)->score(noGold, "A").pass);
    }

    void loglikAccAndNorm() {
        // The two metrics agree here: B has the best raw and per-character log-likelihood.
        auto r = scoreMcLoglik({{-2.0, 5}, {-1.5, 10}, {-3.0, 2}}, 1);
        QCOMPARE(r.pred, 1);
        QCOMPARE(r.predNorm, 1);
        QCOMPARE(r.acc, 1.0);
        QCOMPARE(r.accNorm, 1.0);
        // They disagree: the longer choice loses on the sum (-6 < -4) but wins per character
        // (-6/17 = -0.353 > -4/5 = -0.8).
        const std::vector<ChoiceLoglik> lls = {{-4.0, choiceLength("Paris")}, {-6.0, choiceLength("the city of Paris")}};
        QCOMPARE(lls[1].length, size_t(17));
        r = scoreMcLoglik(lls, 1);
        QCOMPARE(r.pred, 0);
        QCOMPARE(r.predNorm, 1);
        QCOMPARE(r.acc, 0.0);
        QCOMPARE(r.accNorm, 1.0);
        // Ties go to the first index, like numpy.argmax.
        r = scoreMcLoglik({{-1.0, 2}, {-1.0, 2}}, 1);
        QCOMPARE(r.pred, 0);
        QCOMPARE(r.acc, 0.0);
        // Empty / bad gold.
        QCOMPARE(scoreMcLoglik({}, 0).pred, -1);
        QCOMPARE(scoreMcLoglik({{-1.0, 1}}, 5).acc, 0.0);
    }

    void choiceLengthUnits() {
        QCOMPARE(choiceLength("北京"), size_t(2));                    // lm-eval: Python len() = code points
        QCOMPARE(choiceLength("北京", LengthUnit::Bytes), size_t(6));  // UTF-8 bytes
        QCOMPARE(choiceLength("Paris", LengthUnit::Bytes), size_t(5));
        // Mixed scripts: the unit changes the answer. "Beijing" is 7 chars and 7 bytes, "北京" is
        // 2 chars but 6 bytes. Per char: -7/7 = -1.0 vs -2.5/2 = -1.25 -> A; per byte: -1.0 vs
        // -2.5/6 = -0.417 -> B.
        auto chars = scoreMcLoglik({{-7.0, choiceLength("Beijing")}, {-2.5, choiceLength("北京")}}, 0);
        QCOMPARE(chars.predNorm, 0);
        auto bytes = scoreMcLoglik({{-7.0, choiceLength("Beijing", LengthUnit::Bytes)},
                                    {-2.5, choiceLength("北京", LengthUnit::Bytes)}}, 0);
        QCOMPARE(bytes.predNorm, 1);
    }

    void loglikAsScoreResult() {
        SuiteItem item;
        item.choices = {"Paris", "the city of Paris"};
        item.gold = 1;
        const std::vector<ChoiceLoglik> lls = {{-4.0, 5}, {-6.0, 17}};
        auto acc = mcLoglikScore(item, lls, false);
        QVERIFY(!acc.pass);
        QCOMPARE(acc.extracted, std::string("A"));
        auto norm = mcLoglikScore(item, lls, true);
        QVERIFY(norm.pass);
        QCOMPARE(norm.extracted, std::string("B"));
        QVERIFY(!mcLoglikScore(item, {{-1.0, 1}}, false).pass);  // count mismatch
    }
};

QTEST_GUILESS_MAIN(TestScoreMc)
#include "test_score_mc.moc"
