// make-model: shapes and metadata as asked, deterministic per seed, every writable type, llama.cpp's
// K-quant mixes tensor by tensor, and clear errors for impossible specs.
#include "fixtures.h"
#include "gguf/gguf_file.h"
#include "verdict/engine/model_card.h"
#include "verdict/engine/synthetic_model.h"

#include <QtTest/QtTest>

#include <fstream>
#include <iterator>

using namespace verdict;

namespace {
std::string tmp(const std::string& name) {
    return QDir::temp().filePath(QString("verdict-synth-%1-").arg(QCoreApplication::applicationPid())).toStdString() + name;
}
std::vector<char> bytesOf(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}
}  // namespace

class TestSyntheticModel : public QObject {
    Q_OBJECT
private slots:
    void everyType_data() {
        QTest::addColumn<QString>("type");
        for (const char* t : {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k",
                              "q6_k", "iq4_nl", "iq4_xs", "mxfp4"})
            QTest::newRow(t) << QString(t);
    }
    void everyType() {
        QFETCH(QString, type);
        SyntheticModelSpec s;
        s.type = type.toStdString();
        s.nEmbd = 256;
        s.nLayer = 2;
        s.nFf = 512;
        const std::string path = tmp("t.gguf");
        auto r = writeSyntheticModel(s, path);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        auto f = gguf::GgufFile::open(path);
        QVERIFY(f.ok());
        const auto* q = (*f)->tensor("blk.1.attn_q.weight");
        QVERIFY(q);
        QCOMPARE(std::string(tensor::typeName(q->type)), std::string(tensor::typeName(*tensor::typeFromName(s.type))));
        QCOMPARE((*f)->tensor("blk.0.attn_norm.weight")->type, tensor::TensorType::F32);
        auto card = describeModel(**f);
        QVERIFY(card.ok());
        // llama: embd + output = 2 * V * E; per layer: q, o = E*E, k, v = E*kv, 3 FFN = 3*E*F, 2 norms.
        const uint64_t E = 256, V = 512, F = 512, KV = 256 / 8 * 4;
        const uint64_t expected = 2 * V * E + E + 2 * (2 * E * E + 2 * E * KV + 3 * E * F + 2 * E);
        QCOMPARE(card->nParams, expected);
        QCOMPARE(card->nVocab, 512u);
        QCOMPARE(card->tokenizerModel, std::string("llama"));
        std::remove(path.c_str());
    }

    // q4_k_m / q5_k_m reproduce llama-quantize's per-tensor types: a model of the fixture's shape
    // (read from its metadata) has every tensor in the fixture's type, and the same file_type.
    void kQuantMixMatchesLlamaQuantize_data() {
        QTest::addColumn<QString>("type");
        QTest::newRow("q4_k_m") << "q4_k_m";
        QTest::newRow("q5_k_m") << "q5_k_m";
    }
    void kQuantMixMatchesLlamaQuantize() {
        QFETCH(QString, type);
        const auto fixturePath = verdict::test::fixture("v0.5.0/models/synth-llama-" + type.toStdString() + ".gguf");
        VERDICT_NEED_FIXTURE(fixturePath);
        auto ref = gguf::GgufFile::open(fixturePath.string());
        QVERIFY(ref.ok());
        const gguf::GgufFile& r = **ref;
        auto u32 = [&r](const char* key) { return static_cast<uint32_t>(r.getUInt(key).value_or(0)); };
        SyntheticModelSpec s;
        s.type = type.toStdString();
        s.nEmbd = u32("llama.embedding_length");
        s.nLayer = u32("llama.block_count");
        s.nFf = u32("llama.feed_forward_length");
        s.nHead = u32("llama.attention.head_count");
        s.nHeadKv = u32("llama.attention.head_count_kv");
        s.nVocab = u32("llama.vocab_size");
        s.nCtx = u32("llama.context_length");
        s.tiedOutput = r.tensor("output.weight") == nullptr;
        const std::string path = tmp("mix.gguf");
        auto w = writeSyntheticModel(s, path);
        QVERIFY2(w.ok(), w.ok() ? "" : w.error().message.c_str());
        auto f = gguf::GgufFile::open(path);
        QVERIFY(f.ok());
        QCOMPARE((*f)->tensors().size(), r.tensors().size());
        for (const auto& t : r.tensors()) {
            const auto* mine = (*f)->tensor(t.name);
            QVERIFY2(mine, t.name.c_str());
            const QString what = QString("%1: %2, llama-quantize %3")
                                     .arg(QString::fromStdString(t.name))
                                     .arg(QString::fromLatin1(tensor::typeName(mine->type).data()))
                                     .arg(QString::fromLatin1(tensor::typeName(t.type).data()));
            QVERIFY2(mine->type == t.type, qPrintable(what));
            QVERIFY2(mine->ne == t.ne, t.name.c_str());
        }
        QCOMPARE((*f)->getUInt("general.file_type").value_or(0), r.getUInt("general.file_type").value_or(1));
        std::remove(path.c_str());
    }

    // Without output.weight llama.cpp gives the tied token_embd the output projection's Q6_K.
    void kQuantMixTiedEmbedding() {
        SyntheticModelSpec s;
        s.type = "q4_k_m";
        s.nLayer = 1;
        s.tiedOutput = true;
        const std::string path = tmp("tied.gguf");
        QVERIFY(writeSyntheticModel(s, path).ok());
        auto f = gguf::GgufFile::open(path);
        QVERIFY(f.ok());
        QCOMPARE((*f)->tensor("token_embd.weight")->type, tensor::TensorType::Q6_K);
        QCOMPARE((*f)->tensor("blk.0.attn_q.weight")->type, tensor::TensorType::Q4_K);
        QCOMPARE((*f)->tensor("blk.0.attn_v.weight")->type, tensor::TensorType::Q6_K);  // layer 0 of 1: i >= 7n/8
        std::remove(path.c_str());
    }

    void deterministicPerSeed() {
        SyntheticModelSpec s;
        s.nLayer = 1;
        s.type = "q4_0";
        const std::string a = tmp("a.gguf"), b = tmp("b.gguf"), c = tmp("c.gguf");
        QVERIFY(writeSyntheticModel(s, a).ok());
        QVERIFY(writeSyntheticModel(s, b).ok());
        s.seed = 2;
        QVERIFY(writeSyntheticModel(s, c).ok());
        QVERIFY(bytesOf(a) == bytesOf(b));
        QVERIFY(bytesOf(a) != bytesOf(c));
        for (const auto& p : {a, b, c}) std::remove(p.c_str());
    }

    void moeAndQwen2() {
        SyntheticModelSpec s;
        s.nLayer = 2;
        s.nExpert = 4;
        s.nExpertUsed = 2;
        const std::string path = tmp("moe.gguf");
        QVERIFY(writeSyntheticModel(s, path).ok());
        auto card = describeModelFile(path);
        QVERIFY(card.ok());
        QCOMPARE(card->nExpert, 4u);
        QVERIFY(card->nParamsActive < card->nParams);
        s = {};
        s.arch = "qwen2";
        s.nLayer = 1;
        QVERIFY(writeSyntheticModel(s, path).ok());
        auto f = gguf::GgufFile::open(path);
        QVERIFY(f.ok());
        QVERIFY((*f)->tensor("blk.0.attn_k.bias"));
        QCOMPARE((*f)->getString("general.architecture").value(), std::string("qwen2"));
        std::remove(path.c_str());
    }

    void badSpecs_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("mention");
        QTest::newRow("heads") << "heads" << "does not divide";
        QTest::newRow("kv heads") << "kv" << "does not divide";
        QTest::newRow("experts") << "experts" << "exceeds";
        QTest::newRow("type") << "type" << "cannot be written";
        QTest::newRow("arch") << "arch" << "not supported";
        QTest::newRow("block") << "block" << "multiples of 256";
        QTest::newRow("row names tensor")
            << "row" << "tensor blk.0.ffn_down.weight has rows of 320 elements, not a multiple of 256";
        QTest::newRow("mix needs dense") << "mix" << "dense models only";
    }
    void badSpecs() {
        QFETCH(QString, field);
        QFETCH(QString, mention);
        SyntheticModelSpec s;
        if (field == "heads") s.nHead = 7;
        if (field == "kv") s.nHeadKv = 3;
        if (field == "experts") { s.nExpert = 2; s.nExpertUsed = 3; }
        if (field == "type") s.type = "iq2_xxs";
        if (field == "arch") s.arch = "mamba";
        if (field == "block") { s.type = "q4_k"; s.nEmbd = 320; s.nHead = 8; }
        if (field == "row") { s.type = "iq4_xs"; s.nFf = 320; }
        if (field == "mix") { s.type = "q5_k_m"; s.nExpert = 4; s.nExpertUsed = 2; }
        const std::string path = tmp("bad.gguf");
        auto r = writeSyntheticModel(s, path);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find(mention.toStdString()) != std::string::npos, r.error().message.c_str());
        QVERIFY(!QFile::exists(QString::fromStdString(path)));
    }
};

QTEST_GUILESS_MAIN(TestSyntheticModel)
#include "test_synthetic_model.moc"
