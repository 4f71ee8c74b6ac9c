// The compare service (core/services/compare.h): the prompt both models get, first turn and later
// ones, with and without a system message; the settings a vote stores, the same keys from the CLI
// and the window; the defaults both start from.
#include "core/services/compare.h"

#include <QtTest/QtTest>

using namespace verdict::core;

class TestCompareService : public QObject {
    Q_OBJECT
private slots:
    void firstTurn() {
        CompareSettings s;
        Prompt p = comparePrompt(s, {}, "Why is the sky blue?");
        QCOMPARE(p.text, std::string("Why is the sky blue?"));
        QCOMPARE(p.messages.size(), size_t(1));
        QCOMPARE(p.messages[0].role, std::string("user"));
        QVERIFY(p.useChatTemplate);
        s.system = "Be brief.";
        s.useChatTemplate = false;
        p = comparePrompt(s, {}, "Why is the sky blue?");
        QCOMPARE(p.text, std::string("Be brief.\n\nWhy is the sky blue?"));  // as `verdict run --system` does
        QCOMPARE(p.messages.size(), size_t(2));
        QCOMPARE(p.messages[0].role, std::string("system"));
        QVERIFY(!p.useChatTemplate);
    }

    void laterTurns() {
        CompareSettings s;
        s.system = "Be brief.";
        const std::vector<ChatTurn> history = {{"user", "Hi"}, {"assistant", "Hello!"}};
        const Prompt p = comparePrompt(s, history, "And now?");
        QCOMPARE(p.text, std::string("Be brief.\n\nUser: Hi\nAssistant: Hello!\nUser: And now?\nAssistant:"));
        QCOMPARE(p.messages.size(), size_t(4));
        QCOMPARE(p.messages[2].content, std::string("Hello!"));
        QCOMPARE(p.messages[3].content, std::string("And now?"));
    }

    void voteSettings() {
        CompareSettings a, b;
        a.system = "sys";
        a.generation.maxTokens = 8;
        a.generation.seed = 1;
        b.generation.temperature = 0.7;
        const nlohmann::json j = compareVoteSettings(a, b, "window", {{"tokens_out", 5}});
        QCOMPARE(j["system"].get<std::string>(), std::string("sys"));
        QCOMPARE(j["max_tokens"].get<int>(), 8);
        QCOMPARE(j["seed"].get<int>(), 1);
        QCOMPARE(j["source"].get<std::string>(), std::string("window"));
        QCOMPARE(j["a"]["tokens_out"].get<int>(), 5);
        QCOMPARE(j["a"]["max_tokens"].get<int>(), 8);
        QCOMPARE(j["b"]["temperature"].get<double>(), 0.7);
        QVERIFY(j["b"].contains("chat_template"));
    }

    void defaults() {
        // What `verdict compare --help` prints and the Compare screen starts from.
        const CompareSettings s;
        QCOMPARE(s.generation.temperature, 0.0);
        QCOMPARE(s.generation.maxTokens, 256);
        QCOMPARE(s.generation.seed, uint64_t(0));
        QVERIFY(s.useChatTemplate);
    }
};

QTEST_GUILESS_MAIN(TestCompareService)
#include "test_compare_service.moc"
