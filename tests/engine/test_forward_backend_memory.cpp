// The one forward pass of every architecture, run on a backend whose memory is not the host's:
// CheckedBackend over the CPU computes exactly what the CPU computes and reports every pointer an
// op gets that is not its own memory. So the forward must upload the weights (WeightPlacement),
// allocate its scratch and KV caches through the backend, upload token ids and RoPE tables,
// download logits and debug dumps — what a GPU backend needs before it can run the same
// description — and the logits must stay bit-identical to the CPU's: prompts in several chunks,
// decode steps, batched decode over sessions of different lengths, logprobsBatch sharing a
// prefix (KV copies between caches), and the debug hook. Also split (partial offload): the first
// blocks on the checked backend, the rest on the CPU, every session holding a cache per stage.
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/thread_pool.h"
#include "checked_backend.h"
#include "fixtures.h"
#include "model/model_impl.h"
#include "session/session_impl.h"
#include "verdict/engine/batch.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <QtTest/QtTest>

#include <atomic>
#include <thread>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace verdict;

namespace {

constexpr int kThreads = 2;

std::shared_ptr<const Model> openModel(const std::string& path) {
    ModelOptions o;
    o.threads = kThreads;
    auto m = Model::open(path, o);
    if (!m) qWarning("%s", m.error().message.c_str());
    return m ? m.value() : nullptr;
}

std::unique_ptr<Session> newSession(const std::shared_ptr<const Model>& model) {
    SessionOptions o;
    o.nCtx = 48;
    o.nBatch = 16;  // a 21-token prompt runs in two chunks
    auto s = Session::create(model, o);
    return s ? std::move(s.value()) : nullptr;
}

// Everything the test compares, in order: logits of each step, flattened.
struct Trace {
    std::vector<float> values;
    std::vector<std::string> steps;  // what each block of values is, for messages
    std::vector<size_t> ends;
    void add(const std::string& what, const float* p, size_t n) {
        values.insert(values.end(), p, p + n);
        steps.push_back(what);
        ends.push_back(values.size());
    }
};

// The same calls on one model: two sessions, prompts, decode steps, a batched decode, a logprobs
// batch whose requests share a prefix, and the debug hook's dumps of one pass.
bool runScript(const std::shared_ptr<const Model>& model, Trace& t) {
    auto a = newSession(model), b = newSession(model);
    if (!a || !b) return false;
    const int64_t V = model->impl().cfg.nVocab;
    auto tok = [&](int64_t i) { return static_cast<int32_t>((i * 37 + 11) % V); };
    std::vector<int32_t> prompt;
    for (int64_t i = 0; i < 21; ++i) prompt.push_back(tok(i));
    auto ev = a->evaluate(prompt, true);
    if (!ev) return false;
    t.add("prompt (all logits, two chunks)", ev->data, static_cast<size_t>(ev->rows * ev->nVocab));
    for (int step = 0; step < 3; ++step) {
        const int32_t next = tok(100 + step);
        auto d = a->evaluate(std::span<const int32_t>(&next, 1));
        if (!d) return false;
        t.add("decode step " + std::to_string(step), d->data, static_cast<size_t>(d->nVocab));
    }
    const std::vector<int32_t> shortPrompt(prompt.begin(), prompt.begin() + 5);
    auto eb = b->evaluate(shortPrompt);
    if (!eb) return false;
    t.add("second session's prompt", eb->data, static_cast<size_t>(eb->nVocab));
    Session* both[2] = {a.get(), b.get()};
    for (int step = 0; step < 2; ++step) {
        const int32_t next[2] = {tok(200 + step), tok(300 + step)};
        auto rows = decodeBatch(both, next);
        if (!rows) return false;
        for (size_t i = 0; i < rows->size(); ++i)
            t.add("decodeBatch step " + std::to_string(step) + " row " + std::to_string(i), (*rows)[i].data,
                  static_cast<size_t>((*rows)[i].nVocab));
    }
    const std::vector<int32_t> cont0 = {tok(400), tok(401)}, cont1 = {tok(402), tok(403), tok(404)};
    std::vector<LogprobsRequest> reqs(2);
    reqs[0].context = std::span<const int32_t>(prompt.data(), 12);
    reqs[0].continuation = cont0;
    reqs[1].context = std::span<const int32_t>(prompt.data(), 9);  // shares a prefix with request 0
    reqs[1].continuation = cont1;
    auto lp = logprobsBatch(both, reqs);
    if (!lp) return false;
    for (size_t i = 0; i < lp->size(); ++i)
        t.add("logprobsBatch request " + std::to_string(i), (*lp)[i].tokenLogprobs.data(),
              (*lp)[i].tokenLogprobs.size());

    // The debug hook sees the backend's activations (downloaded when they are not host memory).
    std::map<std::string, std::vector<float>> dumps;
    detail::setDebugHook(*a, [&](std::string_view name, int layer, const float* p, int64_t r, int64_t c) {
        auto& v = dumps[std::string(name) + "#" + std::to_string(layer)];
        v.insert(v.end(), p, p + r * c);
    });
    a->clear();
    if (!a->evaluate(shortPrompt)) return false;
    detail::setDebugHook(*a, {});
    for (const auto& [name, v] : dumps) t.add("debug dump " + name, v.data(), v.size());
    return !dumps.empty();
}

}  // namespace

class TestForwardBackendMemory : public QObject {
    Q_OBJECT
private slots:
    // The CPU kernels' load-time repacking (Model::open) has numerics of its own for Q4_K, Q6_K,
    // F16 and BF16, and the backends of memory of their own here read the weights as uploaded,
    // unpacked: the CPU baseline reads them unpacked too (test_golden_logits covers packing).
    void initTestCase() { qputenv("VERDICT_CPU_REPACK", "0"); }
    // Sessions opened and closed on one thread while another runs passes, as a server's request
    // threads do: their allocations and releases wait for the pass in flight (ModelImpl::
    // lockPasses) instead of landing inside it — on a GPU, inside a pass being recorded as a CUDA
    // graph, whose recording a release's stream wait would break.
    void sessionsOpenAndCloseBesideRunningPasses() {
        const auto path = test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(path);
        cpu::ThreadPool pool(kThreads);
        cpu::CpuBackend cpu(pool);
        test::CheckedBackend checked(cpu);
        {
            auto model = openModel(path.string());
            QVERIFY(model);
            auto& impl = const_cast<detail::ModelImpl&>(model->impl());
            auto placed = detail::runForwardOn(impl, checked, -1);
            QVERIFY2(placed.ok(), placed ? "" : placed.error().message.c_str());
            auto runner = newSession(model);
            QVERIFY(runner);
            std::atomic<bool> done{false};
            std::atomic<int> opened{0}, failed{0};
            std::thread other([&] {
                while (!done.load()) {
                    if (newSession(model)) ++opened;  // made and dropped at once
                    else ++failed;
                }
            });
            std::vector<int32_t> prompt;
            for (int32_t i = 0; i < 12; ++i) prompt.push_back(1 + (i * 37) % 200);
            bool ok = true;
            for (int i = 0; i < 80 && ok; ++i) {
                runner->clear();
                ok = runner->evaluate(prompt).ok();
            }
            done = true;
            other.join();
            QVERIFY(ok);
            QCOMPARE(failed.load(), 0);
            QVERIFY(opened.load() > 0);
        }
        for (size_t i = 0; i < checked.violations().size() && i < 10; ++i) qWarning("%s", checked.violations()[i].c_str());
        QCOMPARE(checked.violationCount(), uint64_t(0));
        QCOMPARE(checked.liveAllocations(), size_t(0));
    }

    void sameLogitsWithBackendMemoryOnly_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("split");  // > 0: blocks [0, split) on the checked backend, the rest on the CPU
        for (const char* f : {"models/stories260K.gguf", "models/synth-llama-moe-q8_0.gguf",
                              "models/synth-qwen2-f16.gguf", "models/synth-phi3-f16.gguf",
                              "models/synth-gemma2-f16.gguf", "models/synth-deepseek2-q8_0.gguf",
                              "models/synth-deepseek2lite-f16.gguf", "v0.5.0/models/synth-llama3-f16.gguf",
                              "v0.5.0/models/synth-qwen3-q4_k_m.gguf", "v0.5.0/models/synth-qwen3moe-f16.gguf",
                              "v0.5.0/models/synth-gemma3-f16.gguf", "v0.5.0/models/synth-gpt-oss-mxfp4.gguf",
                              "v0.5.0/models/synth-glm4moe-f16.gguf", "v0.5.0/models/synth-llama-iq4_xs.gguf"})
            QTest::newRow(f) << QString(f) << 0;
        // Partial offload of the one forward: the sessions hold a cache and scratch per stage.
        for (const char* f : {"models/stories260K.gguf", "models/synth-deepseek2-q8_0.gguf", "models/synth-gemma2-f16.gguf",
                              "models/synth-phi3-f16.gguf", "v0.5.0/models/synth-gpt-oss-f16.gguf",
                              "v0.5.0/models/synth-qwen3moe-f16.gguf"})
            QTest::newRow((std::string(f) + " split at 1").c_str()) << QString(f) << 1;
    }
    void sameLogitsWithBackendMemoryOnly() {
        QFETCH(QString, file);
        QFETCH(int, split);
        const auto path = test::fixture(file.toStdString());
        VERDICT_NEED_FIXTURE(path);

        Trace want;
        {
            auto cpuModel = openModel(path.string());
            QVERIFY(cpuModel);
            QVERIFY(runScript(cpuModel, want));
        }

        // Declared before the model: the model's placement, scratch and caches go first.
        cpu::ThreadPool pool(kThreads);
        cpu::CpuBackend cpu(pool);
        test::CheckedBackend checked(cpu);
        Trace got;
        {
            auto model = openModel(path.string());
            QVERIFY(model);
            // The test owns the model it opened: runForwardOn is called before any session exists.
            auto& impl = const_cast<detail::ModelImpl&>(model->impl());
            auto placed = detail::runForwardOn(impl, checked, split > 0 ? split : -1);
            QVERIFY2(placed.ok(), placed ? "" : placed.error().message.c_str());
            QCOMPARE(impl.splitLayer, int64_t(split));
            QVERIFY(impl.placement);
            if (split == 0) QVERIFY(impl.placement->bytes() >= impl.weightsBytes / 2);
            else QVERIFY(impl.placement->bytes() < impl.weightsBytes);  // only the first blocks' tensors
            QVERIFY(runScript(model, got));

            // A failed op of the backend (reported at synchronize, as a GPU reports it) fails the
            // call, and the session keeps only what it held before.
            auto s = newSession(model);
            QVERIFY(s);
            const std::vector<int32_t> toks = {1, 2, 3};
            checked.failNextSynchronize("an op failed on the device");
            auto r = s->evaluate(toks);
            QVERIFY(!r);
            QCOMPARE(QString::fromStdString(r.error().message), QString("an op failed on the device"));
            QCOMPARE(s->nPast(), int64_t(0));
            QVERIFY(s->evaluate(toks).ok());
            QCOMPARE(s->nPast(), int64_t(3));
        }
        for (size_t i = 0; i < checked.violations().size() && i < 10; ++i) qWarning("%s", checked.violations()[i].c_str());
        QCOMPARE(checked.violationCount(), uint64_t(0));
        QCOMPARE(checked.liveAllocations(), size_t(0));  // weights, scratch, caches all released

        QCOMPARE(got.steps, want.steps);
        QCOMPARE(got.values.size(), want.values.size());
        for (size_t i = 0, step = 0; i < want.values.size(); ++i) {
            while (i >= want.ends[step]) ++step;
            if (std::memcmp(&got.values[i], &want.values[i], sizeof(float)) != 0)
                QFAIL(qPrintable(QString("%1: value %2 is %3 on the checked backend, %4 on the CPU")
                                     .arg(QString::fromStdString(want.steps[step]))
                                     .arg(i - (step ? want.ends[step - 1] : 0))
                                     .arg(double(got.values[i]), 0, 'g', 9)
                                     .arg(double(want.values[i]), 0, 'g', 9)));
        }
    }
};

QTEST_GUILESS_MAIN(TestForwardBackendMemory)
#include "test_forward_backend_memory.moc"
