// Serving metrics (core/perf/latency_stats.h) against hand-computed values: numpy-style linear
// percentiles, TPOT per request, ITL pooled over requests, failed requests excluded, throughput
// over the window. And the OpenAI response parsing they are measured from
// (core/net/openai_response.h, net::SseParser): stream chunks, completions, echo logprobs, and
// the hostile responses fuzz_sse turned up, which must read as absent fields, never throw.
#include "core/net/http.h"
#include "core/net/openai_response.h"
#include "core/perf/latency_stats.h"

#include <QtTest/QtTest>

using namespace verdict::core;

class TestLatencyStats : public QObject {
    Q_OBJECT
private slots:
    void percentilesInterpolateLinearly() {
        // numpy.percentile([1, 2, 3, 4], p): p50 = 2.5, p90 = 3.7, p95 = 3.85, p99 = 3.97
        const Distribution d = distributionOf({4, 2, 1, 3});
        QCOMPARE(d.p50, 2.5);
        QVERIFY(std::abs(d.p90 - 3.7) < 1e-12);
        QVERIFY(std::abs(d.p95 - 3.85) < 1e-12);
        QVERIFY(std::abs(d.p99 - 3.97) < 1e-12);
        QCOMPARE(distributionOf({7}).p99, 7.0);
        QCOMPARE(distributionOf({}).p50, 0.0);
    }

    void distributionSortsAndDropsNonFinite() {
        const Distribution d = distributionOf({5, 1, std::nan(""), 3, INFINITY});
        QCOMPARE(d.n, int64_t(3));
        QCOMPARE(d.min, 1.0);
        QCOMPARE(d.max, 5.0);
        QCOMPARE(d.mean, 3.0);
        QCOMPARE(d.p50, 3.0);
        QCOMPARE(distributionOf({}).n, int64_t(0));
    }

    void loadMetricsByHand() {
        // Request A: 10 prompt tokens, TTFT 100 ms, 3 tokens at 100, 150, 250 ms -> E2E 250,
        //   TPOT (250 - 100) / 2 = 75, gaps 50 and 100.
        // Request B: 20 prompt tokens, starts at 50 ms, TTFT 200, 2 tokens at 200 and 230 ->
        //   E2E 230, TPOT 30, gap 30.
        // Request C: failed (not counted in latencies), D: a single token (no TPOT, no ITL).
        RequestTiming a{10, 3, 0, 100, 250, {50, 100}, ""};
        RequestTiming b{20, 2, 50, 200, 230, {30}, ""};
        RequestTiming c{5, 0, 0, 0, 0, {}, "HTTP 500"};
        RequestTiming d{4, 1, 0, 40, 40, {}, ""};
        const LoadMetrics m = summarizeLoad({a, b, c, d}, 0);
        QCOMPARE(m.requests, int64_t(3));
        QCOMPARE(m.failed, int64_t(1));
        QCOMPARE(m.promptTokens, int64_t(34));
        QCOMPARE(m.outputTokens, int64_t(6));
        // window: first start 0, last end max(250, 50 + 230, 40) = 280 ms
        QVERIFY(std::abs(m.durationS - 0.28) < 1e-12);
        QVERIFY(std::abs(m.requestsPerS - 3 / 0.28) < 1e-9);
        QVERIFY(std::abs(m.outputTokPerS - 6 / 0.28) < 1e-9);
        QVERIFY(std::abs(m.totalTokPerS - 40 / 0.28) < 1e-9);
        QCOMPARE(m.tpotMs.n, int64_t(2));
        QCOMPARE(m.tpotMs.mean, (75.0 + 30.0) / 2);
        QCOMPARE(m.itlMs.n, int64_t(3));  // pooled: 50, 100, 30
        QCOMPARE(m.itlMs.p50, 50.0);
        QCOMPARE(m.ttftMs.n, int64_t(3));
        QCOMPARE(m.ttftMs.p50, 100.0);  // 40, 100, 200
        QCOMPARE(m.e2eMs.max, 250.0);
        // prefill: mean of 10/0.1, 20/0.2, 4/0.04 = 100 tok/s each
        QVERIFY(std::abs(m.prefillTokPerS - 100.0) < 1e-9);
        // an explicit window wins
        QVERIFY(std::abs(summarizeLoad({a, b}, 2.0).requestsPerS - 1.0) < 1e-12);
    }

    void nothingCompleted() {
        const LoadMetrics m = summarizeLoad({{1, 0, 0, 0, 0, {}, "timeout"}}, 0);
        QCOMPARE(m.requests, int64_t(0));
        QCOMPARE(m.failed, int64_t(1));
        QCOMPARE(m.durationS, 0.0);
        QCOMPARE(m.requestsPerS, 0.0);
        QCOMPARE(m.e2eMs.n, int64_t(0));
    }

    void requestJsonRoundTrip() {
        RequestTiming r{12, 3, 5.5, 20, 40, {10, 10}, "partial"};
        const RequestTiming back = requestTimingFromJson(toJson(r));
        QCOMPARE(back.promptTokens, r.promptTokens);
        QCOMPARE(back.outputTokens, r.outputTokens);
        QCOMPARE(back.startMs, r.startMs);
        QCOMPARE(back.ttftMs, r.ttftMs);
        QCOMPARE(back.e2eMs, r.e2eMs);
        QCOMPARE(back.itlMs, r.itlMs);
        QCOMPARE(back.error, r.error);
        QCOMPARE(toJson(summarizeLoad({r}, 1))["tpot_ms"]["n"].get<int>(), 0);  // failed: excluded
    }

    void sseEventsSurviveAnySplit() {
        const std::string stream = ": ping\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n"
                                   "data: [DONE]\n\nid: 7\n\n";
        for (size_t piece : {size_t(1), size_t(2), size_t(5), stream.size()}) {
            net::SseParser sse;
            std::vector<std::string> events;
            for (size_t at = 0; at < stream.size(); at += piece)
                sse.feed(std::string_view(stream).substr(at, piece), [&](const std::string& e) { events.push_back(e); });
            QCOMPARE(events, (std::vector<std::string>{"{\"a\":\n1}", "[DONE]"}));  // an event without data: none
        }
    }

    void openAiStreamChunks() {
        auto c = net::parseOpenAiStreamChunk(
            R"({"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]})");
        QVERIFY(c.object && c.hasChoice && !c.error && !c.usage && !c.finishReason);
        QCOMPARE(c.piece, std::string("Hel"));
        c = net::parseOpenAiStreamChunk(R"({"choices":[{"text":" upon","finish_reason":"length"}]})");
        QCOMPARE(c.piece, std::string(" upon"));
        QCOMPARE(c.finishReason.value_or(""), std::string("length"));
        c = net::parseOpenAiStreamChunk(R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}})");
        QVERIFY(!c.hasChoice && c.usage);
        QCOMPARE(c.usage->promptTokens.value_or(-1), int64_t(5));
        QCOMPARE(c.usage->completionTokens.value_or(-1), int64_t(2));
        c = net::parseOpenAiStreamChunk(R"({"error":{"message":"overloaded"}})");
        QCOMPARE(c.error.value_or(""), std::string(R"({"message":"overloaded"})"));
        QVERIFY(net::parseOpenAiStreamChunk("[DONE]").done);
        c = net::parseOpenAiStreamChunk("not json");
        QVERIFY(!c.json && !c.object);
        c = net::parseOpenAiStreamChunk("[1, 2]");
        QVERIFY(c.json && !c.object && !c.hasChoice);
    }

    // What the endpoint backend and the load runner used to read with json::value(), which throws
    // on a present key of another type: a null or string token count, a null message content, a
    // choice that is not an object, offsets that are not an array. Each must come back as absent.
    void hostileResponsesFailCleanly() {
        auto c = net::parseOpenAiStreamChunk(R"({"choices":[{"delta":{"content":null}}],"usage":{"prompt_tokens":null,"completion_tokens":"7"}})");
        QVERIFY(c.usage);
        QVERIFY(!c.usage->promptTokens && !c.usage->completionTokens);
        QVERIFY(c.piece.empty());
        c = net::parseOpenAiStreamChunk(R"({"choices":[5],"usage":{"prompt_tokens":1e300,"completion_tokens":3.9}})");
        QVERIFY(c.hasChoice && c.piece.empty());
        QVERIFY(!c.usage->promptTokens);  // no float-to-integer overflow
        QCOMPARE(c.usage->completionTokens.value_or(-1), int64_t(3));

        auto done = net::parseOpenAiCompletion(R"({"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[]}}],"usage":{"prompt_tokens":9}})");
        QVERIFY(done.ok());
        QCOMPARE(done->text, std::string());
        QCOMPARE(done->usage->promptTokens.value_or(-1), int64_t(9));
        QVERIFY(!done->usage->completionTokens);
        QVERIFY(net::parseOpenAiCompletion(R"({"choices":["x"]})").ok());  // was value() on a string: a throw
        QVERIFY(!net::parseOpenAiCompletion(R"({"choices":[]})").ok());
        QVERIFY(!net::parseOpenAiCompletion("[1]").ok());

        QVERIFY(!net::parseEchoLogprobs(R"({"choices":[{"logprobs":{"token_logprobs":[null,-1,-2],"text_offset":"0"}}]})", 1).ok());
        auto lp = net::parseEchoLogprobs(
            R"({"choices":[{"logprobs":{"tokens":["a","b","c"],"token_logprobs":[null,-1.5,-2],"text_offset":[0,-1e300,1e300],"top_logprobs":[null,{"b":-1.5},{"c":-2}]}}]})", 1);
        QVERIFY2(!lp.ok(), "offsets out of range are no offsets: nothing lands in the continuation");
    }

    void echoLogprobsSplitAtTheBoundary() {
        const std::string body = R"({"choices":[{"text":"The cat sat","logprobs":{"tokens":["The"," cat"," sat","."],)"
                                 R"("token_logprobs":[null,-1.5,-0.25,-2.0],"top_logprobs":[null,{" cat":-1.5,"dog":-3.0},)"
                                 R"({" sat":-0.25,"x":-0.5}, {".":-2.0}],"text_offset":[0,3,7,11]}}]})";
        auto lp = net::parseEchoLogprobs(body, 4);  // context "The " | continuation: " cat" starts before it
        QVERIFY2(lp.ok(), lp.ok() ? "" : lp.error().message.c_str());
        QCOMPARE(lp->contextTokens, int64_t(2));
        QCOMPARE(lp->continuationTokens, int64_t(1));  // the last token is the generated one
        QCOMPARE(lp->logprob, -0.25);
        QVERIFY(lp->greedy);
        lp = net::parseEchoLogprobs(body, 3);
        QCOMPARE(lp->continuationTokens, int64_t(2));
        QCOMPARE(lp->logprob, -1.75);
        lp = net::parseEchoLogprobs(body, 100);
        QVERIFY(!lp.ok());
        QVERIFY(lp.error().message.find("no prompt token starts inside the continuation") != std::string::npos);
        lp = net::parseEchoLogprobs(R"({"choices":[{"logprobs":{"token_logprobs":[null,"x",-1],"text_offset":[0,1,2]}}]})", 1);
        QVERIFY(!lp.ok());
        QCOMPARE(lp.error().message, std::string("prompt token 1 has no logprob"));
    }
};

QTEST_APPLESS_MAIN(TestLatencyStats)
#include "test_latency_stats.moc"
