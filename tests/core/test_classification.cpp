// Classification suites (issue 22): the "label" scorer's extraction rules, and the confusion
// matrix / precision / recall / F1 / macro-F1 with intervals, against hand-computed values.
#include "core/run/suite_bindings.h"
#include "core/score/scorer.h"
#include "core/stats/classification.h"

#include <QtTest/QtTest>

#include <cmath>

using namespace verdict;
using namespace verdict::core;

namespace {

SuiteItem labelled(const std::string& gold) {
    SuiteItem it;
    it.id = "t";
    it.references = {gold};
    return it;
}

const nlohmann::json kLabels = {{"labels", {"spam", "ham", "not spam"}}};

bool near(double a, double b) { return std::fabs(a - b) < 1e-12; }

}  // namespace

class TestClassification : public QObject {
    Q_OBJECT
private slots:
    void extraction_data() {
        QTest::addColumn<QString>("gold");
        QTest::addColumn<QString>("output");
        QTest::addColumn<QString>("predicted");
        QTest::addColumn<bool>("pass");
        QTest::newRow("whole output, case and period") << "spam" << "Spam." << "spam" << true;
        QTest::newRow("earliest whole word") << "ham" << "I would say ham, not spam" << "ham" << true;
        QTest::newRow("whole output of a two-word label") << "not spam" << "Not spam!" << "not spam" << true;
        QTest::newRow("longer label at the same position") << "not spam" << "This is not spam at all" << "not spam"
                                                           << true;
        QTest::newRow("wrong label") << "spam" << "Label: ham" << "ham" << false;
        QTest::newRow("not a whole word") << "ham" << "hamburger" << "" << false;
        QTest::newRow("empty output") << "ham" << "" << "" << false;
        QTest::newRow("gold spelled otherwise") << "SPAM" << "spam" << "spam" << true;
    }
    void extraction() {
        QFETCH(QString, gold);
        QFETCH(QString, output);
        QFETCH(QString, predicted);
        QFETCH(bool, pass);
        auto s = makeScorer({"label", kLabels});
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
        const ScoreResult r = (*s)->score(labelled(gold.toStdString()), output.toStdString());
        QCOMPARE(QString::fromStdString(r.extracted), predicted);
        QCOMPARE(r.pass, pass);
        QCOMPARE(r.score, pass ? 1.0 : 0.0);
        // The gold label as the labels list spells it.
        QCOMPARE(QString::fromStdString(r.expected), gold.toLower());
    }

    void goldOutsideTheLabels() {
        auto s = makeScorer({"label", kLabels});
        QVERIFY(s.ok());
        const ScoreResult r = (*s)->score(labelled("eggs"), "spam");
        QVERIFY(!r.pass);
        QCOMPARE(QString::fromStdString(r.expected), QString("eggs"));
        QVERIFY(r.detail.find("not one of the scorer's labels") != std::string::npos);
        const ScoreResult none = (*s)->score(SuiteItem{}, "spam");
        QVERIFY(!none.pass);
        QVERIFY(none.detail.find("no gold label") != std::string::npos);
    }

    void badParams() {
        for (const char* params : {"{}", "{\"labels\": []}", "{\"labels\": \"spam\"}", "{\"labels\": [\"spam\", 3]}",
                                   "{\"labels\": [\"Spam\", \"spam.\"]}", "{\"labels\": [\"?\"]}"}) {
            auto s = makeScorer({"label", nlohmann::json::parse(params)});
            QVERIFY2(!s.ok(), params);
            QVERIFY2(s.error().message.rfind("label: ", 0) == 0, s.error().message.c_str());
        }
        // Punctuation kept: "?" is then a label of its own.
        QVERIFY(makeScorer({"label", {{"labels", {"?", "!"}}, {"punctuation", false}}}).ok());
    }

    // The registry stores what the statistics read: detail.expected and detail.extracted.
    void storedDetail() {
        SuiteItem it = labelled("ham");
        it.scorers = {{"label", kLabels}};
        auto scores = makeRegistryScorer({})(it, "spam");
        QVERIFY(scores.ok());
        QCOMPARE(scores->size(), size_t(1));
        QCOMPARE(QString::fromStdString((*scores)[0].detail["expected"].get<std::string>()), QString("ham"));
        QCOMPARE(QString::fromStdString((*scores)[0].detail["extracted"].get<std::string>()), QString("spam"));
    }

    // Eight items, three labels; every figure below worked by hand.
    //   gold spam: spam, spam, ham    gold ham: ham, spam, (none)    gold eggs: eggs, ham
    void handComputed() {
        const std::vector<LabelOutcome> o = {{"spam", "spam"}, {"spam", "spam"}, {"spam", "ham"}, {"ham", "ham"},
                                             {"ham", "spam"},  {"ham", ""},      {"eggs", "eggs"}, {"eggs", "ham"}};
        const ClassificationSummary s = summarizeClassification(o);
        QCOMPARE(s.n, int64_t(8));
        QCOMPARE(s.correct, int64_t(4));
        QVERIFY(near(s.accuracy, 0.5));
        QCOMPARE(s.noLabel, int64_t(1));
        QCOMPARE(s.labels, (std::vector<std::string>{"eggs", "ham", "spam"}));
        // [gold][predicted eggs, ham, spam, none]
        QCOMPARE(s.confusion, (std::vector<std::vector<int64_t>>{{1, 1, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 0}}));
        // eggs: TP 1 FP 0 FN 1; ham: TP 1 FP 2 FN 2; spam: TP 2 FP 1 FN 1.
        const auto& eggs = s.perLabel[0];
        const auto& ham = s.perLabel[1];
        const auto& spam = s.perLabel[2];
        QVERIFY(near(*eggs.precision, 1.0) && near(*eggs.recall, 0.5) && near(*eggs.f1, 2.0 / 3.0));
        QVERIFY(near(*ham.precision, 1.0 / 3.0) && near(*ham.recall, 1.0 / 3.0) && near(*ham.f1, 1.0 / 3.0));
        QVERIFY(near(*spam.precision, 2.0 / 3.0) && near(*spam.recall, 2.0 / 3.0) && near(*spam.f1, 2.0 / 3.0));
        QCOMPARE(ham.support, int64_t(3));
        QCOMPARE(ham.predicted, int64_t(3));
        QCOMPARE(spam.tp, int64_t(2));
        QVERIFY(near(*s.macroF1, 5.0 / 9.0));
        // Wilson 95 % of 1 of 3 (ham's precision): centre (1/3 + z^2/6) / (1 + z^2/3).
        const Interval w = wilsonInterval(1, 3);
        QVERIFY(near(ham.precisionCi.lo, w.lo) && near(ham.precisionCi.hi, w.hi));
        QVERIFY(ham.precisionCi.lo > 0.06 && ham.precisionCi.lo < 0.07);  // 0.0615
        QVERIFY(ham.precisionCi.hi > 0.79 && ham.precisionCi.hi < 0.80);  // 0.7923
        // Bootstrap intervals hold the estimate and are reproducible.
        QVERIFY(s.macroF1Ci.lo <= *s.macroF1 && *s.macroF1 <= s.macroF1Ci.hi);
        QVERIFY(s.macroF1Ci.lo >= 0 && s.macroF1Ci.hi <= 1 && s.macroF1Ci.hi - s.macroF1Ci.lo > 0.1);
        for (const auto& m : s.perLabel) QVERIFY(m.f1Ci.lo <= *m.f1 && *m.f1 <= m.f1Ci.hi);
        const ClassificationSummary again = summarizeClassification(o);
        QCOMPARE(again.macroF1Ci.lo, s.macroF1Ci.lo);
        QCOMPARE(again.macroF1Ci.hi, s.macroF1Ci.hi);

        const nlohmann::json j = classificationJson(s);
        QCOMPARE(j["per_label"][1]["label"].get<std::string>(), std::string("ham"));
        QVERIFY(near(j["macro_f1"].get<double>(), 5.0 / 9.0));
        QCOMPARE(j["confusion"][1][3].get<int64_t>(), int64_t(1));
        QVERIFY(j["accuracy_ci"].is_array() && j["per_label"][0]["f1_ci"].size() == 2);
    }

    // A label only ever predicted (never gold) has no recall and F1 0, and counts in macro-F1.
    void predictedOnlyLabel() {
        const ClassificationSummary s = summarizeClassification({{"a", "a"}, {"a", "b"}});
        QCOMPARE(s.labels, (std::vector<std::string>{"a", "b"}));
        QVERIFY(!s.perLabel[1].recall);
        QVERIFY(near(*s.perLabel[1].precision, 0.0));
        QVERIFY(near(*s.perLabel[1].f1, 0.0));
        QVERIFY(near(*s.perLabel[0].f1, 2.0 / 3.0));
        QVERIFY(near(*s.macroF1, 1.0 / 3.0));
        QCOMPARE(classificationJson(s)["per_label"][1]["recall"], nlohmann::json(nullptr));
        const ClassificationSummary empty = summarizeClassification({});
        QCOMPARE(empty.n, int64_t(0));
        QVERIFY(!empty.macroF1);
    }

    void fromStoredItems() {
        auto rec = [](const char* gold, const char* pred) {
            RunItemRecord r;
            nlohmann::json detail = {{"expected", gold}};
            if (*pred) detail["extracted"] = pred;
            r.scores = nlohmann::json::array({{{"name", "label"}, {"score", 0}, {"pass", false}, {"detail", detail}}});
            return r;
        };
        QVERIFY(!classificationOfRun({RunItemRecord{}}));  // no "label" scores: not a classification run
        const auto s = classificationOfRun({rec("x", "x"), rec("y", ""), rec("y", "x"), RunItemRecord{}});
        QVERIFY(s);
        QCOMPARE(s->n, int64_t(3));
        QCOMPARE(s->noLabel, int64_t(1));
        QCOMPARE(s->confusion, (std::vector<std::vector<int64_t>>{{1, 0, 0}, {1, 0, 1}}));
    }
};

QTEST_GUILESS_MAIN(TestClassification)
#include "test_classification.moc"
