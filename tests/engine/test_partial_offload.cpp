// The CPU half of a partial GPU offload: decoderForward started at block k from the residual
// stream after block k-1 (ForwardBatch::hidden / firstLayer) gives exactly the logits of the full
// pass, with a cache that only ever holds blocks >= k — for a prompt and for the decode step after
// it. (The GPU half is tested in tests/gpu/test_gpu_backend.cpp.) And the same split as a placement
// of any architecture over two backends (splitAcrossBackends).
#include "arch/architecture.h"
#include "arch/weight_placement.h"
#include "backend/cpu/cpu_backend.h"
#include "checked_backend.h"
#include "backend/cpu/thread_pool.h"
#include "fixtures.h"
#include "model/model_impl.h"
#include "arch/kv_cache.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <QtTest/QtTest>

#include <cstring>
#include <vector>

using namespace verdict;

class TestPartialOffload : public QObject {
    Q_OBJECT
private slots:
    // The split runs its blocks on backends that read the weights as uploaded, unpacked; the CPU
    // kernels' load-time panels have numerics of their own for Q4_K / Q6_K / F16 / BF16, so the
    // whole-CPU baseline reads them unpacked too (test_golden_logits covers packing).
    void initTestCase() { qputenv("VERDICT_CPU_REPACK", "0"); }
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

    // Partial offload as a placement, for every architecture: blocks [0, split) on a backend with
    // memory of its own (CheckedBackend: the weights uploaded, a cache holding only those blocks,
    // the residual stream handed over through ForwardBatch::hiddenOut), the rest and the output head
    // on the CPU (a cache of blocks >= split, ForwardBatch::hidden / firstLayer): the logits of the
    // whole pass on the CPU, bit for bit, for a prompt, a decode step and two sequences in one pass.
    void splitAcrossBackends_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("split");
        QTest::newRow("stories260K / 2") << "models/stories260K.gguf" << 2;
        QTest::newRow("moe-q8_0 / 1") << "models/synth-llama-moe-q8_0.gguf" << 1;
        QTest::newRow("phi3 / 1") << "models/synth-phi3-f16.gguf" << 1;
        QTest::newRow("gemma2 / 1") << "models/synth-gemma2-f16.gguf" << 1;
        QTest::newRow("deepseek2 / 1") << "models/synth-deepseek2-q8_0.gguf" << 1;
        QTest::newRow("deepseek2lite / 1") << "models/synth-deepseek2lite-f16.gguf" << 1;
        QTest::newRow("gemma3 / 1") << "v0.5.0/models/synth-gemma3-f16.gguf" << 1;
        QTest::newRow("gpt-oss / 1") << "v0.5.0/models/synth-gpt-oss-f16.gguf" << 1;
        QTest::newRow("glm4moe / 1") << "v0.5.0/models/synth-glm4moe-f16.gguf" << 1;
        QTest::newRow("qwen3moe / 1") << "v0.5.0/models/synth-qwen3moe-f16.gguf" << 1;
    }
    void splitAcrossBackends() {
        QFETCH(QString, file);
        QFETCH(int, split);
        const auto path = verdict::test::fixture(file.toStdString());
        VERDICT_NEED_FIXTURE(path);
        cpu::ThreadPool pool(2);
        cpu::CpuBackend cpuInner(pool);
        test::CheckedBackend device(cpuInner);  // outlives everything placed on it below
        {
            ModelOptions mo;
            mo.threads = 2;
            auto model = Model::open(path.string(), mo);
            QVERIFY(model.ok());
            const detail::ModelImpl& m = (*model)->impl();
            const arch::ArchConfig& c = m.cfg;
            QVERIFY(split > 0 && split < c.nLayer);
            const int64_t E = c.nEmbd, V = c.nVocab, nCtx = 32;
            const auto cs = c.cacheShape();
            auto placed = arch::WeightPlacement::upload(device, m.weightRegions);
            QVERIFY(placed.ok());
            auto mk = [&](backend::Backend& be, int64_t first, int64_t end) {  // blocks [first, end)
                return std::move(session::KvCache::create(be, end, cs.heads, cs.dimK, cs.dimV, nCtx, false, first).value());
            };
            // Two sequences: a, b on the whole CPU; each also split (head on the device, tail on the CPU).
            auto fullA = mk(*m.cpu, 0, c.nLayer), fullB = mk(*m.cpu, 0, c.nLayer);
            auto headA = mk(device, 0, split), headB = mk(device, 0, split);
            auto tailA = mk(*m.cpu, split, c.nLayer), tailB = mk(*m.cpu, split, c.nLayer);
            QCOMPARE(headA->bytes() + tailA->bytes(), fullA->bytes());  // each stage holds its blocks only
            auto sFull = m.arch->createScratch(c, 16, *m.cpu);
            auto sHead = m.arch->createScratch(c, 16, device);
            auto sTail = m.arch->createScratch(c, 16, *m.cpu);
            QVERIFY(sFull && sHead && sTail);
            std::vector<float> want, got, hidden;
            // One pass of rows (token, position, sequence 0 = a / 1 = b), logits of every row.
            auto pass = [&](const std::vector<int32_t>& toks, const std::vector<int64_t>& pos, const std::vector<int>& seq) {
                const auto n = static_cast<int64_t>(toks.size());
                std::vector<session::KvCache*> full, head, tail;
                for (int q : seq) {
                    full.push_back(q ? fullB.get() : fullA.get());
                    head.push_back(q ? headB.get() : headA.get());
                    tail.push_back(q ? tailB.get() : tailA.get());
                }
                arch::ForwardBatch b;
                b.tokens = toks.data();
                b.nTok = n;
                b.allLogits = true;
                b.positions = pos.data();
                want.assign(static_cast<size_t>(n * V), 0.0f);
                got.assign(static_cast<size_t>(n * V), 1.0f);
                hidden.assign(static_cast<size_t>(n * E), 0.0f);
                b.caches = full.data();
                b.logits = want.data();
                m.arch->forward(*m.weights, **sFull, arch::ForwardContext{c, *fullA, nullptr, *m.cpu}, b);
                arch::ForwardBatch h = b;  // blocks [0, split) on the device
                h.caches = head.data();
                h.logits = nullptr;
                h.layerEnd = split;
                h.hiddenOut = hidden.data();
                m.arch->forward(*m.weights, **sHead, arch::ForwardContext{c, *headA, nullptr, device, placed->get()}, h);
                arch::ForwardBatch t = b;  // the rest on the CPU
                t.caches = tail.data();
                t.logits = got.data();
                t.hidden = hidden.data();
                t.firstLayer = split;
                m.arch->forward(*m.weights, **sTail, arch::ForwardContext{c, *tailA, nullptr, *m.cpu}, t);
            };
            const std::vector<int32_t> prompt = {1, 45, 99, 7, 300, 12};
            pass(prompt, {0, 1, 2, 3, 4, 5}, {0, 0, 0, 0, 0, 0});
            QVERIFY(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
            pass({1, 77}, {0, 6}, {1, 0});  // sequence b's first token and a's decode step in one pass
            QVERIFY(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
            pass({5, 9}, {1, 7}, {1, 0});
            QVERIFY(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
        }
        for (size_t i = 0; i < device.violations().size() && i < 5; ++i) qWarning("%s", device.violations()[i].c_str());
        QCOMPARE(device.violationCount(), uint64_t(0));
        QCOMPARE(device.liveAllocations(), size_t(0));
    }

    // Model::open with --gpu-layers repacks the CPU stages' matrices for the CPU kernels, as a
    // CPU-only model's are (detail::packCpuStages; before, a split's CPU half read its rows in place,
    // up to ~1.5x slower in decode). Here the split goes onto a CheckedBackend, then the CPU stages
    // are packed: only their share (4 blocks split at 1: 2.65 of the CPU-only model's 3.48 MB), and
    // — Q8_0's panels giving the unpacked rows' bits — a prompt's and a decode step's logits equal
    // the CPU-only model's.
    void cpuStagesRepacked() {
        const auto path = verdict::test::fixture("models/synth-llama-q8_0.gguf");
        VERDICT_NEED_FIXTURE(path);
        ModelOptions mo;
        mo.threads = 2;
        const std::vector<int32_t> prompt = {1, 45, 99, 7, 300, 12}, step = {77};
        auto logitsOf = [&](const std::shared_ptr<const Model>& model, std::vector<float>& out) {
            SessionOptions so;
            so.nCtx = 32;
            auto s = Session::create(model, so);
            if (!s) return false;
            auto a = (*s)->evaluate(prompt, true);
            if (!a) return false;
            out.assign(a->data, a->data + a->rows * a->nVocab);
            auto b = (*s)->evaluate(step);
            if (!b) return false;
            out.insert(out.end(), b->data, b->data + b->nVocab);
            return true;
        };
        qunsetenv("VERDICT_CPU_REPACK");  // the baseline packed at load
        auto cpuModel = Model::open(path.string(), mo);
        qputenv("VERDICT_CPU_REPACK", "0");
        QVERIFY(cpuModel.ok());
        const uint64_t allPacked = (*cpuModel)->impl().packedBytes;
        QVERIFY(allPacked > 0);
        std::vector<float> want, got;
        QVERIFY(logitsOf(*cpuModel, want));

        cpu::ThreadPool pool(2);
        cpu::CpuBackend cpuInner(pool);
        test::CheckedBackend device(cpuInner);
        {
            auto model = Model::open(path.string(), mo);  // nothing packed (VERDICT_CPU_REPACK=0)
            QVERIFY(model.ok());
            auto& impl = const_cast<detail::ModelImpl&>((*model)->impl());
            QCOMPARE(impl.packedBytes, uint64_t(0));
            QCOMPARE(impl.cfg.nLayer, int64_t(4));
            auto placed = detail::runForwardOn(impl, device, 1);
            QVERIFY2(placed.ok(), placed ? "" : placed.error().message.c_str());
            QVERIFY(detail::packCpuStages(impl, mo).ok());  // VERDICT_CPU_REPACK=0 still: nothing
            QCOMPARE(impl.packedBytes, uint64_t(0));
            qunsetenv("VERDICT_CPU_REPACK");
            auto packed = detail::packCpuStages(impl, mo);
            qputenv("VERDICT_CPU_REPACK", "0");
            QVERIFY2(packed.ok(), packed ? "" : packed.error().message.c_str());
            QVERIFY2(impl.packedBytes > 0 && impl.packedBytes < allPacked,
                     qPrintable(QString("%1 of %2 bytes packed").arg(impl.packedBytes).arg(allPacked)));
            QVERIFY(logitsOf(*model, got));
        }
        QCOMPARE(got.size(), want.size());
        QVERIFY(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
        for (size_t i = 0; i < device.violations().size() && i < 5; ++i) qWarning("%s", device.violations()[i].c_str());
        QCOMPARE(device.violationCount(), uint64_t(0));
        QCOMPARE(device.liveAllocations(), size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestPartialOffload)
#include "test_partial_offload.moc"
