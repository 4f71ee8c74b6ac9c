// The grouped matmul and the quantized-row products of the MoE / MLA decode path (kernels.h):
// matmulGroup must give exactly matmul()'s results job by job (shared activations, skipped empty
// jobs, any pool size); dotRows / axpyRows must equal dequantizeRow + dotF32 / axpyF32 bit for bit.
#include "backend/cpu/kernels.h"
#include "backend/cpu/ops_vec.h"
#include "backend/cpu/thread_pool.h"
#include "tensor/quantize.h"

#include <QtTest/QtTest>

#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace verdict;
using namespace verdict::cpu;
using tensor::TensorType;

namespace {

std::vector<float> randomFloats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

// rows x k weights of type t, quantized from N(0,1).
std::vector<uint8_t> randomWeights(TensorType t, int64_t rows, int64_t k, uint32_t seed) {
    const auto wf = randomFloats(static_cast<size_t>(rows * k), seed);
    std::vector<uint8_t> w(static_cast<size_t>(*tensor::rowBytes(t, static_cast<uint64_t>(k)) * rows));
    if (!tensor::quantizeRows(t, wf.data(), w.data(), rows, k).ok()) w.clear();
    return w;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

class TestMatmulGroup : public QObject {
    Q_OBJECT
private slots:
    void groupEqualsSeparateCalls_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("nTok");
        for (TensorType t : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_K, TensorType::F16})
            for (int n : {1, 2, 5, 37}) QTest::addRow("%s/%d", std::string(tensor::traits(t).name).c_str(), n) << static_cast<int>(t) << n;
    }
    void groupEqualsSeparateCalls() {
        QFETCH(int, type);
        QFETCH(int, nTok);
        const auto t = static_cast<TensorType>(type);
        const int64_t K = 512, F = 256, E = 288;
        // Three "experts" over two inputs: up and gate share x0 (prepared once), one job reads x1,
        // one job is empty and must be skipped.
        const auto x0 = randomFloats(static_cast<size_t>(nTok * K), 1);
        const auto x1 = randomFloats(static_cast<size_t>(nTok * F), 2);
        const auto wUp = randomWeights(t, F, K, 3), wGate = randomWeights(t, F, K, 4);
        const auto wDown = randomWeights(t, E, F, 5), wBig = randomWeights(t, 1024, K, 6);
        QVERIFY(!wUp.empty() && !wGate.empty() && !wDown.empty() && !wBig.empty());
        for (int threads : {1, 2, 3}) {
            ThreadPool pool(threads);
            std::vector<float> up(static_cast<size_t>(nTok * F)), gate(up.size()), down(static_cast<size_t>(nTok * E));
            std::vector<float> big(static_cast<size_t>(nTok * 1024));
            const MatmulJob jobs[] = {{t, wUp.data(), F, K, x0.data(), nTok, up.data(), F},
                                      {t, wGate.data(), F, K, x0.data(), nTok, gate.data(), F},
                                      {t, wDown.data(), E, F, x1.data(), 0, nullptr, E},
                                      {t, wDown.data(), E, F, x1.data(), nTok, down.data(), E},
                                      {t, wBig.data(), 1024, K, x0.data(), nTok, big.data(), 1024}};
            matmulGroup(jobs, 5, pool);
            std::vector<float> up2(up.size()), gate2(up.size()), down2(down.size()), big2(big.size());
            matmul(t, wUp.data(), F, K, x0.data(), nTok, up2.data(), F, pool);
            matmul(t, wGate.data(), F, K, x0.data(), nTok, gate2.data(), F, pool);
            matmul(t, wDown.data(), E, F, x1.data(), nTok, down2.data(), E, pool);
            matmul(t, wBig.data(), 1024, K, x0.data(), nTok, big2.data(), 1024, pool);
            QVERIFY2(sameBits(up, up2), qPrintable(QString("up, %1 threads").arg(threads)));
            QVERIFY2(sameBits(gate, gate2), qPrintable(QString("gate, %1 threads").arg(threads)));
            QVERIFY2(sameBits(down, down2), qPrintable(QString("down, %1 threads").arg(threads)));
            QVERIFY2(sameBits(big, big2), qPrintable(QString("big, %1 threads").arg(threads)));
        }
    }

    void rowProductsEqualDequantized_data() {
        QTest::addColumn<int>("type");
        for (TensorType t : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q6_K, TensorType::F16, TensorType::F32})
            QTest::addRow("%s", std::string(tensor::traits(t).name).c_str()) << static_cast<int>(t);
    }
    void rowProductsEqualDequantized() {
        QFETCH(int, type);
        const auto tt = static_cast<TensorType>(type);
        const int64_t rows = 24, n = 512;
        const auto w = randomWeights(tt, rows, n, 7);
        QVERIFY(!w.empty());
        const size_t rb = *tensor::rowBytes(tt, static_cast<uint64_t>(n));
        const auto x = randomFloats(static_cast<size_t>(n), 8), a = randomFloats(static_cast<size_t>(rows), 9);

        std::vector<float> deq(static_cast<size_t>(rows * n));
        for (int64_t r = 0; r < rows; ++r) tensor::dequantizeRow(tt, w.data() + r * rb, deq.data() + r * n, n);

        std::vector<float> dots(static_cast<size_t>(rows)), dotsRef(dots.size());
        dotRows(tt, w.data(), rb, rows, x.data(), dots.data(), n);
        for (int64_t r = 0; r < rows; ++r) dotsRef[static_cast<size_t>(r)] = dotF32(deq.data() + r * n, x.data(), n);
        QVERIFY(sameBits(dots, dotsRef));

        std::vector<float> y = randomFloats(static_cast<size_t>(n), 10), yRef = y;
        axpyRows(tt, w.data(), rb, rows, a.data(), y.data(), n);
        for (int64_t r = 0; r < rows; ++r) axpyF32(a[static_cast<size_t>(r)], deq.data() + r * n, yRef.data(), n);
        QVERIFY(sameBits(y, yRef));

        // dequantizeRow (fast paths included) equals the reference dequantizer exactly.
        std::vector<float> fast(static_cast<size_t>(rows * n));
        cpu::dequantizeRow(tt, w.data(), fast.data(), rows * n);
        QVERIFY(sameBits(fast, deq));
    }
};

QTEST_APPLESS_MAIN(TestMatmulGroup)
#include "test_matmul_group.moc"
