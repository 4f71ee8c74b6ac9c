// `verdict bench` and `verdict perplexity` end to end: the real binary on fixture models.
// bench: the JSON array's shape (llama-bench field names + Verdict's own), positive rates, one
// sample per repetition, comma lists and 0 = test off, the markdown table; perplexity: the JSON
// shape, KLD of a model against itself, and the bad-input exits (2) with messages that name the
// file and the token counts.
#include "fixtures.h"

#include "cli_process.h"

#include <QtTest/QtTest>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {

using verdict::test::CliRun;
using verdict::test::runVerdict;

QString fixtureModel(const char* name) { return QString::fromStdString(verdict::test::fixture(name).string()); }

// A story long enough for a few 32-token chunks of stories260K (~300 tokens).
const char* kStory =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
    "One day, she saw a big red ball under a tree. She ran to the ball and picked it up. "
    "A little boy named Tom came and said, \"That is my ball.\" Lily gave the ball to Tom. "
    "Tom smiled and said, \"Thank you! Do you want to play with me?\" Lily was happy and they "
    "played with the ball all day. The sun was warm and the birds sang in the trees. When it was "
    "time to go home, Lily said goodbye to Tom. She told her mom about her new friend. Her mom "
    "hugged her and said, \"It is good to share.\" The next day, Lily went to the park again.";

QString writeFile(const QTemporaryDir& dir, const QString& name, const std::string& text) {
    const QString path = dir.filePath(name);
    std::ofstream(path.toStdString(), std::ios::binary) << text;
    return path;
}

}  // namespace

class TestCliBench : public QObject {
    Q_OBJECT

private slots:
    void benchJsonShape() {
        const QString model = fixtureModel("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model.toStdString());
        CliRun r = runVerdict({"bench", model, "-p", "16", "-n", "8", "-r", "2", "--threads", "1", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto j = r.json();
        QVERIFY2(j.is_array() && j.size() == 2, r.out.constData());
        const char* strings[] = {"build_commit", "cpu_info", "gpu_info", "backends", "model_filename", "model_type",
                                 "type_k", "type_v", "test_time", "test", "simd", "engine_version"};
        const char* numbers[] = {"model_size", "model_n_params", "n_batch", "n_threads", "n_prompt", "n_gen", "avg_ns",
                                 "stddev_ns", "avg_ts", "stddev_ts", "cpu_physical_cores"};
        for (const auto& t : j) {
            for (const char* k : strings) QVERIFY2(t.contains(k) && t[k].is_string(), k);
            for (const char* k : numbers) QVERIFY2(t.contains(k) && t[k].is_number(), k);
            QVERIFY(!t["build_commit"].get<std::string>().empty());
            QCOMPARE(t["backends"].get<std::string>(), std::string("CPU"));
            QCOMPARE(t["n_threads"].get<int>(), 1);
            // llama.cpp's own figures for this file (fixtures README): n_params, tensor bytes.
            QCOMPARE(t["model_n_params"].get<uint64_t>(), uint64_t{292800});
            QCOMPARE(t["model_size"].get<uint64_t>(), uint64_t{1171200});
            QVERIFY(t["samples_ns"].is_array() && t["samples_ns"].size() == 2);
            QVERIFY(t["samples_ts"].is_array() && t["samples_ts"].size() == 2);
            QVERIFY(t["avg_ts"].get<double>() > 0 && t["avg_ns"].get<double>() > 0);
            QVERIFY(t["stddev_ts"].get<double>() >= 0);
            for (const auto& s : t["samples_ts"]) QVERIFY(s.get<double>() > 0);
            // t/s of a sample = tokens / seconds of that sample.
            const double tokens = t["n_prompt"].get<double>() + t["n_gen"].get<double>();
            const double ts0 = t["samples_ts"][0].get<double>(), ns0 = t["samples_ns"][0].get<double>();
            QVERIFY(std::fabs(ts0 - 1e9 * tokens / ns0) < 1e-6 * ts0);
        }
        QCOMPARE(j[0]["test"].get<std::string>(), std::string("pp16"));
        QCOMPARE(j[0]["n_prompt"].get<int>(), 16);
        QCOMPARE(j[0]["n_gen"].get<int>(), 0);
        QCOMPARE(j[1]["test"].get<std::string>(), std::string("tg8"));
        QCOMPARE(j[1]["n_gen"].get<int>(), 8);
    }

    void benchListsTableAndErrors() {
        const QString model = fixtureModel("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model.toStdString());
        CliRun lists = runVerdict({"bench", model, "-p", "8,16", "-n", "0", "-r", "1", "--json"});
        QVERIFY2(lists.exitCode == 0, lists.err.constData());
        const auto j = lists.json();
        QVERIFY(j.is_array() && j.size() == 2);
        QCOMPARE(j[0]["test"].get<std::string>(), std::string("pp8"));
        QCOMPARE(j[1]["test"].get<std::string>(), std::string("pp16"));

        CliRun table = runVerdict({"bench", model, "-p", "0", "-n", "4", "-r", "2"});
        QVERIFY2(table.exitCode == 0, table.err.constData());
        QVERIFY2(table.out.contains("| model") && table.out.contains("tg4") && table.out.contains("±"),
                 table.out.constData());
        QVERIFY(!table.out.contains("pp512"));

        CliRun missing = runVerdict({"bench", "/nonexistent/model.gguf", "-r", "1"});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY(missing.err.contains("/nonexistent/model.gguf"));
        CliRun badReps = runVerdict({"bench", model, "-r", "0"});
        QVERIFY(badReps.exitCode != 0 && badReps.exitCode != 2);
        CliRun badList = runVerdict({"bench", model, "-p", "8,x"});
        QVERIFY(badList.exitCode != 0 && badList.exitCode != 2);
    }

    void perplexityJsonShape() {
        const QString model = fixtureModel("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model.toStdString());
        QTemporaryDir dir;
        const QString text = writeFile(dir, "story.txt", kStory);
        CliRun r = runVerdict({"perplexity", model, text, "--ctx", "32", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.err.contains("chunk 1/"));
        const auto j = r.json();
        QVERIFY2(j.is_object(), r.out.constData());
        for (const char* k : {"n_ctx", "text_tokens", "chunks", "tokens_scored", "ppl", "ppl_stderr", "mean_nll",
                              "nll_stderr", "seconds", "tokens_per_second"})
            QVERIFY2(j.contains(k) && j[k].is_number(), k);
        QCOMPARE(j["n_ctx"].get<int>(), 32);
        const int chunks = j["chunks"].get<int>();
        QVERIFY(chunks >= 2);
        QCOMPARE(j["text_tokens"].get<int>() / 32, chunks);
        QCOMPARE(j["tokens_scored"].get<int>(), chunks * 15);
        QVERIFY(j["chunk_ppl"].is_array() && static_cast<int>(j["chunk_ppl"].size()) == chunks);
        QVERIFY(j["running_ppl"].is_array() && static_cast<int>(j["running_ppl"].size()) == chunks);
        QVERIFY(j["kld"].is_null());
        const double ppl = j["ppl"].get<double>();
        QVERIFY(ppl > 1 && ppl < 512);
        QVERIFY(std::fabs(ppl - std::exp(j["mean_nll"].get<double>())) < 1e-9 * ppl);

        CliRun self = runVerdict({"perplexity", model, text, "--ctx", "32", "--kld-base", model, "--json"});
        QVERIFY2(self.exitCode == 0, self.err.constData());
        const auto k = self.json()["kld"];
        QVERIFY(k.is_object());
        QCOMPARE(k["mean_kld"].get<double>(), 0.0);
        QCOMPARE(k["same_top_p"].get<double>(), 1.0);
        QCOMPARE(k["ppl_ratio"].get<double>(), 1.0);
        for (const char* q : {"max", "p99_9", "p99", "p95", "p90", "median", "p10", "p5", "p1", "p0_1", "min"})
            QVERIFY2(k["kld_quantiles"].contains(q) && k["delta_p_quantiles"].contains(q), q);
        for (const char* f : {"ppl_base", "ppl_base_stderr", "ppl_ratio_stderr", "ln_ppl_ratio", "mean_kld_stderr",
                              "same_top_p_stderr", "mean_delta_p", "rms_delta_p", "rms_delta_p_stderr"})
            QVERIFY2(k.contains(f) && k[f].is_number(), f);

        CliRun textMode = runVerdict({"perplexity", model, text, "--ctx", "32"});
        QVERIFY2(textMode.exitCode == 0, textMode.err.constData());
        QVERIFY(textMode.out.contains("Final estimate: PPL = "));
    }

    void perplexityBadInput() {
        const QString model = fixtureModel("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model.toStdString());
        QTemporaryDir dir;
        const QString missing = dir.filePath("nope.txt");
        CliRun a = runVerdict({"perplexity", model, missing});
        QCOMPARE(a.exitCode, 2);
        QVERIFY2(a.err.contains(missing.toUtf8()), a.err.constData());

        const QString empty = writeFile(dir, "empty.txt", "");
        CliRun b = runVerdict({"perplexity", model, empty});
        QCOMPARE(b.exitCode, 2);
        QVERIFY2(b.err.contains("empty") && b.err.contains(empty.toUtf8()), b.err.constData());

        const QString shortText = writeFile(dir, "short.txt", "Once upon a time, there was a cat.");
        CliRun c = runVerdict({"perplexity", model, shortText, "--ctx", "512"});
        QCOMPARE(c.exitCode, 2);
        QVERIFY2(c.err.contains(shortText.toUtf8()) && c.err.contains("needs at least 1024 tokens")
                     && c.err.contains("tokenizes to only"),
                 c.err.constData());

        const QString tiny = fixtureModel("models/llama-2-tiny-random.gguf");
        const QString text = writeFile(dir, "story.txt", kStory);
        CliRun d = runVerdict({"perplexity", model, text, "--ctx", "32", "--kld-base", tiny});
        QCOMPARE(d.exitCode, 2);
        QVERIFY2(d.err.contains("vocabularies differ"), d.err.constData());

        CliRun e = runVerdict({"perplexity", model});
        QVERIFY(e.exitCode != 0 && e.exitCode != 2);
    }
};

QTEST_APPLESS_MAIN(TestCliBench)
#include "test_cli_bench.moc"
