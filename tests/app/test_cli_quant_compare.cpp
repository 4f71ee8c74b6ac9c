// Quantization trade-off end to end (issue 22): `verdict quant-compare` on one synthetic llama in
// F16 (base), Q8_0 and Q4_K, with a text (KLD), a multiple-choice suite (accuracy, paired) and a
// one-point sweep; every figure is checked against the command that measures it alone
// (`verdict perplexity --kld-base`, `verdict diff`, `verdict sweep show`) and the deltas by hand.
#include "cli_process.h"
#include "fixtures.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using nlohmann::json;

namespace {

using Run = verdict::test::CliRun;

Run runVerdict(const QStringList& args, const QTemporaryDir& dir) { return verdict::test::runVerdictIn(args, dir.path(), 600000); }

QString q(const std::filesystem::path& p) { return QString::fromStdString(p.string()); }

// A plain English text long enough for 4 chunks of 64 tokens (the fixtures' 512-token vocabulary).
QString writeText(const QTemporaryDir& dir) {
    const QString path = dir.filePath("text.txt");
    std::ofstream f(path.toStdString());
    for (int i = 0; i < 40; ++i)
        f << "Once upon a time there was a little girl named Lily. She liked to play in the park with her dog. "
             "One day the sun was hot and the dog was tired, so they sat under a big tree and ate an apple.\n";
    return path;
}

// 24 four-way multiple-choice items (answered by log-likelihood: a random model picks some right).
QString writeSuite(const QTemporaryDir& dir) {
    const QString path = dir.filePath("mc.jsonl");
    std::ofstream f(path.toStdString());
    const char* words[] = {"cat", "dog", "tree", "sun", "ball", "park", "apple", "girl"};
    for (int i = 0; i < 24; ++i) {
        json item = {{"question", std::string("Which word comes next after the ") + words[i % 8] + "?"},
                     {"choices", {words[(i + 1) % 8], words[(i + 3) % 8], words[(i + 5) % 8], words[(i + 7) % 8]}},
                     {"answer", i % 4}};
        f << item.dump() << "\n";
    }
    return path;
}

double num(const json& j) { return j.get<double>(); }

}  // namespace

class TestCliQuantCompare : public QObject {
    Q_OBJECT
private slots:
    void threeFilesAgainstTheBase() {
        const auto base = verdict::test::fixture("models/synth-llama-f16.gguf");
        const auto q8 = verdict::test::fixture("models/synth-llama-q8_0.gguf");
        const auto q4 = verdict::test::fixture("models/synth-llama-q4_k.gguf");
        VERDICT_NEED_FIXTURE(base);
        VERDICT_NEED_FIXTURE(q8);
        VERDICT_NEED_FIXTURE(q4);
        QTemporaryDir dir;
        const QString text = writeText(dir);
        Run imp = runVerdict({"suite", "import", writeSuite(dir), "--name", "mc", "--json"}, dir);
        QVERIFY2(imp.exitCode == 0, imp.err.constData());

        Run r = runVerdict({"quant-compare", q(base), q(q8), q(q4), "--suite", "mc", "--text", text, "--ctx", "64",
                            "--chunks", "4", "--prompt", "16", "--gen", "4", "--reps", "2", "--threads", "2", "--json"},
                           dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json c = r.json();
        QVERIFY2(c.is_object(), r.out.constData());
        QCOMPARE(c["status"], json("completed"));
        QCOMPARE(c["base"], json(base.string()));
        const json& rows = c["rows"];
        QCOMPARE(rows.size(), size_t(3));
        QCOMPARE(rows[0]["file"]["file_type"], json("F16"));
        QCOMPARE(rows[1]["file"]["file_type"], json("Q8_0"));
        QCOMPARE(rows[2]["file"]["file_type"], json("Q4_K_M"));
        for (const json& row : rows) {
            QVERIFY2(row["errors"].empty(), row["errors"].dump().c_str());
            QCOMPARE(row["file"]["bytes"].get<uint64_t>(),
                     uint64_t(std::filesystem::file_size(row["file"]["path"].get<std::string>())));
        }
        QVERIFY(rows[0]["vs_base"].is_null());

        // Fidelity: the base against itself is 0 / 100 %; each file's KLD is what perplexity reports.
        QCOMPARE(num(rows[0]["fidelity"]["mean_kld"]), 0.0);
        QCOMPARE(num(rows[0]["fidelity"]["same_top_p"]), 1.0);
        for (int k : {1, 2}) {
            Run p = runVerdict({"perplexity", q(k == 1 ? q8 : q4), text, "--ctx", "64", "--chunks", "4", "--kld-base",
                                q(base), "--threads", "2", "--json"},
                               dir);
            QVERIFY2(p.exitCode == 0, p.err.constData());
            const json kld = p.json()["kld"];
            const json& fid = rows[k]["fidelity"];
            QCOMPARE(num(fid["mean_kld"]), num(kld["mean_kld"]));
            QCOMPARE(num(fid["same_top_p"]), num(kld["same_top_p"]));
            QCOMPARE(num(fid["ppl_ratio"]), num(kld["ppl_ratio"]));
            QCOMPARE(num(fid["ppl"]), num(p.json()["ppl"]));
            QCOMPARE(num(rows[0]["fidelity"]["ppl"]), num(kld["ppl_base"]));
            QCOMPARE(num(rows[k]["vs_base"]["mean_kld"]), num(kld["mean_kld"]));
        }
        QVERIFY(num(rows[1]["fidelity"]["mean_kld"]) > 0);
        QVERIFY2(num(rows[2]["fidelity"]["mean_kld"]) > num(rows[1]["fidelity"]["mean_kld"]),
                 "4-bit weights should drift further from F16 than 8-bit ones");

        // Accuracy: ordinary runs, paired with the base's exactly as `verdict diff FILE BASE` pairs them.
        const QString baseRun = QString::number(rows[0]["accuracy"]["run_id"].get<long long>());
        for (int k : {1, 2}) {
            const json& acc = rows[k]["accuracy"];
            const QString run = QString::number(acc["run_id"].get<long long>());
            Run d = runVerdict({"diff", run, baseRun, "--json"}, dir);
            QVERIFY2(d.exitCode == 0, d.err.constData());
            const json dj = d.json();
            QCOMPARE(acc["pairs"], dj["n_pairs"]);
            QCOMPARE(acc["pairs"], json(24));
            QCOMPARE(num(acc["delta"]), num(dj["difference"]));
            QCOMPARE(num(acc["delta_ci"][0]), num(dj["difference_ci"][0]));
            QCOMPARE(num(acc["delta_ci"][1]), num(dj["difference_ci"][1]));
            QCOMPARE(num(acc["mcnemar_p"]), num(dj["mcnemar"]["p_value"]));
            // By hand: the delta is the difference of the two accuracies over the same 24 items.
            const double a = num(acc["cell"]["accuracy"]), b = num(rows[0]["accuracy"]["cell"]["accuracy"]);
            QCOMPARE(num(acc["delta"]), a - b);
            QCOMPARE(num(acc["cell"]["correct"]), a * 24);
            QCOMPARE(acc["file_only_right"].get<int64_t>() - acc["base_only_right"].get<int64_t>(),
                     int64_t(std::lround((a - b) * 24)));
        }

        // Speed: each file's point is its sweep's; the changes are file / base - 1.
        for (int k : {0, 1, 2}) {
            const json& sp = rows[k]["speed"];
            Run s = runVerdict({"sweep", "show", QString::number(sp["sweep_id"].get<long long>()), "--json"}, dir);
            QVERIFY2(s.exitCode == 0, s.err.constData());
            const json point = s.json()["points"][0];
            QCOMPARE(num(sp["decode_tok_per_s"]), num(point["metrics"]["decode_tok_per_s"]));
            QCOMPARE(num(sp["itl_ms_p99"]), num(point["metrics"]["itl_ms"]["p99"]));
            QVERIFY(num(sp["decode_tok_per_s"]) > 0);
            QCOMPARE(rows[k]["memory"]["engine_bytes"].get<uint64_t>(),
                     point["metrics"]["memory"]["weights_bytes"].get<uint64_t>() + point["metrics"]["memory"]["kv_bytes"].get<uint64_t>() +
                         point["metrics"]["memory"]["scratch_bytes"].get<uint64_t>());
            QVERIFY(rows[k]["memory"]["weights_bytes"].get<uint64_t>() > 0);
            if (k == 0) continue;
            const json& d = rows[k]["vs_base"];
            QCOMPARE(num(d["decode_change"]), num(sp["decode_tok_per_s"]) / num(rows[0]["speed"]["decode_tok_per_s"]) - 1);
            QCOMPARE(num(d["itl_p99_change"]), num(sp["itl_ms_p99"]) / num(rows[0]["speed"]["itl_ms_p99"]) - 1);
            QCOMPARE(num(d["size_ratio"]), num(rows[k]["file"]["bytes"]) / num(rows[0]["file"]["bytes"]));
        }

        // Stored: listed, and shown as printed.
        Run list = runVerdict({"quant-compare", "list", "--json"}, dir);
        QVERIFY2(list.exitCode == 0, list.err.constData());
        QCOMPARE(list.json().size(), size_t(1));
        QCOMPARE(list.json()[0]["files"], json(2));
        QCOMPARE(list.json()[0]["status"], json("completed"));
        const QString id = QString::number(c["id"].get<long long>());
        Run shown = runVerdict({"quant-compare", "show", id, "--json"}, dir);
        QVERIFY2(shown.exitCode == 0, shown.err.constData());
        QCOMPARE(shown.json()["rows"], rows);
        Run table = runVerdict({"quant-compare", "show", id}, dir);
        QVERIFY2(table.out.contains("Q4_K_M") && table.out.contains("mean KLD"), table.out.constData());
        // The runs and sweeps it made are ordinary ones.
        Run sweeps = runVerdict({"sweep", "list", "--json"}, dir);
        QCOMPARE(sweeps.json()["sweeps"].size(), size_t(3));

        // The decision report of the Q8_0 run against the F16 run shows the comparison (Q8_0 is A).
        const QString q8Run = QString::number(rows[1]["accuracy"]["run_id"].get<long long>());
        const QString md = dir.filePath("r.md"), data = dir.filePath("r.json");
        Run rep = runVerdict({"report", "--run", q8Run, "--run", baseRun, "-o", md, "--data-json", data}, dir);
        QVERIFY2(rep.exitCode == 0, rep.err.constData());
        std::ifstream dataFile(data.toStdString());
        const json reportData = json::parse(dataFile, nullptr, false);
        QCOMPARE(reportData["quantization"]["side"], json("A"));
        QCOMPARE(reportData["quantization"]["comparison"]["rows"], rows);
        // Its one-point sweeps are not taken as the models' sweeps for the report's performance section.
        QCOMPARE(reportData["performance"]["a"]["sweep_ids"], json::array());
        QFile mdFile(md);
        QVERIFY(mdFile.open(QIODevice::ReadOnly));
        const QString report = QString::fromUtf8(mdFile.readAll());
        QVERIFY2(report.contains("Quantization trade-off") && report.contains("Q4_K_M"), qPrintable(report.left(3000)));
        const QString kldText = QString::asprintf("%.5f", num(rows[2]["fidelity"]["mean_kld"]));
        QVERIFY2(report.contains(kldText), qPrintable(kldText));
        Run off = runVerdict({"report", "--run", q8Run, "--run", baseRun, "-o", md, "--data-json", data, "--no-auto-quant"}, dir);
        QVERIFY2(off.exitCode == 0, off.err.constData());
        std::ifstream offFile(data.toStdString());
        QVERIFY(json::parse(offFile, nullptr, false)["quantization"].is_null());
        QCOMPARE(runVerdict({"report", "--run", q8Run, "--run", baseRun, "-o", md, "--quant-compare", "42"}, dir).exitCode, 2);
    }

    void aFileOfAnotherModelIsMarkedAndTheRestGoesOn() {
        const auto base = verdict::test::fixture("models/synth-llama-f16.gguf");
        const auto q8 = verdict::test::fixture("models/synth-llama-q8_0.gguf");
        const auto other = verdict::test::fixture("models/llama-2-tiny-random.gguf");
        VERDICT_NEED_FIXTURE(base);
        VERDICT_NEED_FIXTURE(q8);
        VERDICT_NEED_FIXTURE(other);
        QTemporaryDir dir;
        Run r = runVerdict({"quant-compare", q(base), q(other), q(q8), "--text", writeText(dir), "--ctx", "64",
                            "--chunks", "2", "--no-sweep", "--threads", "2", "--json"},
                           dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json rows = r.json()["rows"];
        QCOMPARE(rows.size(), size_t(3));
        QVERIFY(rows[1]["fidelity"].is_null());
        QVERIFY2(rows[1]["errors"]["fidelity"].get<std::string>().find("vocabulary") != std::string::npos,
                 rows[1]["errors"].dump().c_str());
        QVERIFY(rows[1]["vs_base"]["mean_kld"].is_null());
        QVERIFY(num(rows[2]["fidelity"]["mean_kld"]) > 0);
        QVERIFY(rows[2]["speed"].is_null());
        QVERIFY(rows[2]["vs_base"]["decode_change"].is_null());
    }

    void badInputIsRefusedBeforeAnythingRuns() {
        const auto base = verdict::test::fixture("models/synth-llama-f16.gguf");
        const auto q8 = verdict::test::fixture("models/synth-llama-q8_0.gguf");
        VERDICT_NEED_FIXTURE(base);
        VERDICT_NEED_FIXTURE(q8);
        QTemporaryDir dir;
        struct Case {
            QStringList args;
            int exit;
            const char* says;
        };
        const QString text = writeText(dir);
        const QString shortText = dir.filePath("short.txt");
        std::ofstream(shortText.toStdString()) << "Lily sat.";
        const std::vector<Case> cases = {
            {{q(base)}, 1, "at least one file"},
            {{q(base), q(q8), q(q8), "--text", text}, 1, "given twice"},
            {{q(base), q(q8), "--no-sweep"}, 1, "nothing to measure"},
            {{q(base), q(q8), "--text", text, "--ctx", "2"}, 1, "ctx"},
            {{q(base), dir.filePath("missing.gguf"), "--text", text}, 2, "missing.gguf"},
            {{q(base), q(q8), "--suite", "nope"}, 2, "nope"},
            {{q(base), q(q8), "--text", dir.filePath("none.txt"), "--no-sweep"}, 2, "none.txt"},
            {{q(base), q(q8), "--text", shortText, "--no-sweep"}, 2, "tokenizes to only"},
        };
        for (const Case& k : cases) {
            Run r = runVerdict(QStringList{"quant-compare"} + k.args, dir);
            QVERIFY2(r.exitCode == k.exit, (k.args.join(' ') + " -> " + QString::number(r.exitCode) + " " + r.err).toUtf8().constData());
            QVERIFY2(r.err.contains(k.says), r.err.constData());
        }
        Run shown = runVerdict({"quant-compare", "show", "99"}, dir);
        QCOMPARE(shown.exitCode, 2);
        QVERIFY(shown.err.contains("no quant comparison 99"));
        // Checks that need no model leave nothing behind; the short text is found once the base is
        // open, so that comparison is stored as failed, with the reason.
        Run list = runVerdict({"quant-compare", "list", "--json"}, dir);
        QCOMPARE(list.exitCode, 0);
        QCOMPARE(list.json().size(), size_t(1));
        QCOMPARE(list.json()[0]["status"], json("failed"));
        Run failed = runVerdict({"quant-compare", "show", QString::number(list.json()[0]["id"].get<long long>()), "--json"}, dir);
        QVERIFY(failed.json()["error"].get<std::string>().find("tokenizes to only") != std::string::npos);
    }
};

QTEST_MAIN(TestCliQuantCompare)
#include "test_cli_quant_compare.moc"
