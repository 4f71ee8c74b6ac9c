// make-model: shapes and metadata as asked, deterministic per seed, every writable type, and
// clear errors for impossible specs.
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
        for (const char* t : {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"})
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
        const std::string path = tmp("bad.gguf");
        auto r = writeSyntheticModel(s, path);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find(mention.toStdString()) != std::string::npos, r.error().message.c_str());
        QVERIFY(!QFile::exists(QString::fromStdString(path)));
    }
};

QTEST_GUILESS_MAIN(TestSyntheticModel)
#include "test_synthetic_model.moc"
