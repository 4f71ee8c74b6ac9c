// Reference formats: f16 / bf16 conversion exactness on special values, and quantize ->
// dequantize round trips of every block format within the error its bit width allows.
#include "tensor/block_formats.h"
#include "tensor/half.h"
#include "tensor/quantize.h"
#include "tensor/tensor_type.h"

#include <QtTest/QtTest>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
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
Q_DECLARE_METATYPE(verdict::tensor::TensorType)

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
            // Verdict's own quantizers (measured 0.075, 0.075, 0.112 on this data)
            {TensorType::IQ4_NL, 0.09},  {TensorType::IQ4_XS, 0.09},  {TensorType::MXFP4, 0.13},
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

    // IQ4_NL and MXFP4 values that are exactly on the grid (x = d * level with d an f16 / a power of
    // two, f16 subnormals included) come back bit for bit, whatever levels a block uses and whichever
    // sign its scale has.
    void nonLinearQuantizersRoundTripGridValues() {
        std::mt19937 rng(7);
        std::uniform_int_distribution<int> level(0, 15);
        std::vector<float> x(32 * 64), y(x.size());
        for (size_t b = 0; b < x.size() / 32; ++b) {
            const float d0 = std::ldexp(b % 2 ? -1.0f : 1.0f, int(b % 30) - 20) * (1.0f + float(b) / 97);
            const float d = fp16ToFp32(fp32ToFp16(d0));
            for (size_t j = 0; j < 32; ++j) x[32 * b + j] = d * static_cast<float>(kIQ4NLValues[level(rng)]);
        }
        std::vector<uint8_t> q(*rowBytes(TensorType::IQ4_NL, x.size()));
        quantizeRow(TensorType::IQ4_NL, x.data(), q.data(), int64_t(x.size()));
        dequantizeRow(TensorType::IQ4_NL, q.data(), y.data(), int64_t(x.size()));
        for (size_t i = 0; i < x.size(); ++i) QCOMPARE(y[i], x[i]);

        for (size_t b = 0; b < x.size() / 32; ++b) {
            const uint8_t e = std::array<uint8_t, 6>{0, 1, 60, 127, 130, 250}[b % 6];
            for (size_t j = 0; j < 32; ++j)
                x[32 * b + j] = mxfp4HalfScale(e) * static_cast<float>(kMXFP4Values[level(rng)]);
        }
        q.assign(*rowBytes(TensorType::MXFP4, x.size()), 0);
        quantizeRow(TensorType::MXFP4, x.data(), q.data(), int64_t(x.size()));
        dequantizeRow(TensorType::MXFP4, q.data(), y.data(), int64_t(x.size()));
        for (size_t i = 0; i < x.size(); ++i) QCOMPARE(y[i], x[i]);
    }

    void nonLinearQuantizersHostileBlocks_data() {
        QTest::addColumn<TensorType>("type");
        for (TensorType t : {TensorType::IQ4_NL, TensorType::IQ4_XS, TensorType::MXFP4})
            QTest::addRow("%s", std::string(typeName(t)).c_str()) << t;
    }
    // One huge outlier per super-block, tiny and huge magnitudes: every output finite (a scale beyond
    // the f16 range must not decode to inf or NaN), zeros stay zero, and a moderate outlier survives.
    void nonLinearQuantizersHostileBlocks() {
        QFETCH(TensorType, type);
        std::mt19937 rng(3);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        for (float magnitude : {1e-30f, 1e-6f, 1.0f, 1e4f, 1e30f}) {
            std::vector<float> x(256 * 4), y(x.size());
            for (auto& v : x) v = magnitude * nd(rng);
            x[7] = 1000.0f * magnitude;
            std::fill(x.begin() + 256, x.begin() + 512, 0.0f);  // an all-zero super-block
            std::vector<uint8_t> q(*rowBytes(type, x.size()));
            quantizeRow(type, x.data(), q.data(), int64_t(x.size()));
            dequantizeRow(type, q.data(), y.data(), int64_t(x.size()));
            for (float v : y) QVERIFY2(std::isfinite(v), qPrintable(QString("magnitude %1").arg(magnitude)));
            for (size_t i = 256; i < 512; ++i) QCOMPARE(y[i], 0.0f);
            if (magnitude == 1.0f) QVERIFY2(std::fabs(y[7] - x[7]) < 0.1f * x[7], qPrintable(QString::number(y[7])));
        }
    }

    // The round-trip bounds are tight enough to catch a wrong scale: the same indices under a scale
    // 25 % off (one E8M0 step for MXFP4) exceed them.
    void nonLinearQuantizersWrongScaleFails() {
        const int64_t n = 256 * 64;
        std::mt19937 rng(42);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        std::vector<float> x(n), y(n);
        for (auto& v : x) v = nd(rng);
        auto relRmse = [&](TensorType t, const std::vector<uint8_t>& q) {
            dequantizeRow(t, q.data(), y.data(), n);
            double se = 0, ss = 0;
            for (int64_t i = 0; i < n; ++i) {
                se += (x[i] - y[i]) * double(x[i] - y[i]);
                ss += x[i] * double(x[i]);
            }
            return std::sqrt(se / ss);
        };
        const struct { TensorType type; double bound; size_t blockBytes; } cases[] = {
            {TensorType::IQ4_NL, 0.09, 18}, {TensorType::IQ4_XS, 0.09, 136}, {TensorType::MXFP4, 0.13, 17}};
        for (const auto& c : cases) {
            std::vector<uint8_t> q(*rowBytes(c.type, n));
            quantizeRow(c.type, x.data(), q.data(), n);
            QVERIFY(relRmse(c.type, q) < c.bound);
            for (size_t b = 0; b < q.size(); b += c.blockBytes) {
                if (c.type == TensorType::MXFP4) {
                    ++q[b];
                    continue;
                }
                uint16_t h;
                std::memcpy(&h, q.data() + b, 2);
                h = fp32ToFp16(1.25f * fp16ToFp32(h));
                std::memcpy(q.data() + b, &h, 2);
            }
            const double wrong = relRmse(c.type, q);
            const QString what = QString::fromLatin1(typeName(c.type).data());
            QVERIFY2(wrong > c.bound, qPrintable(QString("%1: %2").arg(what).arg(wrong)));
        }
    }

    // A row must be whole blocks (32 for IQ4_NL / MXFP4, 256 for IQ4_XS): no partial last block.
    void nonLinearQuantizersNeedWholeBlocks() {
        std::vector<float> x(512, 1.0f);
        std::vector<uint8_t> out(1024);
        for (auto [t, len, block] : {std::tuple{TensorType::IQ4_NL, 48, "32"}, {TensorType::MXFP4, 40, "32"},
                                     {TensorType::IQ4_XS, 288, "256"}}) {
            auto r = quantizeRows(t, x.data(), out.data(), 1, len);
            QVERIFY(!r.ok());
            QVERIFY2(r.error().message.find(block) != std::string::npos, r.error().message.c_str());
        }
        QVERIFY(quantizeRows(TensorType::IQ4_XS, x.data(), out.data(), 2, 256).ok());
    }

    // The lattice i-quants and ternary formats, hand-computed from the layouts of block_formats.h
    // and grid entries of ggml-common.h written out here (iq2xxs_grid[1] = 0x080808080808082b:
    // element 0 is 43, the others 8; iq3xxs_grid[255] = 0x3e341c04; iq3s_grid[511] = 0x0f0f0101;
    // iq1s_grid[0] all -1, [1] = +1 then -1s, [2047] all +1; the last entry of iq2xs / iq2s all 43).
    void latticeFormatsDequantize() {
        for (TensorType t : {TensorType::IQ2_XXS, TensorType::IQ2_XS, TensorType::IQ2_S, TensorType::IQ3_XXS,
                             TensorType::IQ3_S, TensorType::IQ1_S, TensorType::IQ1_M, TensorType::TQ1_0,
                             TensorType::TQ2_0})
            QVERIFY2(canDequantize(t) && !canQuantize(t), std::string(typeName(t)).c_str());
        auto put16 = [](std::vector<uint8_t>& b, size_t at, uint16_t v) { std::memcpy(b.data() + at, &v, 2); };
        auto put32 = [](std::vector<uint8_t>& b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); };
        std::vector<float> y(256);

        // IQ2_XXS: d 1; sub-block 0 indices 0, 1, 255, 2, sign indices 1 (0x81: elements 0 and 7
        // negative), 0, 0, 3 (elements 0, 1), scale 3 -> 7/8; sub-block 7: index 1, scale 0 -> 1/8.
        std::vector<uint8_t> xxs(66, 0);
        put16(xxs, 0, 0x3C00);
        xxs[2] = 0; xxs[3] = 1; xxs[4] = 255; xxs[5] = 2;
        put32(xxs, 6, 1u | (3u << 21) | (3u << 28));
        xxs[2 + 56] = 1;
        dequantizeRow(TensorType::IQ2_XXS, xxs.data(), y.data(), 256);
        QCOMPARE(y[0], -7.0f);
        QCOMPARE(y[1], 7.0f);
        QCOMPARE(y[7], -7.0f);
        QCOMPARE(y[8], 0.875f * 43);        // iq2xxs_grid[1], element 0
        QCOMPARE(y[17], 0.875f * 25);       // iq2xxs_grid[255] = 0x2b2b2b1908081908: element 1 is 0x19
        QCOMPARE(y[21], 0.875f * 43);       // element 5 is 0x2b
        QCOMPARE(y[24], -0.875f * 25);      // iq2xxs_grid[2] = 0x0808080808081919, signs 0x03
        QCOMPARE(y[25], -0.875f * 25);
        QCOMPARE(y[26], 7.0f);
        QCOMPARE(y[224], 0.125f * 43);
        QCOMPARE(y[225], 1.0f);

        // IQ2_XS: d 0.5; qs[0] = index 1, sign index 1; qs[2] = index 511 (all 43); scales 0x21:
        // elements 0-15 x 3/8, 16-31 x 5/8.
        std::vector<uint8_t> xs(74, 0);
        put16(xs, 0, 0x3800);
        put16(xs, 2, 1 | (1 << 9));
        put16(xs, 6, 511);
        xs[66] = 0x21;
        dequantizeRow(TensorType::IQ2_XS, xs.data(), y.data(), 256);
        QCOMPARE(y[0], -0.5f * 3 / 8 * 43);
        QCOMPARE(y[1], 1.5f);
        QCOMPARE(y[7], -1.5f);
        QCOMPARE(y[16], 0.5f * 5 / 8 * 43);
        QCOMPARE(y[31], 0.5f * 5 / 8 * 8);  // qs[3] = 0: iq2xs_grid[0], all 8

        // IQ2_S: d 1; group 0 index 0xFF | 3 << 8 = 1023 (all 43), signs 0x05; group 2 index 1,
        // signs 0x80; scales 0x10: elements 0-15 x 1/8, 16-31 x 3/8.
        std::vector<uint8_t> s2(82, 0);
        put16(s2, 0, 0x3C00);
        s2[2] = 0xFF;
        s2[4] = 1;
        s2[2 + 32] = 0x05;
        s2[2 + 34] = 0x80;
        s2[66] = 0x03;  // qh[0]: bits 0-1 = index bits 8-9 of group 0
        s2[74] = 0x10;
        dequantizeRow(TensorType::IQ2_S, s2.data(), y.data(), 256);
        QCOMPARE(y[0], -43.0f / 8);
        QCOMPARE(y[1], 43.0f / 8);
        QCOMPARE(y[2], -43.0f / 8);
        QCOMPARE(y[8], 1.0f);  // group 1: index 0
        QCOMPARE(y[16], 3.0f * 43 / 8);
        QCOMPARE(y[17], 3.0f);
        QCOMPARE(y[23], -3.0f);

        // IQ3_XXS: d 1; sub-block 0 indices 0 (all 4) and 255 (4, 28, 52, 62), sign index 0x41
        // (elements 0 and 6 negative), scale 1 -> 3/4.
        std::vector<uint8_t> x3(98, 0);
        put16(x3, 0, 0x3C00);
        x3[3] = 255;
        put32(x3, 2 + 64, 0x41u | (1u << 28));
        dequantizeRow(TensorType::IQ3_XXS, x3.data(), y.data(), 256);
        QCOMPARE(y[0], -3.0f);
        QCOMPARE(y[1], 3.0f);
        QCOMPARE(y[4], 3.0f);
        QCOMPARE(y[5], 0.75f * 28);
        QCOMPARE(y[6], -0.75f * 52);
        QCOMPARE(y[7], 0.75f * 62);
        QCOMPARE(y[8], 0.75f * 4);

        // IQ3_S: d 0.5; sub-block 1: index 0xFF | 1 << 8 = 511 (1, 1, 15, 15), then index 0 (all 1),
        // signs 0x12 (elements 1 and 4), scale 2 -> 5; sub-block 0: scale 0 -> 1.
        std::vector<uint8_t> x3s(110, 0);
        put16(x3s, 0, 0x3800);
        x3s[2 + 8] = 0xFF;
        x3s[66 + 1] = 0x01;       // qh[1]
        x3s[74 + 4] = 0x12;       // signs[4]
        x3s[106] = 0x20;          // scales[0]: sub-block 0 low nibble 0, sub-block 1 high nibble 2
        dequantizeRow(TensorType::IQ3_S, x3s.data(), y.data(), 256);
        QCOMPARE(y[0], 0.5f);
        QCOMPARE(y[32], 2.5f);
        QCOMPARE(y[33], -2.5f);
        QCOMPARE(y[34], 37.5f);
        QCOMPARE(y[35], 37.5f);
        QCOMPARE(y[36], -2.5f);
        QCOMPARE(y[37], 2.5f);

        // IQ1_S: d 0.25; sub-block 0: scale 7 -> 15, delta -1/8, group 0 index 0 (all -1), group 1
        // index 0xFF | 7 << 8 = 2047 (all +1); sub-block 1: scale 0 -> 1, delta +1/8, index 1.
        std::vector<uint8_t> x1(50, 0);
        put16(x1, 0, 0x3400);
        x1[3] = 0xFF;
        x1[2 + 4] = 1;
        put16(x1, 34, static_cast<uint16_t>(0x8000 | (7 << 12) | (7 << 3)));
        dequantizeRow(TensorType::IQ1_S, x1.data(), y.data(), 256);
        QCOMPARE(y[0], 3.75f * -1.125f);
        QCOMPARE(y[8], 3.75f * 0.875f);
        QCOMPARE(y[32], 0.25f * 1.125f);
        QCOMPARE(y[33], 0.25f * -0.875f);

        // IQ1_M: no d field; d = f16 0x3800 (0.5) in the top nibbles of the scale words (0, 0, 8, 3);
        // word 0: sub-block 0 halves 2 -> 5 and 1 -> 3, sub-block 1 halves 0 -> 1 and 7 -> 15.
        // qh[0] = 0x0F: group 0 index bits 7 and delta -, group 1 delta +; qh[1] = 0x80: group 3 delta -.
        std::vector<uint8_t> x1m(56, 0);
        x1m[0] = 0xFF;  // group 0: index 2047
        x1m[2] = 1;     // group 2: index 1
        x1m[32] = 0x0F;
        x1m[33] = 0x80;
        put16(x1m, 48, static_cast<uint16_t>(2 | (1 << 3) | (7 << 9)));
        put16(x1m, 52, 0x8000);
        put16(x1m, 54, 0x3000);
        dequantizeRow(TensorType::IQ1_M, x1m.data(), y.data(), 256);
        QCOMPARE(y[0], 2.5f * 0.875f);
        QCOMPARE(y[8], 2.5f * -0.875f);
        QCOMPARE(y[16], 1.5f * 1.125f);
        QCOMPARE(y[17], 1.5f * -0.875f);
        QCOMPARE(y[24], 1.5f * -1.125f);
        QCOMPARE(y[32], 0.5f * -0.875f);
        QCOMPARE(y[48], 7.5f * -0.875f);

        // TQ2_0: d 2 at the end; 0x55 = all trits 0; qs[0] = 0x92: elements 0, 32, 64, 96 = +1, -1,
        // 0, +1; qs[33] = 0x59: element 161 = +1.
        std::vector<uint8_t> t2(66, 0x55);
        put16(t2, 64, 0x4000);
        t2[0] = 0x92;
        t2[33] = 0x59;
        dequantizeRow(TensorType::TQ2_0, t2.data(), y.data(), 256);
        QCOMPARE(y[0], 2.0f);
        QCOMPARE(y[32], -2.0f);
        QCOMPARE(y[64], 0.0f);
        QCOMPARE(y[96], 2.0f);
        QCOMPARE(y[129], 0.0f);
        QCOMPARE(y[161], 2.0f);
        QCOMPARE(y[1], 0.0f);

        // TQ1_0: d -0.5 at the end. A byte holds ceil(v * 256 / 243) for v = sum of (t_n + 1) 3^(4-n):
        // trits (+1, -1, 0, +1, 0) -> v 178 -> 188; all 0 -> 121 -> 128; qh's four trits (+1, +1, -1, 0)
        // -> v 219 -> 231, four 0 -> 120 -> 127.
        std::vector<uint8_t> t1(54, 128);
        for (int j = 48; j < 52; ++j) t1[j] = 127;
        put16(t1, 52, 0xB800);
        t1[0] = 188;       // elements 0, 32, 64, 96, 128
        t1[32 + 5] = 188;  // elements 165, 181, 197, 213, 229
        t1[48 + 2] = 231;  // elements 242, 246, 250, 254
        dequantizeRow(TensorType::TQ1_0, t1.data(), y.data(), 256);
        const int trits[][2] = {{0, 1}, {32, -1}, {64, 0}, {96, 1}, {128, 0}, {165, 1}, {181, -1}, {197, 0},
                                {213, 1}, {229, 0}, {242, 1}, {246, 1}, {250, -1}, {254, 0}, {1, 0}, {255, 0}};
        for (const auto& [e, t] : trits) QCOMPARE(y[e], -0.5f * static_cast<float>(t));
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
