// `verdict bench` and `verdict perplexity` end to end: the real binary on fixture models.
// bench: the JSON array's shape (llama-bench field names + Verdict's own), positive rates, one
// sample per repetition, comma lists and 0 = test off, the markdown table; perplexity: the JSON
// shape, KLD of a model against itself, and the bad-input exits (2) with messages that name the
// file and the token counts. --device (generate, bench, perplexity, logits, run, sweep): a bad
// string is a usage error naming it, a GPU this build or machine lacks is exit 3 naming CUDA (never
// a crash), and the memory objects carry the device and its VRAM fields (zeros on the CPU).
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
    // The CPU's kernels, extensions and AMX state; VERDICT_CPU_AMX=deny (the kernel refusing the
    // tile state) still runs a model, on the AVX-512 / AVX2 kernels.
    void devicesReportCpu() {
        CliRun r = runVerdict({"devices", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto cpu = r.json()["devices"][0];
        QCOMPARE(cpu["id"].get<std::string>(), std::string("cpu"));
        QVERIFY(cpu["simd"].is_string() && cpu["cpu_features"].is_array());
        const std::string state = cpu["amx"]["state"].get<std::string>();
        const QStringList states = {"absent", "not_enabled_by_os", "not_permitted", "faults", "off", "usable"};
        QVERIFY2(states.contains(QString::fromStdString(state)), state.c_str());
        QVERIFY(!cpu["amx"]["detail"].get<std::string>().empty());
        CliRun text = runVerdict({"devices"});
        QVERIFY2(text.exitCode == 0 && text.out.contains("AMX " + QByteArray::fromStdString(state)), text.out.constData());

        CliRun denied = runVerdict({"devices", "--json"}, {}, 60000, {{"VERDICT_CPU_AMX", "deny"}});
        QVERIFY2(denied.exitCode == 0, denied.err.constData());
        const std::string deniedState = denied.json()["devices"][0]["amx"]["state"].get<std::string>();
        QVERIFY2(deniedState == "absent" || deniedState == "not_enabled_by_os" || deniedState == "not_permitted",
                 deniedState.c_str());
        const QString model = fixtureModel("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model.toStdString());
        CliRun bench = runVerdict({"bench", model, "-p", "16", "-n", "4", "-r", "1", "--threads", "1", "--json"}, {}, 60000,
                                  {{"VERDICT_CPU_AMX", "deny"}});
        QVERIFY2(bench.exitCode == 0, bench.err.constData());
        QCOMPARE(bench.json()[0]["amx"].get<std::string>(), deniedState);
        QVERIFY(bench.json()[0]["avg_ts"].get<double>() > 0);
    }

    void benchJsonShape() {
        const QString model = fixtureModel("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model.toStdString());
        CliRun r = runVerdict({"bench", model, "-p", "16", "-n", "8", "-r", "2", "--threads", "1", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto j = r.json();
        QVERIFY2(j.is_array() && j.size() == 2, r.out.constData());
        const char* strings[] = {"build_commit", "cpu_info", "gpu_info", "backends", "model_filename", "model_type",
                                 "type_k", "type_v", "test_time", "test", "simd", "amx", "engine_version"};
        const char* numbers[] = {"model_size", "model_n_params", "n_batch", "n_threads", "n_prompt", "n_gen", "avg_ns",
                                 "stddev_ns", "avg_ts", "stddev_ts", "cpu_physical_cores"};
        for (const auto& t : j) {
            for (const char* k : strings) QVERIFY2(t.contains(k) && t[k].is_string(), k);
            for (const char* k : numbers) QVERIFY2(t.contains(k) && t[k].is_number(), k);
            // the commit built from (cmake/BuildCommit.cmake): short hex, "-dirty" with local changes, or "unknown"
            const QString commit = QString::fromStdString(t["build_commit"].get<std::string>());
            QVERIFY2(QRegularExpression("^([0-9a-f]{7,40}(-dirty)?|unknown)$").match(commit).hasMatch(), qPrintable(commit));
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

    void deviceOption() {
        const QString model = fixtureModel("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model.toStdString());
        const char* vram[] = {"vram_weights_bytes", "vram_kv_bytes", "vram_scratch_bytes", "vram_workspace_bytes",
                              "vram_peak_bytes", "vram_device_used_bytes", "vram_device_total_bytes"};

        // Not a device: a usage error with the engine's message, before the model is read.
        for (const char* bad : {"bogus", "cuda:x", "cuda:-1", "cuda:"}) {
            CliRun r = runVerdict({"generate", model, "-p", "Once", "-n", "2", "--device", bad});
            QVERIFY2(r.exitCode == 1 || r.exitCode == 2, r.err.constData());
            QVERIFY2(r.err.contains(QByteArray("\"") + bad + "\""), r.err.constData());
            QVERIFY2(r.err.contains("cpu, cuda or cuda:N"), r.err.constData());
        }
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        for (const QStringList& cmd : {QStringList{"bench", model, "-r", "1"}, QStringList{"logits", model, "--tokens", "1"},
                                       QStringList{"sweep", model}, QStringList{"run", model, "--suite", "x"}}) {
            CliRun r = runVerdict(cmd + QStringList{"--device", "tpu"}, db);
            QVERIFY2(r.exitCode == 1 && r.err.contains("\"tpu\""), (cmd.front() + ": " + r.err).toUtf8().constData());
        }

        // --gpu-layers: with the (default) cpu device, or not a count, a usage error naming it.
        for (const QStringList& extra : {QStringList{"--gpu-layers", "2"}, QStringList{"--gpu-layers", "-3"},
                                         QStringList{"--gpu-layers", "x"}, QStringList{"--device", "cpu", "--gpu-layers", "all"}}) {
            CliRun r = runVerdict(QStringList{"generate", model, "-p", "Once", "-n", "2"} + extra);
            QVERIFY2(r.exitCode == 1 && r.err.contains("--gpu-layers"), (extra.join(' ') + ": " + r.err).toUtf8().constData());
        }

        // cuda:0: works only with the CUDA backend and a GPU; otherwise exit 3 naming CUDA, never a crash.
        const auto devices = runVerdict({"devices", "--json"}).json();
        bool gpu = false;
        for (const auto& d : devices["devices"]) gpu = gpu || d["id"] == "cuda:0";
        CliRun partial = runVerdict({"generate", model, "-p", "Once upon", "-n", "4", "--temp", "0", "--device", "cuda:0",
                                     "--gpu-layers", "2", "--json"});
        if (!gpu) QVERIFY2(partial.exitCode == 3 && partial.err.contains("cuda:0"), partial.err.constData());
        else if (partial.exitCode == 0)  // 2 of the model's blocks on the GPU (stories260K has 5)
            QCOMPARE(partial.json()["memory"]["gpu_layers"].get<int>(), 2);
        else
            QVERIFY2(partial.exitCode == 3, partial.err.constData());
        CliRun onGpu = runVerdict({"generate", model, "-p", "Once upon", "-n", "4", "--temp", "0", "--device", "cuda:0", "--json"});
        if (!gpu) {
            QVERIFY2(onGpu.exitCode == 3, onGpu.err.constData());
            QVERIFY2(onGpu.err.contains("CUDA") || onGpu.err.contains("cuda"), onGpu.err.constData());
            QVERIFY(onGpu.err.contains("cuda:0"));
            CliRun benchGpu = runVerdict({"bench", model, "-p", "8", "-n", "0", "-r", "1", "--device", "cuda"});
            QVERIFY2(benchGpu.exitCode == 3 && benchGpu.err.contains("cuda:0"), benchGpu.err.constData());
        } else {
            // A GPU is there: the model runs on it, or fails with the reason (exit 3), never a crash.
            QVERIFY2(onGpu.exitCode == 0 || onGpu.exitCode == 3, onGpu.err.constData());
            if (onGpu.exitCode == 0) {
                const auto mem = onGpu.json()["memory"];
                QCOMPARE(mem["device"].get<std::string>(), std::string("cuda:0"));
                QVERIFY(mem["vram_weights_bytes"].get<uint64_t>() > 0);
                QVERIFY(mem["vram_kv_bytes"].get<uint64_t>() > 0);
                QVERIFY(mem["vram_device_total_bytes"].get<uint64_t>() >= mem["vram_device_used_bytes"].get<uint64_t>());
            }
        }

        // The CPU (default and explicit): the memory object has the device and zero VRAM.
        for (const QStringList& extra : {QStringList{}, QStringList{"--device", "cpu"}}) {
            CliRun r = runVerdict(QStringList{"generate", model, "-p", "Once upon", "-n", "4", "--temp", "0", "--json"} + extra);
            QVERIFY2(r.exitCode == 0, r.err.constData());
            const auto mem = r.json()["memory"];
            QVERIFY2(mem.is_object(), r.out.constData());
            QCOMPARE(mem["device"].get<std::string>(), std::string("cpu"));
            QCOMPARE(mem["gpu_layers"].get<int>(), 0);
            for (const char* k : vram) {
                QVERIFY2(mem.contains(k) && mem[k].is_number_unsigned(), k);
                QCOMPARE(mem[k].get<uint64_t>(), uint64_t{0});
            }
            QVERIFY(mem["weights_bytes"].get<uint64_t>() > 0 && mem["kv_bytes"].get<uint64_t>() > 0);
        }
        CliRun b = runVerdict({"bench", model, "-p", "8", "-n", "4", "-r", "1", "--device", "cpu", "--json"});
        QVERIFY2(b.exitCode == 0, b.err.constData());
        for (const auto& t : b.json()) {
            QCOMPARE(t["backends"].get<std::string>(), std::string("CPU"));
            QCOMPARE(t["n_gpu_layers"].get<int>(), 0);
            QCOMPARE(t["memory"]["device"].get<std::string>(), std::string("cpu"));
            for (const char* k : vram) QCOMPARE(t["memory"][k].get<uint64_t>(), uint64_t{0});
            QVERIFY(t["memory"]["kv_bytes"].get<uint64_t>() > 0);
        }
    }
};

QTEST_APPLESS_MAIN(TestCliBench)
#include "test_cli_bench.moc"
