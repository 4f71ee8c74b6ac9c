// The ops gemma2 and phi3 added to the CPU backend, with hand-computed values: GELU (tanh form, in
// f32 and as ggml's f16 table), GeGLU, soft-capping, sliding-window and soft-capped attention, and
// which layers of a config slide.
#include "arch/arch_config.h"
#include "backend/cpu/ops_activation.h"
#include "backend/cpu/ops_attention.h"
#include "backend/cpu/thread_pool.h"
#include "tensor/half.h"

#include <QtTest/QtTest>

#include <cmath>
#include <vector>

using namespace verdict;

namespace {

bool near(const std::vector<float>& a, const std::vector<float>& b, float tol) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::fabs(a[i] - b[i]) > tol) return false;
    return true;
}

// One head of size 1 (q = 1, every key 0 unless given), capacity 4, values 1, 2, 4, 8: attention
// output = the probability-weighted mean of the visible values, easy to work out by hand.
std::vector<float> attend(int64_t window, float softCap, const std::vector<float>& keys, int64_t nTok, int64_t pos0,
                          bool f16, int threads) {
    const cpu::AttentionShape shape{1, 1, 1, 1, 4, 1.0f, f16, softCap, window};
    const std::vector<float> v = {1, 2, 4, 8};
    std::vector<uint16_t> k16(4), v16(4);
    for (int i = 0; i < 4; ++i) {
        k16[static_cast<size_t>(i)] = tensor::fp32ToFp16(keys[static_cast<size_t>(i)]);
        v16[static_cast<size_t>(i)] = tensor::fp32ToFp16(v[static_cast<size_t>(i)]);
    }
    cpu::ThreadPool pool(threads);
    std::vector<float> q(static_cast<size_t>(nTok), 1.0f), out(static_cast<size_t>(nTok), -1.0f);
    std::vector<float> scratch(static_cast<size_t>(pool.size() * cpu::attentionScratchFloats(shape)));
    const void* k = f16 ? static_cast<const void*>(k16.data()) : keys.data();
    const void* vv = f16 ? static_cast<const void*>(v16.data()) : v.data();
    cpu::attention(shape, q.data(), k, vv, nTok, pos0, out.data(), scratch.data(), pool);
    return out;
}

}  // namespace

class TestArchOps : public QObject {
    Q_OBJECT
private slots:
    void geluTanhValues() {
        // 0.5 x (1 + tanh(0.7978845608 (x + 0.044715 x^3))), worked out in double
        QCOMPARE(cpu::geluTanh(0.0f), 0.0f);
        QVERIFY(std::fabs(cpu::geluTanh(1.0f) - 0.84119199f) < 1e-6f);
        QVERIFY(std::fabs(cpu::geluTanh(-1.0f) + 0.15880801f) < 1e-6f);
        QVERIFY(std::fabs(cpu::geluTanh(2.0f) - 1.95459770f) < 1e-6f);
        QVERIFY(std::fabs(cpu::geluTanh(0.5f) - 0.34571401f) < 1e-6f);
    }

    void geluTanhF16RoundsLikeGgml() {
        // f16 grid near 0.84 is 2^-11: 0.841192 -> 1723 * 2^-11; near 0.159 it is 2^-13: -> 1301 * 2^-13
        QCOMPARE(cpu::geluTanhF16(1.0f), 1723.0f / 2048.0f);
        QCOMPARE(cpu::geluTanhF16(-1.0f), -1301.0f / 8192.0f);
        // pass-through / zero outside (-10, 10), as ggml_vec_gelu_f32
        QCOMPARE(cpu::geluTanhF16(10.0f), 10.0f);
        QCOMPARE(cpu::geluTanhF16(123.25f), 123.25f);
        QCOMPARE(cpu::geluTanhF16(-10.0f), 0.0f);
        QCOMPARE(cpu::geluTanhF16(-50.0f), 0.0f);
        // input rounded to f16 first: 1 + 2^-13 rounds to 1 (f16 spacing at 1 is 2^-10)
        QCOMPARE(cpu::geluTanhF16(1.0f + 1.0f / 8192.0f), cpu::geluTanhF16(1.0f));
        // every result is an f16 value and close to the f32 formula
        for (float x = -9.75f; x < 9.75f; x += 0.37f) {
            const float y = cpu::geluTanhF16(x);
            QCOMPARE(tensor::fp16ToFp32(tensor::fp32ToFp16(y)), y);
            QVERIFY2(std::fabs(y - cpu::geluTanh(x)) <= 2e-3f * std::max(1.0f, std::fabs(y)), qPrintable(QString::number(x)));
        }
    }

    void gegluMultipliesByUp() {
        std::vector<float> gate = {1.0f, -1.0f, 20.0f, -20.0f}, up = {2.0f, 4.0f, 0.5f, 3.0f};
        cpu::gegluInPlace(gate.data(), up.data(), 4);
        QCOMPARE(gate[0], 2.0f * 1723.0f / 2048.0f);
        QCOMPARE(gate[1], -4.0f * 1301.0f / 8192.0f);
        QCOMPARE(gate[2], 10.0f);
        QCOMPARE(gate[3], 0.0f);
    }

    void softCap() {
        std::vector<float> x = {2.0f, -3.0f, 0.0f, 1000.0f};
        cpu::softCapInPlace(x.data(), 2, 4.0f);  // 4 tanh(0.5), 4 tanh(-0.75); the rest untouched
        QVERIFY(std::fabs(x[0] - 1.84846863f) < 1e-6f);
        QVERIFY(std::fabs(x[1] + 2.54059581f) < 1e-6f);
        QCOMPARE(x[3], 1000.0f);
        cpu::softCapInPlace(x.data() + 2, 2, 6.0f);
        QCOMPARE(x[2], 0.0f);
        QCOMPARE(x[3], 6.0f);  // saturates at the cap
    }

    void slidingWindowAttention_data() {
        QTest::addColumn<bool>("f16");
        QTest::addColumn<int>("threads");
        QTest::addRow("f32 cache") << false << 1;
        QTest::addRow("f16 cache") << true << 1;
        QTest::addRow("f32 cache, 3 threads") << false << 3;
    }

    void slidingWindowAttention() {
        QFETCH(bool, f16);
        QFETCH(int, threads);
        const std::vector<float> zeros(4, 0.0f);
        const float tol = f16 ? 4e-3f : 1e-6f;  // the f16 path rounds the probabilities (1/3) to f16
        // Equal scores: the output is the mean of the visible values 1, 2, 4, 8.
        // Four queries at positions 0..3, window 2: each sees itself and the one before.
        QVERIFY(near(attend(2, 0.0f, zeros, 4, 0, f16, threads), std::vector<float>{1.0f, 1.5f, 3.0f, 6.0f}, tol));
        // No window, or one wider than the context: plain causal means.
        QVERIFY(near(attend(0, 0.0f, zeros, 4, 0, f16, threads), std::vector<float>{1.0f, 1.5f, 7.0f / 3.0f, 3.75f}, tol));
        QVERIFY(near(attend(8, 0.0f, zeros, 4, 0, f16, threads), std::vector<float>{1.0f, 1.5f, 7.0f / 3.0f, 3.75f}, tol));
        // One decode row at position 3 (cache holds 0..3), window 3: sees 2, 4, 8.
        QVERIFY(near(attend(3, 0.0f, zeros, 1, 3, f16, threads), std::vector<float>{14.0f / 3.0f}, tol));
        // Window 1: only itself.
        QVERIFY(near(attend(1, 0.0f, zeros, 1, 3, f16, threads), std::vector<float>{8.0f}, tol));
    }

    void softCappedAttention() {
        // Key 0 scores 10, the others 0. Uncapped, position 0 takes ~all the weight:
        // e^10 / (e^10 + 3) = 0.99986 -> 1.000499. Capped at 1: scores tanh(10) ~ 1, 0, 0, 0 ->
        // p0 = e / (e + 3) = 0.475367, output = p0 * 1 + (1 - p0) / 3 * (2 + 4 + 8) = 2.923655.
        const std::vector<float> keys = {10.0f, 0.0f, 0.0f, 0.0f};
        const float plain = attend(0, 0.0f, keys, 1, 3, false, 1)[0];
        QVERIFY2(std::fabs(plain - 1.000499f) < 1e-5f, qPrintable(QString::number(plain)));
        const float capped = attend(0, 1.0f, keys, 1, 3, false, 1)[0];
        QVERIFY2(std::fabs(capped - 2.923655f) < 1e-5f, qPrintable(QString::number(capped)));
        // A cap far above the scores changes (almost) nothing.
        const float loose = attend(0, 1000.0f, keys, 1, 3, false, 1)[0];
        QVERIFY(std::fabs(loose - plain) < 1e-3f);
        // Window 2 hides key 0 entirely: mean of 4 and 8, cap or not.
        QCOMPARE(attend(2, 1.0f, keys, 1, 3, false, 1)[0], 6.0f);
    }

    void slidingLayers() {
        arch::ArchConfig c;
        QCOMPARE(c.windowOf(0), int64_t(0));  // no window by default
        c.slidingWindow = 8;
        c.swaPattern = 2;  // gemma2: even layers slide
        QCOMPARE(c.windowOf(0), int64_t(8));
        QCOMPARE(c.windowOf(1), int64_t(0));
        QCOMPARE(c.windowOf(24), int64_t(8));
        QCOMPARE(c.windowOf(25), int64_t(0));
        c.swaPattern = 0;  // phi3: all layers
        QCOMPARE(c.windowOf(1), int64_t(8));
        QCOMPARE(c.windowOf(3), int64_t(8));
        c.swaPattern = 6;  // gemma3-style: 5 of every 6 slide
        QCOMPARE(c.windowOf(4), int64_t(8));
        QCOMPARE(c.windowOf(5), int64_t(0));
        QCOMPARE(c.windowOf(6), int64_t(8));
    }
};

QTEST_GUILESS_MAIN(TestArchOps)
#include "test_arch_ops.moc"
