// Multi-turn consistency (issue 22): accuracy by turn index and by range of turns from stored
// conversation items, against hand-counted values; the suite field turn_references and its errors.
#include "core/stats/turn_accuracy.h"
#include "core/suite/suite_importer.h"

#include <QtTest/QtTest>

using namespace verdict;
using namespace verdict::core;

namespace {

// An item whose scored turns (1-based) were right or wrong.
RunItemRecord conversation(const std::vector<std::pair<int, bool>>& scored, int unscoredTurn = 0) {
    RunItemRecord r;
    nlohmann::json turns = nlohmann::json::array();
    if (unscoredTurn) turns.push_back({{"turn", unscoredTurn}, {"output", "x"}});
    for (const auto& [turn, ok] : scored) turns.push_back({{"turn", turn}, {"output", "x"}, {"correct", ok}});
    r.details["turns"] = turns;
    return r;
}

std::vector<SuiteItem> importText(const std::string& text, std::vector<RejectedRecord>* rejected) {
    std::vector<SuiteItem> items;
    ImportOptions o;
    auto s = importSuiteStreamingFromMemory(text, "c.jsonl", o, [&](SuiteItem&& it) {
        items.push_back(std::move(it));
        return true;
    });
    if (s && rejected) *rejected = s->rejected;
    return items;
}

}  // namespace

class TestTurnAccuracy : public QObject {
    Q_OBJECT
private slots:
    void handCounted() {
        // Three conversations: turns 1 and 3 scored in all, turn 120 in two of them.
        const std::vector<RunItemRecord> items = {conversation({{1, true}, {3, true}, {120, false}}, 2),
                                                  conversation({{1, true}, {3, false}, {120, true}}),
                                                  conversation({{1, false}, {3, true}}), RunItemRecord{}};
        auto t = turnAccuracyOfRun(items);
        QVERIFY(t);
        QCOMPARE(t->conversations, int64_t(3));
        QCOMPARE(t->byTurn.size(), size_t(3));  // turns 1, 3, 120 (turn 2 was not scored)
        QCOMPARE(t->byTurn[0].first, 1);
        QCOMPARE(t->byTurn[0].acc.n, int64_t(3));
        QCOMPARE(t->byTurn[0].acc.correct, int64_t(2));
        QCOMPARE(t->byTurn[2].first, 120);
        QCOMPARE(t->byTurn[2].acc.correct, int64_t(1));
        // Ranges: 1-5 holds turns 1 and 3 (6 scored, 4 right), 101-200 holds turn 120.
        QCOMPARE(t->byRange.size(), size_t(2));
        QCOMPARE(t->byRange[0].first, 1);
        QCOMPARE(t->byRange[0].last, 5);
        QCOMPARE(t->byRange[0].acc.n, int64_t(6));
        QCOMPARE(t->byRange[0].acc.correct, int64_t(4));
        QCOMPARE(t->byRange[1].first, 101);
        QCOMPARE(t->byRange[1].last, 200);
        const Interval w = wilsonInterval(4, 6);
        QCOMPARE(t->byRange[0].acc.ci.lo, w.lo);
        const nlohmann::json j = turnAccuracyJson(*t);
        QCOMPARE(j["by_range"][1]["from"].get<int>(), 101);
        QCOMPARE(j["by_turn"][1]["turn"].get<int>(), 3);
        QCOMPARE(j["by_turn"][1]["correct"].get<int>(), 2);
        QVERIFY(!turnAccuracyOfRun({RunItemRecord{}, conversation({}, 1)}));  // nothing scored
    }

    void ranges() {
        auto rangeFor = [](int turn) {
            auto t = turnAccuracyOfRun({conversation({{turn, true}})});
            return std::pair{t->byRange[0].first, t->byRange[0].last};
        };
        QCOMPARE(rangeFor(5), (std::pair{1, 5}));
        QCOMPARE(rangeFor(6), (std::pair{6, 10}));
        QCOMPARE(rangeFor(11), (std::pair{11, 20}));
        QCOMPARE(rangeFor(50), (std::pair{21, 50}));
        QCOMPARE(rangeFor(51), (std::pair{51, 100}));
        QCOMPARE(rangeFor(501), (std::pair{501, 1000}));
    }

    void suiteField() {
        std::vector<RejectedRecord> rejected;
        auto items = importText(
            "{\"id\": \"c1\", \"turns\": [\"I live in Oslo.\", \"Tell me a joke.\", \"Where do I live?\"], "
            "\"turn_references\": [null, null, \"Oslo\"]}\n"
            "{\"id\": \"c2\", \"turns\": [\"a\", \"b\"], \"turn_references\": [null]}\n"
            "{\"id\": \"c3\", \"turns\": [\"a\", \"b\"], \"turn_references\": [null, 3]}\n"
            "{\"id\": \"c4\", \"turns\": [\"a\", \"b\"], \"turn_references\": [null, null]}\n"
            "{\"id\": \"c5\", \"turns\": [\"a\", \"b\"], \"turn_references\": [[\"x\", \"y\"], \"\"]}\n",
            &rejected);
        QCOMPARE(items.size(), size_t(1));
        QCOMPARE(items[0].turns.size(), size_t(3));
        QCOMPARE(items[0].metadata["turn_references"][2].get<std::string>(), std::string("Oslo"));
        QCOMPARE(rejected.size(), size_t(4));
        QVERIFY2(rejected[0].reason.find("one entry per turn (2)") != std::string::npos, rejected[0].reason.c_str());
        QVERIFY2(rejected[1].reason.find("turn_references[1]") != std::string::npos, rejected[1].reason.c_str());
        QVERIFY2(rejected[2].reason.find("no answer for any turn") != std::string::npos, rejected[2].reason.c_str());
        QVERIFY2(rejected[3].reason.find("turn_references[1]") != std::string::npos, rejected[3].reason.c_str());
        QCOMPARE(rejected[3].line, 5);
    }
};

QTEST_GUILESS_MAIN(TestTurnAccuracy)
#include "test_turn_accuracy.moc"
