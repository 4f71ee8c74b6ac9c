// Every CUDA kernel family against the CPU backend's reference on the same inputs: quantised
// matrix-vector products of every type (and the expert-indexed variant), f16 dequantisation,
// embeddings, RMSNorm, RoPE (both layouts), attention over f32 and f16 caches (GQA, soft-cap,
// sliding window, the split-K decode path), MoE routing and the expert combine, SwiGLU, adds.
// Label gpu: skips without a CUDA device.
#include "backend/cpu/ops_activation.h"
#include "backend/cpu/ops_attention.h"
#include "backend/cpu/ops_norm.h"
#include "backend/cpu/ops_rope.h"
#include "backend/cpu/thread_pool.h"
#include "backend/cuda/block_type.h"
#include "backend/cuda/cuda_ops.h"
#include "backend/cuda/gemm.h"
#include "tensor/half.h"
#include "tensor/quantize.h"
#include "test_device.h"

#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace verdict;
using cuda::BlockType;

namespace {

// A device copy of a host vector, freed at scope exit.
template <class T>
struct Dev {
    T* p = nullptr;
    size_t n = 0;
    explicit Dev(size_t count) : n(count) { cudaMalloc(reinterpret_cast<void**>(&p), sizeof(T) * std::max<size_t>(n, 1)); }
    explicit Dev(const std::vector<T>& v) : Dev(v.size()) { cudaMemcpy(p, v.data(), sizeof(T) * n, cudaMemcpyHostToDevice); }
    ~Dev() { cudaFree(p); }
    Dev(const Dev&) = delete;
    Dev& operator=(const Dev&) = delete;
    std::vector<T> get() const {
        std::vector<T> v(n);
        cudaDeviceSynchronize();
        cudaMemcpy(v.data(), p, sizeof(T) * n, cudaMemcpyDeviceToHost);
        return v;
    }
};

std::vector<float> randomVec(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

bool noCudaError(QString& why) {
    const cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess && cudaGetLastError() == cudaSuccess) return true;
    why = QString("CUDA error: %1").arg(cudaGetErrorString(e));
    return false;
}

double maxRelDiff(const std::vector<float>& a, const std::vector<float>& b, double floor = 1e-3) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i)
        m = std::max(m, std::fabs(double(a[i]) - b[i]) / std::max(floor, std::fabs(double(b[i]))));
    return m;
}

struct TypeCase {
    tensor::TensorType type;
};

// Quantised [rows][cols] matrix and its dequantised f32 copy (the reference's view of it).
struct QMatrix {
    std::vector<uint8_t> bytes;
    std::vector<float> deq;
    uint64_t rowBytes = 0;
};

QMatrix makeMatrix(tensor::TensorType t, int64_t rows, int64_t cols, uint32_t seed) {
    QMatrix m;
    const auto src = randomVec(static_cast<size_t>(rows * cols), seed, 0.5f);
    m.rowBytes = *tensor::rowBytes(t, static_cast<uint64_t>(cols));
    m.bytes.resize(m.rowBytes * static_cast<uint64_t>(rows));
    if (t == tensor::TensorType::F32) {
        std::memcpy(m.bytes.data(), src.data(), m.bytes.size());
    } else {
        auto r = tensor::quantizeRows(t, src.data(), m.bytes.data(), rows, cols);
        if (!r) qFatal("%s", r.error().message.c_str());
    }
    m.deq.resize(src.size());
    for (int64_t r = 0; r < rows; ++r)
        tensor::dequantizeRow(t, m.bytes.data() + r * m.rowBytes, m.deq.data() + r * cols, cols);
    return m;
}

float roundActivation(tensor::TensorType t, float x) {
    if (t == tensor::TensorType::F16) return tensor::fp16ToFp32(tensor::fp32ToFp16(x));
    if (t == tensor::TensorType::BF16) return tensor::bf16ToFp32(tensor::fp32ToBf16(x));
    return x;
}

float asIs(float v) { return v; }
float toF16(float v) { return tensor::fp16ToFp32(tensor::fp32ToFp16(v)); }

// The f64 dot product of a weight row and an activation row of K elements, each element passed
// through its rounding first, and the sum of |products| (the scale of the f32 summation error).
struct RefDot {
    double sum = 0, mag = 0;
};
template <class RoundW, class RoundX>
RefDot refDot(const float* w, const float* x, int64_t K, RoundW roundW, RoundX roundX) {
    RefDot d;
    for (int64_t k = 0; k < K; ++k) {
        const double p = double(roundW(w[k])) * roundX(x[k]);
        d.sum += p;
        d.mag += std::fabs(p);
    }
    return d;
}

// The power-of-two scale cuda::activationScales gives an activation row (cuda_ops.h): 1 below
// 2^15, else the least 2^e with max|x| / 2^e < 2^15.
float rowScale(const float* x, int64_t K) {
    float m = 0.0f;
    for (int64_t k = 0; k < K; ++k) m = std::max(m, std::fabs(x[k]));
    if (!(m >= 32768.0f) || !std::isfinite(m)) return 1.0f;
    int e = 0;
    std::frexp(m, &e);
    return std::ldexp(1.0f, e - 15);
}

}  // namespace

Q_DECLARE_METATYPE(TypeCase)

class TestGpuKernels : public QObject {
    Q_OBJECT
private slots:
    void init() {
        VERDICT_NEED_DEVICE("cuda:0");
        cudaSetDevice(0);
    }

    void matvec_data() {
        QTest::addColumn<TypeCase>("c");
        using TT = tensor::TensorType;
        for (TT t : {TT::F32, TT::F16, TT::BF16, TT::Q4_0, TT::Q4_1, TT::Q5_0, TT::Q5_1, TT::Q8_0, TT::Q2_K, TT::Q3_K,
                     TT::Q4_K, TT::Q5_K, TT::Q6_K})
            QTest::addRow("%s", std::string(tensor::typeName(t)).c_str()) << TypeCase{t};
    }

    // y = W x for 1, 3 and 8 vectors, and the expert-indexed products, against f64 dot products of
    // the reference-dequantised rows; then the f16 dequantisation and embedding kernels bit for bit.
    void matvec() {
        QFETCH(TypeCase, c);
        // K = 160 (5 units: most lanes idle in the last step) where the block size allows it.
        for (const int64_t K : tensor::traits(c.type).blockElems == 32 ? std::vector<int64_t>{512, 160}
                                                                         : std::vector<int64_t>{512}) {
            matvecK(c, K);
            if (QTest::currentTestFailed()) return;
        }
    }

private:
    void matvecK(const TypeCase& c, int64_t K) {
        const int64_t N = 67;
        const QMatrix m = makeMatrix(c.type, N, K, 11);
        Dev<uint8_t> dw(m.bytes);
        cuda::DeviceMatrix w;
        w.data = dw.p;
        w.type = *cuda::blockTypeFor(c.type);
        w.cols = K;
        w.rows = N;
        w.rowBytes = m.rowBytes;
        for (int nCols : {1, 3, 8}) {
            const auto x = randomVec(static_cast<size_t>(nCols * K), 5 + nCols);
            Dev<float> dx(x), dy(static_cast<size_t>(nCols * N));
            cuda::matvec(w, dx.p, K, nCols, dy.p, N, nullptr);
            QString why;
            QVERIFY2(noCudaError(why), qPrintable(why));
            const auto y = dy.get();
            for (int col = 0; col < nCols; ++col)
                for (int64_t r = 0; r < N; ++r) {
                    const RefDot ref = refDot(&m.deq[r * K], &x[col * K], K, asIs,
                                              [&](float v) { return roundActivation(c.type, v); });
                    const double d = std::fabs(y[col * N + r] - ref.sum);
                    QVERIFY2(d <= 1e-5 * ref.mag + 1e-6,
                             qPrintable(QString("cols %1 col %2 row %3: %4 vs %5").arg(nCols).arg(col).arg(r).arg(y[col * N + r]).arg(ref.sum)));
                }
        }

        // Experts: the stack is three copies of the matrix with rows rotated, pair p uses expert
        // experts[p] and input row p / 2.
        QMatrix stack;
        std::vector<uint8_t> sbytes;
        for (int e = 0; e < 3; ++e) {
            const QMatrix me = makeMatrix(c.type, N, K, 100 + e);
            sbytes.insert(sbytes.end(), me.bytes.begin(), me.bytes.end());
            stack.deq.insert(stack.deq.end(), me.deq.begin(), me.deq.end());
        }
        Dev<uint8_t> ds(sbytes);
        cuda::DeviceMatrix ws = w;
        ws.data = ds.p;
        ws.nMat = 3;
        const std::vector<int32_t> experts = {2, 0, 1, 2};
        const auto x = randomVec(static_cast<size_t>(2 * K), 77);
        Dev<int32_t> de(experts);
        Dev<float> dx(x), dy(static_cast<size_t>(4 * N));
        cuda::expertMatvec(ws, de.p, 4, dx.p, K, 2, dy.p, N, nullptr);
        const auto y = dy.get();
        for (int p = 0; p < 4; ++p)
            for (int64_t r = 0; r < N; ++r) {
                const RefDot ref = refDot(&stack.deq[(experts[p] * N + r) * K], &x[(p / 2) * K], K, asIs,
                                          [&](float v) { return roundActivation(c.type, v); });
                QVERIFY2(std::fabs(y[p * N + r] - ref.sum) <= 1e-5 * ref.mag + 1e-6,
                         qPrintable(QString("expert pair %1 row %2").arg(p).arg(r)));
            }

        // Tensor-core tiles (9..64 rows and a second pass past 64): f16 inputs, f32 sums. Row 4's
        // activations reach ~1e6, past f16's range: scaled into it (by 64) and back.
        if (c.type != tensor::TensorType::F32 && c.type != tensor::TensorType::F16)
            for (int64_t nTok : {9, 33, 64, 70}) {
                auto xb = randomVec(static_cast<size_t>(nTok * K), 90 + static_cast<uint32_t>(nTok));
                for (int64_t k = 0; k < K; ++k) xb[4 * K + k] *= 3e5f;
                Dev<float> dxb(xb), dyb(static_cast<size_t>(nTok * N)), dsc(static_cast<size_t>(nTok));
                cuda::matmulMma(w, dxb.p, K, nTok, dyb.p, N, dsc.p, nullptr);
                QString why;
                QVERIFY2(noCudaError(why), qPrintable(why));
                const auto yb = dyb.get();
                const auto sc = dsc.get();
                for (int64_t t = 0; t < nTok; ++t) {
                    const float s = rowScale(&xb[t * K], K);
                    QCOMPARE(sc[t], s);
                    QVERIFY(t != 4 || s > 1.0f);
                    for (int64_t r = 0; r < N; ++r) {
                        // Both inputs rounded to f16 as the tiles hold them; the products are exact
                        // in f32, so only the f32 summation order remains.
                        const RefDot ref = refDot(&m.deq[r * K], &xb[t * K], K, toF16,
                                                  [&](float v) { return toF16(v / s) * s; });
                        QVERIFY2(std::fabs(yb[t * N + r] - ref.sum) <= 1e-4 * ref.mag + 1e-6,
                                 qPrintable(QString("mma %1 rows: row %2 col %3: %4 vs %5").arg(nTok).arg(t).arg(r)
                                                .arg(yb[t * N + r]).arg(ref.sum)));
                    }
                }
            }

        // f16 tiles (rows 5 .. 5+40) and embeddings of rows {3, 0, 66}.
        Dev<uint16_t> dh(static_cast<size_t>(40 * K));
        cuda::dequantizeF16(w, 5, 40, reinterpret_cast<__half*>(dh.p), nullptr);
        const auto h = dh.get();
        for (int64_t r = 0; r < 40; ++r)
            for (int64_t k = 0; k < K; ++k)
                QCOMPARE(h[r * K + k], tensor::fp32ToFp16(m.deq[(5 + r) * K + k]));
        const std::vector<int32_t> toks = {3, 0, 66};
        Dev<int32_t> dt(toks);
        Dev<float> demb(static_cast<size_t>(3 * K));
        cuda::embedRows(w, dt.p, 3, demb.p, nullptr);
        const auto emb = demb.get();
        for (int t = 0; t < 3; ++t)
            QVERIFY(std::memcmp(emb.data() + t * K, m.deq.data() + toks[t] * K, sizeof(float) * K) == 0);
    }

private slots:
    // Gemm::product's tensor-core paths — cuBLAS on f16 (F16 weights from 9 rows, quantised from
    // 65) and the tiles (quantised, 9..64) — with one activation row reaching ~1e6, which as plain
    // f16 would be inf and its outputs inf / NaN: every output finite and equal to the f64 product
    // of the row scaled into f16's range, rounded, and scaled back; the other rows as before.
    void productRowsPastHalfRange() {
        cuda::Ledger ledger;
        cuda::Gemm gemm;
        auto init = gemm.init(0, ledger, nullptr, "cuda:0");
        QVERIFY2(init, init ? "" : init.error().message.c_str());
        const int64_t N = 67, K = 512;
        using TT = tensor::TensorType;
        for (TT type : {TT::F16, TT::Q8_0, TT::Q4_K})
            for (int64_t nTok : {33, 70}) {
                const QMatrix m = makeMatrix(type, N, K, 21);
                Dev<uint8_t> dw(m.bytes);
                cuda::DeviceMatrix w;
                w.data = dw.p;
                w.type = *cuda::blockTypeFor(type);
                w.cols = K;
                w.rows = N;
                w.rowBytes = m.rowBytes;
                auto x = randomVec(static_cast<size_t>(nTok * K), 300 + static_cast<uint32_t>(nTok));
                for (int64_t k = 0; k < K; ++k) x[3 * K + k] *= 4e5f;
                Dev<float> dx(x), dy(static_cast<size_t>(nTok * N));
                Dev<uint16_t> dxh(cuda::Gemm::xHalfElems(w, nTok)), dwh(cuda::Gemm::wHalfElems(w, nTok));
                Dev<float> dsc(cuda::Gemm::scaleElems(w, nTok));
                QVERIFY(dsc.n == static_cast<size_t>(nTok));
                gemm.product(w, dx.p, K, nTok, dy.p, N, reinterpret_cast<__half*>(dxh.p),
                             reinterpret_cast<__half*>(dwh.p), dsc.p);
                QString why;
                QVERIFY2(noCudaError(why), qPrintable(why));
                const std::string blasError = gemm.takeError();
                QVERIFY2(blasError.empty(), blasError.c_str());
                const auto y = dy.get();
                for (int64_t t = 0; t < nTok; ++t) {
                    const float s = rowScale(&x[t * K], K);
                    QVERIFY(t != 3 || s > 1.0f);
                    for (int64_t r = 0; r < N; ++r) {
                        const RefDot ref = refDot(&m.deq[r * K], &x[t * K], K, toF16,
                                                  [&](float v) { return toF16(v / s) * s; });
                        const float got = y[t * N + r];
                        QVERIFY2(std::isfinite(got) && std::fabs(got - ref.sum) <= 1e-4 * ref.mag + 1e-6,
                                 qPrintable(QString("%1, %2 rows: row %3 col %4: %5 vs %6")
                                                .arg(QString::fromStdString(std::string(tensor::typeName(type)))).arg(nTok).arg(t).arg(r)
                                                .arg(got).arg(ref.sum)));
                    }
                }
            }
    }

    void elementwise() {
        const int64_t rows = 5, n = 384;
        const auto x = randomVec(static_cast<size_t>(rows * n), 1), w = randomVec(static_cast<size_t>(n), 2);
        const auto b = randomVec(static_cast<size_t>(rows * n), 3), bias = randomVec(static_cast<size_t>(n), 4);
        Dev<float> dx(x), dw(w), dy(x.size()), db(b), dbias(bias);
        std::vector<float> ref(x.size());

        cuda::rmsNorm(dx.p, dw.p, dy.p, rows, n, 1e-5f, nullptr);
        cpu::rmsNormRows(x.data(), w.data(), ref.data(), rows, n, 1e-5f);
        QVERIFY2(maxRelDiff(dy.get(), ref) < 1e-5, "rmsNorm");

        cuda::add(dx.p, db.p, dy.p, rows * n, nullptr);
        for (size_t i = 0; i < x.size(); ++i) ref[i] = x[i] + b[i];
        QVERIFY(dy.get() == ref);

        cuda::addBias(dy.p, dbias.p, rows, n, nullptr);
        for (size_t i = 0; i < x.size(); ++i) ref[i] += bias[i % n];
        QVERIFY(dy.get() == ref);

        Dev<float> dg(x);
        cuda::swiglu(dg.p, db.p, rows * n, nullptr);
        ref = x;
        cpu::swigluInPlace(ref.data(), b.data(), rows * n);
        QVERIFY2(maxRelDiff(dg.get(), ref) < 1e-5, "swiglu");
        QString why;
        QVERIFY2(noCudaError(why), qPrintable(why));
    }

    void rope() {
        const int64_t nTok = 3, nHead = 4, headDim = 64;
        for (bool neox : {false, true})
            for (int nRot : {64, 32}) {
                cpu::RopeParams p;
                p.nRot = nRot;
                p.freqBase = 10000.0f;
                std::vector<float> table(static_cast<size_t>(nTok * nRot));
                const int32_t positions[] = {0, 17, 1000};
                for (int64_t t = 0; t < nTok; ++t) cpu::ropeTable(p, positions[t], table.data() + t * nRot);
                const auto x = randomVec(static_cast<size_t>(nTok * nHead * headDim), 9);
                Dev<float> dx(x), dt(table);
                cuda::rope(dx.p, nTok, nHead, headDim, nRot, neox, dt.p, nullptr);
                auto ref = x;
                for (int64_t t = 0; t < nTok; ++t)
                    cpu::applyRope(neox ? cpu::RopeMode::Neox : cpu::RopeMode::Norm, ref.data() + t * nHead * headDim,
                                   nHead, headDim, nRot, table.data() + t * nRot);
                QVERIFY2(maxRelDiff(dx.get(), ref) < 1e-6, neox ? "neox" : "norm");
            }
    }

    void attention_data() {
        QTest::addColumn<bool>("f16");
        QTest::addColumn<int>("nTok");
        QTest::addColumn<int>("pos0");
        QTest::addColumn<float>("softCap");
        QTest::addColumn<int>("window");
        QTest::addColumn<int>("forceSplit");  // 0: attentionSplits' choice
        QTest::addRow("prefill-f32") << false << 9 << 0 << 0.0f << 0 << 0;
        QTest::addRow("decode-long-split-f32") << false << 1 << 1500 << 0.0f << 0 << 0;
        QTest::addRow("decode-long-split-f16") << true << 1 << 1500 << 0.0f << 0 << 0;
        QTest::addRow("softcap-window") << false << 4 << 40 << 30.0f << 16 << 0;
        QTest::addRow("prefill-f16") << true << 33 << 5 << 0.0f << 0 << 0;
        QTest::addRow("short-rows-fixed-32-splits") << false << 3 << 2 << 0.0f << 0 << 32;  // empty splits (graphs)
        QTest::addRow("window-with-splits") << false << 1 << 300 << 0.0f << 64 << 32;  // phi3-style decode
        // More rows than a grid's y dimension takes (65535): launched in chunks.
        QTest::addRow("rows-beyond-grid-y") << false << 65541 << 0 << 0.0f << 8 << 0;
    }

    // One sequence: the cache is filled through storeKv with positions 0 .. pos0+nTok-1, then the
    // last nTok rows attend; the CPU backend's attention() over a host cache is the reference.
    void attention() {
        QFETCH(bool, f16);
        QFETCH(int, nTok);
        QFETCH(int, pos0);
        QFETCH(float, softCap);
        QFETCH(int, window);
        QFETCH(int, forceSplit);
        const int nHead = 8, nHeadKv = 2, dimK = 64, dimV = 64;
        const int64_t cap = pos0 + nTok + 3, total = pos0 + nTok;
        cuda::AttentionShape a{nHead, nHeadKv, dimK, dimV, f16, 0.125f, softCap, window, 1};
        Dev<uint8_t> cache(static_cast<size_t>(cuda::cacheLayerBytes(a, cap) * 2));
        const auto k = randomVec(static_cast<size_t>(total * nHeadKv * dimK), 21);
        const auto v = randomVec(static_cast<size_t>(total * nHeadKv * dimV), 22);
        const auto q = randomVec(static_cast<size_t>(nTok * nHead * dimK), 23);
        std::vector<cuda::RowCache> rows;
        for (int64_t t = 0; t < total; ++t) rows.push_back({cache.p, static_cast<int32_t>(cap), static_cast<int32_t>(t)});
        Dev<cuda::RowCache> drows(rows);
        Dev<float> dk(k), dv(v), dq(q), dout(static_cast<size_t>(nTok * nHead * dimV));
        cuda::storeKv(a, drows.p, total, dk.p, dv.p, nullptr);
        Dev<cuda::RowCache> dlast(std::vector<cuda::RowCache>(rows.end() - nTok, rows.end()));
        Dev<float> partials(static_cast<size_t>(cuda::attentionPartialFloats(a, 32)));
        const int nSplit = forceSplit > 0 ? forceSplit : cuda::attentionSplits(a, nTok, total, 32);
        if (nTok == 1) QVERIFY(nSplit > 1);  // the decode rows exercise the split-K merge
        cuda::attention(a, dlast.p, nTok, nSplit, dq.p, dout.p, partials.p, nullptr);
        QString why;
        QVERIFY2(noCudaError(why), qPrintable(why));

        // Reference: the same cache layout on the host (layer 1 of the device cache).
        std::vector<uint8_t> host(static_cast<size_t>(cuda::cacheLayerBytes(a, cap) * 2));
        cudaMemcpy(host.data(), cache.p, host.size(), cudaMemcpyDeviceToHost);
        const uint8_t* layer = host.data() + cuda::cacheLayerBytes(a, cap);
        const size_t esz = f16 ? 2 : 4;
        const void* kc = layer;
        const void* vc = layer + static_cast<size_t>(cap) * nHeadKv * dimK * esz;
        cpu::AttentionShape s{nHead, nHeadKv, dimK, dimV, cap, 0.125f, f16, softCap, window};
        cpu::ThreadPool pool(1);
        std::vector<float> scratch(static_cast<size_t>(cpu::attentionScratchFloats(s)));
        std::vector<float> ref(static_cast<size_t>(nTok * nHead * dimV));
        cpu::attention(s, q.data(), kc, vc, nTok, pos0, ref.data(), scratch.data(), pool);
        // The CPU rounds q and the probabilities to f16 with an f16 cache (as ggml does); the GPU
        // keeps them in f32, hence the looser bound there.
        const double d = maxRelDiff(dout.get(), ref, 1e-2);
        QVERIFY2(d < (f16 ? 5e-3 : 1e-4), qPrintable(QString("max rel diff %1").arg(d)));
    }

    // Routing: softmax, top-U with ties to the lowest id, renormalised weights; then the weighted
    // combine in rank order.
    void moeRouting() {
        const int64_t nTok = 6;
        const int X = 8, U = 2;
        auto logits = randomVec(static_cast<size_t>(nTok * X), 31, 2.0f);
        logits[3 * X + 1] = logits[3 * X + 5] = 10.0f;  // an exact tie: expert 1 must come first
        Dev<float> dl(logits), dw(static_cast<size_t>(nTok * U));
        Dev<int32_t> de(static_cast<size_t>(nTok * U));
        cuda::routeSoftmaxTopK(dl.p, nTok, X, U, de.p, dw.p, nullptr);
        const auto sel = de.get();
        const auto wts = dw.get();
        for (int64_t t = 0; t < nTok; ++t) {
            std::vector<float> p(logits.begin() + t * X, logits.begin() + (t + 1) * X);
            cpu::softmaxRow(p.data(), X, 1.0f);
            std::vector<int> order(X);
            for (int e = 0; e < X; ++e) order[e] = e;
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
            const double sum = double(p[order[0]]) + p[order[1]];
            for (int slot = 0; slot < U; ++slot) {
                QCOMPARE(sel[t * U + slot], order[slot]);
                QVERIFY(std::fabs(wts[t * U + slot] - p[order[slot]] / sum) < 1e-6);
            }
        }
        QCOMPARE(sel[3 * U], 1);
        QCOMPARE(sel[3 * U + 1], 5);

        const int64_t n = 96;
        const auto y = randomVec(static_cast<size_t>(nTok * U * n), 32);
        Dev<float> dy(y), dout(static_cast<size_t>(nTok * n));
        cuda::combineExperts(dy.p, dw.p, nTok, U, n, dout.p, nullptr);
        const auto out = dout.get();
        for (int64_t t = 0; t < nTok; ++t)
            for (int64_t j = 0; j < n; ++j) {
                float ref = y[(t * U) * n + j] * wts[t * U];
                for (int slot = 1; slot < U; ++slot) ref += y[(t * U + slot) * n + j] * wts[t * U + slot];
                QVERIFY(std::fabs(out[t * n + j] - ref) <= 1e-6f * (1 + std::fabs(ref)));
            }
    }
};

QTEST_GUILESS_MAIN(TestGpuKernels)
#include "test_gpu_kernels.moc"
