// `verdict endpoints list|show` and `--provider` end to end: the real binary with a temporary
// config dir (no user catalog of the machine leaks in), and a suite run through a user preset
// that points at the fake OpenAI server, priced by `verdict results`.
#include "fake_openai_server.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

using nlohmann::json;

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
    json parsed() const { return json::parse(out.toStdString(), nullptr, false); }
};

Run runVerdict(const QStringList& args, const QTemporaryDir& dir, const std::map<QString, QString>& extraEnv = {}) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("VERDICT_DB", dir.filePath("v.db"));
    env.insert("XDG_CONFIG_HOME", dir.filePath("config"));
    env.remove("VERDICT_API_KEY");
    env.remove("DEEPSEEK_API_KEY");
    for (const auto& [k, v] : extraEnv) env.insert(k, v);
    p.setProcessEnvironment(env);
    p.start(VERDICT_BINARY, args);
    p.waitForFinished(180000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

void writeFile(const QString& path, const std::string& text) {
    std::ofstream f(path.toStdString(), std::ios::binary);
    f << text;
}

std::string fileBytes(const QString& path) {
    std::ifstream f(path.toStdString(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

const char* const kPresetIds[] = {"openai", "deepseek", "moonshot", "openrouter", "together", "fireworks", "groq", "mistral",
                                  "azure-openai", "vllm", "sglang", "tgi", "llama-server", "ollama", "lmstudio"};
constexpr const char* kKey = "sk-provider-test-0123456789";

}  // namespace

class TestCliEndpoints : public QObject {
    Q_OBJECT
private slots:
    void listJsonShape() {
        QTemporaryDir dir;
        Run r = runVerdict({"endpoints", "list", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json j = r.parsed();
        QCOMPARE(j["schema_version"], json(1));
        QCOMPARE(j["user_file"], json(nullptr));
        QCOMPARE(j["providers"].size(), std::size(kPresetIds));
        for (size_t i = 0; i < std::size(kPresetIds); ++i) {
            const json& p = j["providers"][i];
            QCOMPARE(p["id"], json(kPresetIds[i]));
            for (const char* key : {"id", "name", "kind", "base_url", "auth", "key_env", "routes", "query", "api_version",
                                    "supports", "max_concurrency", "docs_url", "notes", "prices", "prices_note", "origin"})
                QVERIFY2(p.contains(key), key);
            QCOMPARE(p["origin"], json("builtin"));
        }
        Run text = runVerdict({"endpoints", "list"}, dir);
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains("azure-openai") && text.out.contains("DEEPSEEK_API_KEY"));
    }

    void showJsonShapeAndErrors() {
        QTemporaryDir dir;
        Run r = runVerdict({"endpoints", "show", "deepseek", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json p = r.parsed()["provider"];
        QCOMPARE(p["id"], json("deepseek"));
        QCOMPARE(p["kind"], json("hosted"));
        QCOMPARE(p["auth"], json("bearer"));
        QCOMPARE(p["key_env"], json("DEEPSEEK_API_KEY"));
        QCOMPARE(p["supports"]["reasoning_field"], json("reasoning_content"));
        QCOMPARE(p["routes"]["completions"], json(nullptr));
        const json& price = p["prices"][1];
        QCOMPARE(price["model"], json("deepseek-reasoner"));
        QCOMPARE(price["output"]["value"], json(0.42));
        QVERIFY(price["output"]["source"].is_string() && price["output"]["as_of"].is_string());
        QCOMPARE(runVerdict({"endpoints", "show", "vllm", "--json"}, dir).parsed()["provider"]["prices"], json::array());

        Run text = runVerdict({"endpoints", "show", "azure-openai"}, dir);
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains("api-version={api_version}") && text.out.contains("2024-10-21"), text.out.constData());

        Run unknown = runVerdict({"endpoints", "show", "nope"}, dir);
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY(unknown.err.contains("known providers") && unknown.err.contains("openrouter"));
        QCOMPARE(runVerdict({"endpoints"}, dir).exitCode, 1);
        QCOMPARE(runVerdict({"endpoints", "show"}, dir).exitCode, 1);
    }

    void userFileOverridesAndErrors() {
        QTemporaryDir dir;
        QDir().mkpath(dir.filePath("config/verdict"));
        const QString def = dir.filePath("config/verdict/providers.json");
        writeFile(def, "{\"providers\": [{\"id\": \"deepseek\", \"prices\": [{\"model\": \"deepseek-chat\", \"output\": 0.5}]},\n"
            "                                        {\"id\": \"mine\", \"name\": \"Mine\", \"kind\": \"hosted\", \"base_url\": \"https://x.example/v1\",\n"
            "                                         \"auth\": \"bearer\", \"prices\": [{\"model\": \"m\", \"input\": 1, \"output\": 2}]}]}");
        Run r = runVerdict({"endpoints", "list", "--json"}, dir);  // the default user file is read
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json j = r.parsed();
        QCOMPARE(j["user_file"], json(def.toStdString()));
        QCOMPARE(j["providers"].size(), std::size(kPresetIds) + 1);
        QCOMPARE(j["providers"][1]["origin"], json("user"));
        QCOMPARE(j["providers"][1]["prices"][0]["output"]["value"], json(0.5));
        QCOMPARE(j["providers"][1]["prices"][0]["output"]["source"], json("user file " + def.toStdString()));
        QCOMPARE(j["providers"].back()["id"], json("mine"));

        const QString bad = dir.filePath("bad.json");
        writeFile(bad, "{\"providers\": [{\"id\": \"openai\", \"prices\": [{\"model\": \"gpt-4o\", \"output\": {\"value\": -3, \"source\": \"s\", \"as_of\": \"2026\"}}]}]}");
        Run e = runVerdict({"endpoints", "list", "--providers-file", bad}, dir);
        QCOMPARE(e.exitCode, 2);
        QVERIFY2(e.err.contains(bad.toUtf8()) && e.err.contains("$.providers[0].prices[0].output.value"), e.err.constData());
        Run missing = runVerdict({"endpoints", "list", "--providers-file", dir.filePath("none.json")}, dir);
        QCOMPARE(missing.exitCode, 2);
    }

    // --provider supplies the base URL, the key variable and the auth header; the run records the
    // provider and model (never the key), and `verdict results` prices it from its stored tokens.
    void runThroughAProviderIsPriced() {
        verdict::test::FakeOpenAiServer s({.apiKey = kKey, .answer = "A"});
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        const QString providers = dir.filePath("providers.json");
        writeFile(providers, json{{"providers",
                                   {{{"id", "fake"}, {"name", "Fake provider"}, {"kind", "hosted"}, {"base_url", s.baseUrl()},
                                     {"auth", "bearer"}, {"key_env", "FAKE_PROVIDER_KEY"},
                                     {"prices", {{{"model", "fake-model"}, {"input", 1.5}, {"cached_input", 0.5}, {"output", 6}}}}}}}}
                                 .dump());
        writeFile(dir.filePath("s.jsonl"), "{\"id\": \"q1\", \"prompt\": \"A or B?\", \"answer\": \"A\"}\n"
                                           "{\"id\": \"q2\", \"prompt\": \"B or A?\", \"answer\": \"B\"}\n");
        QCOMPARE(runVerdict({"suite", "import", dir.filePath("s.jsonl"), "--name", "p"}, dir).exitCode, 0);

        // a hosted preset whose key variable is unset: a usage error naming it
        Run noKey = runVerdict({"run", "--provider", "fake", "--providers-file", providers, "fake-model", "--suite", "p"}, dir);
        QCOMPARE(noKey.exitCode, 1);
        QVERIFY2(noKey.err.contains("FAKE_PROVIDER_KEY"), noKey.err.constData());
        QCOMPARE(runVerdict({"run", "--provider", "nope", "m", "--suite", "p"}, dir).exitCode, 2);

        const std::map<QString, QString> env = {{"FAKE_PROVIDER_KEY", kKey}};
        Run r = runVerdict({"run", "--provider", "fake", "--providers-file", providers, "fake-model", "--suite", "p", "--json"}, dir, env);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json run = r.parsed();
        QCOMPARE(run["n_items"], json(2));
        QCOMPARE(run["n_errors"], json(0));
        const QString id = QString::number(run["run_id"].get<long long>());

        Run res = runVerdict({"results", id, "--json", "--providers-file", providers}, dir);
        QVERIFY2(res.exitCode == 0, res.err.constData());
        const json rr = res.parsed()["runs"][0];
        QCOMPARE(rr["generation"]["provider"]["id"], json("fake"));
        QCOMPARE(rr["generation"]["provider"]["model"], json("fake-model"));
        // the model's prices as the catalog had them when the run was made are kept with it
        QCOMPARE(rr["generation"]["provider"]["price"]["output"]["value"], json(6.0));
        const json& cost = rr["cost"];
        QVERIFY2(cost.is_object(), rr.dump().c_str());
        QCOMPARE(cost["provider"], json("fake"));
        QCOMPARE(cost["model"], json("fake-model"));
        const double in = rr["tokens_in"].get<double>(), out = rr["tokens_out"].get<double>();
        QVERIFY(in > 0 && out > 0);
        QCOMPARE(cost["tokens"]["prompt"].get<double>(), in);
        QCOMPARE(cost["tokens"]["output"].get<double>(), out);
        QCOMPARE(cost["tokens"]["cached_prompt"], json(0));
        const double want = (in * 1.5 + out * 6) / 1e6;
        QVERIFY(std::fabs(cost["usd_total"].get<double>() - want) < 1e-15);
        QVERIFY(std::fabs(cost["usd_per_mtok_output"].get<double>() - want / out * 1e6) < 1e-9);
        QVERIFY(std::fabs(cost["usd_per_mtok_all"].get<double>() - want / (in + out) * 1e6) < 1e-9);
        for (const char* key : {"prices", "input_usd", "cached_input_usd", "output_usd", "notes"}) QVERIFY2(cost.contains(key), key);

        Run text = runVerdict({"results", id, "--providers-file", providers}, dir);
        QVERIFY2(text.out.contains("cost (fake fake-model): $"), text.out.constData());
        QCOMPARE(cost["price_source"], json("run"));
        // without the user file the preset is gone from the catalog: the recorded prices still price it
        const json gone = runVerdict({"results", id, "--json"}, dir).parsed()["runs"][0]["cost"];
        QVERIFY(std::fabs(gone["usd_total"].get<double>() - want) < 1e-15);
        QCOMPARE(gone["price_source"], json("run"));

        // the decision report's cost section carries the hosted-API side of both runs
        Run r2 = runVerdict({"run", "--provider", "fake", "--providers-file", providers, "fake-model", "--suite", "p", "--new",
                             "--json"},
                            dir, env);
        QVERIFY2(r2.exitCode == 0, r2.err.constData());
        const QString id2 = QString::number(r2.parsed()["run_id"].get<long long>());
        const QString md = dir.filePath("r.md");
        Run rep = runVerdict({"report", "--run", id, "--run", id2, "-o", md}, dir);
        QVERIFY2(rep.exitCode == 0, rep.err.constData());
        QFile f(md);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString report = QString::fromUtf8(f.readAll());
        QVERIFY2(report.contains("Hosted API") && report.contains("fake / fake-model") && report.contains("as recorded with the run"),
                 qPrintable(report.left(3000)));
        QVERIFY(fileBytes(dir.filePath("v.db")).find(kKey) == std::string::npos);  // the key is never stored
    }
};

QTEST_GUILESS_MAIN(TestCliEndpoints)
#include "test_cli_endpoints.moc"
