// Prompt rendering: lm-eval's MMLU layout, few-shot selection (fixed seed, never the item
// itself), {{field}} templates, GSM8K and chat forms.
#include "core/suite/prompt_builder.h"

#include <QtTest/QtTest>

using namespace verdict::core;

namespace {
SuiteItem mcItem(const std::string& id, const std::string& q, std::vector<std::string> choices, int gold,
                 const std::string& category = "abstract_algebra") {
    SuiteItem it;
    it.id = id;
    it.prompt = q;
    it.choices = std::move(choices);
    it.gold = gold;
    it.category = category;
    return it;
}
}  // namespace

class TestSuitePrompt : public QObject {
    Q_OBJECT
private slots:
    void mmluZeroShot() {
        const auto item = mcItem("1", "  Find the characteristic of the ring 2Z.\n", {"0", "3", "12", "30"}, 0);
        PromptOptions o;
        o.shape = "mmlu";
        QCOMPARE(renderPrompt(item, o, {}),
                 std::string("The following are multiple choice questions (with answers) about abstract algebra.\n\n"
                             "Find the characteristic of the ring 2Z.\nA. 0\nB. 3\nC. 12\nD. 30\nAnswer:"));
    }

    void mmluFewShot() {
        const auto item = mcItem("q", "What is 2+2?", {"3", "4"}, 1, "");
        const std::vector<SuiteItem> shots = {mcItem("s1", "What is 1+1?", {"2", "3"}, 0, ""),
                                              mcItem("s2", "What is 3+3?", {"5", "6"}, 1, "")};
        PromptOptions o;
        QCOMPARE(renderPrompt(item, o, shots),
                 std::string("The following are multiple choice questions (with answers).\n\n"
                             "What is 1+1?\nA. 2\nB. 3\nAnswer: A\n\n"
                             "What is 3+3?\nA. 5\nB. 6\nAnswer: B\n\n"
                             "What is 2+2?\nA. 3\nB. 4\nAnswer:"));
    }

    void clozeLayout() {
        const auto item = mcItem("q", "Which gas do plants absorb?", {"oxygen", "carbon dioxide"}, 1, "");
        const std::vector<SuiteItem> shots = {mcItem("s", "What melts ice?", {"heat", "cold"}, 0, "")};
        PromptOptions o;
        o.clozeChoices = true;
        QCOMPARE(renderPrompt(item, o, shots),
                 std::string("Question: What melts ice?\nAnswer: heat\n\nQuestion: Which gas do plants absorb?\nAnswer:"));
        QCOMPARE(docToTarget(item, o), std::string("carbon dioxide"));
    }

    void selectShotsIsDeterministicAndExcludesItem() {
        std::vector<SuiteItem> pool;
        for (int i = 0; i < 40; ++i)
            pool.push_back(mcItem(std::to_string(i), "question " + std::to_string(i), {"a", "b"}, 0, i < 20 ? "x" : "y"));
        for (const auto& item : pool) {
            const auto a = selectShots(pool, item, 5, 1234);
            const auto b = selectShots(pool, item, 5, 1234);
            QCOMPARE(a.size(), size_t(5));
            for (size_t i = 0; i < a.size(); ++i) {
                QCOMPARE(a[i].id, b[i].id);        // same seed, same examples
                QVERIFY(a[i].id != item.id);       // never the item itself
                QCOMPARE(a[i].category, item.category);  // from the item's own category
            }
        }
        // A different seed picks a different set for at least one item.
        bool differs = false;
        for (const auto& item : pool) {
            const auto a = selectShots(pool, item, 3, 1), b = selectShots(pool, item, 3, 2);
            for (size_t i = 0; i < a.size(); ++i) differs = differs || a[i].id != b[i].id;
        }
        QVERIFY(differs);
        // Not enough in the category: falls back to the whole pool; asking for more than exist caps.
        QCOMPARE(selectShots(pool, pool[0], 25, 7).size(), size_t(25));
        QCOMPARE(selectShots(pool, pool[0], 100, 7).size(), size_t(39));
        QCOMPARE(selectShots(pool, pool[0], 0, 7).size(), size_t(0));
    }

    void templates() {
        SuiteItem item = mcItem("7", "  Is water wet?  ", {"yes", "no"}, 0, "high_school_physics");
        item.metadata = {{"source", "quiz"}, {"vars", {{"city", "Lyon"}}}, {"level", {{"n", 3}}}};
        QCOMPARE(renderTemplate("{{question.strip()}}|{{A}}|{{B}}|{{answer}}|{{subject}}|{{id}}", item),
                 std::string("Is water wet?|yes|no|A|high school physics|7"));
        QCOMPARE(renderTemplate("{{source}} {{metadata.level.n}} {{city}} {{ choices }}", item),
                 std::string("quiz 3 Lyon A. yes\nB. no"));
        QCOMPARE(unknownTemplateFields("{{question}} {{nope}} {{E}}", item), (std::vector<std::string>{"nope", "E"}));
        PromptOptions o;
        o.templateText = "Q: {{question.strip()}}\nAnswer:";
        o.description = "Subject: {{subject}}\n";
        QCOMPARE(renderPrompt(item, o, {}), std::string("Subject: high school physics\nQ: Is water wet?\nAnswer:"));
    }

    void gsm8kLayout() {
        SuiteItem item;
        item.id = "g";
        item.prompt = "Tom has 3 apples and buys 2. How many?";
        item.references = {"5"};
        item.metadata = {{"solution", "3 + 2 = 5\n#### 5"}};
        SuiteItem shot = item;
        shot.id = "s";
        PromptOptions o;
        o.shape = "gsm8k";
        QCOMPARE(docToText(item, o), std::string("Question: Tom has 3 apples and buys 2. How many?\nAnswer:"));
        QCOMPARE(docToTarget(shot, o), std::string("3 + 2 = 5\n#### 5"));
        QCOMPARE(renderPrompt(item, o, {shot}),
                 std::string("Question: Tom has 3 apples and buys 2. How many?\nAnswer: 3 + 2 = 5\n#### 5\n\n"
                             "Question: Tom has 3 apples and buys 2. How many?\nAnswer:"));
    }

    void chatMessages() {
        SuiteItem item;
        item.id = "c";
        item.messages = {{"system", "Be brief."}, {"user", "Symbol for iron?"}};
        item.references = {"Fe"};
        SuiteItem shot;
        shot.id = "s";
        shot.messages = {{"system", "Be brief."}, {"user", "Symbol for gold?"}};
        shot.references = {"Au"};
        const auto turns = renderMessages(item, PromptOptions{}, {shot});
        QCOMPARE(turns.size(), size_t(4));
        QCOMPARE(turns[0].role, std::string("system"));
        QCOMPARE(turns[1].content, std::string("Symbol for gold?"));
        QCOMPARE(turns[2].role, std::string("assistant"));
        QCOMPARE(turns[2].content, std::string("Au"));
        QCOMPARE(turns[3].content, std::string("Symbol for iron?"));
        QCOMPARE(renderPrompt(item, PromptOptions{}, {}), std::string("Symbol for iron?"));
        SuiteItem plain;
        plain.prompt = "Hello";
        const auto one = renderMessages(plain, PromptOptions{}, {});
        QCOMPARE(one.size(), size_t(1));
        QCOMPARE(one[0].role, std::string("user"));
        QCOMPARE(one[0].content, std::string("Hello"));
    }
};

QTEST_GUILESS_MAIN(TestSuitePrompt)
#include "test_suite_prompt.moc"
