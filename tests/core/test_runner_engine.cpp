// EngineBackend on a real model (stories260K): plain prompts, the model's chat template (added
// to a copy of the fixture, since no fixture carries one), the raw fallback for a template that
// fails, BOS handling, and log-likelihood scoring against greedy generation.
#include "core/run/engine_backend.h"
#include "fixtures.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "verdict/engine/model.h"

#include <QtTest/QtTest>

#include <fstream>

using namespace verdict;
using namespace verdict::core;

namespace {

// Copies `src` with tokenizer.chat_template set to `tmpl` (metadata and tensors unchanged).
Result<void> copyWithTemplate(const std::string& src, const std::string& dst, const std::string& tmpl) {
    auto in = gguf::GgufFile::open(src);
    if (!in) return in.error();
    gguf::GgufWriter w((*in)->version());
    for (const auto& [key, value] : (*in)->metadata()) w.set(key, value);
    w.set("tokenizer.chat_template", gguf::Value::str(tmpl));
    for (const auto& t : (*in)->tensors())
        w.addTensor(t.name, t.type, std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.nDims), t.data, t.nBytes);
    return w.write(dst);  // `in` (and the tensor data) stays mapped until here
}

const char* kTemplate =
    "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}[assistant]{% endif %}";

}  // namespace

class TestRunnerEngine : public QObject {
    Q_OBJECT

    std::string modelPath() const { return verdict::test::fixture("models/stories260K.gguf").string(); }

private slots:
    void plainPrompt() {
        VERDICT_NEED_FIXTURE(modelPath());
        auto b = EngineBackend::open(modelPath(), {.threads = 1, .engineVersion = "test"});
        QVERIFY2(b.ok(), b.ok() ? "" : b.error().message.c_str());
        const BackendInfo info = (*b)->info();
        QCOMPARE(info.engineVersion, std::string("test"));
        QCOMPARE(info.modelParts, (std::vector<std::string>{modelPath()}));
        QVERIFY(info.chatTemplate.empty());

        Prompt p;
        p.text = "Once upon a time";
        p.messages = {{"user", "Once upon a time"}};
        GenerationParams g;
        g.maxTokens = 12;
        g.temperature = 0;
        int pieces = 0;
        auto out = (*b)->generate(p, g, [&](std::string_view) { return ++pieces < 5; });
        QVERIFY(out.ok());
        QCOMPARE(out->prompt.templateUsed, std::string("raw"));
        QCOMPARE(out->prompt.note, std::string("the model has no chat template"));
        QCOMPARE(out->prompt.text, p.text);
        QCOMPARE(out->stopReason, std::string("callback"));  // stopped by the callback after 5 pieces
        QCOMPARE(out->tokensOut, int64_t(5));
        QVERIFY(out->ttftMs.has_value());

        // The greedy continuation is, by definition, greedy under logprobs.
        auto full = (*b)->generate(p, g, {});
        QVERIFY(full.ok());
        QVERIFY(!full->text.empty());
        auto lp = (*b)->logprobs(p, full->text);
        QVERIFY(lp.ok());
        QVERIFY(lp->greedy);
        QVERIFY(lp->logprob < 0);
        QVERIFY(lp->continuationTokens > 0);
        auto unlikely = (*b)->logprobs(p, " refrigerator theorem");
        QVERIFY(unlikely.ok());
        QVERIFY(!unlikely->greedy);
        QVERIFY(!(*b)->logprobs(p, "").ok());
    }

    void chatTemplateIsApplied() {
        VERDICT_NEED_FIXTURE(modelPath());
        QTemporaryDir dir;
        const std::string path = dir.filePath("templated.gguf").toStdString();
        auto copied = copyWithTemplate(modelPath(), path, kTemplate);
        QVERIFY2(copied.ok(), copied.ok() ? "" : copied.error().message.c_str());
        auto b = EngineBackend::open(path, {.threads = 1});
        QVERIFY2(b.ok(), b.ok() ? "" : b.error().message.c_str());
        QCOMPARE((*b)->info().chatTemplate, std::string(kTemplate));

        Prompt p;
        p.text = "plain";
        p.messages = {{"system", "Be kind."}, {"user", "Tell a story."}};
        GenerationParams g;
        g.maxTokens = 4;
        g.temperature = 0;
        auto out = (*b)->generate(p, g, {});
        QVERIFY2(out.ok(), out.ok() ? "" : out.error().message.c_str());
        QCOMPARE(out->prompt.templateUsed, std::string("model"));
        QCOMPARE(QString::fromStdString(out->prompt.text), QString("<s>[system] Be kind.\n[user] Tell a story.\n[assistant]"));
        // The template wrote the BOS itself: it is parsed as the BOS token and not added twice.
        auto model = Model::open(path, {.threads = 1});
        QVERIFY(model.ok());
        auto ids = (*model)->tokenize(out->prompt.text, false, true);
        QVERIFY(ids.ok());
        QCOMPARE(ids->front(), (*model)->bos());
        QVERIFY(ids->size() < 2 || (*ids)[1] != (*model)->bos());
        QCOMPARE(out->tokensIn, int64_t(ids->size()));

        // useChatTemplate = false: the plain text, no note.
        p.useChatTemplate = false;
        auto raw = (*b)->generate(p, g, {});
        QVERIFY(raw.ok());
        QCOMPARE(raw->prompt.templateUsed, std::string("raw"));
        QCOMPARE(raw->prompt.text, std::string("plain"));
        QVERIFY(raw->prompt.note.empty());
    }

    void failingTemplateFallsBackToRaw() {
        VERDICT_NEED_FIXTURE(modelPath());
        QTemporaryDir dir;
        const std::string path = dir.filePath("broken.gguf").toStdString();
        QVERIFY(copyWithTemplate(modelPath(), path, "{{ raise_exception('no system role here') }}").ok());
        auto b = EngineBackend::open(path, {.threads = 1});
        QVERIFY(b.ok());
        Prompt p;
        p.text = "Once upon a time";
        p.messages = {{"user", "Once upon a time"}};
        auto out = (*b)->logprobs(p, " there");
        QVERIFY(out.ok());
        QCOMPARE(out->context.templateUsed, std::string("raw"));
        QVERIFY2(out->context.note.find("no system role here") != std::string::npos, out->context.note.c_str());
        QCOMPARE(out->context.text, p.text);
    }

    void badModelIsAnError() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("junk.gguf").toStdString();
        std::ofstream(path) << "not a gguf file at all";
        auto b = EngineBackend::open(path, {});
        QVERIFY(!b.ok());
        QVERIFY(b.error().message.find(path) != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestRunnerEngine)
#include "test_runner_engine.moc"
