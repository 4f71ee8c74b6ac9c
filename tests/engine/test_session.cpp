// Session behaviour on a real model (stories260K): sharing a model, batching and threading
// invariance, cache prefix reuse, generation stops, seeded sampling, log-probabilities, timings,
// memory figures and the errors a caller can provoke. (Stopping at EOS: test_session_errors.)
#include "fixtures.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <QtTest/QtTest>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

using namespace verdict;

namespace {

const char* kModel = "models/stories260K.gguf";

std::shared_ptr<const Model> openModel(int threads = 0) {
    ModelOptions o;
    o.threads = threads;
    auto m = Model::open(verdict::test::fixture(kModel).string(), o);
    if (!m) qWarning("%s", m.error().message.c_str());
    return m ? *m : nullptr;
}

std::unique_ptr<Session> newSession(std::shared_ptr<const Model> m, int64_t nCtx = 128, int64_t nBatch = 512,
                                    KvType kv = KvType::F32) {
    SessionOptions o;
    o.nCtx = nCtx;
    o.nBatch = nBatch;
    o.kvType = kv;
    auto s = Session::create(std::move(m), o);
    if (!s) qWarning("%s", s.error().message.c_str());
    return s ? std::move(*s) : nullptr;
}

std::vector<float> allLogits(Session& s, const std::vector<int32_t>& ids) {
    s.clear();
    auto v = s.evaluate(ids, true);
    if (!v) return {};
    return std::vector<float>(v->data, v->data + v->rows * v->nVocab);
}

double maxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return INFINITY;
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
    return m;
}

GenerateConfig greedy(int n) {
    GenerateConfig g;
    g.maxTokens = n;
    g.sampling = SamplingParams::greedy();
    g.stopAtEos = false;
    return g;
}

const std::vector<int32_t> kOnceUponATime = {1, 403, 407, 261, 378};

}  // namespace

class TestSession : public QObject {
    Q_OBJECT
private slots:
    void init() { VERDICT_NEED_FIXTURE(verdict::test::fixture(kModel)); }

    // Tokenizer + generation end to end: the text llama.cpp produced for this prompt.
    void generatesLlamaCppText() {
        auto m = openModel();
        QVERIFY(m);
        QVERIFY(m->hasTokenizer());
        auto ids = m->tokenize("Once upon a time");
        QVERIFY(ids.ok());
        QCOMPARE(*ids, kOnceUponATime);
        std::ifstream in(verdict::test::fixture("reference/stories260K.json"));
        const auto ref = nlohmann::json::parse(in)["cases"][0];
        auto s = newSession(m);
        auto out = s->generate(*ids, greedy(24));
        QVERIFY(out.ok());
        QCOMPARE(out->tokens, ref["gen_ids"].get<std::vector<int32_t>>());
        QCOMPARE(out->text, ref["gen_text"].get<std::string>());
        QCOMPARE(out->stopReason, StopReason::MaxTokens);
    }

    void sessionsShareOneModel() {
        auto m = openModel();
        auto a = newSession(m), b = newSession(m);
        QVERIFY(a && b);
        const std::vector<int32_t> ids = {1, 403, 407, 261, 378, 432, 383};
        // Interleave the two sessions token by token: each keeps its own cache.
        std::vector<float> la, lb;
        for (size_t i = 0; i < ids.size(); ++i) {
            auto ra = a->evaluate(std::span<const int32_t>(&ids[i], 1));
            auto rb = b->evaluate(std::span<const int32_t>(&ids[i], 1));
            QVERIFY(ra.ok() && rb.ok());
            la.assign(ra->data, ra->data + ra->nVocab);
            lb.assign(rb->data, rb->data + rb->nVocab);
            QCOMPARE(maxAbsDiff(la, lb), 0.0);
        }
        QCOMPARE(a->nPast(), int64_t(ids.size()));
    }

    void concurrentSessionsGiveSerialResults() {
        auto m = openModel();
        auto s = newSession(m);
        auto ref = s->generate(kOnceUponATime, greedy(20));
        QVERIFY(ref.ok());
        std::vector<int32_t> outA, outB;
        std::thread ta([&] {
            auto x = newSession(m);
            auto r = x->generate(kOnceUponATime, greedy(20));
            if (r) outA = r->tokens;
        });
        std::thread tb([&] {
            auto x = newSession(m);
            auto r = x->generate(kOnceUponATime, greedy(20));
            if (r) outB = r->tokens;
        });
        ta.join();
        tb.join();
        QCOMPARE(outA, ref->tokens);
        QCOMPARE(outB, ref->tokens);
    }

    // Splitting the prompt into small batches, or evaluating token by token, changes nothing.
    void batchingInvariance() {
        auto m = openModel();
        const std::vector<int32_t> ids = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298};
        auto big = newSession(m, 128, 512), small = newSession(m, 128, 3);
        const auto a = allLogits(*big, ids), b = allLogits(*small, ids);
        QVERIFY(!a.empty());
        QVERIFY2(maxAbsDiff(a, b) < 1e-4, qPrintable(QString::number(maxAbsDiff(a, b))));
        // last-row only (chunks before the last skip the output head and the last layer's tail)
        small->clear();
        auto last = small->evaluate(ids);
        QVERIFY(last.ok());
        QCOMPARE(last->rows, int64_t(1));
        const std::vector<float> lastRow(last->data, last->data + last->nVocab);
        const std::vector<float> refLast(a.end() - last->nVocab, a.end());
        QVERIFY(maxAbsDiff(lastRow, refLast) < 1e-4);
        // token by token
        big->clear();
        std::vector<float> c;
        for (int32_t id : ids) {
            auto r = big->evaluate(std::span<const int32_t>(&id, 1));
            QVERIFY(r.ok());
            c.insert(c.end(), r->data, r->data + r->nVocab);
        }
        QVERIFY2(maxAbsDiff(a, c) < 1e-4, qPrintable(QString::number(maxAbsDiff(a, c))));
    }

    void threadCountInvariance() {
        const std::vector<int32_t> ids = {1, 403, 407, 261, 378, 432, 383, 286};
        auto one = newSession(openModel(1)), two = newSession(openModel(2));
        const auto a = allLogits(*one, ids), b = allLogits(*two, ids);
        QVERIFY(!a.empty());
        QVERIFY2(maxAbsDiff(a, b) < 1e-5, qPrintable(QString::number(maxAbsDiff(a, b))));
    }

    // f16 KV cache: close to f32 (llama.cpp's own f32 -> f16 difference on this model is 1.6e-2).
    void kvCacheF16() {
        auto m = openModel();
        const std::vector<int32_t> ids = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376};
        auto f32 = newSession(m, 64), f16 = newSession(m, 64, 512, KvType::F16);
        const auto a = allLogits(*f32, ids), b = allLogits(*f16, ids);
        const double d = maxAbsDiff(a, b);
        QVERIFY2(d > 0 && d < 5e-2, qPrintable(QString::number(d)));
        QCOMPARE(f16->memoryUse().kvBytes * 2, f32->memoryUse().kvBytes);
    }

    void truncateAndReevaluate() {
        auto m = openModel();
        auto s = newSession(m);
        const std::vector<int32_t> ids = {1, 403, 407, 261};
        const auto ref = allLogits(*s, ids);
        s->truncate(1);
        QCOMPARE(s->nPast(), int64_t(1));
        auto r = s->evaluate(std::span<const int32_t>(ids).subspan(1), true);
        QVERIFY(r.ok());
        std::vector<float> got(r->data, r->data + r->rows * r->nVocab);
        const std::vector<float> refTail(ref.begin() + r->nVocab, ref.end());
        QVERIFY(maxAbsDiff(got, refTail) < 1e-5);
    }

    void prefixReuse() {
        auto m = openModel();
        auto s = newSession(m);
        auto first = s->generate(kOnceUponATime, greedy(8));
        QVERIFY(first.ok());
        QCOMPARE(first->timings.promptTokens, int64_t(5));
        auto again = s->generate(kOnceUponATime, greedy(8));
        QVERIFY(again.ok());
        QCOMPARE(again->tokens, first->tokens);
        QCOMPARE(again->timings.promptTokens, int64_t(1));  // only the last prompt token re-run
        std::vector<int32_t> longer = kOnceUponATime;
        longer.insert(longer.end(), first->tokens.begin(), first->tokens.begin() + 3);
        auto cont = s->generate(longer, greedy(5));
        QVERIFY(cont.ok());
        QCOMPARE(cont->timings.promptTokens, int64_t(1));  // the cache already held these tokens
        QVERIFY(std::equal(cont->tokens.begin(), cont->tokens.end(), first->tokens.begin() + 3));
    }

    void stopsAtMaxTokensCallbackAndStopString() {
        auto m = openModel();
        auto s = newSession(m);
        auto full = s->generate(kOnceUponATime, greedy(24));
        QVERIFY(full.ok());
        QCOMPARE(full->tokens.size(), size_t(24));
        QVERIFY(full->timings.stepMs.size() == 23);

        GenerateConfig cb = greedy(24);
        int seen = 0;
        std::string pieces;
        cb.onToken = [&](int32_t, std::string_view piece) {
            pieces += piece;
            return ++seen < 5;
        };
        auto stopped = s->generate(kOnceUponATime, cb);
        QVERIFY(stopped.ok());
        QCOMPARE(stopped->stopReason, StopReason::Callback);
        QCOMPARE(stopped->tokens.size(), size_t(5));
        QCOMPARE(pieces, stopped->text);

        // ", there was a little girl named Lily." -> stop at "little"
        const std::string stop = "little";
        const size_t at = full->text.find(stop);
        QVERIFY(at != std::string::npos);
        GenerateConfig st = greedy(24);
        st.stopStrings = {"zzz-not-there", stop};
        auto cut = s->generate(kOnceUponATime, st);
        QVERIFY(cut.ok());
        QCOMPARE(cut->stopReason, StopReason::StopString);
        QCOMPARE(cut->text, full->text.substr(0, at));
        QVERIFY(cut->tokens.size() < full->tokens.size());
    }

    void seededSamplingIsReproducible() {
        auto m = openModel();
        auto s = newSession(m);
        GenerateConfig g;
        g.maxTokens = 24;
        g.sampling.temperature = 1.0f;
        g.sampling.seed = 42;
        auto a = s->generate(kOnceUponATime, g);
        auto b = s->generate(kOnceUponATime, g);
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(a->tokens, b->tokens);
        g.sampling.seed = 4242;
        auto c = s->generate(kOnceUponATime, g);
        QVERIFY(c.ok());
        QVERIFY(a->tokens != c->tokens);
    }

    void logprobsMatchLogSoftmax() {
        auto m = openModel();
        auto s = newSession(m);
        auto gen = s->generate(kOnceUponATime, greedy(6));
        QVERIFY(gen.ok());
        auto lp = s->logprobs(kOnceUponATime, gen->tokens);
        QVERIFY(lp.ok());
        QVERIFY(lp->isGreedy);
        QCOMPARE(lp->tokenLogprobs.size(), gen->tokens.size());

        // Independent computation from a fresh session's logits.
        auto t = newSession(m);
        std::vector<int32_t> full = kOnceUponATime;
        full.insert(full.end(), gen->tokens.begin(), gen->tokens.end());
        const auto all = allLogits(*t, full);
        const int64_t nv = m->shape().nVocab;
        double sum = 0;
        for (size_t i = 0; i < gen->tokens.size(); ++i) {
            const float* row = all.data() + (kOnceUponATime.size() - 1 + i) * nv;
            double mx = row[0], z = 0;
            for (int64_t v = 0; v < nv; ++v) mx = std::max(mx, double(row[v]));
            for (int64_t v = 0; v < nv; ++v) z += std::exp(row[v] - mx);
            const double expect = row[gen->tokens[i]] - mx - std::log(z);
            QVERIFY(std::fabs(expect - lp->tokenLogprobs[i]) < 1e-4);
            QVERIFY(lp->tokenLogprobs[i] <= 0);
            sum += expect;
        }
        QVERIFY(std::fabs(sum - lp->sum) < 1e-3);

        // Multiple choice: scoring a second continuation reuses the context; results equal a
        // fresh session's.
        std::vector<int32_t> other = gen->tokens;
        other[1] = other[1] == 300 ? 301 : 300;
        auto lo = s->logprobs(kOnceUponATime, other);
        auto fresh = newSession(m)->logprobs(kOnceUponATime, other);
        QVERIFY(lo.ok() && fresh.ok());
        QVERIFY(!lo->isGreedy);
        QVERIFY(lo->sum < lp->sum);
        QVERIFY(std::fabs(lo->sum - fresh->sum) < 1e-4);
    }

    void timingsAndMemory() {
        auto m = openModel();
        auto s = newSession(m, 100);
        auto g = s->generate(kOnceUponATime, greedy(10));
        QVERIFY(g.ok());
        const Timings& t = g->timings;
        QVERIFY(t.loadMs > 0);
        QCOMPARE(t.promptTokens, int64_t(5));
        QVERIFY(t.prefillTps > 0);
        QVERIFY(t.ttftMs > 0 && t.ttftMs >= t.promptMs);
        QCOMPARE(t.decodeTokens, int64_t(9));
        QCOMPARE(t.stepMs.size(), size_t(9));
        QVERIFY(t.decodeTps > 0);
        const MemoryUse mu = s->memoryUse();
        // stories260K: 5 layers, 4 KV heads of 8, K and V f32, 100 positions
        QCOMPARE(mu.kvBytes, uint64_t(5 * 2 * 4 * 8 * 100 * 4));
        QVERIFY(mu.weightsBytes >= 1171200);  // llama.cpp's model size for this file
        QVERIFY(mu.scratchBytes > 0);
        QVERIFY(mu.peakRssBytes > mu.kvBytes);
    }

    void evaluateErrors() {
        auto m = openModel();
        auto s = newSession(m, 8);
        auto empty = s->evaluate({});
        QVERIFY(!empty.ok());
        const std::vector<int32_t> bad = {1, 512};
        auto r = s->evaluate(bad);
        QVERIFY(!r.ok());
        QVERIFY(r.error().message.find("512") != std::string::npos);
        QCOMPARE(s->nPast(), int64_t(0));
        const std::vector<int32_t> neg = {-1};
        QVERIFY(!s->evaluate(neg).ok());
        const std::vector<int32_t> nine(9, 5);
        auto over = s->evaluate(nine);
        QVERIFY(!over.ok());
        QVERIFY(over.error().message.find("context") != std::string::npos);
        QCOMPARE(s->nPast(), int64_t(0));
        const std::vector<int32_t> five(5, 5);
        QVERIFY(s->evaluate(five).ok());
        auto over2 = s->evaluate(five);  // 5 + 5 > 8
        QVERIFY(!over2.ok());
        QCOMPARE(s->nPast(), int64_t(5));
    }

    void generateErrorsAndContextFull() {
        auto m = openModel();
        auto s = newSession(m, 8);
        const std::vector<int32_t> nine(9, 5);
        auto tooLong = s->generate(nine, greedy(2));
        QVERIFY(!tooLong.ok());
        QVERIFY(tooLong.error().message.find("does not fit") != std::string::npos);
        QVERIFY(!s->generate({}, greedy(2)).ok());
        auto full = s->generate(kOnceUponATime, greedy(20));  // 5 prompt + room for 3
        QVERIFY(full.ok());
        QCOMPARE(full->stopReason, StopReason::ContextFull);
        QCOMPARE(full->tokens.size(), size_t(4));  // the 4th is sampled from the last logits
        QVERIFY(!s->logprobs({}, kOnceUponATime).ok());
        QVERIFY(!s->logprobs(kOnceUponATime, nine).ok());
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "test_session.moc"
