// Perplexity and KL-divergence (verdict/engine/perplexity.h) on the fixture models:
// - PPL equals exp(mean NLL) recomputed here, independently, from Session::evaluate's logits with
//   llama-perplexity's chunking (first token of a chunk -> BOS, second half scored);
// - a model against itself: KLD exactly 0, same top p 100 %, PPL ratio 1;
// - synth-llama F16 (base) vs its Q8_0 and Q4_0 siblings (same vocabulary): small positive KLD,
//   larger for Q4_0 than for Q8_0;
// - errors: too-short text (needed vs found), different vocabularies, cancellation, tiny nCtx.
#include "fixtures.h"
#include "verdict/engine/model.h"
#include "verdict/engine/perplexity.h"
#include "verdict/engine/session.h"

#include <QtTest/QtTest>

#include <cmath>

using namespace verdict;

namespace {

// A TinyStories-like text (stories260K was trained on such stories): about 450 tokens.
const char* kStory =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
    "One day, she saw a big red ball under a tree. She ran to the ball and picked it up. "
    "A little boy named Tom came and said, \"That is my ball. Can I have it back?\" "
    "Lily was sad, but she gave the ball to Tom. Tom smiled and said, \"Thank you! Do you want to play "
    "with me?\" Lily was happy and they played with the ball all day. "
    "The sun was warm and the birds sang in the trees. Lily and Tom ran and jumped and laughed. "
    "When it was time to go home, Lily said goodbye to Tom. She told her mom about her new friend. "
    "Her mom hugged her and said, \"It is good to share. Sharing makes friends.\" "
    "The next day, Lily went to the park again. Tom was there with his dog, Max. Max was a big, "
    "fluffy dog who liked to run. Lily threw a stick and Max ran to get it. Everyone was happy. "
    "Then it started to rain. Lily, Tom and Max hid under the big tree. They waited for the rain to stop. "
    "When the sun came out, they saw a rainbow in the sky. It was red, yellow, green and blue. "
    "Lily said, \"Look, a rainbow! It is so pretty!\" Tom nodded and Max wagged his tail. "
    "They were best friends, and they played in the park every day after that. The end.";

std::shared_ptr<const Model> openFixture(const char* name) {
    auto m = Model::open(verdict::test::fixture(name).string(), {});
    if (!m) qWarning("%s", m.error().message.c_str());
    return m ? *m : nullptr;
}

}  // namespace

class TestPerplexity : public QObject {
    Q_OBJECT

private slots:
    void matchesIndependentNll() {
        const auto path = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(path);
        auto model = openFixture("models/stories260K.gguf");
        QVERIFY(model);
        auto ids = model->tokenize(kStory, true, false);
        QVERIFY(ids.ok());
        QVERIFY(addsBos(*model));
        QCOMPARE(ids->front(), model->bos());
        const int64_t nCtx = 64;
        QVERIFY2(static_cast<int64_t>(ids->size()) >= 4 * nCtx, qPrintable(QString::number(ids->size())));

        int calls = 0;
        PerplexityOptions o;
        o.nCtx = nCtx;
        o.progress = [&](int64_t done, int64_t total) {
            ++calls;
            return done <= total;
        };
        auto r = computePerplexity(model, std::string_view(kStory), o);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        const int64_t chunks = static_cast<int64_t>(ids->size()) / nCtx;
        QCOMPARE(r->chunks, chunks);
        QCOMPARE(calls, static_cast<int>(chunks));
        QCOMPARE(r->tokensScored, chunks * (nCtx - 1 - nCtx / 2));
        QCOMPARE(r->textTokens, static_cast<int64_t>(ids->size()));
        QCOMPARE(static_cast<int64_t>(r->chunkPpl.size()), chunks);

        // Independent recomputation: plain Session, log-softmax in long double.
        SessionOptions so;
        so.nCtx = nCtx;
        auto s = Session::create(model, so);
        QVERIFY(s.ok());
        long double sum = 0, sum2 = 0;
        int64_t n = 0;
        for (int64_t c = 0; c < chunks; ++c) {
            std::vector<int32_t> chunk(ids->begin() + c * nCtx, ids->begin() + (c + 1) * nCtx);
            chunk[0] = model->bos();
            (*s)->clear();
            auto v = (*s)->evaluate(chunk, true);
            QVERIFY(v.ok());
            long double chunkSum = 0;
            for (int64_t j = nCtx / 2; j < nCtx - 1; ++j) {
                auto row = v->row(j);
                long double z = 0;
                for (float x : row) z += std::exp(static_cast<long double>(x));
                const long double nll = std::log(z) - row[static_cast<size_t>((*ids)[c * nCtx + j + 1])];
                sum += nll;
                sum2 += nll * nll;
                chunkSum += nll;
                ++n;
            }
            const double chunkPpl = std::exp(static_cast<double>(chunkSum / (nCtx - 1 - nCtx / 2)));
            QVERIFY(std::fabs(r->chunkPpl[static_cast<size_t>(c)] - chunkPpl) < 1e-9 * chunkPpl);
        }
        const double mean = static_cast<double>(sum / n);
        const double ppl = std::exp(mean);
        QVERIFY2(std::fabs(r->ppl - ppl) < 1e-9 * ppl, qPrintable(QString("%1 vs %2").arg(r->ppl).arg(ppl)));
        QVERIFY(std::fabs(r->meanNll - mean) < 1e-9);
        const double var = static_cast<double>(sum2 / n) - mean * mean;
        const double se = ppl * std::sqrt(var / static_cast<double>(n - 1));
        QVERIFY(std::fabs(r->pplStderr - se) < 1e-6 * se);
        QCOMPARE(r->runningPpl.back(), r->ppl);
        // A trained story model on a story: far better than uniform over 512 tokens.
        QVERIFY2(r->ppl > 1 && r->ppl < 100, qPrintable(QString::number(r->ppl)));
        QVERIFY(r->tokensPerSecond > 0);

        // maxChunks caps the work.
        o.maxChunks = 2;
        auto two = computePerplexity(model, *ids, true, o);
        QVERIFY(two.ok());
        QCOMPARE(two->chunks, int64_t{2});
        QCOMPARE(two->chunkPpl[1], r->chunkPpl[1]);
    }

    void tooShortTextFails() {
        VERDICT_NEED_FIXTURE(verdict::test::fixture("models/stories260K.gguf"));
        auto model = openFixture("models/stories260K.gguf");
        QVERIFY(model);
        PerplexityOptions o;
        o.nCtx = 512;
        auto r = computePerplexity(model, std::string_view("Once upon a time, there was a cat."), o);
        QVERIFY(!r.ok());
        const std::string& msg = r.error().message;
        QVERIFY2(msg.find("needs at least 1024 tokens") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("only ") != std::string::npos, msg.c_str());
        o.nCtx = 2;
        QVERIFY(!computePerplexity(model, std::string_view(kStory), o).ok());
    }

    void cancelStops() {
        VERDICT_NEED_FIXTURE(verdict::test::fixture("models/stories260K.gguf"));
        auto model = openFixture("models/stories260K.gguf");
        QVERIFY(model);
        PerplexityOptions o;
        o.nCtx = 32;
        int calls = 0;
        o.progress = [&](int64_t, int64_t) { return ++calls < 2; };
        auto r = computePerplexity(model, std::string_view(kStory), o);
        QVERIFY(!r.ok());
        QCOMPARE(calls, 2);
        QVERIFY2(r.error().message.find("cancelled after chunk 2") != std::string::npos, r.error().message.c_str());
    }

    void kldOfModelWithItselfIsZero() {
        VERDICT_NEED_FIXTURE(verdict::test::fixture("models/stories260K.gguf"));
        auto model = openFixture("models/stories260K.gguf");
        auto again = openFixture("models/stories260K.gguf");  // a second load of the same file
        QVERIFY(model && again);
        PerplexityOptions o;
        o.nCtx = 64;
        auto k = computeKlDivergence(model, again, std::string_view(kStory), o);
        QVERIFY2(k.ok(), k.ok() ? "" : k.error().message.c_str());
        QCOMPARE(k->meanKld, 0.0);
        QCOMPARE(k->kld.max, 0.0);
        QCOMPARE(k->sameTopP, 1.0);
        QCOMPARE(k->rmsDeltaP, 0.0);
        QCOMPARE(k->pplRatio, 1.0);
        QCOMPARE(k->model.ppl, k->base.ppl);
        auto alone = computePerplexity(model, std::string_view(kStory), o);
        QVERIFY(alone.ok());
        QVERIFY(std::fabs(alone->ppl - k->model.ppl) < 1e-12 * alone->ppl);
        QCOMPARE(k->tokensScored, alone->tokensScored);
    }

    void kldOfQuantizedSiblings() {
        const char* f16 = "models/synth-llama-f16.gguf";
        VERDICT_NEED_FIXTURE(verdict::test::fixture(f16));
        auto base = openFixture(f16);
        auto q8 = openFixture("models/synth-llama-q8_0.gguf");
        auto q4 = openFixture("models/synth-llama-q4_0.gguf");
        QVERIFY(base && q8 && q4);
        PerplexityOptions o;
        o.nCtx = 64;
        o.maxChunks = 3;
        auto k8 = computeKlDivergence(q8, base, std::string_view(kStory), o);
        auto k4 = computeKlDivergence(q4, base, std::string_view(kStory), o);
        QVERIFY2(k8.ok(), k8.ok() ? "" : k8.error().message.c_str());
        QVERIFY2(k4.ok(), k4.ok() ? "" : k4.error().message.c_str());
        const QString info = QString("KLD q8 %1, q4 %2; same top q8 %3, q4 %4")
                                 .arg(k8->meanKld).arg(k4->meanKld).arg(k8->sameTopP).arg(k4->sameTopP);
        QVERIFY2(k8->meanKld > 0 && k8->meanKld < 0.01, qPrintable(info));
        QVERIFY2(k4->meanKld > k8->meanKld && k4->meanKld < 0.1, qPrintable(info));
        QVERIFY2(k8->sameTopP > 0.5 && k8->sameTopP <= 1.0, qPrintable(info));
        QVERIFY(k8->kld.min >= -1e-12 && k8->kld.median <= k8->kld.p90 && k8->kld.p90 <= k8->kld.p99
                && k8->kld.p99 <= k8->kld.max);
        QVERIFY(k8->meanKldStderr > 0);
        QVERIFY(std::fabs(k8->lnPplRatio) < 0.05 && std::fabs(k8->pplRatio - std::exp(k8->lnPplRatio)) < 1e-12);
        QVERIFY(k8->rmsDeltaP > 0 && k8->rmsDeltaP >= std::fabs(k8->meanDeltaP));
        QCOMPARE(k8->chunks, int64_t{3});
        QCOMPARE(static_cast<int64_t>(k8->chunkKld.size()), int64_t{3});
        // The base's PPL in the KLD run equals its PPL computed alone.
        auto alone = computePerplexity(base, std::string_view(kStory), o);
        QVERIFY(alone.ok());
        QVERIFY(std::fabs(alone->ppl - k8->base.ppl) < 1e-12 * alone->ppl);
    }

    void kldNeedsTheSameVocabulary() {
        VERDICT_NEED_FIXTURE(verdict::test::fixture("models/llama-2-tiny-random.gguf"));
        auto a = openFixture("models/stories260K.gguf");
        auto b = openFixture("models/llama-2-tiny-random.gguf");
        QVERIFY(a && b);
        PerplexityOptions o;
        o.nCtx = 16;
        auto ids = a->tokenize(kStory, true, false);
        QVERIFY(ids.ok());
        auto k = computeKlDivergence(a, b, *ids, true, o);
        QVERIFY(!k.ok());
        QVERIFY2(k.error().message.find("vocabularies differ") != std::string::npos, k.error().message.c_str());
        auto kt = computeKlDivergence(a, b, std::string_view(kStory), o);
        QVERIFY(!kt.ok());
    }
};

QTEST_APPLESS_MAIN(TestPerplexity)
#include "test_perplexity.moc"
