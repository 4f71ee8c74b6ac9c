// The scalar ops of the forward pass (backend/cpu/ops_*) against straightforward double-precision
// references: RMSNorm, RoPE (norm / neox, linear scaling, frequency factors, YaRN), softmax and
// attention over f32 / f16 caches with GQA, serial and threaded.
#include "backend/cpu/ops_attention.h"
#include "backend/cpu/ops_norm.h"
#include "backend/cpu/ops_rope.h"
#include "backend/cpu/thread_pool.h"
#include "tensor/half.h"

#include <QtTest/QtTest>

#include <cmath>
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
