// `verdict tco` and `verdict hardware` end to end: the real binary, a temporary config dir (so no
// user catalog of the machine leaks in) and, for the RUN_ID path, a real run on the stories260K
// fixture model.
#include "fixtures.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
    nlohmann::json json() const { return nlohmann::json::parse(out.toStdString(), nullptr, false); }
};

Run runVerdict(const QStringList& args, const QTemporaryDir& dir, int timeoutMs = 300000) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("VERDICT_DB", dir.filePath("v.db"));
    env.insert("XDG_CONFIG_HOME", dir.filePath("config"));
    p.setProcessEnvironment(env);
    p.start(VERDICT_BINARY, args);
    p.waitForFinished(timeoutMs);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

bool near(double got, double want, double rel = 1e-9) { return std::fabs(got - want) <= rel * std::max(1.0, std::fabs(want)); }

}  // namespace

class TestCliTco : public QObject {
    Q_OBJECT
private slots:
    void tpsPathJsonShape() {
        QTemporaryDir dir;
        // docs/tco.md worked example on the built-in h100-sxm (700 W), price given explicitly
        Run r = runVerdict({"tco", "--hardware", "h100-sxm", "--tps", "1500", "--purchase-usd", "30000",
                            "--ops-usd-per-month", "100", "--fixed-usd-per-year", "60000", "--tokens-per-day", "5e8",
                            "--baseline-usd-per-mtok", "2", "--json"},
                           dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto j = r.json();
        QVERIFY(j.is_object());
        for (const char* key : {"hardware", "estimated", "throughput", "projection", "cost_tps", "assumptions", "per_device",
                                "fleet", "baseline"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["hardware"]["id"], nlohmann::json("h100-sxm"));
        QCOMPARE(j["estimated"], nlohmann::json(false));
        QCOMPARE(j["throughput"]["source"], nlohmann::json("cli"));
        QCOMPARE(j["throughput"]["run_id"], nlohmann::json(nullptr));
        QCOMPARE(j["throughput"]["measured_on"]["id"], nlohmann::json("h100-sxm"));
        QCOMPARE(j["projection"], nlohmann::json(nullptr));
        QCOMPARE(j["assumptions"]["mode"], nlohmann::json("buy"));
        QVERIFY(near(j["per_device"]["usd_per_mtok"].get<double>(), 0.5143662269575512));
        QVERIFY(near(j["per_device"]["hourly_usd"].get<double>(), 1.3887888127853882));
        QCOMPARE(j["fleet"]["devices"].get<int>(), 8);
        QVERIFY(near(j["fleet"]["tco_3y_usd"].get<double>(), 471978.96));
        QVERIFY(near(j["baseline"]["payback_months"].get<double>(), 10.011343408267312));
        QVERIFY(near(j["baseline"]["npv_usd"].get<double>(), 528168.5883376682));

        Run text = runVerdict({"tco", "--hardware", "h100-sxm", "--tps", "1500", "--rent"}, dir);
        QVERIFY2(text.exitCode == 0, text.err.constData());
        QVERIFY(text.out.contains("per 1M output tokens"));
        QVERIFY(text.out.contains("measured on h100-sxm"));
        QVERIFY(!text.out.contains("ESTIMATED"));
    }

    void projectionIsLabelled() {
        QTemporaryDir dir;
        Run r = runVerdict({"tco", "--hardware", "h100-sxm", "--measured-on", "rtx-4090", "--tps", "100", "--rent", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto j = r.json();
        QCOMPARE(j["estimated"], nlohmann::json(true));
        QCOMPARE(j["projection"]["estimated"], nlohmann::json(true));
        QCOMPARE(j["throughput"]["decode_tps"].get<double>(), 100.0);  // the measurement, unchanged
        const double ratio = j["projection"]["decode_ratio"].get<double>();
        QVERIFY(near(j["cost_tps"].get<double>(), 100 * ratio));
        QVERIFY(j["projection"]["basis"].get<std::string>().find("GB/s") != std::string::npos);
        Run text = runVerdict({"tco", "--hardware", "h100-sxm", "--measured-on", "rtx-4090", "--tps", "100", "--rent"}, dir);
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains("ESTIMATED"));
        QVERIFY(text.out.contains("basis:"));
    }

    void badInput() {
        QTemporaryDir dir;
        Run unknown = runVerdict({"tco", "--hardware", "h900", "--tps", "100"}, dir);
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY(unknown.err.contains("unknown hardware id 'h900'"));
        QVERIFY(unknown.err.contains("known ids:"));
        QVERIFY(unknown.err.contains("h100-sxm"));
        QVERIFY(unknown.err.contains("this-machine"));
        QCOMPARE(runVerdict({"tco", "--tps", "100"}, dir).exitCode, 1);                       // no --hardware
        QCOMPARE(runVerdict({"tco", "--hardware", "l4"}, dir).exitCode, 1);                     // no throughput
        QCOMPARE(runVerdict({"tco", "--hardware", "l4", "--tps", "fast"}, dir).exitCode, 1);    // not a number
        QCOMPARE(runVerdict({"tco", "--hardware", "l4", "--tps", "10", "--rent", "--buy"}, dir).exitCode, 1);
        Run util = runVerdict({"tco", "--hardware", "l4", "--tps", "10", "--utilisation", "1.5"}, dir);
        QCOMPARE(util.exitCode, 2);
        QVERIFY(util.err.contains("utilisation 1.5 is outside (0, 1]"));
        QCOMPARE(runVerdict({"tco", "--hardware", "l4", "--tps", "-3"}, dir).exitCode, 2);
        QCOMPARE(runVerdict({"tco", "--hardware", "l4", "--tps", "10", "--baseline-usd-per-mtok", "1"}, dir).exitCode, 2);
        Run noPrice = runVerdict({"tco", "--hardware", "this-machine", "--tps", "10"}, dir);
        QCOMPARE(noPrice.exitCode, 2);
        QVERIFY(noPrice.err.contains("no purchase price"));
        QCOMPARE(runVerdict({"tco", "999", "--hardware", "l4"}, dir).exitCode, 2);  // no such run
    }

    void hardwareListShowAndUserFile() {
        QTemporaryDir dir;
        Run list = runVerdict({"hardware", "list", "--json"}, dir);
        QVERIFY2(list.exitCode == 0, list.err.constData());
        const auto j = list.json();
        QCOMPARE(j["schema_version"].get<int>(), 1);
        QCOMPARE(j["user_file"], nlohmann::json(nullptr));
        QVERIFY(j["hardware"].size() >= 14);
        for (const auto& e : j["hardware"]) {
            QVERIFY(e["fp16_tflops_dense"]["source"].is_string());
            QVERIFY(e["fp16_tflops_dense"]["as_of"].is_string());
        }
        Run show = runVerdict({"hardware", "show", "mi300x", "--json"}, dir);
        QCOMPARE(show.exitCode, 0);
        QCOMPARE(show.json()["hardware"]["kind"], nlohmann::json("gpu"));
        Run text = runVerdict({"hardware", "show", "h200"}, dir);
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains("memory_bandwidth_gbs"));
        QCOMPARE(runVerdict({"hardware", "show", "nope"}, dir).exitCode, 2);
        QCOMPARE(runVerdict({"hardware"}, dir).exitCode, 1);

        // The default user file ($XDG_CONFIG_HOME/verdict/hardware.json) overrides by id.
        QDir().mkpath(dir.filePath("config/verdict"));
        const QString userFile = dir.filePath("config/verdict/hardware.json");
        {
            std::ofstream f(userFile.toStdString());
            f << nlohmann::json({{"hardware", {{{"id", "l4"}, {"cloud_usd_per_hour", 0.5}}}}}).dump();
        }
        Run over = runVerdict({"tco", "--hardware", "l4", "--tps", "100", "--rent", "--json"}, dir);
        QVERIFY2(over.exitCode == 0, over.err.constData());
        QCOMPARE(over.json()["assumptions"]["cloud_usd_per_hour"].get<double>(), 0.5);
        QCOMPARE(over.json()["hardware"]["origin"], nlohmann::json("user"));
        // A malformed user file: exit 2 naming the file and the JSON path.
        const QString bad = dir.filePath("bad.json");
        {
            std::ofstream f(bad.toStdString());
            f << nlohmann::json({{"hardware", {{{"id", "l4"}, {"tdp_w", {{"value", -1}}}}}}}).dump();
        }
        Run broken = runVerdict({"hardware", "list", "--hardware-file", bad}, dir);
        QCOMPARE(broken.exitCode, 2);
        QVERIFY2(broken.err.contains(bad.toUtf8() + ": $.hardware[0].tdp_w.value"), broken.err.constData());
    }

    void runIdPath() {
        const auto m = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(m);
        QTemporaryDir dir;
        const QString suite = dir.filePath("s.jsonl");
        {
            std::ofstream f(suite.toStdString());
            for (int i = 0; i < 3; ++i) {
                std::string id = "s";  // appended, not "s" + ...: GCC 12 warns falsely (-Wrestrict) on that
                id += std::to_string(i);
                f << nlohmann::json({{"id", id}, {"prompt", "Once upon a time"}, {"reference", "there"}}).dump() << "\n";
            }
        }
        QCOMPARE(runVerdict({"suite", "import", suite, "--name", "s"}, dir).exitCode, 0);
        Run run = runVerdict({"run", QString::fromStdString(m.string()), "--suite", "s", "--max-tokens", "16", "--threads",
                              "1", "--json"},
                             dir);
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QString runId = QString::number(run.json()["run_id"].get<int>());
        Run exp = runVerdict({"export", runId, "--format", "json"}, dir);
        QCOMPARE(exp.exitCode, 0);
        std::vector<double> tps;
        const auto ej = exp.json();
        const auto& items = ej.is_array() ? ej : ej["items"];
        for (const auto& it : items)
            if (it["decode_tps"].is_number() && it["error"].get<std::string>().empty()) tps.push_back(it["decode_tps"].get<double>());
        if (tps.empty()) QSKIP("the run stored no decode tok/s (outputs too short)");
        std::sort(tps.begin(), tps.end());
        const double median = tps.size() % 2 ? tps[tps.size() / 2] : (tps[tps.size() / 2 - 1] + tps[tps.size() / 2]) / 2;

        Run tco = runVerdict({"tco", runId, "--hardware", "this-machine", "--rent", "--cloud-usd-per-hour", "0.5", "--json"}, dir);
        QVERIFY2(tco.exitCode == 0, tco.err.constData());
        const auto j = tco.json();
        QCOMPARE(j["throughput"]["source"], nlohmann::json("run"));
        QCOMPARE(j["throughput"]["run_id"].get<int>(), runId.toInt());
        QCOMPARE(j["throughput"]["run_items"].get<size_t>(), tps.size());
        QCOMPARE(j["throughput"]["measured_on"]["id"], nlohmann::json("this-machine"));
        QVERIFY(near(j["throughput"]["decode_tps"].get<double>(), median));
        QCOMPARE(j["estimated"], nlohmann::json(false));
        // Projecting this CPU run onto a GPU needs this machine's bandwidth: a clear error first,
        // then, with the figure in a user file, an estimate.
        Run noBw = runVerdict({"tco", runId, "--hardware", "h100-sxm", "--rent", "--json"}, dir);
        QCOMPARE(noBw.exitCode, 2);
        QVERIFY2(noBw.err.contains("'this-machine' has no memory_bandwidth_gbs"), noBw.err.constData());
        const QString user = dir.filePath("hw.json");
        {
            std::ofstream f(user.toStdString());
            f << nlohmann::json({{"hardware", {{{"id", "this-machine"}, {"memory_bandwidth_gbs", 20}}}}}).dump();
        }
        Run proj = runVerdict({"tco", runId, "--hardware", "h100-sxm", "--rent", "--hardware-file", user, "--json"}, dir);
        QVERIFY2(proj.exitCode == 0, proj.err.constData());
        QCOMPARE(proj.json()["estimated"], nlohmann::json(true));
        QVERIFY(near(proj.json()["projection"]["decode_ratio"].get<double>(), 3350.0 / 20.0));
    }
};

QTEST_GUILESS_MAIN(TestCliTco)
#include "test_cli_tco.moc"
