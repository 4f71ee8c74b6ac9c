// Token accounting (core/endpoints/token_count.h): usage diff % and the max_tokens check computed
// by hand on made-up counts; the client's count through a vocabulary-only GGUF (llama.cpp's
// ggml-vocab-qwen2.gguf, whose ChatML template the prompt count includes); bad files named.
#include "core/endpoints/token_count.h"
#include "fixtures.h"

#include <QtTest/QtTest>

#include <fstream>

using namespace verdict;

class TestTokenCount : public QObject {
    Q_OBJECT
private slots:
    void usageDiffByHand() {
        QCOMPARE(*core::usageDiffPct(110, 100), 10.0);
        QCOMPARE(*core::usageDiffPct(45, 50), -10.0);
        QVERIFY(!core::usageDiffPct(-1, 10));  // no usage
        QVERIFY(!core::usageDiffPct(5, 0));    // nothing counted
        QVERIFY(!core::usageDiffPct(5, -1));   // no tokenizer
    }

    void maxTokensExceeded() {
        core::RequestTokens t;
        t.maxTokens = 100;
        t.usageOutput = 100;
        QVERIFY(!core::exceededMaxTokens(t));
        t.usageOutput = 101;
        QVERIFY(core::exceededMaxTokens(t));
        // No usage: the chunks decide (each carries at least one token).
        t.usageOutput = -1;
        t.chunks = 100;
        QVERIFY(!core::exceededMaxTokens(t));
        t.chunks = 101;
        QVERIFY(core::exceededMaxTokens(t));
        t.maxTokens = 0;  // no limit was sent
        QVERIFY(!core::exceededMaxTokens(t));
    }

    void accountingOverRequestsByHand() {
        std::vector<core::RequestTokens> r(4);
        r[0] = {52, 111, 50, 100, 111, 100};  // +11 %: a discrepancy; 111 > 100: max_tokens ignored
        r[1] = {50, 100, 50, 100, 100, 128};  // agrees
        r[2] = {-1, -1, 20, 30, 40, 32};      // no usage: counted only; 40 chunks > 32 asked
        r[3] = {10, 10, -1, -1, 10, 16};      // usage, no count
        const core::TokenAccounting a = core::accountTokens(r, nullptr);
        QCOMPARE(a.requests, int64_t(4));
        QCOMPARE(a.withUsage, int64_t(3));
        QCOMPARE(a.counted, int64_t(3));
        QCOMPARE(a.usageOutput, int64_t(211));  // requests with both only
        QCOMPARE(a.countedOutput, int64_t(200));
        QCOMPARE(a.usagePrompt, int64_t(102));
        QCOMPARE(a.countedPrompt, int64_t(100));
        QCOMPARE(*a.outputDiffPct, 5.5);
        QCOMPARE(*a.promptDiffPct, 2.0);
        QCOMPARE(*a.outputDiffPctMaxAbs, 11.0);
        QCOMPARE(a.discrepant, int64_t(1));
        QCOMPARE(a.exceededMaxTokens, int64_t(2));
        const auto j = core::toJson(a);
        QCOMPARE(j["output_diff_pct"].get<double>(), 5.5);
        QCOMPARE(j["exceeded_max_tokens"].get<int64_t>(), int64_t(2));
        QVERIFY(core::describe(a).find("2 request(s) got more tokens than max_tokens") != std::string::npos);
        // Nothing to compare: the differences are unknown, not 0.
        const core::TokenAccounting none = core::accountTokens({r[3]}, nullptr);
        QVERIFY(!none.outputDiffPct && !none.promptDiffPct);
        QVERIFY(core::toJson(none)["output_diff_pct"].is_null());
    }

    void vocabOnlyGgufCountsWithItsChatTemplate() {
        const auto path = test::fixture("tokenizer/ggml-vocab-qwen2.gguf");
        VERDICT_NEED_FIXTURE(path);
        auto c = core::TokenCounter::open(path.string());
        QVERIFY2(c.ok(), c.ok() ? "" : c.error().message.c_str());
        QVERIFY((*c)->templated());
        // "Hello" is one token of Qwen2's vocabulary, and Qwen2 adds no BOS.
        QCOMPARE((*c)->outputTokens("Hello"), int64_t(1));
        QCOMPARE((*c)->promptTokens("Hello", false), int64_t(1));
        // ChatML with the template's default system turn ("You are a helpful assistant", no full
        // stop in this file's template), counted by hand:
        // <|im_start|> system \n You ␣are ␣a ␣helpful ␣assistant <|im_end|> \n     (10)
        // <|im_start|> user \n Hello <|im_end|> \n                                   (6)
        // <|im_start|> assistant \n                                                  (3)
        QCOMPARE((*c)->promptTokens("Hello", true), int64_t(19));
    }

    void badFilesAreNamed() {
        auto missing = core::TokenCounter::open("/nonexistent/tok.gguf");
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.find("/nonexistent/tok.gguf") != std::string::npos);
        QTemporaryDir dir;
        const std::string notGguf = dir.filePath("x.gguf").toStdString();
        std::ofstream(notGguf) << "not a gguf file at all";
        auto bad = core::TokenCounter::open(notGguf);
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().message.find(notGguf) != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestTokenCount)
#include "test_token_count.moc"
