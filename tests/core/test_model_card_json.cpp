// The `verdict info --json` shape is a contract (docs/cli.md): every documented key is present
// with the right JSON type.
#include "core/models/model_card_json.h"
#include "fixtures.h"

#include <QtTest/QtTest>

using namespace verdict;

class TestModelCardJson : public QObject {
    Q_OBJECT
private slots:
    void stableShape() {
        const auto model = verdict::test::fixture("models/synth-llama-moe-q8_0.gguf");
        VERDICT_NEED_FIXTURE(model);
        auto card = describeModelFile(model.string(), 1024);
        QVERIFY(card.ok());
        auto j = core::modelCardToJson(*card);
        for (const char* k : {"n_params", "n_params_active", "n_layer", "n_embd", "n_head", "n_head_kv", "n_ctx_train",
                              "n_vocab", "file_bytes"})
            QVERIFY2(j.contains(k) && j[k].is_number_unsigned(), k);
        for (const char* k : {"arch", "name", "tokenizer_model", "tokenizer_pre"}) QVERIFY2(j.contains(k) && j[k].is_string(), k);
        QVERIFY(j["chat_template"].is_object());
        QVERIFY(j["tensor_types"].is_object());
        QVERIFY(j["tensor_types"].contains("q8_0"));
        QVERIFY(j["bpw"].is_number_float());
        for (const char* k : {"weights_bytes", "kv_bytes_per_token", "kv_bytes_at_ctx", "ctx"})
            QVERIFY2(j["memory"].contains(k) && j["memory"][k].is_number_unsigned(), k);
        QCOMPARE(j["memory"]["ctx"].get<uint64_t>(), uint64_t(1024));
        QVERIFY(j["n_params_active"].get<uint64_t>() < j["n_params"].get<uint64_t>());
        QVERIFY(!j.contains("mla_layout"));  // MLA keys only for MLA models
    }

    // MLA models add the layout and the per-head sizes (docs/cli.md, `verdict info`).
    void mlaShape() {
        const auto model = verdict::test::fixture("models/synth-deepseek2-f16.gguf");
        VERDICT_NEED_FIXTURE(model);
        auto card = describeModelFile(model.string());
        QVERIFY(card.ok());
        auto j = core::modelCardToJson(*card);
        QCOMPARE(j["mla_layout"].get<std::string>(), std::string("merged"));
        for (const char* k : {"kv_lora_rank", "mla_head_dim_k", "mla_head_dim_v"})
            QVERIFY2(j.contains(k) && j[k].is_number_unsigned() && j[k].get<uint64_t>() > 0, k);
        QVERIFY(core::modelCardToText(*card).find("merged attn_kv_b") != std::string::npos);
    }

    // `verdict info` prints names and metadata from the file: escaped, one line each, cut (issue
    // 24, finding 3: a hostile file must not inject terminal escapes or flood the terminal).
    void textEscapesFileValues() {
        ModelCard c;
        c.name = "evil\x1b[2J\nname";
        c.arch = "llama";
        c.provenance = {{"general.author\r\x07", std::string(100000, 'x')}};
        const std::string text = core::modelCardToText(c);
        QVERIFY(text.find('\x1b') == std::string::npos);
        QVERIFY(text.find('\x07') == std::string::npos);
        QVERIFY(text.find('\r') == std::string::npos);
        QVERIFY(text.find("evil\\x1b[2J\\nname") != std::string::npos);
        QVERIFY2(text.size() < 4000, std::to_string(text.size()).c_str());
    }

    void formatting() {
        QCOMPARE(core::formatBytes(812), std::string("812 B"));
        QCOMPARE(core::formatBytes(uint64_t(1.59 * 1024 * 1024 * 1024)), std::string("1.59 GiB"));
        QCOMPARE(core::formatCount(852559872), std::string("852.56 M"));
        QCOMPARE(core::formatCount(292800), std::string("292.8 K"));
    }
};

QTEST_GUILESS_MAIN(TestModelCardJson)
#include "test_model_card_json.moc"
