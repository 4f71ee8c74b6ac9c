// Host tests of the CUDA backend's block math (engine/backend/cuda/block_decode.cuh): every unit
// decoded by decodeUnit must equal the reference tensor::dequantizeRow bit for bit, dotUnit must
// match a double-precision dot of the dequantized row, and the half / bfloat16 conversions must
// reproduce tensor/half.h on every bit pattern. Every weight type the CPU can dequantize is
// covered, the i-quants, MXFP4 and TQ1_0 / TQ2_0 included: on the host the functions read the
// CPU's own grids, on the device copies made from the same data files (iq_tables.cuh).
// Also the host half of grouping pairs by expert (expert_order.h).
#include "backend/cuda/block_decode.cuh"
#include "backend/cuda/block_type.h"
#include "backend/cuda/expert_order.h"
#include "tensor/half.h"
#include "tensor/iq_decode.h"
#include "tensor/iq_grids.h"
#include "tensor/quantize.h"
#include "tensor/tensor_type.h"

#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace verdict;
using namespace verdict::cuda;
using tensor::TensorType;

namespace {

using DecodeFn = void (*)(const uint8_t*, int64_t, float*);
using DotFn = float (*)(const uint8_t*, int64_t, const float*);
using QuadFn = void (*)(const uint8_t*, int64_t, int, float*);

// Random block bytes: a type-specific fix of the scale fields so every value is finite.
using FixFn = void (*)(uint8_t* block, std::mt19937& rng);

struct Case {
    TensorType tensorType;
    BlockType blockType;
    DecodeFn decode;
    DotFn dot;
    std::vector<int> halfOffsets;  // byte offsets of the f16 scale fields inside a block
    QuadFn quad = nullptr;
    FixFn fix = nullptr;
};

template <BlockType T> Case makeCase(TensorType tt, std::vector<int> halfOffsets, FixFn fix = nullptr) {
    return {tt, T, &decodeUnit<T>, &dotUnit<T>, std::move(halfOffsets), &decodeQuad<T>, fix};
}

// MXFP4: an exponent byte within 2^-20 .. 2^20 (beyond, 12 * 2^(e-128) overflows to inf at the
// top), and now and then the subnormal scales e = 0 / 1.
void fixMxfp4(uint8_t* b, std::mt19937& rng) {
    const int r = std::uniform_int_distribution<int>(0, 9)(rng);
    b[0] = static_cast<uint8_t>(r == 0 ? 0 : r == 1 ? 1 : std::uniform_int_distribution<int>(108, 148)(rng));
}
// IQ1_M: its f16 scale is the top nibbles of the four scale words (bytes 49, 51, 53, 55).
void fixIq1m(uint8_t* b, std::mt19937& rng) {
    const uint16_t h = tensor::fp32ToFp16(std::uniform_real_distribution<float>(-4.0f, 4.0f)(rng));
    for (int w = 0; w < 4; ++w)
        b[48 + 2 * w + 1] = static_cast<uint8_t>((b[48 + 2 * w + 1] & 0x0F) | (((h >> (4 * w)) & 0xF) << 4));
}

std::vector<Case> allCases() {
    return {
        makeCase<BlockType::F32>(TensorType::F32, {}),
        makeCase<BlockType::F16>(TensorType::F16, {}),
        makeCase<BlockType::BF16>(TensorType::BF16, {}),
        makeCase<BlockType::Q4_0>(TensorType::Q4_0, {0}),
        makeCase<BlockType::Q4_1>(TensorType::Q4_1, {0, 2}),
        makeCase<BlockType::Q5_0>(TensorType::Q5_0, {0}),
        makeCase<BlockType::Q5_1>(TensorType::Q5_1, {0, 2}),
        makeCase<BlockType::Q8_0>(TensorType::Q8_0, {0}),
        makeCase<BlockType::Q2_K>(TensorType::Q2_K, {80, 82}),
        makeCase<BlockType::Q3_K>(TensorType::Q3_K, {108}),
        makeCase<BlockType::Q4_K>(TensorType::Q4_K, {0, 2}),
        makeCase<BlockType::Q5_K>(TensorType::Q5_K, {0, 2}),
        makeCase<BlockType::Q6_K>(TensorType::Q6_K, {208}),
        makeCase<BlockType::IQ4_NL>(TensorType::IQ4_NL, {0}),
        makeCase<BlockType::IQ4_XS>(TensorType::IQ4_XS, {0}),
        makeCase<BlockType::MXFP4>(TensorType::MXFP4, {}, &fixMxfp4),
        makeCase<BlockType::IQ2_XXS>(TensorType::IQ2_XXS, {0}),
        makeCase<BlockType::IQ2_XS>(TensorType::IQ2_XS, {0}),
        makeCase<BlockType::IQ2_S>(TensorType::IQ2_S, {0}),
        makeCase<BlockType::IQ3_XXS>(TensorType::IQ3_XXS, {0}),
        makeCase<BlockType::IQ3_S>(TensorType::IQ3_S, {0}),
        makeCase<BlockType::IQ1_S>(TensorType::IQ1_S, {0}),
        makeCase<BlockType::IQ1_M>(TensorType::IQ1_M, {}, &fixIq1m),
        makeCase<BlockType::TQ1_0>(TensorType::TQ1_0, {52}),
        makeCase<BlockType::TQ2_0>(TensorType::TQ2_0, {64}),
    };
}

// Rows of varied character: N(0,1), all zero, all negative, per-element magnitudes 1e-4..1e4,
// per-block magnitudes 1e-3..1e3 with exact zeros sprinkled in, and a constant positive row.
std::vector<float> makeRows(int nRows, int len, std::mt19937& rng) {
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    std::uniform_real_distribution<float> expo(-4.0f, 4.0f);
    std::vector<float> v(static_cast<size_t>(nRows) * len);
    for (int r = 0; r < nRows; ++r) {
        float* x = v.data() + static_cast<size_t>(r) * len;
        float blockScale = 1.0f;
        for (int i = 0; i < len; ++i) {
            if (i % 32 == 0) blockScale = std::pow(10.0f, std::uniform_real_distribution<float>(-3, 3)(rng));
            switch (r % 6) {
                case 0: x[i] = gauss(rng); break;
                case 1: x[i] = 0.0f; break;
                case 2: x[i] = -std::fabs(gauss(rng)) - 0.01f; break;
                case 3: x[i] = gauss(rng) * std::pow(10.0f, expo(rng)); break;
                case 4: x[i] = (i % 7 == 3) ? 0.0f : gauss(rng) * blockScale; break;
                default: x[i] = 3.25f; break;
            }
        }
    }
    return v;
}

size_t rowBytesOf(TensorType t, int len) { return static_cast<size_t>(*tensor::rowBytes(t, len)); }

// Checks decodeUnit (bit-exact) and dotUnit (within float accumulation error) on nRows rows of
// length len stored in `data`. checkDot is off for random-byte rows (they may hold inf / NaN).
void checkRows(const Case& c, const uint8_t* data, int nRows, int len, bool checkDot, std::mt19937& rng) {
    const size_t rb = rowBytesOf(c.tensorType, len);
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    std::vector<float> ref(len), x(len);
    for (int r = 0; r < nRows; ++r) {
        const uint8_t* row = data + r * rb;
        tensor::dequantizeRow(c.tensorType, row, ref.data(), len);
        for (int64_t u = 0; u < len / 32; ++u) {
            float out[32];
            c.decode(row, u, out);
            for (int q = 0; q < 8; ++q) {  // the kernels' per-lane view: the same bits
                float quad[4];
                c.quad(row, u, q, quad);
                for (int i = 0; i < 4; ++i)
                    if (tensor::floatBits(quad[i]) != tensor::floatBits(out[4 * q + i]))
                        QFAIL(qPrintable(QStringLiteral("%1 row %2 unit %3: decodeQuad(%4)[%5] differs from decodeUnit")
                                             .arg(QString::fromStdString(std::string(tensor::typeName(c.tensorType))))
                                             .arg(r).arg(u).arg(q).arg(i)));
            }
            for (int l = 0; l < 32; ++l) {
                const float want = ref[32 * u + l];
                if (tensor::floatBits(out[l]) != tensor::floatBits(want))
                    QFAIL(qPrintable(QStringLiteral("%1 len %2 row %3 element %4: decodeUnit %5 (0x%6), "
                                                    "dequantizeRow %7 (0x%8)")
                                         .arg(QString::fromStdString(std::string(tensor::typeName(c.tensorType))))
                                         .arg(len).arg(r).arg(32 * u + l)
                                         .arg(static_cast<double>(out[l]), 0, 'g', 9)
                                         .arg(tensor::floatBits(out[l]), 8, 16, QChar('0'))
                                         .arg(static_cast<double>(want), 0, 'g', 9)
                                         .arg(tensor::floatBits(want), 8, 16, QChar('0'))));
            }
        }
        if (!checkDot) continue;
        for (float& xi : x) xi = gauss(rng);
        double exact = 0.0, mag = 0.0;
        for (int i = 0; i < len; ++i) {
            exact += static_cast<double>(ref[i]) * x[i];
            mag += std::fabs(static_cast<double>(ref[i]) * x[i]);
        }
        float got = 0.0f;
        for (int64_t u = 0; u < len / 32; ++u) got += c.dot(row, u, x.data() + 32 * u);
        // Relative to sum |w_i x_i| (the scale of the rounding error of any float dot), so a
        // row whose dot cancels to near zero does not demand impossible precision.
        const double err = std::fabs(static_cast<double>(got) - exact);
        if (err > 1e-5 * mag)
            QFAIL(qPrintable(QStringLiteral("%1 len %2 row %3: dotUnit sum %4, exact %5, |err| %6 > 1e-5 * %7")
                                 .arg(QString::fromStdString(std::string(tensor::typeName(c.tensorType))))
                                 .arg(len).arg(r).arg(static_cast<double>(got), 0, 'g', 9)
                                 .arg(exact, 0, 'g', 12).arg(err).arg(mag)));
    }
}

}  // namespace

class TestCudaBlockDecode : public QObject {
    Q_OBJECT

private slots:
    void traitsMatchTensorTable() {
        for (const Case& c : allCases()) {
            const auto& tt = tensor::traits(c.tensorType);
            const BlockInfo bi = blockInfo(c.blockType);
            QCOMPARE(bi.units * 32, bi.elems);
            // Same bytes per element: kBytes / kElems == blockBytes / blockElems.
            QCOMPARE(static_cast<uint64_t>(bi.bytes) * tt.blockElems, static_cast<uint64_t>(tt.blockBytes) * bi.elems);
            QCOMPARE(bi.elems % static_cast<int>(tt.blockElems), 0);
            QVERIFY(blockTypeFor(c.tensorType) == c.blockType);
        }
        static_assert(BlockTraits<BlockType::Q6_K>::kUnits == 8 && BlockTraits<BlockType::Q8_0>::kBytes == 34);
    }

    void blockTypeForCoversDequantizableWeights() {
        for (uint32_t id = 0; id < 64; ++id) {
            const auto tr = tensor::typeTraits(id);
            if (!tr) continue;
            const TensorType t = tr->type;
            // Every weight type the CPU reads; Q8_1 / Q8_K are activation formats.
            const bool expected = tensor::canDequantize(t) && t != TensorType::Q8_1 && t != TensorType::Q8_K;
            QVERIFY2(blockTypeFor(t).has_value() == expected, std::string(tr->name).c_str());
            if (expected) {
                bool tested = false;
                for (const Case& c : allCases()) tested = tested || c.tensorType == t;
                QVERIFY2(tested, (std::string(tr->name) + " has no case in allCases()").c_str());
            }
        }
    }

    // The computed sign byte of IQ2_XXS / IQ2_XS / IQ3_XXS against the CPU's table; the MXFP4 scale
    // and the TQ1_0 trits against the CPU's functions for every byte.
    void helpersMatchCpu() {
        for (unsigned i = 0; i < 128; ++i) QCOMPARE(iq2SignByte(i), static_cast<unsigned>(tensor::kIQ2Signs[i]));
        for (unsigned e = 0; e < 256; ++e)
            QCOMPARE(tensor::floatBits(mxfp4Scale(static_cast<uint8_t>(e))),
                     tensor::floatBits(tensor::mxfp4HalfScale(static_cast<uint8_t>(e))));
        for (unsigned q = 0; q < 256; ++q)
            for (int n = 0; n < 5; ++n) QCOMPARE(tq1Trit(q, n), static_cast<int>(tensor::tq1Trit(static_cast<uint8_t>(q), n)));
    }

    // The counting sort that groups a prefill's (token, slot) pairs by expert on the GPU paths.
    void expertOrder() {
        const std::vector<int32_t> ids = {3, 0, 3, 1, 0, 3, 2, 0};
        std::vector<int64_t> begin;
        std::vector<int32_t> order;
        int32_t bad = -1;
        QVERIFY(sortPairsByExpert(ids, 5, begin, order, bad));
        QCOMPARE(begin, (std::vector<int64_t>{0, 3, 4, 5, 8, 8}));
        QCOMPARE(order, (std::vector<int32_t>{1, 4, 7, 3, 6, 0, 2, 5}));  // pair order within an expert
        std::mt19937 rng(5);
        std::vector<int32_t> many(1000);
        for (int32_t& e : many) e = std::uniform_int_distribution<int32_t>(0, 63)(rng);
        QVERIFY(sortPairsByExpert(many, 64, begin, order, bad));
        for (int64_t e = 0; e < 64; ++e)
            for (int64_t j = begin[static_cast<size_t>(e)]; j < begin[static_cast<size_t>(e) + 1]; ++j) {
                QCOMPARE(many[static_cast<size_t>(order[static_cast<size_t>(j)])], static_cast<int32_t>(e));
                if (j > begin[static_cast<size_t>(e)]) QVERIFY(order[static_cast<size_t>(j)] > order[static_cast<size_t>(j) - 1]);
            }
        QVERIFY(!sortPairsByExpert({0, 7, 1}, 5, begin, order, bad));
        QCOMPARE(bad, 7);
        QVERIFY(!sortPairsByExpert({-1}, 5, begin, order, bad));
        QCOMPARE(bad, -1);
    }

    void halfBitsAllPatterns() {
        for (uint32_t h = 0; h < 65536; ++h) {
            const float got = halfBitsToFloat(static_cast<uint16_t>(h));
            const float want = tensor::fp16ToFp32(static_cast<uint16_t>(h));
            if (std::isnan(want)) {
                QVERIFY2(std::isnan(got), qPrintable(QString::number(h, 16)));
                QCOMPARE(tensor::floatBits(got), tensor::floatBits(want));  // same quieted payload
            } else if (tensor::floatBits(got) != tensor::floatBits(want)) {
                QFAIL(qPrintable(QStringLiteral("f16 0x%1: %2 vs %3").arg(h, 4, 16, QChar('0'))
                                     .arg(static_cast<double>(got)).arg(static_cast<double>(want))));
            }
        }
        QCOMPARE(halfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
        QCOMPARE(halfBitsToFloat(0x3c00), 1.0f);
        QVERIFY(std::signbit(halfBitsToFloat(0x8000)));
    }

    void bf16BitsSpread() {
        // Every pattern: exact values, +-0, subnormals, +-inf, NaN (bits kept).
        for (uint32_t h = 0; h < 65536; ++h) {
            const float got = bf16BitsToFloat(static_cast<uint16_t>(h));
            const float want = tensor::bf16ToFp32(static_cast<uint16_t>(h));
            if (tensor::floatBits(got) != tensor::floatBits(want))
                QFAIL(qPrintable(QStringLiteral("bf16 0x%1").arg(h, 4, 16, QChar('0'))));
        }
        QCOMPARE(bf16BitsToFloat(0x3f80), 1.0f);
        QCOMPARE(bf16BitsToFloat(0xc040), -3.0f);
        QVERIFY(std::isinf(bf16BitsToFloat(0x7f80)));
        QVERIFY(std::isnan(bf16BitsToFloat(0x7fc1)));
        QCOMPARE(bf16BitsToFloat(tensor::fp32ToBf16(1.0e-40f)), tensor::bf16ToFp32(tensor::fp32ToBf16(1.0e-40f)));
    }

    void quantizedRowsMatchReference() {
        std::mt19937 rng(1234);
        const int nRows = 6;
        for (const Case& c : allCases()) {
            if (!tensor::canQuantize(c.tensorType)) continue;  // the lattice i-quants: random bytes below
            for (int len : {256, 512}) {
                const std::vector<float> src = makeRows(nRows, len, rng);
                const size_t rb = rowBytesOf(c.tensorType, len);
                std::vector<uint64_t> buf((rb * nRows + 7) / 8);  // 8-aligned, rows stay 2/4-aligned
                const auto q = tensor::quantizeRows(c.tensorType, src.data(), buf.data(), nRows, len);
                QVERIFY2(q.ok(), std::string(tensor::typeName(c.tensorType)).c_str());
                checkRows(c, reinterpret_cast<const uint8_t*>(buf.data()), nRows, len, true, rng);
                if (QTest::currentTestFailed()) return;
            }
        }
    }

    // Arbitrary block bytes reach quant values and bit combinations the quantizers never emit
    // (every hmask / qh bit, extreme 6-bit scales). Scale fields are set to finite halves.
    void randomBlockBytesMatchReference() {
        std::mt19937 rng(99);
        std::uniform_int_distribution<int> byte(0, 255);
        std::uniform_real_distribution<float> scale(-4.0f, 4.0f);
        const int nRows = 4, len = 512;
        for (const Case& c : allCases()) {
            const size_t rb = rowBytesOf(c.tensorType, len);
            std::vector<uint64_t> buf((rb * nRows + 7) / 8);
            auto* bytes = reinterpret_cast<uint8_t*>(buf.data());
            for (size_t i = 0; i < rb * nRows; ++i) bytes[i] = static_cast<uint8_t>(byte(rng));
            const BlockInfo bi = blockInfo(c.blockType);
            for (size_t b = 0; b < rb * nRows / bi.bytes; ++b) {
                for (int off : c.halfOffsets) {
                    const uint16_t h = tensor::fp32ToFp16(scale(rng));
                    bytes[b * bi.bytes + off] = static_cast<uint8_t>(h & 0xff);
                    bytes[b * bi.bytes + off + 1] = static_cast<uint8_t>(h >> 8);
                }
                if (c.fix) c.fix(bytes + b * bi.bytes, rng);
            }
            // Plain float rows of random bytes may hold NaN / inf: compare decode only.
            const bool finite = !c.halfOffsets.empty() || c.fix;
            checkRows(c, bytes, nRows, len, finite, rng);
            if (QTest::currentTestFailed()) return;
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaBlockDecode)
#include "test_cuda_block_decode.moc"
