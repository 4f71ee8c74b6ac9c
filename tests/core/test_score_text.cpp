// Text scorers: exact (with normalisation), contains/icontains, starts_with, regex, the registry
// (unknown names, bad params, negation). Table-driven.
#include "core/score/scorer.h"
#include "core/score/text_normalize.h"

#include <QtTest/QtTest>

using namespace verdict::core;

namespace {
struct Case {
    const char* name;
    const char* scorer;
    const char* params;      // JSON
    std::vector<std::string> references;
    std::string output;
    bool pass;
    std::string extracted;   // checked when not "*"
};

SuiteItem itemWith(const std::vector<std::string>& refs) {
    SuiteItem it;
    it.id = "t";
    it.references = refs;
    return it;
}
}  // namespace

Q_DECLARE_METATYPE(Case)

class TestScoreText : public QObject {
    Q_OBJECT
private slots:
    void scorers_data() {
        QTest::addColumn<Case>("c");
        const std::vector<Case> cases = {
            {"exact plain", "exact", "{}", {"Paris"}, "Paris", true, "paris"},
            {"exact case+period", "exact", "{}", {"Paris"}, "  paris. ", true, "paris"},
            {"exact wrong", "exact", "{}", {"Paris"}, "Lyon", false, "lyon"},
            {"exact second reference", "exact", "{}", {"Pacific", "Pacific Ocean"}, "The Pacific Ocean", false, "*"},
            {"exact full-width digits", "exact", "{}", {"123"}, "１２３", true, "123"},
            {"exact full-width letters", "exact", "{}", {"ABC"}, "ＡＢＣ", true, "abc"},
            {"exact Chinese punctuation", "exact", "{}", {"长城，是中国的。"}, "长城,是中国的.", true, "*"},
            {"exact Chinese quotes vs ASCII", "exact", R"({"punctuation": false})", {"“你好”"}, "\"你好\"", true, "\"你好\""},
            {"exact ideographic space", "exact", "{}", {"a b"}, "a\u3000\u3000b", true, "a b"},
            {"exact byte-exact (equals)", "exact", R"({"normalize": false})", {"Paris"}, "paris", false, "paris"},
            {"exact byte-exact match", "exact", R"({"normalize": false})", {"Paris"}, "Paris", true, "Paris"},
            {"exact articles", "exact", R"({"articles": true})", {"the Eiffel Tower"}, "Eiffel tower", true, "eiffel tower"},
            {"exact value param", "exact", R"({"value": "42"})", {}, "42", true, "42"},
            {"exact Greek case", "exact", "{}", {"ΑΘΗΝΑ"}, "αθηνα", true, "αθηνα"},
            // Case folding is the engine's full table (the tokenizers' one): Greek with tonos,
            // Armenian, Latin Extended-B and Cherokee were missed by the old partial table.
            {"exact Greek tonos case", "exact", "{}", {"ΆΛΦΑ"}, "άλφα", true, "άλφα"},
            {"exact Armenian case", "exact", "{}", {"ՀԱՅԵՐԵՆ"}, "հայերեն", true, "հայերեն"},
            {"icontains Latin Extended-B", "contains", R"({"value": "ǆ", "ignore_case": true})", {}, "Ǆ", true, "ǆ"},
            {"contains", "contains", R"({"value": "Paris"})", {}, "It is Paris, of course", true, "Paris"},
            {"contains is case-sensitive", "contains", R"({"value": "paris"})", {}, "It is Paris", false, ""},
            {"icontains", "contains", R"({"value": "paris", "ignore_case": true})", {}, "It is PARIS", true, "paris"},
            {"contains references", "contains", "{}", {"cold", "chilly"}, "rather chilly today", true, "chilly"},
            {"contains-any", "contains", R"({"values": ["red", "blue"], "mode": "any"})", {}, "blue sky", true, "blue"},
            {"contains-all missing", "contains", R"({"values": ["red", "blue"], "mode": "all"})", {}, "blue sky", false, "blue"},
            {"contains CJK", "contains", R"({"value": "长城"})", {}, "我去过长城。", true, "长城"},
            {"starts_with trims", "starts_with", "{}", {"Na"}, "  Na (sodium)", true, "Na"},
            {"starts_with no trim", "starts_with", R"({"trim": false})", {"Na"}, "  Na", false, ""},
            {"starts_with wrong", "starts_with", "{}", {"Fe"}, "Iron is Fe", false, ""},
            {"regex search", "regex", R"({"pattern": "^\\d{5}$"})", {}, "90210", true, "90210"},
            {"regex no match", "regex", R"({"pattern": "^\\d{5}$"})", {}, "zip 90210", false, ""},
            {"regex ignore case", "regex", R"({"pattern": "hello", "ignore_case": true})", {}, "HeLLo there", true, "HeLLo"},
            {"regex extract vs reference", "regex", R"x({"pattern": "Answer: (\\w+)", "group": 1})x", {"blue"}, "Answer: Blue", true, "Blue"},
            {"regex extract wrong", "regex", R"x({"pattern": "Answer: (\\w+)", "group": 1})x", {"blue"}, "Answer: red", false, "red"},
            {"regex full", "regex", R"({"pattern": "[a-z]+", "full": true})", {}, "abc1", false, ""},
        };
        for (const auto& c : cases) QTest::addRow("%s", c.name) << c;
    }
    void scorers() {
        QFETCH(Case, c);
        auto s = makeScorer({c.scorer, nlohmann::json::parse(c.params)});
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
        const ScoreResult r = (*s)->score(itemWith(c.references), c.output);
        QVERIFY2(r.pass == c.pass, r.detail.c_str());
        QCOMPARE(r.score, c.pass ? 1.0 : 0.0);
        if (c.extracted != "*") QCOMPARE(r.extracted, c.extracted);
    }

    void negation() {
        auto s = makeScorer({"contains", {{"value", "London"}, {"negate", true}}});
        QVERIFY(s.ok());
        QCOMPARE((*s)->score(itemWith({}), "Paris").pass, true);
        QCOMPARE((*s)->score(itemWith({}), "London").pass, false);
        QCOMPARE((*s)->score(itemWith({}), "London").score, 0.0);
    }

    void registryErrors() {
        auto unknown = makeScorer({"fuzzy", {}});
        QVERIFY(!unknown.ok());
        QVERIFY(unknown.error().message.find("unknown scorer 'fuzzy'") != std::string::npos);
        auto loglik = makeScorer({"mc_loglik", {}});
        QVERIFY(!loglik.ok());
        QVERIFY(loglik.error().message.find("scoreMcLoglik") != std::string::npos);
        QVERIFY(isLoglikelihoodScorer("mc_loglik"));
        auto badRegex = makeScorer({"regex", {{"pattern", "(unclosed"}}});
        QVERIFY(!badRegex.ok());
        QVERIFY(badRegex.error().message.find("does not compile") != std::string::npos);
        // Lookaround has no linear-time match: refused with the reason, never mis-scored.
        auto look = makeScorer({"regex", {{"pattern", "foo(?=bar)"}}});
        QVERIFY(!look.ok());
        QVERIFY2(look.error().message.find("no lookaround") != std::string::npos, look.error().message.c_str());
        // A catastrophic-backtracking pattern on a long output finishes (RE2 is linear; the
        // backtracking std::regex took exponential time or overflowed the stack here).
        {
            auto evil = makeScorer({"regex", {{"pattern", "^(a+)+$"}}});
            QVERIFY(evil.ok());
            const std::string output = std::string(200000, 'a') + "!";
            const auto r = (*evil)->score(SuiteItem{}, output);
            QVERIFY(!r.pass);
            auto deep = makeScorer({"regex", {{"pattern", "(a|b)*c"}}});
            QVERIFY(deep.ok());
            QVERIFY((*deep)->score(SuiteItem{}, std::string(500000, 'a') + "c").pass);
        }
        auto badType = makeScorer({"numeric", {{"tolerance", "small"}}});
        QVERIFY(!badType.ok());
        QVERIFY(badType.error().message.find("'tolerance'") != std::string::npos);
        auto badMode = makeScorer({"contains", {{"mode", "some"}}});
        QVERIFY(!badMode.ok());
        const auto names = registeredScorerNames();
        for (const char* n : {"exact", "contains", "starts_with", "regex", "numeric", "mc_letter", "rouge_l", "bleu",
                              "json_valid", "code_exec", "mc_loglik"})
            QVERIFY2(std::find(names.begin(), names.end(), n) != names.end(), n);
    }

    void normalisationSteps() {
        NormalizeOptions o;
        QCOMPARE(normalizeText("  Hello,   WORLD!  ", o), std::string("hello world"));
        QCOMPARE(normalizeText("《红楼梦》、【注】……", o), std::string("红楼梦注"));
        NormalizeOptions keepPunct;
        keepPunct.punctuation = false;
        QCOMPARE(normalizeText("你好，世界。", keepPunct), std::string("你好,世界."));
        QCOMPARE(normalizeText("Ｈｅｌｌｏ　Ｗｏｒｌｄ！", keepPunct), std::string("hello world!"));
        QCOMPARE(normalizeText("ÉCOLE Ünïcode", o), std::string("école ünïcode"));
        QCOMPARE(normalizeText("a\tb\n\nc", NormalizeOptions::none()), std::string("a\tb\n\nc"));
        auto fromParams = NormalizeOptions::fromParams({{"ignore_case", false}}, "exact");
        QVERIFY(fromParams.ok());
        QCOMPARE(fromParams->ignoreCase, false);
        QCOMPARE(fromParams->punctuation, true);
        QVERIFY(!NormalizeOptions::fromParams({{"width", "yes"}}, "exact").ok());
    }
};

QTEST_GUILESS_MAIN(TestScoreText)
#include "test_score_text.moc"
