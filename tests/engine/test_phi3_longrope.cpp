// phi3 LongRoPE: the fixture synth-phi3-f16 has no rope factors, so this test writes variants of it
// with rope_factors_short / rope_factors_long tensors and rope.scaling keys, and checks the rule
// llama.cpp follows (build_rope_factors): a session whose context exceeds
// rope.scaling.original_context_length uses the long factors, any other the short ones; and that
// rope.scaling.attn_factor scales the rotation (changes the logits).
#include "fixtures.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "verdict/engine/batch.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <QtTest/QtTest>
#include <QTemporaryDir>

#include <cmath>
#include <optional>
#include <vector>

using namespace verdict;

namespace {

constexpr int kPairs = 16;       // rope dims 32 / 2
constexpr int64_t kOrigCtx = 64; // original context written into the variants

// The fixture with its metadata and tensors copied, plus optional LongRoPE tensors and keys.
Result<void> writeVariant(const gguf::GgufFile& src, const std::string& path, const std::vector<float>* shortF,
                          const std::vector<float>* longF, std::optional<float> attnFactor) {
    gguf::GgufWriter w;
    for (const auto& [key, value] : src.metadata()) w.set(key, value);
    if (shortF) w.set("phi3.rope.scaling.original_context_length", gguf::Value::u32(kOrigCtx));
    if (attnFactor) w.set("phi3.rope.scaling.attn_factor", gguf::Value::f32(*attnFactor));
    for (const auto& t : src.tensors())
        w.addTensor(t.name, t.type, std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.nDims), t.data, t.nBytes);
    if (shortF) w.addTensor("rope_factors_short.weight", tensor::TensorType::F32, {kPairs}, shortF->data(), kPairs * 4);
    if (longF) w.addTensor("rope_factors_long.weight", tensor::TensorType::F32, {kPairs}, longF->data(), kPairs * 4);
    return w.write(path);
}

// Logits of the last position of a fixed 12-token prompt, in a session of nCtx.
std::vector<float> lastLogits(const std::string& path, int64_t nCtx) {
    auto model = Model::open(path);
    if (!model) {
        qWarning("%s", model.error().message.c_str());
        return {};
    }
    SessionOptions so;
    so.nCtx = nCtx;
    auto s = Session::create(*model, so);
    if (!s) return {};
    const std::vector<int32_t> prompt = {1, 403, 407, 261, 378, 17, 90, 311, 45, 260, 499, 7};
    auto r = (*s)->evaluate(prompt);
    if (!r) return {};
    return std::vector<float>(r->last().begin(), r->last().end());
}

double maxDiff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.empty() || a.size() != b.size()) return INFINITY;
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
    return m;
}

}  // namespace

class TestPhi3LongRope : public QObject {
    Q_OBJECT
private slots:
    void factorChoiceFollowsContext() {
        const auto fixturePath = verdict::test::fixture("models/synth-phi3-f16.gguf");
        VERDICT_NEED_FIXTURE(fixturePath);
        auto src = gguf::GgufFile::open(fixturePath.string());
        QVERIFY2(src.ok(), src.ok() ? "" : src.error().message.c_str());
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string d = dir.path().toStdString() + "/";

        std::vector<float> ones(kPairs, 1.0f), shortF(kPairs), longF(kPairs);
        for (int i = 0; i < kPairs; ++i) {
            shortF[static_cast<size_t>(i)] = 1.0f + 0.25f * static_cast<float>(i);  // divisors of theta
            longF[static_cast<size_t>(i)] = 3.0f + 2.0f * static_cast<float>(i);
        }
        QVERIFY(writeVariant(**src, d + "neutral.gguf", &ones, &ones, std::nullopt).ok());
        QVERIFY(writeVariant(**src, d + "both.gguf", &shortF, &longF, std::nullopt).ok());
        QVERIFY(writeVariant(**src, d + "short.gguf", &shortF, &shortF, std::nullopt).ok());
        QVERIFY(writeVariant(**src, d + "long.gguf", &longF, &longF, std::nullopt).ok());
        QVERIFY(writeVariant(**src, d + "scaled.gguf", &shortF, &longF, 1.25f).ok());
        QVERIFY(writeVariant(**src, d + "half.gguf", &shortF, nullptr, std::nullopt).ok());
        QVERIFY(!Model::open(d + "half.gguf").ok());  // one set without the other is refused

        const std::vector<float> plain = lastLogits(fixturePath.string(), 32);
        QVERIFY(!plain.empty());
        // Factors of 1 divide nothing: bit-identical to the file without factors.
        QCOMPARE(maxDiff(lastLogits(d + "neutral.gguf", 32), plain), 0.0);
        QCOMPARE(maxDiff(lastLogits(d + "neutral.gguf", 128), plain), 0.0);

        // Context 32 <= 64: short factors. Context 128 > 64: long factors.
        const auto both32 = lastLogits(d + "both.gguf", 32), both128 = lastLogits(d + "both.gguf", 128);
        QCOMPARE(maxDiff(both32, lastLogits(d + "short.gguf", 32)), 0.0);
        QCOMPARE(maxDiff(both128, lastLogits(d + "long.gguf", 128)), 0.0);
        QVERIFY(maxDiff(both32, both128) > 1e-3);
        QVERIFY(maxDiff(both32, plain) > 1e-3);
        QVERIFY(maxDiff(both128, plain) > 1e-3);
        // Exactly at the original context: still short (llama.cpp: n_ctx > orig picks long).
        QCOMPARE(maxDiff(lastLogits(d + "both.gguf", kOrigCtx), both32), 0.0);

        // attn_factor multiplies cos and sin: a different result at either context.
        QVERIFY(maxDiff(lastLogits(d + "scaled.gguf", 32), both32) > 1e-3);
        QVERIFY(maxDiff(lastLogits(d + "scaled.gguf", 128), both128) > 1e-3);

        // Batched decode of two sequences with contexts on either side of the original: each row
        // uses its own sequence's factors, so both match decoding alone.
        auto model = Model::open(d + "both.gguf");
        QVERIFY(model.ok());
        std::vector<std::unique_ptr<Session>> solo, batch;
        const std::vector<int32_t> prompt = {1, 403, 407, 261, 378, 17, 90};
        for (int64_t nCtx : {int64_t(32), int64_t(128)}) {
            SessionOptions so;
            so.nCtx = nCtx;
            for (auto* v : {&solo, &batch}) {
                auto s = Session::create(*model, so);
                QVERIFY(s.ok());
                QVERIFY((*s)->evaluate(prompt).ok());
                v->push_back(std::move(*s));
            }
        }
        const std::vector<Session*> rows = {batch[0].get(), batch[1].get()};
        const std::vector<int32_t> next = {45, 260};
        auto views = decodeBatch(rows, next);
        QVERIFY2(views.ok(), views.ok() ? "" : views.error().message.c_str());
        for (size_t i = 0; i < 2; ++i) {
            auto ref = solo[i]->evaluate(std::span<const int32_t>(&next[i], 1));
            QVERIFY(ref.ok());
            const std::vector<float> a((*views)[i].last().begin(), (*views)[i].last().end());
            const std::vector<float> b(ref->last().begin(), ref->last().end());
            QVERIFY2(maxDiff(a, b) < 1e-4, qPrintable(QString("row %1: %2").arg(i).arg(maxDiff(a, b))));
        }
    }
};

QTEST_GUILESS_MAIN(TestPhi3LongRope)
#include "test_phi3_longrope.moc"
