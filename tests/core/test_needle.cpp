// Needle-in-a-haystack suites (issue 22, long context): the generator's lengths, depths and
// needles, its errors, and the heat map of a run (accuracy per cell, cells that could not run).
#include "core/stats/needle_grid.h"
#include "core/suite/conversation_suite.h"
#include "core/suite/needle_suite.h"

#include <QtTest/QtTest>

using namespace verdict;
using namespace verdict::core;

namespace {

// Words as tokens: an exact, predictable counter.
size_t words(std::string_view s) {
    size_t n = 0;
    bool in = false;
    for (char c : s) {
        const bool space = c == ' ' || c == '\n';
        if (!space && !in) ++n;
        in = !space;
    }
    return n;
}

std::string needleOf(const SuiteItem& it) { return "is " + it.references.at(0) + "."; }

}  // namespace

class TestNeedle : public QObject {
    Q_OBJECT
private slots:
    void parseLists() {
        QCOMPARE(*parseNeedleLengths("1k,4096,128k"), (std::vector<int64_t>{1024, 4096, 131072}));
        QCOMPARE(*parseNeedleDepths("0,25,50,75,100"), (std::vector<double>{0, 25, 50, 75, 100}));
        QCOMPARE(*parseNeedleDepths("12.5"), (std::vector<double>{12.5}));
        for (const char* bad : {"", "1k,", "x", "-5", "0", "4kk", "1.5k"}) {
            auto r = parseNeedleLengths(bad);
            QVERIFY2(!r.ok(), bad);
            QVERIFY(r.error().message.rfind("--lengths: '", 0) == 0);
        }
        for (const char* bad : {"", "101", "-1", "50,", "a"}) QVERIFY2(!parseNeedleDepths(bad).ok(), bad);
    }

    void lengthsDepthsAndNeedles() {
        NeedleOptions o;
        o.lengths = {200, 1000};
        o.depths = {0, 50, 100};
        o.needlesPerCell = 2;
        o.countTokens = words;
        auto items = makeNeedleSuite(o);
        QVERIFY2(items.ok(), items.ok() ? "" : items.error().message.c_str());
        QCOMPARE(items->size(), size_t(2 * 3 * 2));
        for (const SuiteItem& it : *items) {
            const auto& m = it.metadata["needle"];
            const int64_t len = m["context_tokens"].get<int64_t>();
            const size_t count = words(it.prompt);
            QCOMPARE(m["prompt_tokens"].get<size_t>(), count);
            QVERIFY2(count <= size_t(len) && count + 12 >= size_t(len), it.id.c_str());  // within one sentence
            QCOMPARE(m["token_count"].get<std::string>(), std::string("tokenizer"));
            QCOMPARE(it.scorers.at(0).name, std::string("contains"));
            QCOMPARE(it.references.size(), size_t(1));
            QCOMPARE(it.references[0].size(), size_t(6));
            // The code is in the prompt once, and the question asks for the needle's subject.
            const size_t at = it.prompt.find(it.references[0]);
            QVERIFY(at != std::string::npos && it.prompt.find(it.references[0], at + 1) == std::string::npos);
            const size_t q = it.prompt.rfind("Question: What is the secret code of ");
            QVERIFY(q != std::string::npos && q > at);
            const std::string subject = it.prompt.substr(q + 37, it.prompt.find('?', q) - q - 37);
            QVERIFY2(it.prompt.find("The secret code of " + subject + " is " + it.references[0]) != std::string::npos,
                     subject.c_str());
            // Depth: 0 % right after the introduction, 100 % as the last sentence before the question.
            const double depth = m["depth_pct"].get<double>();
            const double where = double(at) / double(q);
            if (depth == 0) QVERIFY2(it.prompt.find("\n\nThe secret code of") != std::string::npos, it.id.c_str());
            if (depth == 100) QVERIFY2(it.prompt.find(needleOf(it) + "\n\nQuestion:") != std::string::npos, it.id.c_str());
            if (depth == 50) QVERIFY2(where > 0.4 && where < 0.6, it.id.c_str());
            QCOMPARE(it.category, std::to_string(len) + " tokens @ " + (depth == 0 ? "0" : depth == 50 ? "50" : "100") + "%");
        }
        // Each item has its own needle; the same options give the same suite.
        QVERIFY((*items)[0].references != (*items)[1].references);
        auto again = makeNeedleSuite(o);
        QCOMPARE(again->at(5).prompt, items->at(5).prompt);
        // Without a tokenizer: bytes / 4, and the items say it is an estimate.
        o.countTokens = {};
        auto est = makeNeedleSuite(o);
        QVERIFY(est.ok());
        QCOMPARE(est->at(0).metadata["needle"]["token_count"].get<std::string>(), std::string("estimate"));
        QVERIFY((est->at(0).prompt.size() + 3) / 4 <= 200);
    }

    void fileHaystackRepeats() {
        NeedleOptions o;
        o.lengths = {300};
        o.depths = {50};
        o.haystack = "Alpha one. Beta two! Gamma three?\nDelta four";
        o.haystackName = "h.txt";
        o.countTokens = words;
        auto items = makeNeedleSuite(o);
        QVERIFY(items.ok());
        const auto& m = items->at(0).metadata["needle"];
        QVERIFY(m["haystack_repeated"].get<bool>());
        QCOMPARE(m["haystack"].get<std::string>(), std::string("h.txt"));
        QVERIFY(items->at(0).prompt.find("Delta four Alpha one.") != std::string::npos);
    }

    void badOptions() {
        NeedleOptions o;
        o.countTokens = words;
        o.depths = {50};
        QVERIFY(!makeNeedleSuite(o).ok());  // no lengths
        o.lengths = {32};
        QVERIFY(makeNeedleSuite(o).error().message.find("under 64 tokens") != std::string::npos);
        o.lengths = {1000};
        o.depths = {150};
        QVERIFY(makeNeedleSuite(o).error().message.find("outside 0..100") != std::string::npos);
        o.depths = {50};
        o.haystack = " \n \n";
        QVERIFY(makeNeedleSuite(o).error().message.find("has no sentence") != std::string::npos);
    }

    // Four cells of one length and two depths, plus a length whose items all failed.
    void heatMap() {
        NeedleOptions o;
        o.lengths = {100, 5000};
        o.depths = {0, 100};
        o.needlesPerCell = 2;
        o.countTokens = words;
        auto items = makeNeedleSuite(o);
        QVERIFY(items.ok());
        std::vector<RunItemRecord> runs;
        for (size_t i = 0; i < items->size(); ++i) {
            RunItemRecord r;
            r.itemIdx = int64_t(i);
            const auto& m = (*items)[i].metadata["needle"];
            const bool long5000 = m["context_tokens"].get<int64_t>() == 5000;
            const bool deep = m["depth_pct"].get<double>() == 100;
            if (long5000) {
                r.correct = false;
                r.error = "the prompt of 4990 tokens does not fit in the context of 4096 tokens";
            } else {
                // depth 0: both right; depth 100: one of two right
                r.correct = !deep || i % 2 == 0;
            }
            runs.push_back(r);
        }
        runs.pop_back();  // one item of the last cell not run
        auto g = needleGridOfRun(*items, runs);
        QVERIFY(g);
        QCOMPARE(g->lengths, (std::vector<int64_t>{100, 5000}));
        QCOMPARE(g->depths, (std::vector<double>{0, 100}));
        QCOMPARE(*g->at(0, 0).accuracy(), 1.0);
        QCOMPARE(*g->at(0, 1).accuracy(), 0.5);
        QVERIFY(g->at(0, 1).held());
        QVERIFY(!g->at(1, 0).held());
        QCOMPARE(g->at(1, 0).errors, int64_t(2));
        QCOMPARE(g->at(1, 1).n, int64_t(1));
        QVERIFY(g->at(1, 0).error.find("does not fit") != std::string::npos);
        const nlohmann::json j = needleGridJson(*g, uint64_t(1000));
        QCOMPARE(j["cells"][2]["kv_bytes"].get<uint64_t>(), uint64_t(5000000));
        QCOMPARE(j["cells"][2]["held"].get<bool>(), false);
        QCOMPARE(j["cells"][1]["accuracy"].get<double>(), 0.5);
        QVERIFY(needleGridJson(*g, std::nullopt)["kv_bytes_per_token"].is_null());
        // A run of another suite: no needle items, no heat map.
        QVERIFY(!needleGridOfRun({SuiteItem{}}, {RunItemRecord{}}));
    }

    // Any suite at several lengths: each item again per length, its prompt at the end after filler,
    // as long as the length allows (words as tokens: exact), everything else kept.
    void paddedSuite() {
        SuiteItem mc;
        mc.id = "q1";
        mc.category = "geo";
        mc.prompt = "Which city is the capital of France?";
        mc.choices = {"Paris", "Rome"};
        mc.gold = 0;
        mc.metadata = {{"source", "x"}};
        SuiteItem open;
        open.id = "q2";
        open.prompt = "Name a colour.";
        open.references = {"red"};
        NeedleOptions o;
        o.lengths = {100, 300};
        o.countTokens = words;
        auto items = makePaddedSuite({mc, open}, o);
        QVERIFY2(items.ok(), items.ok() ? "" : items.error().message.c_str());
        QCOMPARE(items->size(), size_t(4));
        const char* ids[] = {"q1@100", "q2@100", "q1@300", "q2@300"};
        for (size_t k = 0; k < 4; ++k) {
            const SuiteItem& it = (*items)[k];
            const SuiteItem& from = k % 2 ? open : mc;
            const int64_t length = k < 2 ? 100 : 300;
            QCOMPARE(it.id, std::string(ids[k]));
            QCOMPARE(it.category, std::to_string(length) + " tokens");
            QVERIFY(it.prompt.size() > from.prompt.size() + 100);
            QVERIFY(it.prompt.compare(it.prompt.size() - from.prompt.size(), from.prompt.size(), from.prompt) == 0);  // the task last
            const size_t count = words(it.prompt);
            QCOMPARE(it.metadata["needle"]["prompt_tokens"].get<size_t>(), count);
            QVERIFY2(count <= size_t(length) && count + 12 >= size_t(length), qPrintable(QString::number(count)));
            QCOMPARE(it.metadata["needle"]["context_tokens"], nlohmann::json(length));
            QCOMPARE(it.metadata["needle"]["depth_pct"], nlohmann::json(100.0));
            QCOMPARE(it.metadata["padded"]["item"], nlohmann::json(from.id));
            QCOMPARE(it.metadata["padded"]["category"], nlohmann::json(from.category));
            QCOMPARE(it.choices, from.choices);
            QCOMPARE(it.gold, from.gold);
            QCOMPARE(it.references, from.references);
        }
        QCOMPARE((*items)[0].metadata["source"], nlohmann::json("x"));
        // The same options make the same suite.
        auto again = makePaddedSuite({mc, open}, o);
        QCOMPARE((*again)[2].prompt, (*items)[2].prompt);

        // A conversation cannot be padded; a length too short for an item is refused, naming it.
        SuiteItem chat;
        chat.id = "c1";
        chat.messages = {{"user", "hi"}};
        auto refused = makePaddedSuite({mc, chat}, o);
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().message.find("'c1'") != std::string::npos);
        SuiteItem longer = open;
        longer.id = "long";
        longer.prompt = "Repeat:";
        for (int i = 0; i < 90; ++i) longer.prompt += " word";
        o.lengths = {64};
        auto tooShort = makePaddedSuite({longer}, o);
        QVERIFY(!tooShort.ok());
        QVERIFY2(tooShort.error().message.find("'long'") != std::string::npos, tooShort.error().message.c_str());
        QVERIFY(!makePaddedSuite({}, o).ok());
    }

    void conversationSuite() {
        ConversationOptions o;
        o.lengths = {3, 10};
        o.conversations = 2;
        auto items = makeConversationSuite(o);
        QVERIFY(items.ok());
        QCOMPARE(items->size(), size_t(4));
        const SuiteItem& it = (*items)[2];
        QCOMPARE(it.id, std::string("conv-10-1"));
        QCOMPARE(it.category, std::string("10 turns"));
        QCOMPARE(it.turns.size(), size_t(10));
        QCOMPARE(it.prompt, it.turns[0]);
        QVERIFY(it.turns[0].rfind("Remember this: ", 0) == 0);
        const nlohmann::json& refs = it.metadata["turn_references"];
        QCOMPARE(refs.size(), size_t(10));
        QVERIFY(refs[0].is_null());
        for (size_t k = 1; k + 1 < 10; ++k) {
            // "What is A plus B? ...": the reference is the sum.
            int a = 0, b = 0;
            QCOMPARE(std::sscanf(it.turns[k].c_str(), "What is %d plus %d?", &a, &b), 2);
            QCOMPARE(refs[k], nlohmann::json(std::to_string(a + b)));
        }
        // The last turn asks for the fact of the first; its answer is in the first turn.
        QVERIFY(it.turns[0].find(refs[9].get<std::string>()) != std::string::npos);
        QCOMPARE(it.metadata["conversation"]["question_turn"], nlohmann::json(10));
        auto again = makeConversationSuite(o);
        QCOMPARE((*again)[3].turns, (*items)[3].turns);  // the same options make the same suite
        QVERIFY(!parseConversationLengths("3,x").ok());
        QVERIFY(!parseConversationLengths("2").ok());
        QVERIFY(!parseConversationLengths("1001").ok());
        QCOMPARE(*parseConversationLengths("3,1000"), (std::vector<int64_t>{3, 1000}));
        o.conversations = 0;
        QVERIFY(!makeConversationSuite(o).ok());
    }
};

QTEST_GUILESS_MAIN(TestNeedle)
#include "test_needle.moc"
