// The judge's verdict parser (core/judge/judge_verdict.h): MT-Bench's markers, reasoning skipped,
// and every output it cannot read without guessing refused with the reason.
#include "core/judge/judge_verdict.h"

#include <QtTest/QtTest>

#include <string>

using namespace verdict::core;

namespace {
// -1: unparseable; else the PairwiseChoice's value.
int pairwise(const QString& output) {
    const std::string text = output.toStdString();
    auto v = parsePairwiseVerdict(text);
    return v ? static_cast<int>(*v) : -1;
}
QString pairwiseError(const std::string& output) {
    auto v = parsePairwiseVerdict(output);
    return v ? QString() : QString::fromStdString(v.error().message);
}
}  // namespace

class TestJudgeVerdict : public QObject {
    Q_OBJECT
private slots:
    void pairwiseVerdicts_data() {
        QTest::addColumn<QString>("output");
        QTest::addColumn<int>("expected");  // -1: unparseable
        constexpr int A = 0, B = 1, Tie = 2, None = -1;
        QTest::addRow("A") << "Assistant A follows the instructions better.\n\n[[A]]" << A;
        QTest::addRow("B") << "Final verdict: [[B]]" << B;
        QTest::addRow("C is a tie") << "Both are equally good. [[C]]" << Tie;
        QTest::addRow("tie spelled out") << "[[Tie]]" << Tie;
        QTest::addRow("case and spaces") << "verdict: [[ b ]]" << B;
        QTest::addRow("ideographic spaces") << QString::fromUtf8("\u7ed3\u8bba\uff1a[[\u3000A\u3000]]") << A;
        QTest::addRow("TIE in capitals") << "[[TIE]]" << Tie;
        QTest::addRow("agreeing repeats") << "[[B]] because ... so again: [[B]]" << B;
        QTest::addRow("extra brackets") << "[[[A]]]" << A;
        QTest::addRow("format restated") << "I output [[A]] if A is better, [[B]] if B is. Verdict: [[B]]" << None;
        QTest::addRow("conflict") << "[[A]]\n[[C]]" << None;
        QTest::addRow("no marker") << "Assistant A is clearly better." << None;
        QTest::addRow("single brackets") << "[A]" << None;
        QTest::addRow("a score is no verdict") << "Rating: [[7]]" << None;
        QTest::addRow("unknown word") << "[[neither]]" << None;
        QTest::addRow("split over lines") << "[[\nA]]" << None;
        QTest::addRow("empty") << "" << None;
        QTest::addRow("reasoning skipped") << "<think>A looks better: [[A]]? no.</think>\nThe verdict: [[B]]" << B;
        QTest::addRow("verdict only in reasoning") << "<think>[[A]]</think>no marker here" << None;
        QTest::addRow("reasoning never ended") << "  <think>comparing... [[A]]" << None;
        QTest::addRow("harmony final channel")
            << "<|channel|>analysis<|message|>maybe [[A]]<|end|><|start|>assistant<|channel|>final<|message|>[[B]]" << B;
        QTest::addRow("harmony without final") << "<|channel|>analysis<|message|>[[A]] probably" << None;
    }
    void pairwiseVerdicts() {
        QFETCH(QString, output);
        QFETCH(int, expected);
        QCOMPARE(pairwise(output), expected);
    }

    void errorsSayWhy() {
        QVERIFY(pairwiseError("I output [[A]] if A is better. Verdict: [[B]]").contains("conflicting verdicts '[[A]]' and '[[B]]'"));
        QVERIFY(pairwiseError("A is better").contains("no [[A]], [[B]] or [[C]]"));
        QVERIFY(pairwiseError("A is better").contains("'A is better'"));  // what the judge said, quoted
        QVERIFY(pairwiseError("<think>hmm").contains("never ended"));
        QVERIFY(pairwiseError("<|channel|>analysis<|message|>x").contains("final"));
        // A hostile judge output: one line, no raw escape bytes, cut.
        const std::string hostile = "\x1b[2J\x1b]0;pwned\x07" + std::string(100000, '\n');
        const QString e = pairwiseError(hostile);
        QVERIFY(!e.isEmpty());
        QVERIFY(!e.contains('\x1b') && !e.contains('\n') && !e.contains('\x07'));
        QVERIFY(e.contains("\\x1b"));
        QVERIFY2(e.size() < 1000 && e.contains("bytes)"), qPrintable(e));
    }

    void rubricScores_data() {
        QTest::addColumn<QString>("output");
        QTest::addColumn<double>("minScore");
        QTest::addColumn<double>("maxScore");
        QTest::addColumn<double>("expected");  // -1: unparseable
        QTest::addRow("integer") << "The answer is correct and clear.\nRating: [[7]]" << 1.0 << 10.0 << 7.0;
        QTest::addRow("decimal") << "Rating: [[8.5]]" << 1.0 << 10.0 << 8.5;
        QTest::addRow("bounds") << "[[10]]" << 1.0 << 10.0 << 10.0;
        QTest::addRow("spaces") << "[[ 3 ]]" << 1.0 << 10.0 << 3.0;
        QTest::addRow("agreeing repeats") << "[[6]] ... Rating: [[6.0]]" << 1.0 << 10.0 << 6.0;
        QTest::addRow("pairwise markers ignored") << "[[A]] Rating: [[9]]" << 1.0 << 10.0 << 9.0;
        QTest::addRow("above the scale") << "Rating: [[11]]" << 1.0 << 10.0 << -1.0;
        QTest::addRow("below the scale") << "Rating: [[0]]" << 1.0 << 10.0 << -1.0;
        QTest::addRow("five-point scale") << "[[5]]" << 1.0 << 5.0 << 5.0;
        QTest::addRow("six on five points") << "[[6]]" << 1.0 << 5.0 << -1.0;
        QTest::addRow("conflict") << "Rating: [[7]]\nOn reflection: [[8]]" << 1.0 << 10.0 << -1.0;
        QTest::addRow("fraction is no score") << "[[7/10]]" << 1.0 << 10.0 << -1.0;
        QTest::addRow("trailing dot") << "[[7.]]" << 1.0 << 10.0 << -1.0;
        QTest::addRow("negative") << "[[-1]]" << 1.0 << 10.0 << -1.0;
        QTest::addRow("two dots") << "[[1.2.3]]" << 1.0 << 10.0 << -1.0;
        QTest::addRow("exponent") << "[[1e1]]" << 1.0 << 10.0 << -1.0;
        QTest::addRow("no marker") << "Rating: 7" << 1.0 << 10.0 << -1.0;
        QTest::addRow("reasoning skipped") << "<think>[[2]]</think>Rating: [[9]]" << 1.0 << 10.0 << 9.0;
        QTest::addRow("long digits") << "[[0000000000007]]" << 1.0 << 10.0 << 7.0;
        QTest::addRow("too long for a marker") << "[[00000000000000007]]" << 1.0 << 10.0 << -1.0;
    }
    void rubricScores() {
        QFETCH(QString, output);
        QFETCH(double, minScore);
        QFETCH(double, maxScore);
        QFETCH(double, expected);
        auto v = parseRubricScore(output.toStdString(), minScore, maxScore);
        QCOMPARE(v ? *v : -1.0, expected);
    }

    void rubricErrorsSayWhy() {
        auto out = parseRubricScore("Rating: [[11]]");
        QVERIFY(!out && QString::fromStdString(out.error().message).contains("score 11 is outside the scale 1-10"));
        auto conflict = parseRubricScore("[[7]] [[8]]");
        QVERIFY(!conflict && QString::fromStdString(conflict.error().message).contains("conflicting scores [[7]] and [[8]]"));
        auto none = parseRubricScore("seven");
        QVERIFY(!none && QString::fromStdString(none.error().message).contains("no score"));
    }

    void longOutputsAreReadWhole() {
        // Many openings, one verdict at the very end: found (the scan does not give up or stall).
        std::string text;
        for (int i = 0; i < 200000; ++i) text += "[[x";
        text += " [[B]]";
        auto v = parsePairwiseVerdict(text);
        QVERIFY(v && *v == PairwiseChoice::B);
        auto none = parsePairwiseVerdict(std::string(1 << 20, '['));
        QVERIFY(!none);
    }

    void choiceNames() {
        QCOMPARE(std::string(pairwiseChoiceName(PairwiseChoice::A)), std::string("A"));
        QCOMPARE(std::string(pairwiseChoiceName(PairwiseChoice::B)), std::string("B"));
        QCOMPARE(std::string(pairwiseChoiceName(PairwiseChoice::Tie)), std::string("tie"));
        // Stored on disk: the values may never change.
        QCOMPARE(static_cast<int>(PairwiseChoice::A), 0);
        QCOMPARE(static_cast<int>(PairwiseChoice::B), 1);
        QCOMPARE(static_cast<int>(PairwiseChoice::Tie), 2);
    }
};

QTEST_APPLESS_MAIN(TestJudgeVerdict)
#include "test_judge_verdict.moc"
