// CPU matmul kernels: every SIMD kernel this CPU runs against the scalar reference over many
// shapes, misalignments and token counts; the reference against plain float math on the
// dequantized weights; determinism across thread counts; the public entry points.
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul_kernel.h"
#include "backend/cpu/thread_pool.h"
#include "random_blocks.h"
#include "tensor/half.h"
#include "tensor/quantize.h"

#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace verdict;
using namespace verdict::cpu;
using tensor::TensorType;

namespace {

const auto& kComputable = test::kComputableTypes;

// Types with an AVX2 kernel (kernels_avx2_*.cpp): where the CPU has AVX2, simdMatchesReference
// must compare them, not skip them.
const TensorType kAvx2Types[] = {TensorType::F32,    TensorType::F16,     TensorType::BF16,   TensorType::Q4_0,
                                 TensorType::Q4_1,   TensorType::Q5_0,    TensorType::Q5_1,   TensorType::Q8_0,
                                 TensorType::Q2_K,   TensorType::Q3_K,    TensorType::Q4_K,   TensorType::Q5_K,
                                 TensorType::Q6_K,   TensorType::IQ4_NL,  TensorType::IQ4_XS, TensorType::MXFP4,
                                 TensorType::IQ2_XXS, TensorType::IQ2_XS, TensorType::IQ2_S, TensorType::IQ3_XXS,
                                 TensorType::IQ3_S,  TensorType::IQ1_S,   TensorType::IQ1_M, TensorType::TQ1_0,
                                 TensorType::TQ2_0};

// Types with an AVX-512 kernel (kernels_avx512_*.cpp): where the CPU has AVX-512, availableKernels
// must list it, so simdMatchesReference compares it against the reference too.
const TensorType kAvx512Types[] = {TensorType::F32,     TensorType::F16,     TensorType::BF16, TensorType::Q4_0,
                                   TensorType::Q4_1,    TensorType::Q5_0,    TensorType::Q5_1, TensorType::Q8_0,
                                   TensorType::Q2_K,    TensorType::Q3_K,    TensorType::Q4_K, TensorType::Q5_K,
                                   TensorType::Q6_K,    TensorType::IQ4_NL,  TensorType::IQ4_XS,  TensorType::MXFP4,
                                   TensorType::IQ2_XXS, TensorType::IQ2_XS,  TensorType::IQ2_S,   TensorType::IQ3_XXS,
                                   TensorType::IQ3_S,   TensorType::IQ1_S,   TensorType::IQ1_M,   TensorType::TQ1_0,
                                   TensorType::TQ2_0};

std::vector<int64_t> kSizes(TensorType t) {
    switch (tensor::traits(t).blockElems) {
        case 1: return {1, 7, 16, 33, 100, 256, 1000};
        case 32: return {32, 96, 256, 416, 2048, 4256};  // 4256: wider than the prefill unpacks (per-tile path), partial last group
        default: return {256, 512, 1280};
    }
}

using test::randomBlocks;

// A problem: weights quantized from N(0,1) (rows start 4 bytes off any SIMD alignment: the
// blocks' natural alignment, 2 or 4 bytes, is all a file guarantees per row), activations N(0,1)
// with a few outliers (1 float off).
struct Problem {
    TensorType type;
    int64_t nRows, K, nTok, ldy;
    std::vector<uint8_t> wBuf;
    std::vector<float> xBuf;
    const uint8_t* W() const { return wBuf.data() + 4; }
    const float* X() const { return xBuf.data() + 1; }

    Problem(TensorType t, int64_t rows, int64_t k, int64_t tok, uint32_t seed)
        : type(t), nRows(rows), K(k), nTok(tok), ldy(rows + 3) {
        std::mt19937 rng(seed);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<float> wf(static_cast<size_t>(rows * k));
        for (auto& v : wf) v = nd(rng);
        const uint64_t rb = *tensor::rowBytes(t, static_cast<uint64_t>(k));
        wBuf.assign(rb * static_cast<uint64_t>(rows) + 4, 0);
        if (tensor::canQuantize(t)) {
            QVERIFY(tensor::quantizeRows(t, wf.data(), wBuf.data() + 4, rows, k).ok());
        } else {
            randomBlocks(t, rng, wBuf.data() + 4, rb * static_cast<uint64_t>(rows));
        }
        xBuf.assign(static_cast<size_t>(tok * k) + 1, 0.0f);
        for (size_t i = 1; i < xBuf.size(); ++i) xBuf[i] = (i % 97 == 0) ? 8.0f * nd(rng) : nd(rng);
    }

    std::vector<float> run(const MatmulKernel& k, ThreadPool& pool) const {
        std::vector<float> y(static_cast<size_t>(nTok * ldy), -12345.0f);
        matmulWithKernel(k, W(), nRows, K, X(), nTok, y.data(), ldy, pool);
        return y;
    }

    // sum_k |w x| per output, from the dequantized weights.
    std::vector<double> magnitude() const {
        std::vector<double> m(static_cast<size_t>(nTok * ldy), 0.0);
        std::vector<float> w(static_cast<size_t>(K));
        const uint64_t rb = *tensor::rowBytes(type, static_cast<uint64_t>(K));
        for (int64_t r = 0; r < nRows; ++r) {
            tensor::dequantizeRow(type, W() + r * rb, w.data(), K);
            for (int64_t t = 0; t < nTok; ++t) {
                double s = 0;
                for (int64_t k = 0; k < K; ++k) s += std::fabs(double(w[k]) * X()[t * K + k]);
                m[t * ldy + r] = s;
            }
        }
        return m;
    }
};

// The kernel's level, with its variant where the level has two ("avx512-bf16dot").
std::string kernelName(const MatmulKernel& k) {
    return std::string(simdLevelName(k.level)) + (k.variant ? std::string("-") + k.variant : std::string());
}

QString where(const Problem& p, const MatmulKernel& k, int64_t t, int64_t r) {
    return QString("%1 %2 rows %3 K %4 tok %5: y[%6][%7]")
        .arg(std::string(tensor::typeName(p.type)).c_str(), kernelName(k).c_str())
        .arg(p.nRows).arg(p.K).arg(p.nTok).arg(t).arg(r);
}

}  // namespace

class TestKernels : public QObject {
    Q_OBJECT

private slots:
    void publicEntryPoints() {
        for (TensorType t : kComputable) QVERIFY(canCompute(t));
        QVERIFY(!canCompute(TensorType::Q8_1));
        QVERIFY(!canCompute(TensorType::Q8_K));
        QVERIFY(!canCompute(TensorType::I32));
        // dequantizeRow is the reference one.
        std::vector<float> x(256);
        for (int i = 0; i < 256; ++i) x[i] = std::sin(0.1f * i);
        std::vector<uint8_t> q(*tensor::rowBytes(TensorType::Q6_K, 256));
        tensor::quantizeRow(TensorType::Q6_K, x.data(), q.data(), 256);
        std::vector<float> a(256), b(256);
        cpu::dequantizeRow(TensorType::Q6_K, q.data(), a.data(), 256);
        tensor::dequantizeRow(TensorType::Q6_K, q.data(), b.data(), 256);
        QCOMPARE(a, b);
        // matmul() runs the active level's kernel and writes only the first nRows of each ldy.
        Problem p(TensorType::Q4_0, 5, 64, 2, 7);
        ThreadPool pool(2);
        std::vector<float> y(static_cast<size_t>(p.nTok * p.ldy), -1.0f);
        cpu::matmul(p.type, p.W(), p.nRows, p.K, p.X(), p.nTok, y.data(), p.ldy, pool);
        const auto ref = p.run(*referenceKernel(p.type), pool);
        for (int64_t t = 0; t < p.nTok; ++t) {
            for (int64_t r = 0; r < p.nRows; ++r) QVERIFY(std::fabs(y[t * p.ldy + r] - ref[t * p.ldy + r]) < 1e-3);
            for (int64_t r = p.nRows; r < p.ldy; ++r) QCOMPARE(y[t * p.ldy + r], -1.0f);
        }
        qInfo("CPU SIMD level: %s", std::string(simdLevelName(activeSimdLevel())).c_str());
    }

    // Every kernel against the reference, same prepared activations: differences are float
    // summation order only. Tolerance: 4e-6 * sum|w x| (observed ~2e-7; a wrong block is ~1).
    void simdMatchesReference_data() {
        QTest::addColumn<int>("type");
        for (TensorType t : kComputable)
            QTest::addRow("%s", std::string(tensor::typeName(t)).c_str()) << static_cast<int>(t);
    }

    void simdMatchesReference() {
        QFETCH(int, type);
        const auto t = static_cast<TensorType>(type);
        const auto kernels = availableKernels(t);
        QVERIFY(!kernels.empty() && kernels[0]->level == SimdLevel::Scalar);
        if (kernels.size() == 1) QSKIP("no SIMD kernel for this type on this CPU");
        ThreadPool pool(2);
        uint32_t seed = 1;
        int compared = 0;
        std::vector<double> worst(kernels.size(), 0.0);  // max |y - ref| / sum|w x|
        for (int64_t K : kSizes(t))
            for (int64_t nRows : {1, 3, 5, 8, 17, 67})
                for (int64_t nTok : {1, 2, 3, 7, 16, 33, 40, 101}) {
                    if (K * nRows * nTok > 3'000'000) continue;
                    const Problem p(t, nRows, K, nTok, seed++);
                    const auto ref = p.run(*kernels[0], pool);
                    const auto mag = p.magnitude();
                    for (size_t ki = 1; ki < kernels.size(); ++ki) {
                        const auto y = p.run(*kernels[ki], pool);
                        for (int64_t tk = 0; tk < nTok; ++tk) {
                            for (int64_t r = 0; r < nRows; ++r) {
                                const size_t i = static_cast<size_t>(tk * p.ldy + r);
                                const double tol = 4e-6 * mag[i] + 1e-6;
                                if (mag[i] > 0) worst[ki] = std::max(worst[ki], std::fabs(double(y[i]) - ref[i]) / mag[i]);
                                if (!(std::fabs(double(y[i]) - ref[i]) <= tol))
                                    QFAIL(qPrintable(where(p, *kernels[ki], tk, r) +
                                                     QString(" = %1, reference %2").arg(y[i]).arg(ref[i])));
                            }
                            for (int64_t r = nRows; r < p.ldy; ++r)
                                QCOMPARE(y[static_cast<size_t>(tk * p.ldy + r)], -12345.0f);
                        }
                        ++compared;
                    }
                }
        QVERIFY(compared > 0);
        for (size_t ki = 1; ki < kernels.size(); ++ki)
            qInfo("%s %s: %d problems, max |simd - ref| / sum|w x| = %.3g", std::string(tensor::typeName(t)).c_str(),
                  kernelName(*kernels[ki]).c_str(), compared / int(kernels.size() - 1), worst[ki]);
    }

    // The types with AVX2 kernels have them (on an AVX2 CPU), so the comparison above runs.
    void simdKernelsPresent() {
        if (maxSimdLevel() < SimdLevel::Avx2) QSKIP("no AVX2 on this CPU");
        for (TensorType t : kAvx2Types) {
            const MatmulKernel* k = avx2Kernel(t);
            QVERIFY2(k && k->type == t && k->level == SimdLevel::Avx2, std::string(tensor::typeName(t)).c_str());
        }
        if (maxSimdLevel() < SimdLevel::Avx512) return;
        for (TensorType t : kAvx512Types) {
            const MatmulKernel* k = avx512Kernel(t);
            QVERIFY2(k && k->type == t && k->level == SimdLevel::Avx512, std::string(tensor::typeName(t)).c_str());
        }
    }

    // The lattice i-quants, IQ1_*, TQ* and the level-table formats (IQ4_NL, IQ4_XS, MXFP4) at their
    // extremes: every index, sign and scale bit set (largest scales, all signs negative; IQ2_XXS /
    // IQ3_XXS sign indices 127 -> 8 negatives; IQ1_* every delta negative, grid point 2047; TQ1_0
    // bytes 255, TQ2_0 the unused code 3 -> +2; nibble 15: IQ4 level 113, MXFP4 -12; IQ4_XS ls 63), all
    // clear (IQ4 level -127, IQ4_XS ls 0 -> scale -32), alternating bytes, and nibbles 7 / 8 (the
    // sign boundary of the level tables); activations at full scale with both signs (quants
    // +-127). 32-element formats also get a last, partial group of blocks (K = 480: 15 blocks).
    void extremeBlocks_data() {
        QTest::addColumn<int>("type");
        for (TensorType t : {TensorType::IQ2_XXS, TensorType::IQ2_XS, TensorType::IQ2_S, TensorType::IQ3_XXS, TensorType::IQ3_S,
                             TensorType::IQ1_S, TensorType::IQ1_M, TensorType::TQ1_0, TensorType::TQ2_0, TensorType::IQ4_NL,
                             TensorType::IQ4_XS, TensorType::MXFP4})
            QTest::addRow("%s", std::string(tensor::typeName(t)).c_str()) << static_cast<int>(t);
    }

    void extremeBlocks() {
        QFETCH(int, type);
        const auto t = static_cast<TensorType>(type);
        const auto kernels = availableKernels(t);
        if (kernels.size() == 1) QSKIP("no SIMD kernel for this type on this CPU");
        ThreadPool pool(2);
        const uint64_t blockBytes = tensor::traits(t).blockBytes;
        const int64_t K = tensor::traits(t).blockElems == 32 ? 480 : 512;
        const bool mxfp4 = t == TensorType::MXFP4;
        for (int pattern = 0; pattern < 4; ++pattern) {
            Problem p(t, 6, K, 5, 11);
            uint8_t* w = p.wBuf.data() + 4;
            const uint16_t d = tensor::fp32ToFp16(0.03f);
            // where the block scale lives: byte 0 (MXFP4), the last two bytes (TQ*), the top
            // nibbles of the four scale words (IQ1_M), else the first two bytes
            const bool ternary = t == TensorType::TQ1_0 || t == TensorType::TQ2_0, iq1m = t == TensorType::IQ1_M;
            const uint64_t first = mxfp4 ? 1 : ternary || iq1m ? 0 : 2, end = ternary ? blockBytes - 2 : blockBytes;
            for (uint64_t b = 0; b + blockBytes <= p.wBuf.size() - 4; b += blockBytes) {
                for (uint64_t i = first; i < end; ++i)
                    w[b + i] = pattern == 0   ? 0xFF
                               : pattern == 1 ? 0x00
                               : pattern == 2 ? static_cast<uint8_t>((i % 2) ? 0xAA : 0x55)
                                              : static_cast<uint8_t>((i % 2) ? 0x78 : 0x87);
                if (mxfp4) w[b] = 124;  // 2^-4
                else if (ternary) std::memcpy(w + b + blockBytes - 2, &d, 2);
                else if (iq1m)
                    for (int k = 0; k < 4; ++k) w[b + 49 + 2 * k] = static_cast<uint8_t>((w[b + 49 + 2 * k] & 0x0F) | ((d >> (4 * k)) & 0xF) << 4);
                else std::memcpy(w + b, &d, 2);
            }
            for (size_t i = 1; i < p.xBuf.size(); ++i) p.xBuf[i] = (i % 3 == 0 ? -4.0f : 4.0f) + 0.001f * float(i % 7);
            const auto ref = p.run(*kernels[0], pool);
            const auto mag = p.magnitude();
            for (size_t ki = 1; ki < kernels.size(); ++ki) {
                const auto y = p.run(*kernels[ki], pool);
                for (int64_t tk = 0; tk < p.nTok; ++tk)
                    for (int64_t r = 0; r < p.nRows; ++r) {
                        const size_t i = static_cast<size_t>(tk * p.ldy + r);
                        if (!(std::fabs(double(y[i]) - ref[i]) <= 4e-6 * mag[i] + 1e-6))
                            QFAIL(qPrintable(where(p, *kernels[ki], tk, r) +
                                             QString(" pattern %1 = %2, reference %3").arg(pattern).arg(y[i]).arg(ref[i])));
                    }
            }
        }
    }

    // The reference against float math on dequantized weights and unquantized activations:
    // they may differ only by the activation rounding (Q8: half a step of amax/127 per element,
    // plus the f16 rounding of the block scale; f16 / bf16 activations: 2^-11 / 2^-8 relative).
    void referenceMatchesFloatMath_data() { simdMatchesReference_data(); }

    void referenceMatchesFloatMath() {
        QFETCH(int, type);
        const auto t = static_cast<TensorType>(type);
        ThreadPool pool(1);
        const int64_t block = tensor::traits(t).blockElems;
        const int64_t actBlock = block == 1 ? 1 : block == 32 ? 32 : 256;
        for (int64_t K : kSizes(t)) {
            const Problem p(t, 9, K, 3, 99);
            const auto y = p.run(*referenceKernel(t), pool);
            const uint64_t rb = *tensor::rowBytes(t, static_cast<uint64_t>(K));
            std::vector<float> w(static_cast<size_t>(K));
            for (int64_t r = 0; r < p.nRows; ++r) {
                tensor::dequantizeRow(t, p.W() + r * rb, w.data(), K);
                for (int64_t tk = 0; tk < p.nTok; ++tk) {
                    const float* x = p.X() + tk * K;
                    double exact = 0, bound = 0, mag = 0;
                    for (int64_t k0 = 0; k0 < K; k0 += actBlock) {
                        double amax = 0;
                        for (int64_t k = k0; k < k0 + actBlock; ++k) amax = std::max(amax, double(std::fabs(x[k])));
                        for (int64_t k = k0; k < k0 + actBlock; ++k) {
                            const double aw = std::fabs(double(w[k])), ax = std::fabs(double(x[k]));
                            exact += double(w[k]) * x[k];
                            mag += aw * ax;
                            if (t == TensorType::F16) bound += aw * ax * 0x1p-11;
                            else if (t == TensorType::BF16) bound += aw * ax * 0x1p-8;
                            else if (t != TensorType::F32) bound += aw * (amax / 254.0 * 1.001 + ax * 0x1p-10);
                        }
                    }
                    const double err = std::fabs(y[static_cast<size_t>(tk * p.ldy + r)] - exact);
                    if (!(err <= bound + 2e-6 * mag + 1e-6))
                        QFAIL(qPrintable(QString("%1 K %2 row %3 tok %4: |ref - exact| = %5 > bound %6")
                                             .arg(std::string(tensor::typeName(t)).c_str()).arg(K).arg(r).arg(tk)
                                             .arg(err).arg(bound)));
                }
            }
        }
    }

    // Each output is computed by exactly one task with the same operation order, so the result
    // must not depend on the number of threads or on how rows/tokens are split.
    void deterministicAcrossThreadCounts() {
        ThreadPool one(1), two(2), three(3);
        for (TensorType t : {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K, TensorType::F16,
                             TensorType::BF16, TensorType::IQ2_XXS, TensorType::IQ3_S, TensorType::IQ4_XS, TensorType::MXFP4,
                             TensorType::IQ1_M, TensorType::TQ1_0}) {
            const int64_t K = tensor::traits(t).blockElems == 1 ? 512 : 1024;
            for (int64_t nTok : {1, 40}) {
                const Problem p(t, 301, K, nTok, 5);
                for (const MatmulKernel* k : availableKernels(t)) {
                    const auto a = p.run(*k, one), b = p.run(*k, two), c = p.run(*k, three);
                    QVERIFY2(std::memcmp(a.data(), b.data(), a.size() * 4) == 0, std::string(tensor::typeName(t)).c_str());
                    QVERIFY2(std::memcmp(a.data(), c.data(), a.size() * 4) == 0, std::string(tensor::typeName(t)).c_str());
                }
            }
        }
    }

    // A token's outputs do not depend on the pass it is in: computed with 39 other tokens (the
    // prefill tiles), with a few (batched decode) or alone (the decode tiles), and whether its
    // row falls in a full tile or in the rows left over, they are the same bits. Batched decode,
    // a shared prompt prefix and chunked prefill rely on it (test_batch_decode checks the scores
    // end to end). Checked for the kernels that promise it: every kernel of the 32-element formats
    // and of the lattice i-quants, IQ1_* and TQ* (whose AVX-512 prefill decodes 16-row panels, its
    // decode not).
    void tokenResultIndependentOfPass() {
        ThreadPool pool(2);
        for (TensorType t : {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                             TensorType::IQ4_NL, TensorType::MXFP4, TensorType::IQ2_XXS, TensorType::IQ2_XS, TensorType::IQ2_S,
                             TensorType::IQ3_XXS, TensorType::IQ3_S, TensorType::IQ1_S, TensorType::IQ1_M, TensorType::TQ1_0,
                             TensorType::TQ2_0}) {
            for (int64_t K : {416, 2048, 4256, 768, 4352}) {
                if (K % tensor::traits(t).blockElems) continue;
                const Problem p(t, 67, K, 40, 17);
                for (const MatmulKernel* k : availableKernels(t)) {
                    const auto all = p.run(*k, pool);
                    for (int64_t from : {0, 9, 36}) {
                        for (int64_t n : {1, 3, 4}) {
                            std::vector<float> y(static_cast<size_t>(n * p.ldy), -12345.0f);
                            matmulWithKernel(*k, p.W(), p.nRows, K, p.X() + from * K, n, y.data(), p.ldy, pool);
                            for (int64_t tk = 0; tk < n; ++tk)
                                for (int64_t r = 0; r < p.nRows; ++r)
                                    if (std::memcmp(&y[static_cast<size_t>(tk * p.ldy + r)],
                                                    &all[static_cast<size_t>((from + tk) * p.ldy + r)], 4) != 0)
                                        QFAIL(qPrintable(where(p, *k, from + tk, r) + QString(" = %1 in a pass of %2, %3 in the pass of 40")
                                                             .arg(y[static_cast<size_t>(tk * p.ldy + r)]).arg(n)
                                                             .arg(all[static_cast<size_t>((from + tk) * p.ldy + r)])));
                        }
                    }
                }
            }
        }
    }

    // Weights repacked at load (packWithKernel: 16-row panels) give the same bits as the rows on
    // disk, for decode and prefill passes, full panels and the rows after them, K with a partial
    // block group, and a packed buffer at an odd address; rows past the last panel are copied.
    // Kernels whose panels have numerics of their own (MatmulKernel::panelsOwnNumerics: Q2_K /
    // Q4_K / Q5_K / Q6_K / IQ4_XS / F16 / BF16, an exact integer sum per super-block or float chains by k,
    // where the row-major tiles keep 16 float lanes): there the packed rows match the reference
    // within the SIMD tolerance, and every pass gives the bits of the 40-token one.
    void packedWeightsGiveTheSameBits() {
        ThreadPool pool(2);
        int packedKernels = 0;
        for (TensorType t : {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                             TensorType::IQ4_NL, TensorType::MXFP4, TensorType::Q2_K, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
                             TensorType::IQ4_XS, TensorType::F16, TensorType::BF16}) {
            // 390 and 419 (float types only): a pair left after the last whole step, an odd K.
            for (int64_t K : {416, 2048, 4256, 390, 419}) {
                if (K % tensor::traits(t).blockElems) continue;
                for (int64_t rows : {16, 67, 160}) {
                    const Problem p(t, rows, K, 40, 23);
                    const uint64_t rb = *tensor::rowBytes(t, static_cast<uint64_t>(K));
                    for (const MatmulKernel* k : availableKernels(t)) {
                        if (!k->pack) continue;
                        ++packedKernels;
                        std::vector<uint8_t> buf(rb * static_cast<uint64_t>(rows) + 2, 0xA5);
                        uint8_t* packed = buf.data() + 2;
                        packWithKernel(*k, p.W(), rows, K, packed, pool);
                        QVERIFY2(std::memcmp(packed, p.W(), 16 * rb) != 0, "a panel is laid out like the rows");
                        const int64_t tail = rows % 16;
                        QVERIFY2(std::memcmp(packed + (rows - tail) * rb, p.W() + (rows - tail) * rb, tail * rb) == 0,
                                 "the rows after the last panel are copied");
                        const bool ownNumerics = k->panelsOwnNumerics;
                        std::vector<float> all = p.run(*k, pool);
                        if (ownNumerics) {
                            const auto ref = p.run(*referenceKernel(t), pool);
                            const auto mag = p.magnitude();
                            all.assign(static_cast<size_t>(p.nTok * p.ldy), -12345.0f);
                            matmulWithKernel(*k, packed, rows, K, p.X(), p.nTok, all.data(), p.ldy, pool, true);
                            for (int64_t tk = 0; tk < p.nTok; ++tk)
                                for (int64_t r = 0; r < rows; ++r) {
                                    const size_t i = static_cast<size_t>(tk * p.ldy + r);
                                    if (!(std::fabs(double(all[i]) - ref[i]) <= 4e-6 * mag[i] + 1e-6))
                                        QFAIL(qPrintable(where(p, *k, tk, r) + QString(" = %1 from packed weights, reference %2")
                                                             .arg(all[i]).arg(ref[i])));
                                }
                        }
                        for (int64_t n : {1, 2, 3, 4, 5, 8, 13, 40}) {
                            std::vector<float> y(static_cast<size_t>(n * p.ldy), -12345.0f);
                            matmulWithKernel(*k, packed, rows, K, p.X(), n, y.data(), p.ldy, pool, true);
                            for (int64_t tk = 0; tk < n; ++tk)
                                for (int64_t r = 0; r < rows; ++r)
                                    if (std::memcmp(&y[static_cast<size_t>(tk * p.ldy + r)], &all[static_cast<size_t>(tk * p.ldy + r)], 4) != 0)
                                        QFAIL(qPrintable(where(p, *k, tk, r) + QString(" = %1 from packed weights (pass of %2), %3 %4")
                                                             .arg(y[static_cast<size_t>(tk * p.ldy + r)]).arg(n)
                                                             .arg(all[static_cast<size_t>(tk * p.ldy + r)])
                                                             .arg(ownNumerics ? "in the pass of 40" : "from the rows")));
                        }
                    }
                }
            }
        }
        if (cpu::maxSimdLevel() >= cpu::SimdLevel::Avx512) QVERIFY(packedKernels > 0);
        if (packedKernels == 0) QSKIP("no kernel of this CPU packs weights (AVX-512 ones do)");
    }

    // CpuBackend::packMatrices: matmul and expertMatmuls read the packed copy of a whole matrix or
    // expert stack and give the bits of the unpacked backend; a view of part of a matrix (fewer
    // rows from its start) still reads the original. Whatever the CPU (nothing packs without
    // AVX-512: the same bits trivially), the results must agree.
    void packedBackendGivesTheSameBits() {
        ThreadPool pool(2);
        const TensorType t = TensorType::Q4_0;
        const int64_t K = 2048, N = 67, nMat = 3, nTok = 9;
        const Problem stack(t, N * nMat, K, nTok, 31);
        const uint64_t rb = *tensor::rowBytes(t, K);
        const backend::Matrix whole{t, stack.W(), K, N, nMat, rb};
        CpuBackend plain(pool), packed(pool);
        const uint64_t bytes = packed.packMatrices({whole});
        QCOMPARE(bytes, canPack(t) ? rb * N * nMat : 0);
        auto same = [](const std::vector<float>& a, const std::vector<float>& b, const char* what) {
            QVERIFY2(a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0, what);
        };
        for (int64_t n : {int64_t{1}, int64_t{4}, nTok}) {
            backend::Matrix first = whole;
            first.nMat = 1;
            std::vector<float> y0(static_cast<size_t>(n * N)), y1(y0.size());
            plain.matmul(first, stack.X(), n, y0.data(), N);
            packed.matmul(first, stack.X(), n, y1.data(), N);
            same(y0, y1, "matmul on the first matrix of the stack");
            backend::Matrix view = first;
            view.rows = 40;  // a view: not the packed copy's shape
            std::vector<float> v0(static_cast<size_t>(n * 40)), v1(v0.size());
            plain.matmul(view, stack.X(), n, v0.data(), 40);
            packed.matmul(view, stack.X(), n, v1.data(), 40);
            same(v0, v1, "matmul on a 40-row view");
            for (int64_t r = 0; r < 40; ++r) QCOMPARE(v0[static_cast<size_t>(r)], y0[static_cast<size_t>(r)]);
        }
        // Experts: 9 tokens x 2 experts each, and a dense product on the stack's first matrix.
        const int32_t experts[18] = {0, 2, 1, 2, 2, 0, 1, 1, 0, 2, 2, 1, 0, 1, 1, 0, 2, 2};
        std::vector<float> e0(static_cast<size_t>(18 * N)), e1(e0.size()), d0(static_cast<size_t>(nTok * N)), d1(d0.size());
        backend::ExpertProduct p{whole, experts, 18, stack.X(), 2, e0.data()};
        backend::Matrix first = whole;
        first.nMat = 1;
        backend::ExpertProduct dense{first, nullptr, nTok, stack.X(), 1, d0.data()};
        const backend::ExpertProduct plainProducts[2] = {p, dense};
        plain.expertMatmuls(plainProducts, 2);
        p.y = e1.data();
        dense.y = d1.data();
        const backend::ExpertProduct packedProducts[2] = {p, dense};
        packed.expertMatmuls(packedProducts, 2);
        same(e0, e1, "expertMatmuls on the packed stack");
        same(d0, d1, "a dense product on the packed stack's first matrix");
    }

    // The activation quantizers of the SIMD kernels produce the reference's values: a weight row
    // that is a unit vector picks out one quantized activation exactly.
    void activationQuantizationMatchesReference() {
        for (TensorType t : {TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K}) {
            const int64_t K = 512;
            std::vector<float> wf(static_cast<size_t>(K * 4), 0.0f);
            const int64_t picks[4] = {0, 37, 300, 511};
            for (int i = 0; i < 4; ++i) wf[static_cast<size_t>(i * K + picks[i])] = 1.0f;
            std::vector<uint8_t> W(*tensor::rowBytes(t, K) * 4);
            QVERIFY(tensor::quantizeRows(t, wf.data(), W.data(), 4, K).ok());
            std::vector<float> x(static_cast<size_t>(K));
            for (int64_t k = 0; k < K; ++k) x[static_cast<size_t>(k)] = std::cos(0.37f * k) * (k % 5 + 1);
            ThreadPool pool(1);
            std::vector<float> ref(4), y(4);
            matmulWithKernel(*referenceKernel(t), W.data(), 4, K, x.data(), 1, ref.data(), 4, pool);
            for (const MatmulKernel* k : availableKernels(t)) {
                matmulWithKernel(*k, W.data(), 4, K, x.data(), 1, y.data(), 4, pool);
                for (int i = 0; i < 4; ++i) QCOMPARE(y[i], ref[i]);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestKernels)
#include "test_kernels.moc"
