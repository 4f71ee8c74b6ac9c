// Loading errors (every one a Result, never a crash): unsupported architectures, malformed
// metadata, missing / mis-shaped / uncomputable tensors, cancellation; plus the tied-output and
// end-of-generation paths that need an edited file. Edited files are copies of stories260K.
#include "fixtures.h"
#include "test_session_gguf.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <QtTest/QtTest>

#include <atomic>
#include <cmath>

using namespace verdict;
using verdict::test::GgufEdit;

namespace {
const char* kModel = "models/stories260K.gguf";

std::vector<uint8_t> zeros(size_t n) { return std::vector<uint8_t>(n, 0); }

struct BadFile {
    std::function<void(GgufEdit&)> edit;
    std::vector<std::string> expect;  // substrings of the error message
};
}  // namespace

Q_DECLARE_METATYPE(BadFile)

class TestSessionErrors : public QObject {
    Q_OBJECT
private slots:
    void init() { VERDICT_NEED_FIXTURE(verdict::test::fixture(kModel)); }

    // An architecture the engine does not implement is refused by name, listing what it supports
    // (a real file whose general.architecture was rewritten, so everything else is valid).
    void unsupportedArchitectures_data() {
        QTest::addColumn<QString>("arch");
        QTest::newRow("mamba") << "mamba";
        QTest::newRow("rwkv6") << "rwkv6";
        QTest::newRow("empty") << "";
    }
    void unsupportedArchitectures() {
        QFETCH(QString, arch);
        QTemporaryDir dir;
        GgufEdit edit;
        edit.setKeys["general.architecture"] = gguf::Value::str(arch.toStdString());
        const std::string path = verdict::test::writeEdited(verdict::test::fixture(kModel).string(), dir, "other.gguf", edit);
        QVERIFY(!path.empty());
        auto m = Model::open(path);
        QVERIFY(!m.ok());
        const std::string& msg = m.error().message;
        std::string expected = "unsupported architecture '";  // appended, not operator+ (GCC 12 -Wrestrict false positive)
        expected.append(arch.toStdString()).append("'");
        QVERIFY2(msg.find(expected) != std::string::npos, msg.c_str());
        for (const char* supported : {"llama", "qwen2", "deepseek2", "gemma2", "phi3"})
            QVERIFY2(msg.find(supported) != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("other.gguf") != std::string::npos, msg.c_str());
    }

    void missingFile() {
        auto m = Model::open("/nonexistent/model.gguf");
        QVERIFY(!m.ok());
        QVERIFY(m.error().message.find("/nonexistent/model.gguf") != std::string::npos);
    }

    void badFiles_data() {
        QTest::addColumn<BadFile>("bad");
        using V = gguf::Value;
        QTest::newRow("missing tensor") << BadFile{[](GgufEdit& e) { e.dropTensors = {"blk.2.attn_q.weight"}; },
                                                   {"blk.2.attn_q.weight", "missing"}};
        QTest::newRow("wrong shape")
            << BadFile{[](GgufEdit& e) {
                           e.replaceTensors.push_back({"blk.0.attn_k.weight", tensor::TensorType::F32, {64, 40}, zeros(64 * 40 * 4)});
                       },
                       {"blk.0.attn_k.weight", "[64, 40]", "expected [64, 32]"}};
        QTest::newRow("uncomputable type")
            << BadFile{[](GgufEdit& e) {
                           e.replaceTensors.push_back({"blk.1.ffn_up.weight", tensor::TensorType::I32, {64, 172}, zeros(64 * 172 * 4)});
                       },
                       {"blk.1.ffn_up.weight", "i32", "cannot compute"}};
        QTest::newRow("heads do not divide n_embd")
            << BadFile{[](GgufEdit& e) { e.setKeys["llama.attention.head_count"] = V::u32(7); }, {"head_count", "7"}};
        QTest::newRow("kv heads do not divide heads")
            << BadFile{[](GgufEdit& e) { e.setKeys["llama.attention.head_count_kv"] = V::u32(3); }, {"head_count_kv", "3"}};
        QTest::newRow("experts used > experts")
            << BadFile{[](GgufEdit& e) {
                           e.setKeys["llama.expert_count"] = V::u32(2);
                           e.setKeys["llama.expert_used_count"] = V::u32(3);
                       },
                       {"expert_used_count = 3", "expert_count = 2"}};
        QTest::newRow("MoE without expert tensors")
            << BadFile{[](GgufEdit& e) {
                           e.setKeys["llama.expert_count"] = V::u32(2);
                           e.setKeys["llama.expert_used_count"] = V::u32(1);
                       },
                       {"ffn_gate_inp", "missing"}};
        QTest::newRow("odd rope dims")
            << BadFile{[](GgufEdit& e) { e.setKeys["llama.rope.dimension_count"] = V::u32(7); }, {"rope.dimension_count"}};
        QTest::newRow("no architecture")
            << BadFile{[](GgufEdit& e) { e.dropKeys = {"general.architecture"}; }, {"general.architecture"}};
        QTest::newRow("unknown architecture")
            << BadFile{[](GgufEdit& e) { e.setKeys["general.architecture"] = V::str("mamba"); },
                       {"unsupported architecture 'mamba'", "llama, qwen2"}};
        QTest::newRow("missing required key")
            << BadFile{[](GgufEdit& e) { e.dropKeys = {"llama.embedding_length"}; }, {"llama.embedding_length", "missing"}};
        QTest::newRow("per-layer head counts")
            << BadFile{[](GgufEdit& e) {
                           std::vector<V> v(5, V::u32(4));
                           e.setKeys["llama.attention.head_count_kv"] = V::array(gguf::ValueType::UInt32, v);
                       },
                       {"head_count_kv", "per-layer"}};
        // Counts are checked against the tensors present before anything per block is allocated:
        // 2^24 used to abort with bad_alloc, 2^20 took seconds and gigabytes.
        QTest::newRow("block_count 2^24")
            << BadFile{[](GgufEdit& e) { e.setKeys["llama.block_count"] = V::u32(1u << 24); },
                       {"block_count' = 16777216", "holds tensors for 5 blocks (blk.0 to blk.4)"}};
        QTest::newRow("block_count one too many")
            << BadFile{[](GgufEdit& e) { e.setKeys["llama.block_count"] = V::u32(6); }, {"block_count' = 6", "5 blocks"}};
        QTest::newRow("hostile architecture name")
            << BadFile{[](GgufEdit& e) { e.setKeys["general.architecture"] = V::str("\x1b[31mred" + std::string(4000, 'x')); },
                       {"unsupported architecture '\\x1b[31mred", "(4008 bytes)"}};
        QTest::newRow("unsupported rope scaling")
            << BadFile{[](GgufEdit& e) { e.setKeys["llama.rope.scaling.type"] = V::str("longrope"); },
                       {"rope.scaling.type", "longrope"}};
    }
    void badFiles() {
        QFETCH(BadFile, bad);
        QTemporaryDir dir;
        GgufEdit edit;
        bad.edit(edit);
        const std::string path = verdict::test::writeEdited(verdict::test::fixture(kModel).string(), dir, "bad.gguf", edit);
        QVERIFY(!path.empty());
        auto m = Model::open(path);
        QVERIFY2(!m.ok(), "a broken file loaded");
        const std::string& msg = m.error().message;
        for (const auto& s : bad.expect) QVERIFY2(msg.find(s) != std::string::npos, (msg + "  [expected: " + s + "]").c_str());
    }

    // Without output.weight the embedding matrix is the output projection: same logits as a file
    // whose output.weight is a copy of token_embd.
    void tiedOutput() {
        auto src = gguf::GgufFile::open(verdict::test::fixture(kModel).string());
        QVERIFY(src.ok());
        const auto* emb = (*src)->tensor("token_embd.weight");
        QVERIFY(emb);
        QTemporaryDir dir;
        GgufEdit tied;
        tied.dropTensors = {"output.weight"};
        GgufEdit copied;
        copied.replaceTensors.push_back({"output.weight", emb->type, {emb->ne[0], emb->ne[1]},
                                         std::vector<uint8_t>(emb->data, emb->data + emb->nBytes)});
        const auto pTied = verdict::test::writeEdited(verdict::test::fixture(kModel).string(), dir, "tied.gguf", tied);
        const auto pCopy = verdict::test::writeEdited(verdict::test::fixture(kModel).string(), dir, "copy.gguf", copied);
        auto a = Model::open(pTied), b = Model::open(pCopy);
        QVERIFY2(a.ok(), a.ok() ? "" : a.error().message.c_str());
        QVERIFY(b.ok());
        QVERIFY((*a)->shape().tiedOutput);
        QVERIFY(!(*b)->shape().tiedOutput);
        auto sa = Session::create(*a, {64}), sb = Session::create(*b, {64});
        QVERIFY(sa.ok() && sb.ok());
        const std::vector<int32_t> ids = {1, 403, 407, 261};
        auto la = (*sa)->evaluate(ids, true);
        auto lb = (*sb)->evaluate(ids, true);
        QVERIFY(la.ok() && lb.ok());
        for (int64_t i = 0; i < la->rows * la->nVocab; ++i) {
            QVERIFY(std::isfinite(la->data[i]));
            QCOMPARE(la->data[i], lb->data[i]);
        }
    }

    // stories260K ends a story with token 1; declare 1 the EOS token and generation stops there.
    void stopsAtEndOfGeneration() {
        QTemporaryDir dir;
        GgufEdit e;
        e.setKeys["tokenizer.ggml.eos_token_id"] = gguf::Value::u32(1);
        const auto path = verdict::test::writeEdited(verdict::test::fixture(kModel).string(), dir, "eos.gguf", e);
        auto m = Model::open(path);
        QVERIFY(m.ok());
        QCOMPARE((*m)->eos(), 1);
        QVERIFY((*m)->isEog(1));
        auto s = Session::create(*m, {400});
        QVERIFY(s.ok());
        const std::vector<int32_t> prompt = {1, 403, 407, 261, 378};
        GenerateConfig g;
        g.maxTokens = 390;
        g.sampling = SamplingParams::greedy();
        g.stopAtEos = false;
        auto all = (*s)->generate(prompt, g);
        QVERIFY(all.ok());
        const auto it = std::find(all->tokens.begin(), all->tokens.end(), 1);
        QVERIFY2(it != all->tokens.end(), "the story did not end within 390 tokens");
        g.stopAtEos = true;
        auto cut = (*s)->generate(prompt, g);
        QVERIFY(cut.ok());
        QCOMPARE(cut->stopReason, StopReason::Eos);
        QCOMPARE(cut->tokens.size(), size_t(it - all->tokens.begin() + 1));
        QCOMPARE(cut->tokens.back(), 1);
    }

    void progressAndCancel() {
        const std::string path = verdict::test::fixture(kModel).string();
        std::vector<float> seen;
        ModelOptions o;
        o.progress = [&](float f) {
            seen.push_back(f);
            return true;
        };
        auto ok = Model::open(path, o);
        QVERIFY(ok.ok());
        QVERIFY(seen.size() >= 3);
        QCOMPARE(seen.front(), 0.0f);
        QCOMPARE(seen.back(), 1.0f);
        QVERIFY(std::is_sorted(seen.begin(), seen.end()));

        int calls = 0;
        o.progress = [&](float) { return ++calls < 2; };
        auto stopped = Model::open(path, o);
        QVERIFY(!stopped.ok());
        QVERIFY(stopped.error().message.find("cancelled") != std::string::npos);

        std::atomic<bool> cancel{true};
        ModelOptions c;
        c.cancel = &cancel;
        auto flagged = Model::open(path, c);
        QVERIFY(!flagged.ok());
        QVERIFY(flagged.error().message.find("cancelled") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestSessionErrors)
#include "test_session_errors.moc"
