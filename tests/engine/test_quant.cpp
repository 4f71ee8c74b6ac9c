// Reference formats: f16 / bf16 conversion exactness on special values, and quantize ->
// dequantize round trips of every block format within the error its bit width allows.
#include "tensor/half.h"
#include "tensor/quantize.h"
#include "tensor/tensor_type.h"

#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace verdict;
using namespace verdict::tensor;

namespace {

float f32(uint32_t bits) { return bitsToFloat(bits); }

// Exact f32 -> f16 by arithmetic: round |x| / 2^e to an integer mantissa with ties to even.
uint16_t slowFp16(float x) {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double a = std::fabs(static_cast<double>(x));
    if (std::isnan(x)) return sign | 0x7e00;
    if (a >= 65520.0) return sign | 0x7c00;
    int e = a == 0 ? -14 : std::max(-14, static_cast<int>(std::floor(std::log2(a))));
    double m = std::nearbyint(a / std::ldexp(1.0, e - 10));  // default rounding: ties to even
    if (m >= 2048) {
        m /= 2;
        ++e;
    }
    if (m < 1024) return static_cast<uint16_t>(sign | static_cast<uint16_t>(m));  // subnormal (e == -14)
    return static_cast<uint16_t>(sign | (e + 15) << 10 | (static_cast<uint16_t>(m) - 1024));
}

struct RoundTripCase {
    TensorType type;
    double maxRelRmse;  // RMS error / RMS value on N(0,1) data
};

}  // namespace

Q_DECLARE_METATYPE(RoundTripCase)

class TestQuant : public QObject {
    Q_OBJECT

private slots:
    void fp16SpecialValues() {
        QCOMPARE(fp32ToFp16(0.0f), uint16_t{0x0000});
        QCOMPARE(fp32ToFp16(-0.0f), uint16_t{0x8000});
        QCOMPARE(fp32ToFp16(1.0f), uint16_t{0x3c00});
        QCOMPARE(fp32ToFp16(-2.0f), uint16_t{0xc000});
        QCOMPARE(fp32ToFp16(65504.0f), uint16_t{0x7bff});                 // largest finite
        QCOMPARE(fp32ToFp16(65519.996f), uint16_t{0x7bff});               // just below the tie
        QCOMPARE(fp32ToFp16(65520.0f), uint16_t{0x7c00});                 // tie to even -> inf
        QCOMPARE(fp32ToFp16(1e10f), uint16_t{0x7c00});
        QCOMPARE(fp32ToFp16(-std::numeric_limits<float>::infinity()), uint16_t{0xfc00});
        QCOMPARE(fp32ToFp16(std::ldexp(1.0f, -14)), uint16_t{0x0400});    // smallest normal
        QCOMPARE(fp32ToFp16(std::ldexp(1.0f, -24)), uint16_t{0x0001});    // smallest subnormal
        QCOMPARE(fp32ToFp16(std::ldexp(1.0f, -25)), uint16_t{0x0000});    // tie -> even (0)
        QCOMPARE(fp32ToFp16(std::ldexp(3.0f, -25)), uint16_t{0x0002});    // 1.5 ulp tie -> even (2)
        QCOMPARE(fp32ToFp16(std::ldexp(1.0f, -25) * 1.0001f), uint16_t{0x0001});
        QCOMPARE(fp32ToFp16(1.0f + std::ldexp(1.0f, -11)), uint16_t{0x3c00});  // tie -> even
        QCOMPARE(fp32ToFp16(1.0f + std::ldexp(3.0f, -11)), uint16_t{0x3c02});  // tie -> even (up)
        const uint16_t nan = fp32ToFp16(std::numeric_limits<float>::quiet_NaN());
        QVERIFY((nan & 0x7c00) == 0x7c00 && (nan & 0x03ff) != 0);
        QVERIFY(std::isnan(fp16ToFp32(fp32ToFp16(f32(0x7f800001)))));  // signalling NaN stays NaN

        QCOMPARE(fp16ToFp32(0x0001), std::ldexp(1.0f, -24));
        QCOMPARE(fp16ToFp32(0x03ff), std::ldexp(1023.0f, -24));
        QCOMPARE(fp16ToFp32(0x7bff), 65504.0f);
        QCOMPARE(fp16ToFp32(0x7c00), std::numeric_limits<float>::infinity());
        QCOMPARE(fp16ToFp32(0xfc00), -std::numeric_limits<float>::infinity());
        QVERIFY(std::isnan(fp16ToFp32(0x7e00)));
        QVERIFY(std::signbit(fp16ToFp32(0x8000)));
    }

    void fp16AllHalvesRoundTrip() {
        for (uint32_t h = 0; h < 0x10000; ++h) {
            const float f = fp16ToFp32(static_cast<uint16_t>(h));
            if (std::isnan(f)) continue;
            QCOMPARE(fp32ToFp16(f), static_cast<uint16_t>(h));
        }
    }

    // Scalar conversion against an arithmetic reference and against the row (F16C) path, over
    // a sweep of f32 bit patterns that covers every exponent and many mantissas.
    void fp16MatchesExactRounding() {
        std::vector<float> xs;
        for (uint64_t bits = 0; bits < 0x100000000ull; bits += 0x1001)  // ~1M patterns
            xs.push_back(f32(static_cast<uint32_t>(bits)));
        std::vector<uint16_t> row(xs.size());
        fp32ToFp16Row(xs.data(), row.data(), static_cast<int64_t>(xs.size()));
        for (size_t i = 0; i < xs.size(); ++i) {
            const uint16_t s = fp32ToFp16(xs[i]);
            QCOMPARE(row[i], s);
            if (!std::isnan(xs[i])) {
                if (s != slowFp16(xs[i])) QFAIL(qPrintable(QString("x bits %1").arg(floatBits(xs[i]), 8, 16)));
            }
        }
        std::vector<uint16_t> hs(0x10000);
        for (uint32_t h = 0; h < 0x10000; ++h) hs[h] = static_cast<uint16_t>(h);
        std::vector<float> back(0x10000);
        fp16ToFp32Row(hs.data(), back.data(), 0x10000);
        for (uint32_t h = 0; h < 0x10000; ++h)
            QCOMPARE(floatBits(back[h]), floatBits(fp16ToFp32(static_cast<uint16_t>(h))));
    }

    void bf16Conversion() {
        QCOMPARE(fp32ToBf16(1.0f), uint16_t{0x3f80});
        QCOMPARE(fp32ToBf16(f32(0x3f808000)), uint16_t{0x3f80});  // tie, even stays
        QCOMPARE(fp32ToBf16(f32(0x3f818000)), uint16_t{0x3f82});  // tie, odd rounds up
        QCOMPARE(fp32ToBf16(f32(0x3f808001)), uint16_t{0x3f81});
        QCOMPARE(fp32ToBf16(f32(0x7f7fffff)), uint16_t{0x7f80});  // max float rounds to inf
        QCOMPARE(fp32ToBf16(std::numeric_limits<float>::infinity()), uint16_t{0x7f80});
        QCOMPARE(fp32ToBf16(f32(0x7f800001)), uint16_t{0x7fc0});  // NaN made quiet (ggml: | 64)
        QCOMPARE(fp32ToBf16(f32(0xffc00000)), uint16_t{0xffc0});
        QCOMPARE(fp32ToBf16(f32(0x00010000)), uint16_t{0x0001});  // subnormal kept, not flushed
        QCOMPARE(fp32ToBf16(-0.0f), uint16_t{0x8000});
        QCOMPARE(bf16ToFp32(0x4049), f32(0x40490000));
        for (uint32_t h = 0; h < 0x10000; ++h) {
            const float f = bf16ToFp32(static_cast<uint16_t>(h));
            if (std::isnan(f)) continue;
            QCOMPARE(fp32ToBf16(f), static_cast<uint16_t>(h));
        }
        std::vector<float> xs = {1.0f, f32(0x3f818000), f32(0x7f800001), -3.5f, 1e-40f};
        std::vector<uint16_t> row(xs.size());
        fp32ToBf16Row(xs.data(), row.data(), static_cast<int64_t>(xs.size()));
        for (size_t i = 0; i < xs.size(); ++i) QCOMPARE(row[i], fp32ToBf16(xs[i]));
    }

    void nearestIntRoundsHalfToEven() {
        QCOMPARE(nearestInt(0.5f), 0);
        QCOMPARE(nearestInt(1.5f), 2);
        QCOMPARE(nearestInt(2.5f), 2);
        QCOMPARE(nearestInt(-0.5f), 0);
        QCOMPARE(nearestInt(-1.5f), -2);
        QCOMPARE(nearestInt(-127.49f), -127);
        QCOMPARE(nearestInt(4194303.0f), 4194303);
    }

    void roundTrip_data() {
        QTest::addColumn<RoundTripCase>("c");
        // Bounds: observed error on N(0,1) data plus margin; a wrong bit layout gives O(1).
        const RoundTripCase cases[] = {
            {TensorType::F32, 0.0},      {TensorType::F16, 6e-4},     {TensorType::BF16, 4.5e-3},
            {TensorType::Q8_0, 0.012},   {TensorType::Q8_1, 0.012},   {TensorType::Q8_K, 0.008},
            {TensorType::Q6_K, 0.035},   {TensorType::Q5_0, 0.075},   {TensorType::Q5_1, 0.07},
            {TensorType::Q5_K, 0.07},    {TensorType::Q4_0, 0.15},    {TensorType::Q4_1, 0.14},
            {TensorType::Q4_K, 0.13},    {TensorType::Q3_K, 0.28},    {TensorType::Q2_K, 0.55},
        };
        for (const auto& c : cases) QTest::addRow("%s", std::string(typeName(c.type)).c_str()) << c;
    }

    void roundTrip() {
        QFETCH(RoundTripCase, c);
        const int64_t n = 256 * 64;
        std::mt19937 rng(42);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<float> x(n);
        for (auto& v : x) v = nd(rng);
        std::vector<uint8_t> q(*rowBytes(c.type, n));
        QVERIFY(canQuantize(c.type) && canDequantize(c.type));
        quantizeRow(c.type, x.data(), q.data(), n);
        std::vector<float> y(n);
        dequantizeRow(c.type, q.data(), y.data(), n);
        double se = 0, ss = 0;
        for (int64_t i = 0; i < n; ++i) {
            se += (x[i] - y[i]) * double(x[i] - y[i]);
            ss += x[i] * double(x[i]);
        }
        const double rel = std::sqrt(se / ss);
        if (rel > c.maxRelRmse) QFAIL(qPrintable(QString("relative rmse %1 > %2").arg(rel).arg(c.maxRelRmse)));
        if (c.type != TensorType::F32) QVERIFY(rel > 0);  // the format loses something

        // Zero input -> exact zeros; a constant block survives within its bit width.
        std::vector<float> z(256, 0.0f), back(256, 1.0f);
        std::vector<uint8_t> qz(*rowBytes(c.type, 256));
        quantizeRow(c.type, z.data(), qz.data(), 256);
        dequantizeRow(c.type, qz.data(), back.data(), 256);
        for (float v : back) QCOMPARE(v, 0.0f);
        std::vector<float> k(256, -0.75f);
        quantizeRow(c.type, k.data(), qz.data(), 256);
        dequantizeRow(c.type, qz.data(), back.data(), 256);
        for (float v : back) QVERIFY(std::fabs(v + 0.75f) <= 0.75f * std::max(c.maxRelRmse, 1e-3) * 2);
    }

    void nonLinearFormatsDequantize() {
        // Hand-computed from the format (block_formats.h): levels of IQ4_NL, the 6-bit scales of
        // IQ4_XS, MXFP4's E8M0 scale and doubled E2M1 levels, and Q4_0's nibble order for all three.
        QVERIFY(canDequantize(TensorType::IQ4_NL) && !canQuantize(TensorType::IQ4_NL));
        QVERIFY(canDequantize(TensorType::MXFP4) && !canQuantize(TensorType::MXFP4));
        std::vector<uint8_t> nl(18, 0);
        const uint16_t half = 0x3800;  // 0.5
        std::memcpy(nl.data(), &half, 2);
        nl[2] = 0xF0;   // element 0: level 0 (-127), element 16: level 15 (113)
        nl[17] = 0x87;  // element 15: level 7 (-10), element 31: level 8 (1)
        std::vector<float> y(32);
        dequantizeRow(TensorType::IQ4_NL, nl.data(), y.data(), 32);
        QCOMPARE(y[0], -63.5f);
        QCOMPARE(y[16], 56.5f);
        QCOMPARE(y[15], -5.0f);
        QCOMPARE(y[31], 0.5f);
        QCOMPARE(y[1], -63.5f);  // qs[1] = 0: level 0

        std::vector<uint8_t> xs(136, 0);
        const uint16_t one = 0x3C00;  // 1.0
        std::memcpy(xs.data(), &one, 2);
        const uint16_t scalesH = 0x0002 | (0x3 << 14);  // sub-block 0: high bits 2; sub-block 7: 3
        std::memcpy(xs.data() + 2, &scalesH, 2);
        xs[4] = 0x05;   // sub-block 0 low bits 5 -> ls = 37 -> scale 5; sub-block 1: 0 -> -32
        xs[7] = 0xF0;   // sub-block 7 low bits 15 -> ls = 63 -> scale 31; sub-block 6: 0 -> -32
        xs[8] = 0x0F;   // sub-block 0, element 0: level 15 (113); element 16: level 0 (-127)
        xs[8 + 7 * 16] = 0x98;  // sub-block 7, element 224: level 8 (1), element 240: level 9 (13)
        std::vector<float> z(256);
        dequantizeRow(TensorType::IQ4_XS, xs.data(), z.data(), 256);
        QCOMPARE(z[0], 5.0f * 113);
        QCOMPARE(z[16], 5.0f * -127);
        QCOMPARE(z[32], -32.0f * -127);  // sub-block 1, nibble 0
        QCOMPARE(z[224], 31.0f * 1);
        QCOMPARE(z[240], 31.0f * 13);

        std::vector<uint8_t> mx(17, 0);
        mx[0] = 127;   // 2^0
        mx[1] = 0x97;  // element 0: nibble 7 = +6, element 16: nibble 9 = -0.5
        mx[16] = 0xC1; // element 15: nibble 1 = +0.5, element 31: nibble 12 = -2
        dequantizeRow(TensorType::MXFP4, mx.data(), y.data(), 32);
        QCOMPARE(y[0], 6.0f);
        QCOMPARE(y[16], -0.5f);
        QCOMPARE(y[15], 0.5f);
        QCOMPARE(y[31], -2.0f);
        mx[0] = 130;  // 2^3
        dequantizeRow(TensorType::MXFP4, mx.data(), y.data(), 32);
        QCOMPARE(y[0], 48.0f);
        mx[0] = 0;  // 2^-127: a subnormal scale
        dequantizeRow(TensorType::MXFP4, mx.data(), y.data(), 32);
        QCOMPARE(y[0], std::ldexp(6.0f, -127));
    }

    void quantizeRowsValidates() {
        std::vector<float> x(64, 1.0f);
        std::vector<uint8_t> out(1024);
        auto bad = quantizeRows(TensorType::Q4_K, x.data(), out.data(), 1, 64);
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().message.find("256") != std::string::npos);
        auto none = quantizeRows(TensorType::IQ2_XS, x.data(), out.data(), 1, 256);
        QVERIFY(!none.ok());
        QVERIFY(quantizeRows(TensorType::Q8_0, x.data(), out.data(), 2, 32).ok());
        std::vector<float> y(32);
        dequantizeRow(TensorType::Q8_0, out.data() + 34, y.data(), 32);
        QVERIFY(std::fabs(y[5] - 1.0f) < 1e-3f);  // 127 * f16(1/127)
    }
};

QTEST_GUILESS_MAIN(TestQuant)
#include "test_quant.moc"
