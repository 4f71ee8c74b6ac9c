// Golden checks of the reference formats against llama.cpp's own files: the synth-llama fixtures
// are one F32 master quantized by llama-quantize (--pure, no imatrix, i.e. ggml's reference
// quantizers) to each type. Dequantizing a tensor must land within that type's error of the
// master, and quantizing the master's tensor must reproduce llama-quantize's bytes exactly.
#include "fixtures.h"
#include "gguf/gguf_file.h"
#include "tensor/quantize.h"
#include "tensor/tensor_type.h"

#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

using namespace verdict;
using namespace verdict::tensor;

namespace {

struct GoldenCase {
    const char* file;  // models/synth-llama-<file>.gguf
    TensorType type;
    double maxRelRmse;  // vs the F32 master (weights ~ N(0, 0.02))
};

std::unique_ptr<gguf::GgufFile> openFixture(const std::string& rel) {
    auto f = gguf::GgufFile::open(verdict::test::fixture(rel).string());
    if (!f.ok()) qWarning("%s", f.error().message.c_str());
    return f.ok() ? std::move(f.value()) : nullptr;
}

}  // namespace

Q_DECLARE_METATYPE(GoldenCase)

class TestQuantGolden : public QObject {
    Q_OBJECT

private slots:
    void matchesLlamaQuantize_data() {
        QTest::addColumn<GoldenCase>("c");
        const GoldenCase cases[] = {
            {"f16", TensorType::F16, 4e-4},    {"bf16", TensorType::BF16, 3e-3},
            {"q8_0", TensorType::Q8_0, 0.01},  {"q6_k", TensorType::Q6_K, 0.03},
            {"q5_1", TensorType::Q5_1, 0.06},  {"q5_0", TensorType::Q5_0, 0.06},
            {"q5_k", TensorType::Q5_K, 0.06},  {"q4_1", TensorType::Q4_1, 0.12},
            {"q4_0", TensorType::Q4_0, 0.12},  {"q4_k", TensorType::Q4_K, 0.11},
            {"q3_k", TensorType::Q3_K, 0.22},  {"q2_k", TensorType::Q2_K, 0.45},
        };
        for (const auto& c : cases) QTest::addRow("%s", c.file) << c;
    }

    void matchesLlamaQuantize() {
        QFETCH(GoldenCase, c);
        const std::string masterPath = "models/synth-llama-f32.gguf";
        const std::string quantPath = std::string("models/synth-llama-") + c.file + ".gguf";
        VERDICT_NEED_FIXTURE(verdict::test::fixture(masterPath));
        VERDICT_NEED_FIXTURE(verdict::test::fixture(quantPath));
        auto master = openFixture(masterPath);
        auto quant = openFixture(quantPath);
        QVERIFY(master && quant);

        int checked = 0;
        for (const auto& tq : quant->tensors()) {
            if (tq.type != c.type) continue;  // 1-D norms stay F32
            const auto* tf = master->tensor(tq.name);
            QVERIFY2(tf && tf->type == TensorType::F32, tq.name.c_str());
            QCOMPARE(tf->nElements, tq.nElements);
            const int64_t n0 = static_cast<int64_t>(tq.ne[0]);
            const int64_t rows = static_cast<int64_t>(tq.rows());
            const uint64_t rb = *rowBytes(c.type, static_cast<uint64_t>(n0));
            QCOMPARE(tq.nBytes, rb * static_cast<uint64_t>(rows));
            const auto* src = reinterpret_cast<const float*>(tf->data);

            std::vector<uint8_t> mine(tq.nBytes);
            QVERIFY(quantizeRows(c.type, src, mine.data(), rows, n0).ok());
            if (std::memcmp(mine.data(), tq.data, tq.nBytes) != 0) {
                size_t first = 0;
                while (mine[first] == tq.data[first]) ++first;
                QFAIL(qPrintable(QString("%1: bytes differ from llama-quantize's, first at offset %2 (row %3)")
                                     .arg(tq.name.c_str()).arg(first).arg(first / rb)));
            }

            std::vector<float> deq(static_cast<size_t>(n0));
            double se = 0, ss = 0;
            for (int64_t r = 0; r < rows; ++r) {
                dequantizeRow(c.type, tq.data + r * rb, deq.data(), n0);
                for (int64_t i = 0; i < n0; ++i) {
                    const double x = src[r * n0 + i], d = deq[static_cast<size_t>(i)] - x;
                    se += d * d;
                    ss += x * x;
                }
            }
            const double rel = std::sqrt(se / ss);
            if (!(rel <= c.maxRelRmse && rel > 0))
                QFAIL(qPrintable(QString("%1: relative rmse %2 outside (0, %3]").arg(tq.name.c_str()).arg(rel).arg(c.maxRelRmse)));
            ++checked;
        }
        QVERIFY(checked >= 28);  // 4 layers x 7 matrices + token_embd + output
    }
};

QTEST_GUILESS_MAIN(TestQuantGolden)
#include "test_quant_golden.moc"
