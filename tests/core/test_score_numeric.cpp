// Numeric answers: extraction (markers, last number, commas, signs, fractions, full-width) and
// the numeric scorer's comparison with tolerances.
#include "core/score/number_extract.h"
#include "core/score/scorer.h"

#include <QtTest/QtTest>

using namespace verdict::core;

namespace {
struct Case {
    const char* name;
    std::string reference;
    std::string output;
    const char* params;
    bool pass;
    std::string extracted;
};
}  // namespace

Q_DECLARE_METATYPE(Case)

class TestScoreNumeric : public QObject {
    Q_OBJECT
private slots:
    void scorer_data() {
        QTest::addColumn<Case>("c");
        const std::vector<Case> cases = {
            {"answer is", "18", "The answer is 18.", "{}", true, "18"},
            {"thousands comma in output", "1234", "Total: 1,234 apples", "{}", true, "1,234"},
            {"thousands comma in reference", "1,234", "It is 1234", "{}", true, "1234"},
            {"millions", "1234567", "about 1,234,567 people", "{}", true, "1,234,567"},
            {"negative fraction", "-3/4", "so x = -3/4", "{}", true, "-3/4"},
            {"fraction vs decimal", "0.75", "that is 3/4 of it", "{}", true, "3/4"},
            {"unicode minus", "-7", "It drops to \u22127 degrees", "{}", true, "-7"},
            {"full-width digits", "42", "答案：４２", "{}", true, "42"},
            {"full-width minus", "-5", "结果是－５", "{}", true, "-5"},
            {"gsm8k marker", "3600", "1,200 + 2,400 = 3,600 rolls.\n#### 3,600", "{}", true, "3,600"},
            {"marker beats last", "5", "#### 5 (not 6)", "{}", true, "5"},
            {"Chinese marker", "5", "小明一共有答案：5个苹果，剩下2个", "{}", true, "5"},
            {"Chinese marker wrong", "5", "答案是 -2，不是 5", "{}", false, "-2"},
            {"dollars and cents", "12.5", "It costs $12.50.", "{}", true, "12.50"},
            {"percent", "50", "Half, i.e. 50%", "{}", true, "50"},
            {"hyphen is not a sign", "10", "5-3 = 2", "{}", false, "2"},
            {"boxed", "17", "so \\boxed{17} is final; check 17*1", "{}", true, "17"},
            {"answer is then working", "8", "The answer is 8. Check: 8 * 2 = 16", "{}", true, "8"},
            {"comma-space is a list", "234", "1, 234", "{}", true, "234"},
            {"four digits after comma is not a group", "2345", "1,2345", "{}", true, "2345"},
            {"decimal without leading zero", "0.5", "p = .5", "{}", true, ".5"},
            {"tolerance", "3.14159", "pi is 3.14", R"({"tolerance": 0.01})", true, "3.14"},
            {"tolerance too tight", "3.14159", "pi is 3.14", "{}", false, "3.14"},
            {"relative tolerance", "1000", "about 1,005", R"({"rel_tolerance": 0.01})", true, "1,005"},
            {"pick first", "3", "3 apples and 4 pears", R"({"pick": "first"})", true, "3"},
            {"pick last", "4", "3 apples and 4 pears", R"({"pick": "last"})", true, "4"},
            {"no number", "3", "I don't know", "{}", false, ""},
            {"date is not a fraction", "2020", "on 12/25/2020", "{}", true, "2020"},
            {"sign after letter is not a sign", "3", "x-3", "{}", true, "3"},
        };
        for (const auto& c : cases) QTest::addRow("%s", c.name) << c;
    }
    void scorer() {
        QFETCH(Case, c);
        auto s = makeScorer({"numeric", nlohmann::json::parse(c.params)});
        QVERIFY(s.ok());
        SuiteItem item;
        item.references = {c.reference};
        const ScoreResult r = (*s)->score(item, c.output);
        QVERIFY2(r.pass == c.pass, r.detail.c_str());
        QCOMPARE(r.extracted, c.extracted);
    }

    void findNumbersDetails() {
        const auto nums = findNumbers("-1,234.5 and +7, then 3/0 and 0.25");
        QCOMPARE(nums.size(), size_t(5));
        QCOMPARE(nums[0].value, -1234.5);
        QCOMPARE(nums[0].text, std::string("-1,234.5"));
        QCOMPARE(nums[1].value, 7.0);
        QCOMPARE(nums[2].value, 3.0);  // a zero denominator is not a fraction
        QCOMPARE(nums[3].value, 0.0);
        QCOMPARE(nums[3].text, std::string("0"));
        QCOMPARE(nums[4].value, 0.25);
    }

    void parseWholeNumbers() {
        QCOMPARE(parseNumber(" 1,234 "), std::optional<double>(1234));
        QCOMPARE(parseNumber("-3/4"), std::optional<double>(-0.75));
        QCOMPARE(parseNumber("$5"), std::optional<double>(5));
        QCOMPARE(parseNumber("-$5"), std::optional<double>(-5));
        QCOMPARE(parseNumber("40%"), std::optional<double>(40));
        QCOMPARE(parseNumber("１２３"), std::optional<double>(123));
        QCOMPARE(parseNumber("12 apples"), std::nullopt);
        QCOMPARE(parseNumber(""), std::nullopt);
    }

    void referenceNotANumber() {
        auto s = makeScorer({"numeric", {}});
        SuiteItem item;
        item.references = {"Paris"};
        const auto r = (*s)->score(item, "42");
        QVERIFY(!r.pass);
        QVERIFY(r.detail.find("not a number") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestScoreNumeric)
#include "test_score_numeric.moc"
