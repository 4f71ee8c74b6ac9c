// The CPU half of a partial GPU offload: decoderForward started at block k from the residual
// stream after block k-1 (ForwardBatch::hidden / firstLayer) gives exactly the logits of the full
// pass, with a cache that only ever holds blocks >= k — for a prompt and for the decode step after
// it. (The GPU half is tested in tests/gpu/test_gpu_backend.cpp.)
#include "arch/architecture.h"
#include "backend/cpu/thread_pool.h"
#include "fixtures.h"
#include "model/model_impl.h"
#include "arch/kv_cache.h"
#include "verdict/engine/model.h"

#include <QtTest/QtTest>

#include <cstring>
#include <vector>

using namespace verdict;

class TestPartialOffload : public QObject {
    Q_OBJECT
private slots:
    void resumesFromHidden_data() {
        QTest::addColumn<QString>("stem");
        QTest::addColumn<int>("firstLayer");
        QTest::newRow("stories260K-from-2") << "stories260K" << 2;
        QTest::newRow("stories260K-from-0") << "stories260K" << 0;
        QTest::newRow("moe-q8_0-from-1") << "synth-llama-moe-q8_0" << 1;
        QTest::newRow("qwen2-from-last") << "synth-qwen2-f16" << -1;
        QTest::newRow("phi3-from-1") << "synth-phi3-f16" << 1;  // phi3's own forward, sliding window
        QTest::newRow("gemma2-from-1") << "synth-gemma2-f16" << 1;  // gemma2's: post-norms, GeGLU, soft-cap
    }

    void resumesFromHidden() {
        QFETCH(QString, stem);
        QFETCH(int, firstLayer);
        const auto path = verdict::test::fixture("models/" + stem.toStdString() + ".gguf");
        VERDICT_NEED_FIXTURE(path);
        auto model = Model::open(path.string());
        QVERIFY(model.ok());
        const detail::ModelImpl& m = (*model)->impl();
        const arch::ArchConfig& c = m.cfg;
        if (firstLayer < 0) firstLayer = static_cast<int>(c.nLayer) - 1;
        const int64_t E = c.nEmbd, V = c.nVocab, nCtx = 32;
        const auto cs = c.cacheShape();
        auto kvFull = session::KvCache::create(*m.cpu, c.nLayer, cs.heads, cs.dimK, cs.dimV, nCtx, false);
        auto kvTail = session::KvCache::create(*m.cpu, c.nLayer, cs.heads, cs.dimK, cs.dimV, nCtx, false);
        auto s1 = m.arch->createScratch(c, 16, *m.cpu);
        auto s2 = m.arch->createScratch(c, 16, *m.cpu);
        QVERIFY(kvFull && kvTail && s1 && s2);

        // The residual stream after block firstLayer - 1 (the embeddings for block 0), as the GPU
        // would hand it over.
        std::vector<float> hidden;
        arch::DebugHook hook = [&](std::string_view name, int layer, const float* data, int64_t rows, int64_t cols) {
            const bool want = firstLayer == 0 ? name == "inp_embd" : (name == "l_out" && layer == firstLayer - 1);
            if (want) hidden.assign(data, data + rows * cols);
        };
        auto run = [&](const std::vector<int32_t>& toks, int64_t pos0, std::vector<float>& full, std::vector<float>& tail) {
            full.assign(toks.size() * V, 0.0f);
            tail.assign(toks.size() * V, 0.0f);
            const arch::ForwardContext ctxFull{c, **kvFull, &hook, *m.cpu};
            arch::ForwardBatch b;
            b.tokens = toks.data();
            b.nTok = static_cast<int64_t>(toks.size());
            b.pos0 = pos0;
            b.allLogits = true;
            b.logits = full.data();
            hidden.clear();
            m.arch->forward(*m.weights, **s1, ctxFull, b);
            QCOMPARE(int64_t(hidden.size()), b.nTok * E);
            const arch::ForwardContext ctxTail{c, **kvTail, nullptr, *m.cpu};
            b.logits = tail.data();
            b.hidden = hidden.data();
            b.firstLayer = firstLayer;
            m.arch->forward(*m.weights, **s2, ctxTail, b);
        };
        std::vector<float> full, tail;
        run({1, 45, 99, 7, 300, 12}, 0, full, tail);
        QVERIFY(std::memcmp(full.data(), tail.data(), full.size() * sizeof(float)) == 0);
        run({77}, 6, full, tail);  // a decode step: the tail cache holds blocks >= firstLayer only
        QVERIFY(std::memcmp(full.data(), tail.data(), full.size() * sizeof(float)) == 0);
    }
};

QTEST_GUILESS_MAIN(TestPartialOffload)
#include "test_partial_offload.moc"
