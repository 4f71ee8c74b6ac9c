// `verdict report` end to end: two fixture models run on a small suite and swept, then the report
// as PDF, HTML and Markdown. Checks: every section heading and numbers stored in the database are
// in the PDF text; pdftoppm renders every page; nothing is drawn outside the page (the renderer's
// layout boxes and pdftotext -bbox); runs on different suites refuse the accuracy comparison; a
// run pair without sweeps says performance data is missing.
#include "fixtures.h"

#include <QtTest/QtTest>

#include <sqlite3.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
    nlohmann::json json() const { return nlohmann::json::parse(out.toStdString(), nullptr, false); }
};

Run runProgram(const QString& program, const QStringList& args, const QString& db = {}, int timeoutMs = 300000) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!db.isEmpty()) env.insert("VERDICT_DB", db);
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    env.remove("QT_QPA_PLATFORM");  // the command must choose offscreen by itself
    p.setProcessEnvironment(env);
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) p.kill();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

Run verdictCmd(const QStringList& args, const QString& db) { return runProgram(VERDICT_BINARY, args, db); }

double queryDouble(const QString& db, const std::string& sql) {
    sqlite3* h = nullptr;
    double v = -1;
    if (sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_double(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return v;
}

// The report's number formats (core/report/report_format.h), written out again here.
std::string percent(double f) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f %%", f * 100);
    return b;
}
std::string ms(double v) {
    char b[32];
    std::snprintf(b, sizeof b, v < 10 ? "%.2f ms" : v < 1000 ? "%.1f ms" : "%.0f ms", v);
    return b;
}

// pdftotext's text with every run of whitespace made one space (table cells wrap differently).
QString pdfText(const QString& pdf) {
    Run r = runProgram("pdftotext", {"-layout", pdf, "-"});
    return QString::fromUtf8(r.out).simplified();
}

int pdfPages(const QString& pdf) {
    Run r = runProgram("pdfinfo", {pdf});
    for (const QString& line : QString::fromUtf8(r.out).split('\n'))
        if (line.startsWith("Pages:")) return line.mid(6).trimmed().toInt();
    return -1;
}

const QStringList kHeadings = {"1. Summary", "2. Models", "3. Accuracy", "4. Performance", "5. Cost",
                               "6. Decision checklist", "7. Method and reproducibility"};

QString writeSuite(const QTemporaryDir& dir, const QString& name, int n, const std::string& tag) {
    const QString path = dir.filePath(name);
    std::ofstream f(path.toStdString());
    const char* openings[] = {"Once upon a time", "One day, a little girl", "The cat", "\u4ece\u524d\u6709\u4e00\u53ea\u5c0f\u732b",
                              "Tom and his dog"};
    for (int i = 0; i < n; ++i) {
        std::string id = "s";
        id += std::to_string(i);
        std::string prompt = std::string(openings[i % 5]) + " " + tag + " (" + std::to_string(i) + ")";
        if (i == 1) {  // a long prompt with a long unbroken token: wraps and is elided, never overflows
            for (int k = 0; k < 60; ++k) prompt += " and then the little dog ran to the big red barn";
            prompt += " " + std::string(300, 'x');
        }
        nlohmann::json line = {{"id", id}, {"prompt", prompt}, {"reference", "the"}, {"category", i % 2 ? "odd" : "even"}};
        f << line.dump() << "\n";
    }
    return path;
}

}  // namespace

class TestCliReport : public QObject {
    Q_OBJECT

private slots:
    void reportEndToEnd() {
        const auto modelA = verdict::test::fixture("models/stories260K.gguf");
        const auto modelB = verdict::test::fixture("models/llama-2-tiny-random.gguf");
        VERDICT_NEED_FIXTURE(modelA);
        VERDICT_NEED_FIXTURE(modelB);
        if (QStandardPaths::findExecutable("pdftotext").isEmpty() || QStandardPaths::findExecutable("pdftoppm").isEmpty())
            QSKIP("poppler-utils (pdftotext, pdftoppm) not installed");
        QTemporaryDir dir;
        const QString db = dir.filePath("verdict.db");
        const QString a = QString::fromStdString(modelA.string()), b = QString::fromStdString(modelB.string());

        QCOMPARE(verdictCmd({"suite", "import", writeSuite(dir, "stories.jsonl", 5, "s"), "--name", "stories"}, db).exitCode, 0);
        QCOMPARE(verdictCmd({"suite", "import", writeSuite(dir, "other.jsonl", 3, "o"), "--name", "other"}, db).exitCode, 0);
        auto runOn = [&](const QString& model, const QString& suite) {
            Run r = verdictCmd({"run", model, "--suite", suite, "--limit", "4", "--max-tokens", "6", "--threads", "2", "--json"}, db);
            if (r.exitCode != 0) qWarning("%s", r.err.constData());
            return r.exitCode == 0 ? r.json()["run_id"].get<int>() : -1;
        };
        const int runA = runOn(a, "stories"), runB = runOn(b, "stories"), runC = runOn(b, "other");
        QVERIFY(runA > 0 && runB > 0 && runC > 0);
        const QString ra = QString::number(runA), rb = QString::number(runB), rc = QString::number(runC);

        // No sweep yet: a shorter report that says performance data is missing.
        {
            const QString pdf = dir.filePath("nosweep.pdf");
            Run r = verdictCmd({"report", "--run", ra, "--run", rb, "-o", pdf, "--json"}, db);
            QVERIFY2(r.exitCode == 0, r.err.constData());
            const auto j = r.json();
            QVERIFY(j.is_object());
            QCOMPARE(j["sweeps"]["a"].size(), size_t(0));
            const QString text = pdfText(pdf);
            QVERIFY2(text.contains("Performance data missing for A"), qPrintable(text.left(2000)));
            QVERIFY(text.contains("No cost analysis given"));
        }

        // A tiny sweep of each model.
        int sweep[2] = {0, 0};
        for (int k = 0; k < 2; ++k) {
            Run s = verdictCmd({"sweep", k == 0 ? a : b, "--prompt", "8", "--gen", "4", "--batch", "1", "--reps", "1", "--bandwidth",
                             "10", "--threads", "2", "--json"},
                            db);
            QVERIFY2(s.exitCode == 0, s.err.constData());
            sweep[k] = s.json()["sweep_id"].get<int>();
        }
        // This machine's prices, so the cost section is measured (not projected).
        const QString hw = dir.filePath("hardware.json");
        {
            std::ofstream f(hw.toStdString());
            f << "{\"schema_version\": 1, \"hardware\": [{\"id\": \"this-machine\", \"memory_bandwidth_gbs\": 10, "
                 "\"fp16_tflops_dense\": 1, \"purchase_usd\": 2000, \"tdp_w\": 150}]}\n";
        }

        const QString pdf = dir.filePath("report.pdf"), layout = dir.filePath("layout.json"), data = dir.filePath("data.json");
        Run r = verdictCmd({"report", "--run", ra, "--run", rb, "--hardware", "this-machine", "--hardware-file", hw, "--tokens-per-day",
                         "1e6", "--baseline-usd-per-mtok", "0.5", "--weights", "accuracy=3,ttft=1,cost=2", "--sla-ttft-ms", "500",
                         "-o", pdf, "--layout-json", layout, "--data-json", data, "--json"},
                        db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto j = r.json();
        QVERIFY(j.is_object());
        QCOMPARE(QString::fromStdString(j["output"].get<std::string>()), QFileInfo(pdf).absoluteFilePath());
        QVERIFY(j["recommendation"]["headline"].is_string());
        for (const char* key : {"accuracy", "ttft", "tpot", "p99", "throughput", "memory", "cost", "context"})
            QVERIFY2(j["winners"].contains(key), key);
        QCOMPARE(j["sweeps"]["a"][0].get<int>(), sweep[0]);
        QCOMPARE(j["sweeps"]["b"][0].get<int>(), sweep[1]);
        QVERIFY(j["accuracy_refused"].is_null());

        // Every heading and numbers from the database appear in the PDF text.
        const QString text = pdfText(pdf);
        for (const QString& h : kHeadings) QVERIFY2(text.contains(h), qPrintable("missing heading " + h));
        const double accA = queryDouble(db, "SELECT AVG(correct) FROM run_items WHERE correct IS NOT NULL AND run_id = " +
                                                std::to_string(runA));
        QVERIFY(accA >= 0);
        QVERIFY2(text.contains(QString::fromStdString(percent(accA))), percent(accA).c_str());
        for (int k = 0; k < 2; ++k) {
            const double ttft = queryDouble(db, "SELECT json_extract(metrics, '$.ttft_ms.p50') FROM sweep_points WHERE batch = 1 "
                                                "AND sweep_id = " + std::to_string(sweep[k]));
            QVERIFY(ttft > 0);
            QVERIFY2(text.contains(QString::fromStdString(ms(ttft))), ms(ttft).c_str());
        }
        // The quality gate: on by default, in the data, its line first in the reasons.
        {
            const auto dj = nlohmann::json::parse(std::ifstream(data.toStdString()));
            QCOMPARE(dj["quality_gate"]["no_worse_significant"].get<bool>(), true);
            QVERIFY(dj["quality_gate"]["min_accuracy"].is_null());
            QVERIFY(dj["quality_gate"]["summary"].get<std::string>().find("Quality gate") == 0);
            QCOMPARE(dj["recommendation"]["reasons"][0], dj["quality_gate"]["summary"]);
            QVERIFY(text.contains("Quality gate"));
        }
        // The cost of A in the report is the one `verdict tco` gives for A's sweep: one throughput
        // rule (core/tco/tco_report.h), the same device cost per million tokens.
        {
            const auto dj = nlohmann::json::parse(std::ifstream(data.toStdString()));
            const auto& costA = dj["cost"]["a"];
            QVERIFY2(costA["missing"].is_null(), costA.dump().c_str());
            Run t = verdictCmd({"tco", "--sweep", QString::number(sweep[0]), "--hardware", "this-machine", "--hardware-file", hw,
                                "--tokens-per-day", "1e6", "--baseline-usd-per-mtok", "0.5", "--json"},
                               db);
            QVERIFY2(t.exitCode == 0, t.err.constData());
            const auto tj = t.json();
            QCOMPARE(tj["cost_tps"].get<double>(), costA["throughput_tok_per_s"].get<double>());
            QCOMPARE(tj["per_device"]["usd_per_mtok"].get<double>(), costA["usd_per_mtok"].get<double>());
            QCOMPARE(tj["fleet"]["devices"].get<double>(), costA["fleet"]["devices"].get<double>());
            QVERIFY2(costA["throughput_source"].get<std::string>().rfind("sweep " + std::to_string(sweep[0]) + ": best output tok/s", 0) == 0,
                     costA["throughput_source"].dump().c_str());
        }
        // From the run alone (no sweep), projected to an H100: the report and `verdict tco RUN`
        // project the same decode and prefill rates (the report used to leave the prefill out).
        {
            const QString data2 = dir.filePath("data-run.json");
            Run rr = verdictCmd({"report", "--run", ra, "--run", rb, "--no-auto-sweep", "--hardware", "h100-sxm", "--hardware-file", hw,
                                 "--tokens-per-day", "1e6", "-o", dir.filePath("run-cost.md"), "--data-json", data2},
                                db);
            QVERIFY2(rr.exitCode == 0, rr.err.constData());
            const auto costA = nlohmann::json::parse(std::ifstream(data2.toStdString()))["cost"]["a"];
            QVERIFY2(costA["missing"].is_null(), costA.dump().c_str());
            Run t = verdictCmd({"tco", ra, "--hardware", "h100-sxm", "--hardware-file", hw, "--tokens-per-day", "1e6", "--json"}, db);
            QVERIFY2(t.exitCode == 0, t.err.constData());
            const auto tj = t.json();
            QCOMPARE(tj["cost_tps"].get<double>(), costA["throughput_tok_per_s"].get<double>());
            QCOMPARE(tj["per_device"]["usd_per_mtok"].get<double>(), costA["usd_per_mtok"].get<double>());
            QCOMPARE(QString::fromStdString(tj["projection"]["basis"].get<std::string>()),
                     QString::fromStdString(costA["projection_basis"].get<std::string>()));
            QVERIFY2(costA["projection_basis"].get<std::string>().find("prefill") != std::string::npos,
                     costA["projection_basis"].dump().c_str());
        }
        QCOMPARE(verdictCmd({"report", "--run", ra, "--run", rb, "--quality-gate", "maybe", "-o", pdf}, db).exitCode, 1);
        QCOMPARE(verdictCmd({"report", "--run", ra, "--run", rb, "--min-accuracy", "120", "-o", pdf}, db).exitCode, 1);
        const std::string sha = nlohmann::json::parse(std::ifstream(data.toStdString()))["models"]["a"]["sha256"];
        QVERIFY(text.contains(QString::fromStdString(sha.substr(0, 12))));
        QVERIFY(text.contains("verdict report --run " + ra));  // the exact command
        QVERIFY(!text.contains("No cost analysis given"));

        // pdftoppm renders every page.
        const int pages = pdfPages(pdf);
        QVERIFY(pages >= 8);  // title page + seven sections
        QCOMPARE(j["pages"].get<int>(), pages);
        Run ppm = runProgram("pdftoppm", {"-r", "50", "-png", pdf, dir.filePath("page")});
        QCOMPARE(ppm.exitCode, 0);
        QCOMPARE(QDir(dir.path()).entryList({"page-*.png"}).size(), pages);

        // Layout: every box inside the page; body text inside the margins.
        const auto lj = nlohmann::json::parse(std::ifstream(layout.toStdString()));
        const double W = lj["page_size_pt"][0], H = lj["page_size_pt"][1];
        const double cx = lj["content_pt"][0], cw = lj["content_pt"][2];
        QCOMPARE(lj["pages"].get<int>(), pages);
        int texts = 0;
        for (const auto& box : lj["boxes"]) {
            const double x = box["rect"][0], y = box["rect"][1], w = box["rect"][2], h = box["rect"][3];
            const std::string where = box["text"].get<std::string>() + " on page " + std::to_string(box["page"].get<int>());
            QVERIFY2(x >= 0 && y >= 0 && x + w <= W + 0.01 && y + h <= H + 0.01, where.c_str());
            if (box["kind"] == "text") {
                ++texts;
                QVERIFY2(x >= cx - 0.01 && x + w <= cx + cw + 0.01, where.c_str());
            }
        }
        QVERIFY(texts > 100);
        // The same from the PDF itself: pdftotext -bbox places every word on the page.
        Run bbox = runProgram("pdftotext", {"-bbox", pdf, "-"});
        QRegularExpression word("<word xMin=\"([-0-9.]+)\" yMin=\"([-0-9.]+)\" xMax=\"([-0-9.]+)\" yMax=\"([-0-9.]+)\"");
        int words = 0;
        for (auto it = word.globalMatch(QString::fromUtf8(bbox.out)); it.hasNext();) {
            auto m = it.next();
            ++words;
            QVERIFY(m.captured(1).toDouble() >= 0 && m.captured(2).toDouble() >= 0);
            QVERIFY2(m.captured(3).toDouble() <= W + 0.5 && m.captured(4).toDouble() <= H + 0.5, qPrintable(m.captured(0)));
        }
        QVERIFY(words > 200);

        // HTML (inline SVG charts) and Markdown carry the same sections.
        for (const char* ext : {"html", "md"}) {
            const QString out = dir.filePath(QString("report.") + ext);
            Run t = verdictCmd({"report", "--run", ra, "--run", rb, "--hardware", "h100-sxm", "--hardware-file", hw, "--tokens-per-day",
                             "1e6", "-o", out},
                            db);
            QVERIFY2(t.exitCode == 0, t.err.constData());
            QFile f(out);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QString body = QString::fromUtf8(f.readAll());
            for (const QString& h : kHeadings) QVERIFY2(body.contains(h), qPrintable(QString(ext) + ": " + h));
            QVERIFY(body.contains("(est.)"));  // projected from this machine to an H100: an estimate
            if (QString(ext) == "html") QVERIFY(body.contains("<svg"));
        }

        // Different suites: the accuracy comparison is refused with a clear message.
        {
            const QString out = dir.filePath("diff.pdf");
            Run d = verdictCmd({"report", "--run", ra, "--run", rc, "-o", out, "--json"}, db);
            QVERIFY2(d.exitCode == 0, d.err.constData());
            QVERIFY(d.err.contains("accuracy comparison refused"));
            QVERIFY(d.err.contains("different suites"));
            QVERIFY(d.json()["accuracy_refused"].is_string());
            const QString t = pdfText(out);
            QVERIFY(t.contains("Accuracy comparison refused"));
        }

        // Bad input.
        QCOMPARE(verdictCmd({"report", "--run", ra, "-o", dir.filePath("x.pdf")}, db).exitCode, 1);
        QCOMPARE(verdictCmd({"report", "--run", ra, "--run", "999", "-o", dir.filePath("x.pdf")}, db).exitCode, 2);
        QCOMPARE(verdictCmd({"report", "--run", ra, "--run", rb, "--weights", "speed=2", "-o", dir.filePath("x.pdf")}, db).exitCode, 1);
        QCOMPARE(verdictCmd({"report", "--run", ra, "--run", rb, "--hardware", "nope", "-o", dir.filePath("x.pdf")}, db).exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestCliReport)
#include "test_cli_report.moc"
