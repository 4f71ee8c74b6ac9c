// Model card against llama.cpp's own figures: n_params, n_vocab and shape fields of every fixture
// model must equal what the reference JSON (made with llama.cpp) records.
#include "fixtures.h"
#include "gguf/gguf_file.h"
#include "verdict/engine/model_card.h"

#include <QtTest/QtTest>

#include <fstream>
#include <nlohmann/json.hpp>

using namespace verdict;

class TestModelCard : public QObject {
    Q_OBJECT
private slots:
    void matchesLlamaCpp_data() {
        QTest::addColumn<QString>("stem");
        const auto refDir = verdict::test::fixture("reference");
        if (!std::filesystem::exists(refDir)) {
            QTest::newRow("fixtures-missing") << QString();
            return;
        }
        std::vector<std::string> stems;
        for (const auto& e : std::filesystem::directory_iterator(refDir))
            if (e.path().extension() == ".json") stems.push_back(e.path().stem().string());
        std::sort(stems.begin(), stems.end());
        for (const auto& s : stems) QTest::newRow(s.c_str()) << QString::fromStdString(s);
    }
    void matchesLlamaCpp() {
        QFETCH(QString, stem);
        VERDICT_NEED_FIXTURE(verdict::test::fixture("reference"));
        const auto ref = verdict::test::fixture("reference/" + stem.toStdString() + ".json");
        const auto model = verdict::test::fixture("models/" + stem.toStdString() + ".gguf");
        std::ifstream in(ref);
        nlohmann::json j = nlohmann::json::parse(in);
        const auto& m = j["metadata"];
        auto card = describeModelFile(model.string(), 256);
        QVERIFY2(card.ok(), card.ok() ? "" : card.error().message.c_str());
        QCOMPARE(card->arch, m["arch"].get<std::string>());
        QCOMPARE(card->nParams, m["n_params"].get<uint64_t>());
        QCOMPARE(card->memoryTrained.weightsBytes, m["model_size_bytes"].get<uint64_t>());
        QCOMPARE(uint64_t(card->nVocab), m["n_vocab"].get<uint64_t>());
        QCOMPARE(card->nCtxTrain, m["n_ctx_train"].get<uint64_t>());
        QCOMPARE(uint64_t(card->nEmbd), m["n_embd"].get<uint64_t>());
        QCOMPARE(uint64_t(card->nLayer), m["n_layer"].get<uint64_t>());
        QCOMPARE(uint64_t(card->nHead), m["n_head"].get<uint64_t>());
        QCOMPARE(uint64_t(card->nHeadKv), m["n_head_kv"].get<uint64_t>());
        QVERIFY(card->nParamsActive <= card->nParams);
        QVERIFY(card->memoryAtCtx.has_value());
        QCOMPARE(card->memoryAtCtx->kvBytesAtCtx, card->memoryAtCtx->kvBytesPerToken * 256);
    }

    // Mixtral-style MoE: 4 experts, 2 used -> half of the routed-expert weights are active.
    void moeActiveParams() {
        const auto model = verdict::test::fixture("models/synth-llama-moe-f16.gguf");
        VERDICT_NEED_FIXTURE(model);
        auto f = gguf::GgufFile::open(model.string());
        QVERIFY(f.ok());
        uint64_t routed = 0;
        for (const auto& t : (*f)->tensors())
            if (t.name.find("_exps.") != std::string::npos) routed += t.nElements;
        QVERIFY(routed > 0);
        auto card = describeModel(**f);
        QVERIFY(card.ok());
        QCOMPARE(card->nExpert, 4u);
        QCOMPARE(card->nExpertUsed, 2u);
        QCOMPARE(card->nParamsActive, card->nParams - routed / 2);
    }

    // Llama GQA: K+V per token = n_layer * n_head_kv * (head_k + head_v) * 2 bytes (f16).
    void kvPerToken() {
        const auto model = verdict::test::fixture("models/synth-llama-f16.gguf");
        VERDICT_NEED_FIXTURE(model);
        auto card = describeModelFile(model.string());
        QVERIFY(card.ok());
        QCOMPARE(card->memoryTrained.kvBytesPerToken, uint64_t(4) * 4 * (32 + 32) * 2);
        QCOMPARE(card->memoryTrained.ctx, uint64_t(512));
    }

    // MLA caches the latent (kv_lora_rank) plus the RoPE key per token and layer.
    void mlaKvPerToken() {
        const auto model = verdict::test::fixture("models/synth-deepseek2-f16.gguf");
        VERDICT_NEED_FIXTURE(model);
        auto card = describeModelFile(model.string());
        QVERIFY(card.ok());
        QCOMPARE(card->kvLoraRank, 256u);
        QCOMPARE(card->memoryTrained.kvBytesPerToken, uint64_t(4) * (256 + 16) * 2);
    }
};

QTEST_GUILESS_MAIN(TestModelCard)
#include "test_model_card.moc"
