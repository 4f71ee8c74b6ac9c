// Endpoints behind TLS and a key, against the fake OpenAI server (tests/common/fake_openai_server.h):
// the libcurl client (verified against a CA file, refused without it, --insecure recorded),
// keep-alive reuse, `verdict run https://...`, `verdict compare` and `verdict load https://...` with the key from the
// environment, provider quirks (role-only first chunk, usage only at the end, reasoning_content),
// 429 + Retry-After and a stream dropped mid-way retried, and the key found nowhere it should not
// be (stdout, stderr, the database file).
#include "cli_process.h"
#include "core/net/http.h"
#include "fake_openai_server.h"

#include <QtTest/QtTest>

#include <fstream>
#include <sstream>

using namespace verdict;
using json = nlohmann::json;

namespace {

const char* const kKey = "sk-planted-9f3c1e77d2a4";  // a key no output may contain

QString q(const std::string& s) { return QString::fromStdString(s); }

test::CliRun runWithKey(const QStringList& args, const QString& db) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("VERDICT_DB", db);
    env.insert("MY_PROVIDER_KEY", kKey);
    env.remove("VERDICT_API_KEY");
    p.setProcessEnvironment(env);
    p.start(VERDICT_BINARY, args);
    p.waitForFinished(180000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

std::string fileBytes(const QString& path) {
    std::ifstream f(path.toStdString(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

bool importSuite(const QTemporaryDir& dir, const QString& db) {
    QFile f(dir.filePath("s.jsonl"));
    if (!f.open(QIODevice::WriteOnly)) return false;
    f.write("{\"id\": \"q1\", \"prompt\": \"Answer with one letter: A or B?\", \"answer\": \"A\", \"category\": \"x\"}\n"
            "{\"id\": \"q2\", \"prompt\": \"Answer with one letter: B or A?\", \"answer\": \"B\", \"category\": \"x\"}\n"
            "{\"id\": \"q3\", \"prompt\": \"Which letter comes first?\", \"answer\": \"A\", \"category\": \"y\"}\n");
    f.close();
    const auto r = test::runVerdict({"suite", "import", dir.filePath("s.jsonl"), "--name", "tls"}, db);
    return r.exitCode == 0;
}

}  // namespace

class TestEndpointTls : public QObject {
    Q_OBJECT
private slots:
    void clientVerifiesTheCertificateAndReusesConnections() {
        test::FakeOpenAiServer s({.tls = true, .apiKey = kKey});
        QVERIFY2(s.ok(), s.error().c_str());
        const std::map<std::string, std::string> auth = {{"Authorization", std::string("Bearer ") + kKey}};
        core::net::HttpClientOptions o;
        o.tls.caFile = s.certFile();
        for (int i = 0; i < 5; ++i) {
            auto r = core::net::httpRequest("GET", s.baseUrl() + "/models", auth, "", o);
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
            QCOMPARE(r->status, 200);
            QVERIFY(r->body.find("fake-model") != std::string::npos);
        }
        QCOMPARE(s.connections(), int64_t(1));  // keep-alive: one TLS connection served all five

        // the system CA store does not know a self-signed server: a clear error that says what to do
        auto refused = core::net::httpRequest("GET", s.baseUrl() + "/models", auth, "", {});
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("TLS with 127.0.0.1:" + std::to_string(s.port())) != std::string::npos &&
                     refused.error().message.find("--ca-file") != std::string::npos,
                 refused.error().message.c_str());
        core::net::HttpClientOptions insecure;
        insecure.tls.insecure = true;
        auto unverified = core::net::httpRequest("GET", s.baseUrl() + "/models", auth, "", insecure);
        QVERIFY(unverified.ok());
        QCOMPARE(unverified->status, 200);
        // no key: 401 is an answer, not an error
        auto denied = core::net::httpRequest("GET", s.baseUrl() + "/models", {}, "", o);
        QVERIFY(denied.ok());
        QCOMPARE(denied->status, 401);
        // plain http spoken to a TLS port fails cleanly
        QVERIFY(!core::net::httpRequest("GET", "http://127.0.0.1:" + std::to_string(s.port()) + "/v1/models", auth, "", o).ok());
    }

    void cancelAndIdleTimeoutsAreMilliseconds() {
        test::FakeOpenAiServer s({.firstByteDelayMs = 3000});
        QVERIFY2(s.ok(), s.error().c_str());
        const json body = {{"model", "fake-model"}, {"stream", true}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
        core::net::HttpClientOptions o;
        o.readTimeoutMs = 300;
        auto slow = core::net::httpRequest("POST", s.baseUrl() + "/chat/completions", {{"Content-Type", "application/json"}},
                                           body.dump(), o, [](std::string_view) { return true; });
        QVERIFY(!slow.ok());
        QVERIFY2(slow.error().message.find("no data for 300 ms (read timeout)") != std::string::npos, slow.error().message.c_str());
        std::atomic<bool> cancel{true};
        core::net::HttpClientOptions c;
        c.cancel = &cancel;
        auto cancelled = core::net::httpRequest("POST", s.baseUrl() + "/chat/completions", {{"Content-Type", "application/json"}},
                                                body.dump(), c, [](std::string_view) { return true; });
        QVERIFY(!cancelled.ok());
        QVERIFY(cancelled.error().message.find("cancelled") != std::string::npos);
    }

    void suiteRunOverTlsWithAKeyFromTheEnvironment() {
        test::FakeOpenAiServer s({.tls = true, .apiKey = kKey, .answer = "A", .reasoning = "Let me think about the letters."});
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        QVERIFY(importSuite(dir, db));

        const QStringList base = {"run", q(s.baseUrl()), "--suite", "tls", "--api-key-env", "MY_PROVIDER_KEY", "--json"};
        auto r = runWithKey(base + QStringList{"--ca-file", q(s.certFile())}, db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        json j = r.json();
        QCOMPARE(j["n_items"].get<int>(), 3);
        QCOMPARE(j["n_errors"].get<int>(), 0);
        QCOMPARE(j["n_scored"].get<int>(), 3);
        QCOMPARE(j["accuracy"].get<double>(), 2.0 / 3.0);  // the fake always answers A
        QCOMPARE(j["device"].get<std::string>(), std::string("endpoint"));
        QVERIFY(j["mean_ttft_ms"].get<double>() > 0);

        // the reasoning came apart from the answer (reasoning_content) and is stored apart
        auto ex = runWithKey({"export", QString::number(j["run_id"].get<int64_t>()), "--format", "json"}, db);
        QVERIFY2(ex.exitCode == 0, ex.err.constData());
        QVERIFY2(ex.out.contains("Let me think about the letters.") && ex.out.contains("ttfa_ms"), ex.out.left(2000).constData());

        // without the CA file: refused, saying why, nothing run
        auto refused = runWithKey(base, db);
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains("TLS with") && refused.err.contains("--ca-file"), refused.err.constData());
        // --insecure: runs, warns, and the stored run says so
        auto insecure = runWithKey(base + QStringList{"--insecure", "--new"}, db);
        QVERIFY2(insecure.exitCode == 0, insecure.err.constData());
        QVERIFY(insecure.err.contains("WARNING: --insecure"));
        QCOMPARE(insecure.json()["device"].get<std::string>(), std::string("endpoint (TLS NOT VERIFIED: --insecure)"));
        // --api-key-env naming an unset variable is a usage error
        auto unset = runWithKey({"run", q(s.baseUrl()), "--suite", "tls", "--api-key-env", "NO_SUCH_VARIABLE_X"}, db);
        QCOMPARE(unset.exitCode, 1);
        QVERIFY(unset.err.contains("NO_SUCH_VARIABLE_X"));
        // a CA file that is no certificate: named
        auto bad = runWithKey(base + QStringList{"--ca-file", dir.filePath("s.jsonl")}, db);
        QCOMPARE(bad.exitCode, 2);
        QVERIFY(bad.err.contains("no PEM certificate"));

        QVERIFY(s.received().find(kKey) != std::string::npos);  // the server did get it
        for (const auto* out : {&r, &refused, &insecure, &ex})
            QVERIFY2(!out->out.contains(kKey) && !out->err.contains(kKey), "the key leaked into the output");
        QVERIFY2(fileBytes(db).find(kKey) == std::string::npos, "the key is in the database");
    }

    // `verdict compare` with both sides on https endpoints that need a key: two TLS servers with
    // their own self-signed certificates cannot both be trusted through one --ca-file, so side B
    // is the same server under another model name; the vote is stored, the key is nowhere.
    void compareOverTlsWithAKey() {
        test::FakeOpenAiServer s({.tls = true, .apiKey = kKey, .answer = "B"});
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        const QString a = q(s.baseUrl() + " fake-model"), b = q(s.baseUrl() + " fake-model-b");
        auto r = runWithKey({"compare", a, b, "--prompt", "A or B?", "--max-tokens", "4", "--api-key-env", "MY_PROVIDER_KEY",
                             "--ca-file", q(s.certFile()), "--vote", "tie", "--json"},
                            db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json j = r.json();
        for (const char* side : {"a", "b"}) {
            QCOMPARE(j[side]["backend"].get<std::string>(), std::string("endpoint"));
            QCOMPARE(j[side]["device"].get<std::string>(), std::string("endpoint"));
            QCOMPARE(j[side]["text"].get<std::string>(), std::string("B"));
            QVERIFY(j[side]["ttft_ms"].get<double>() > 0);
        }
        QCOMPARE(j["vote"]["winner"].get<std::string>(), std::string("tie"));
        // without the CA file: refused before anything is asked, naming the fix
        auto refused = runWithKey({"compare", a, b, "--prompt", "A or B?", "--api-key-env", "MY_PROVIDER_KEY"}, db);
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains("--ca-file"), refused.err.constData());
        QVERIFY(s.received().find(kKey) != std::string::npos);
        for (const auto* out : {&r, &refused})
            QVERIFY2(!out->out.contains(kKey) && !out->err.contains(kKey), "the key leaked into the output");
        QVERIFY2(fileBytes(db).find(kKey) == std::string::npos, "the key is in the database");
    }

    void loadOverTlsRetriesRateLimitsAndDroppedStreams() {
        test::FakeOpenAiServer s({.tls = true, .apiKey = kKey, .exactTokens = true, .rejectFirst = 2, .retryAfterS = 2,
                                  .dropFirstAfterChunks = 3});
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        const QString db = dir.filePath("v.db");
        QElapsedTimer timer;
        timer.start();
        auto r = runWithKey({"load", q(s.baseUrl()), "--ca-file", q(s.certFile()), "--api-key-env", "MY_PROVIDER_KEY",
                             "--concurrency", "2", "--requests", "6", "--max-tokens", "8", "--json"},
                            db);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const json j = r.json();
        QCOMPARE(j["levels"].size(), size_t(1));
        const json& l = j["levels"][0];
        QCOMPARE(l["metrics"]["requests"].get<int>(), 6);
        QCOMPARE(l["metrics"]["failed"].get<int>(), 0);
        QCOMPARE(l["metrics"]["output_tokens"].get<int>(), 48);  // usage, sent only in the last chunk
        QCOMPARE(l["metrics"]["itl_ms"]["n"].get<int>(), 6 * 7);  // the role-only first chunk is no token
        QCOMPARE(l["retries"].get<int>(), 3);                     // two 429s and one dropped stream
        QCOMPARE(s.rejected(), int64_t(2));
        QVERIFY2(timer.elapsed() >= 2000, "Retry-After: 2 was not honoured");  // the backoff alone waits < 1 s
        QVERIFY(j["sweep_id"].is_number());
        QVERIFY(!r.out.contains(kKey) && !r.err.contains(kKey));
        QVERIFY(fileBytes(db).find(kKey) == std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestEndpointTls)
#include "test_endpoint_tls.moc"
