// The scalar ops of the forward pass (backend/cpu/ops_*) against straightforward double-precision
// references: RMSNorm, RoPE (norm / neox, linear scaling, frequency factors, YaRN), softmax and
// attention over f32 / f16 caches with GQA, serial and threaded; attention's many-row inner loops
// (ops_vec.h) bit for bit equal to their one-row functions.
#include "backend/cpu/ops_attention.h"
#include "backend/cpu/ops_norm.h"
#include "backend/cpu/ops_rope.h"
#include "backend/cpu/ops_vec.h"
#include "backend/cpu/thread_pool.h"
#include "tensor/half.h"

#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <numbers>
#include <random>

using namespace verdict;
using namespace verdict::cpu;

namespace {
std::vector<float> randomVec(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

// Reference RoPE angle of pair i at position p, with YaRN in double.
double refAngle(const RopeParams& p, int pos, int i, double& mscale) {
    const double base = std::pow(double(p.freqBase), -2.0 * i / p.nRot);
    const double extrap = pos * base / (p.freqFactors ? p.freqFactors[i] : 1.0);
    const double interp = p.freqScale * extrap;
    mscale = p.attnFactor;
    if (p.extFactor == 0.0f) return interp;
    auto corr = [&](double rot) {
        return p.nRot * std::log(p.nCtxOrig / (rot * 2 * std::numbers::pi)) / (2 * std::log(double(p.freqBase)));
    };
    const double lo = std::max(0.0, std::floor(corr(p.betaFast)));
    const double hi = std::min(double(p.nRot - 1), std::ceil(corr(p.betaSlow)));
    const double y = (i - lo) / std::max(0.001, hi - lo);
    const double ramp = 1.0 - std::min(1.0, std::max(0.0, y));
    const double mix = ramp * p.extFactor;
    mscale *= 1.0 + 0.1 * std::log(1.0 / p.freqScale);
    return interp * (1 - mix) + extrap * mix;
}
}  // namespace

class TestSessionOps : public QObject {
    Q_OBJECT
private slots:
    // dotRows* / accumulateRows* give exactly the bits of the one-row functions, for every tile
    // shape and remainder (1-9 rows, odd key counts, widths with and without whole 8/16 chunks).
    void rowFunctionsMatchOneRow() {
        uint32_t seed = 100;
        int checked = 0;
        for (int64_t d : {8, 16, 24, 64, 72, 128, 7, 13})
            for (int64_t nq : {1, 2, 3, 4, 5, 7, 8, 9})
                for (int64_t nKeys : {1, 2, 3, 4, 5, 17}) {
                    const int64_t ldq = d + 5;  // query rows further apart than their width
                    const auto q = randomVec(size_t(nq * ldq), seed++);
                    const auto kf = randomVec(size_t(nKeys * d), seed++);
                    std::vector<uint16_t> kh(kf.size());
                    for (size_t i = 0; i < kf.size(); ++i) kh[i] = tensor::fp32ToFp16(kf[i]);
                    const int64_t ld = nKeys + 3;  // a row stride wider than the row
                    std::vector<float> got(size_t(nq * ld), -7.0f), want(size_t(nq * ld), -7.0f);
                    dotRowsF32(q.data(), ldq, nq, kf.data(), nKeys, d, got.data(), ld);
                    for (int64_t i = 0; i < nq; ++i)
                        for (int64_t j = 0; j < nKeys; ++j) want[size_t(i * ld + j)] = dotF32(q.data() + i * ldq, kf.data() + j * d, d);
                    QVERIFY2(std::memcmp(got.data(), want.data(), got.size() * 4) == 0, qPrintable(QString("dotRowsF32 d=%1 nq=%2 keys=%3").arg(d).arg(nq).arg(nKeys)));
                    dotRowsF16(q.data(), ldq, nq, kh.data(), nKeys, d, got.data(), ld);
                    for (int64_t i = 0; i < nq; ++i)
                        for (int64_t j = 0; j < nKeys; ++j) want[size_t(i * ld + j)] = dotF32F16(q.data() + i * ldq, kh.data() + j * d, d);
                    QVERIFY2(std::memcmp(got.data(), want.data(), got.size() * 4) == 0, qPrintable(QString("dotRowsF16 d=%1 nq=%2 keys=%3").arg(d).arg(nq).arg(nKeys)));

                    const auto p = randomVec(size_t(nq * ld), seed++);
                    const auto start = randomVec(size_t(nq * d), seed++);
                    auto outGot = start, outWant = start;
                    accumulateRowsF32(p.data(), nq, ld, kf.data(), nKeys, d, outGot.data());
                    for (int64_t j = 0; j < nKeys; ++j)
                        for (int64_t i = 0; i < nq; ++i) axpyF32(p[size_t(i * ld + j)], kf.data() + j * d, outWant.data() + i * d, d);
                    QVERIFY2(std::memcmp(outGot.data(), outWant.data(), outGot.size() * 4) == 0, qPrintable(QString("accumulateRowsF32 d=%1 nq=%2 keys=%3").arg(d).arg(nq).arg(nKeys)));
                    outGot = start, outWant = start;
                    accumulateRowsF16(p.data(), nq, ld, kh.data(), nKeys, d, outGot.data());
                    for (int64_t j = 0; j < nKeys; ++j)
                        for (int64_t i = 0; i < nq; ++i) axpyF16(p[size_t(i * ld + j)], kh.data() + j * d, outWant.data() + i * d, d);
                    QVERIFY2(std::memcmp(outGot.data(), outWant.data(), outGot.size() * 4) == 0, qPrintable(QString("accumulateRowsF16 d=%1 nq=%2 keys=%3").arg(d).arg(nq).arg(nKeys)));
                    ++checked;
                }
        QCOMPARE(checked, 8 * 8 * 6);

        // roundToF16: the scalar conversion's bits, subnormal halves, ties and overflow included.
        std::vector<float> x = randomVec(1003, 7, 3.0f);
        for (float v : {6.0e-8f, 3.0e-5f, 1.0f + 1.0f / 2048, 65504.0f, 65520.0f, 1.0e6f, -0.0f, 2.0e-8f}) x.push_back(v);
        auto want = x;
        for (auto& v : want) v = tensor::fp16ToFp32(tensor::fp32ToFp16(v));
        roundToF16(x.data(), int64_t(x.size()));
        QVERIFY(std::memcmp(x.data(), want.data(), x.size() * 4) == 0);
    }

    void rmsNorm() {
        for (int64_t n : {1, 7, 64, 1000, 4096}) {
            const auto x = randomVec(size_t(n), 1, 3.0f), w = randomVec(size_t(n), 2);
            std::vector<float> y(static_cast<size_t>(n));
            rmsNormRow(x.data(), w.data(), y.data(), n, 1e-5f);
            double ss = 0;
            for (float v : x) ss += double(v) * v;
            const double scale = 1.0 / std::sqrt(ss / n + 1e-5);
            for (int64_t i = 0; i < n; ++i) QVERIFY(std::fabs(y[i] - x[i] * scale * w[i]) <= 1e-5 * std::fabs(x[i] * scale * w[i]) + 1e-7);
        }
    }

    void softmax() {
        auto x = randomVec(257, 3, 5.0f);
        const auto orig = x;
        softmaxRow(x.data(), 257, 0.5f);
        double mx = -1e30, z = 0;
        for (float v : orig) mx = std::max(mx, 0.5 * v);
        for (float v : orig) z += std::exp(0.5 * v - mx);
        for (size_t i = 0; i < x.size(); ++i) QVERIFY(std::fabs(x[i] - std::exp(0.5 * orig[i] - mx) / z) < 1e-6);
    }

    // Attention's softmax (polynomial exp): within 2.5 ulp (3e-7) of the double-precision softmax, with
    // and without a sink, any length (SIMD body and scalar tail), tiny probabilities to 0 or exact.
    void softmaxFast() {
        double worst = 0;
        uint32_t seed = 40;
        for (int64_t n : {1, 2, 7, 8, 9, 31, 257, 1000})
            for (float spread : {0.1f, 5.0f, 40.0f})
                for (bool withSink : {false, true}) {
                    auto x = randomVec(size_t(n), seed++, spread);
                    const auto orig = x;
                    const float sink = 0.7f;
                    softmaxRowFast(x.data(), n, 0.5f, withSink ? &sink : nullptr);
                    double mx = withSink ? sink : -1e30;
                    for (float v : orig) mx = std::max(mx, double(0.5f * v));
                    // the argument as the softmax forms it, in float (x * scale - max): exp's own error is measured
                    auto arg = [&](float v) { return double(0.5f * v - float(mx)); };
                    double z = withSink ? std::exp(double(sink - float(mx))) : 0.0;
                    for (float v : orig) z += std::exp(arg(v));
                    double total = 0;
                    for (int64_t i = 0; i < n; ++i) {
                        const double want = std::exp(arg(orig[size_t(i)])) / z;
                        total += x[size_t(i)];
                        if (want < 1e-37) {  // the result would be subnormal: 0 or close to it
                            QVERIFY(x[size_t(i)] >= 0 && x[size_t(i)] < 1e-36);
                            continue;
                        }
                        const double rel = std::fabs(x[size_t(i)] - want) / want;
                        worst = std::max(worst, rel);
                        QVERIFY2(rel < 3e-7, qPrintable(QString("n=%1 spread=%2 sink=%3 i=%4: %5 vs %6").arg(n).arg(spread).arg(withSink).arg(i).arg(x[size_t(i)]).arg(want)));
                    }
                    if (!withSink) QVERIFY(std::fabs(total - 1.0) < 2e-6);
                }
        qInfo("softmaxRowFast: max relative error %.3g", worst);
    }

    void rope_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("variant");
        for (int m : {0, 1})
            for (int v : {0, 1, 2, 3}) QTest::addRow("%s-%s", m ? "neox" : "norm", std::array{"plain", "linear", "freqs", "yarn"}[v]) << m << v;
    }
    void rope() {
        QFETCH(int, mode);
        QFETCH(int, variant);
        const int nHead = 3, headDim = 40, nRot = 32;  // 8 dims pass through
        std::vector<float> freqs(nRot / 2);
        for (int i = 0; i < nRot / 2; ++i) freqs[size_t(i)] = 1.0f + 0.25f * i;
        RopeParams p;
        p.nRot = nRot;
        p.freqBase = 10000.0f;
        if (variant == 1) p.freqScale = 0.25f;
        if (variant == 2) p.freqFactors = freqs.data();
        if (variant == 3) {
            p.freqScale = 0.125f;
            p.extFactor = 1.0f;
            p.nCtxOrig = 4096;
        }
        for (int pos : {0, 1, 17, 500}) {
            std::vector<float> table(nRot);
            ropeTable(p, pos, table.data());
            const auto x = randomVec(size_t(nHead * headDim), 9 + pos);
            auto y = x;
            applyRope(mode ? RopeMode::Neox : RopeMode::Norm, y.data(), nHead, headDim, nRot, table.data());
            for (int h = 0; h < nHead; ++h) {
                const float* a = x.data() + h * headDim;
                const float* b = y.data() + h * headDim;
                for (int i = 0; i < nRot / 2; ++i) {
                    double ms = 1;
                    const double th = refAngle(p, pos, i, ms);
                    const int i0 = mode ? i : 2 * i, i1 = mode ? i + nRot / 2 : 2 * i + 1;
                    const double e0 = (a[i0] * std::cos(th) - a[i1] * std::sin(th)) * ms;
                    const double e1 = (a[i0] * std::sin(th) + a[i1] * std::cos(th)) * ms;
                    // f32 angles lose ~1e-7 * theta of absolute accuracy
                    const double tol = 2e-6 * (1 + std::fabs(th)) * (std::fabs(a[i0]) + std::fabs(a[i1]) + 1);
                    QVERIFY2(std::fabs(b[i0] - e0) < tol && std::fabs(b[i1] - e1) < tol,
                             qPrintable(QString("pos %1 pair %2").arg(pos).arg(i)));
                }
                for (int i = nRot; i < headDim; ++i) QCOMPARE(b[i], a[i]);
            }
        }
    }

    void attention_data() {
        QTest::addColumn<int>("nHead");
        QTest::addColumn<int>("nHeadKv");
        QTest::addColumn<int>("pos0");
        QTest::addColumn<int>("nTok");
        QTest::addColumn<bool>("f16");
        for (bool f16 : {false, true}) {
            const char* t = f16 ? "f16" : "f32";
            QTest::addRow("%s mha prefill", t) << 4 << 4 << 0 << 9 << f16;
            QTest::addRow("%s gqa prefill after cache", t) << 8 << 2 << 5 << 7 << f16;
            QTest::addRow("%s gqa decode long", t) << 8 << 2 << 800 << 1 << f16;  // above the serial threshold: threaded, heads split
            QTest::addRow("%s mqa decode long", t) << 8 << 1 << 1000 << 1 << f16;
            QTest::addRow("%s gqa big batch", t) << 8 << 4 << 0 << 64 << f16;
        }
    }
    void attention() {
        QFETCH(int, nHead);
        QFETCH(int, nHeadKv);
        QFETCH(int, pos0);
        QFETCH(int, nTok);
        QFETCH(bool, f16);
        const int hdK = 24, hdV = 16, cap = pos0 + nTok + 3;
        AttentionShape s{nHead, nHeadKv, hdK, hdV, cap, 1.0f / std::sqrt(float(hdK)), f16};
        const auto q = randomVec(size_t(nTok * nHead * hdK), 5, 1.0f);
        const auto k = randomVec(size_t(nHeadKv * cap * hdK), 6, 1.0f);
        const auto v = randomVec(size_t(nHeadKv * cap * hdV), 7, 1.0f);
        std::vector<uint16_t> k16(k.size()), v16(v.size());
        for (size_t i = 0; i < k.size(); ++i) k16[i] = tensor::fp32ToFp16(k[i]);
        for (size_t i = 0; i < v.size(); ++i) v16[i] = tensor::fp32ToFp16(v[i]);
        const void* kc = f16 ? static_cast<const void*>(k16.data()) : k.data();
        const void* vc = f16 ? static_cast<const void*>(v16.data()) : v.data();
        auto kAt = [&](size_t i) { return f16 ? double(tensor::fp16ToFp32(k16[i])) : double(k[i]); };
        auto vAt = [&](size_t i) { return f16 ? double(tensor::fp16ToFp32(v16[i])) : double(v[i]); };

        // double reference
        std::vector<double> ref(size_t(nTok * nHead * hdV), 0.0);
        for (int t = 0; t < nTok; ++t)
            for (int h = 0; h < nHead; ++h) {
                const int g = h / (nHead / nHeadKv), nKv = pos0 + t + 1;
                std::vector<double> sc(static_cast<size_t>(nKv));
                double mx = -1e300, z = 0;
                for (int j = 0; j < nKv; ++j) {
                    double d = 0;
                    for (int i = 0; i < hdK; ++i) d += q[size_t((t * nHead + h) * hdK + i)] * kAt(size_t((g * cap + j) * hdK + i));
                    sc[size_t(j)] = d * s.scale;
                    mx = std::max(mx, sc[size_t(j)]);
                }
                for (auto& x : sc) z += (x = std::exp(x - mx));
                for (int j = 0; j < nKv; ++j)
                    for (int i = 0; i < hdV; ++i)
                        ref[size_t((t * nHead + h) * hdV + i)] += sc[size_t(j)] / z * vAt(size_t((g * cap + j) * hdV + i));
            }

        for (int threads : {1, 2, 3}) {
            ThreadPool pool(threads);
            std::vector<float> scratch(size_t(threads * attentionScratchFloats(s)));
            std::vector<float> out(ref.size(), NAN);
            cpu::attention(s, q.data(), kc, vc, nTok, pos0, out.data(), scratch.data(), pool);
            // f16: q and the probabilities are rounded to f16 (as llama.cpp), ~1e-3 relative
            const double tol = f16 ? 3e-3 : 1e-5;
            for (size_t i = 0; i < out.size(); ++i)
                QVERIFY2(std::fabs(out[i] - ref[i]) < tol, qPrintable(QString("threads %1 elem %2: %3 vs %4").arg(threads).arg(i).arg(out[i]).arg(ref[i])));
        }
    }
};

QTEST_GUILESS_MAIN(TestSessionOps)
#include "test_session_ops.moc"
