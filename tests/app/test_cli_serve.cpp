// `verdict serve` and `verdict load` end to end on loopback: the OpenAI-compatible routes and
// their error answers, 32 concurrent streaming clients for ~10 s with zero lost requests (every
// request answered completely or counted as an error), /metrics agreeing with what was sent,
// the API key, `verdict load` driving the server and storing its levels as a sweep, and https
// (--tls-cert/--tls-key with a certificate made in the test) with and without a key.
#include "core/net/http.h"
#include "fixtures.h"
#include "test_certificate.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <atomic>
#include <thread>
#include <tuple>

using namespace verdict::core::net;
using json = nlohmann::json;

namespace {

struct Server {
    QProcess proc;
    std::string url;
    bool start(const QStringList& extra) {
        const auto model = verdict::test::fixture("models/stories260K.gguf");
        proc.start(VERDICT_BINARY, QStringList{"serve", QString::fromStdString(model.string()), "--port", "0", "--json"} + extra);
        if (!proc.waitForReadyRead(60000)) return false;
        const json j = json::parse(proc.readLine().toStdString(), nullptr, false);
        if (!j.is_object() || !j.contains("url")) return false;
        url = j["url"].get<std::string>();
        return true;
    }
    ~Server() {
        proc.terminate();
        proc.waitForFinished(20000);
    }
};

HttpResponse post(const std::string& url, const json& body, std::map<std::string, std::string> headers = {}) {
    headers["Content-Type"] = "application/json";
    auto r = httpRequest("POST", url, headers, body.dump());
    return r ? *r : HttpResponse{};
}

}  // namespace

class TestCliServe : public QObject {
    Q_OBJECT
private slots:
    void routesAndErrors() {
        VERDICT_NEED_FIXTURE(verdict::test::fixture("models/stories260K.gguf"));
        Server s;
        QVERIFY(s.start({"--parallel", "4", "--max-body", "2000"}));
        auto h = httpRequest("GET", s.url + "/health", {}, "");
        QVERIFY(h.ok());
        QCOMPARE(h->status, 200);
        auto models = httpRequest("GET", s.url + "/v1/models", {}, "");
        QVERIFY(models.ok());
        const json m = json::parse(models->body);
        QCOMPARE(m["data"][0]["id"].get<std::string>(), std::string("stories260K.gguf"));

        HttpResponse c = post(s.url + "/v1/completions", {{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}, {"ignore_eos", true}});
        QCOMPARE(c.status, 200);
        json cj = json::parse(c.body);
        QCOMPARE(cj["object"].get<std::string>(), std::string("text_completion"));
        QCOMPARE(cj["usage"]["completion_tokens"].get<int>(), 12);
        QVERIFY(cj["usage"]["prompt_tokens"].get<int>() > 1);
        QCOMPARE(cj["choices"][0]["finish_reason"].get<std::string>(), std::string("length"));
        const std::string greedy = cj["choices"][0]["text"].get<std::string>();
        QVERIFY(!greedy.empty());
        // greedy is deterministic, and the streamed text is the same text
        HttpResponse again = post(s.url + "/v1/completions", {{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}, {"ignore_eos", true}});
        QCOMPARE(json::parse(again.body)["choices"][0]["text"].get<std::string>(), greedy);
        std::string streamed, raw;
        SseParser sse;
        int events = 0;
        bool done = false;
        auto st = httpRequest("POST", s.url + "/v1/completions", {{"Content-Type", "application/json"}},
                              json{{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}, {"ignore_eos", true}, {"stream", true}}.dump(),
                              {}, [&](std::string_view d) {
                                  sse.feed(d, [&](const std::string& e) {
                                      if (e == "[DONE]") { done = true; return; }
                                      ++events;
                                      streamed += json::parse(e)["choices"][0]["text"].get<std::string>();
                                  });
                                  return true;
                              });
        QVERIFY(st.ok());
        QVERIFY(done);
        QVERIFY(events >= 2);
        QCOMPARE(streamed, greedy);

        HttpResponse chat = post(s.url + "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 4}});
        QCOMPARE(chat.status, 200);
        QCOMPARE(json::parse(chat.body)["choices"][0]["message"]["role"].get<std::string>(), std::string("assistant"));

        // errors: 400 with the field named, 404, 405, 413
        HttpResponse bad = post(s.url + "/v1/completions", json("not an object"));
        QCOMPARE(bad.status, 400);
        auto badJson = httpRequest("POST", s.url + "/v1/completions", {{"Content-Type", "application/json"}}, "{\"prompt\": ");
        QCOMPARE(badJson->status, 400);
        QVERIFY(badJson->body.find("not valid JSON") != std::string::npos);
        HttpResponse range = post(s.url + "/v1/completions", {{"prompt", "x"}, {"max_tokens", 100000}});
        QCOMPARE(range.status, 400);
        QCOMPARE(json::parse(range.body)["error"]["param"].get<std::string>(), std::string("max_tokens"));
        // bounds written as numbers people write ("1 and 4096", not "1.000000 and 4096.000000")
        const std::string rangeMsg = json::parse(range.body)["error"]["message"].get<std::string>();
        QVERIFY2(rangeMsg.find("between 1 and ") != std::string::npos && rangeMsg.find(".000000") == std::string::npos,
                 rangeMsg.c_str());
        // a count must be an integer; a role must be one of the chat roles
        HttpResponse frac = post(s.url + "/v1/completions", {{"prompt", "x"}, {"max_tokens", 4.5}});
        QCOMPARE(frac.status, 400);
        QVERIFY2(frac.body.find("must be an integer") != std::string::npos, frac.body.c_str());
        HttpResponse role = post(s.url + "/v1/chat/completions", {{"messages", {{{"role", "wizard"}, {"content", "Hi"}}}}});
        QCOMPARE(role.status, 400);
        QCOMPARE(json::parse(role.body)["error"]["param"].get<std::string>(), std::string("messages[0].role"));
        HttpResponse noMsg = post(s.url + "/v1/chat/completions", {{"messages", json::array()}});
        QCOMPARE(noMsg.status, 400);
        HttpResponse wrongModel = post(s.url + "/v1/completions", {{"prompt", "x"}, {"model", "gpt-9"}});
        QCOMPARE(wrongModel.status, 404);
        QCOMPARE(httpRequest("GET", s.url + "/v1/nothing", {}, "")->status, 404);
        QCOMPARE(httpRequest("GET", s.url + "/v1/completions", {}, "")->status, 405);
        HttpResponse big = post(s.url + "/v1/completions", {{"prompt", std::string(5000, 'a')}});
        QCOMPARE(big.status, 413);
    }

    void suiteRunOnEndpoint() {
        VERDICT_NEED_FIXTURE(verdict::test::fixture("models/stories260K.gguf"));
        Server s;
        QVERIFY(s.start({"--parallel", "2"}));
        QTemporaryDir dir;
        const QString suite = dir.filePath("s.jsonl");
        QFile f(suite);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"prompt\": \"Once upon a time\", \"category\": \"story\", \"reference\": \"there\"}\n"
                "{\"prompt\": \"Tom had a\", \"category\": \"story\", \"reference\": \"dog\"}\n");
        f.close();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("VERDICT_DB", dir.filePath("v.db"));
        QProcess imp;
        imp.setProcessEnvironment(env);
        imp.start(VERDICT_BINARY, {"suite", "import", suite, "--name", "ep"});
        QVERIFY(imp.waitForFinished(60000));
        QCOMPARE(imp.exitCode(), 0);
        QProcess run;
        run.setProcessEnvironment(env);
        run.start(VERDICT_BINARY, {"run", QString::fromStdString(s.url), "--suite", "ep", "--max-tokens", "6", "--json"});
        QVERIFY(run.waitForFinished(120000));
        QVERIFY2(run.exitCode() == 0, run.readAllStandardError().constData());
        const json j = json::parse(run.readAllStandardOutput().toStdString(), nullptr, false);
        QCOMPARE(j["n_items"].get<int>(), 2);
        QCOMPARE(j["n_errors"].get<int>(), 0);
        QVERIFY(j["model"]["path"].get<std::string>().find("stories260K.gguf") != std::string::npos);
        QVERIFY(j["mean_ttft_ms"].get<double>() > 0);
    }

    void concurrentStreamingClientsLoseNothing() {
        VERDICT_NEED_FIXTURE(verdict::test::fixture("models/stories260K.gguf"));
        Server s;
        QVERIFY(s.start({"--parallel", "8", "--threads", "1"}));
        std::atomic<int> sent{0}, complete{0}, errors{0};
        std::atomic<bool> stop{false};
        std::vector<std::thread> clients;
        for (int c = 0; c < 32; ++c) {
            clients.emplace_back([&, c] {
                int n = 0;
                while (!stop) {
                    ++sent;
                    const json body = {{"prompt", "Tom and Lily " + std::to_string(c * 1000 + n++)}, {"max_tokens", 16},
                                       {"ignore_eos", true}, {"stream", true}, {"temperature", 0.7}, {"seed", c}};
                    SseParser sse;
                    bool done = false;
                    int chunks = 0;
                    auto r = httpRequest("POST", s.url + "/v1/completions", {{"Content-Type", "application/json"}}, body.dump(), {},
                                         [&](std::string_view d) {
                                             sse.feed(d, [&](const std::string& e) {
                                                 if (e == "[DONE]") done = true;
                                                 else ++chunks;
                                             });
                                             return true;
                                         });
                    if (r.ok() && r->status == 200 && done && chunks >= 1) ++complete;
                    else ++errors;
                }
            });
        }
        std::this_thread::sleep_for(std::chrono::seconds(10));
        stop = true;
        for (auto& t : clients) t.join();
        QVERIFY(sent > 32);
        QCOMPARE(complete + errors, sent.load());  // zero lost: every request ended one way or the other
        QCOMPARE(errors.load(), 0);
        auto metrics = httpRequest("GET", s.url + "/metrics", {}, "");
        QVERIFY(metrics.ok());
        const std::string expect = "verdict_requests_total{endpoint=\"/v1/completions\",status=\"200\"} " + std::to_string(complete.load());
        QVERIFY2(metrics->body.find(expect) != std::string::npos, metrics->body.substr(0, 600).c_str());
        QVERIFY(metrics->body.find("verdict_time_to_first_token_seconds_count " + std::to_string(complete.load())) != std::string::npos);
        // The server's memory under the Prometheus clients' name, as `verdict soak` reads it.
        const size_t rss = metrics->body.find("\nprocess_resident_memory_bytes ");
        QVERIFY2(rss != std::string::npos, metrics->body.c_str());
        QVERIFY(std::stoull(metrics->body.substr(rss + 31)) > (1u << 20));
        qInfo("32 streaming clients, 10 s: %d requests, %d complete, %d errors", sent.load(), complete.load(), errors.load());
    }

    void apiKeyAndLoadCommand() {
        VERDICT_NEED_FIXTURE(verdict::test::fixture("models/stories260K.gguf"));
        Server s;
        QVERIFY(s.start({"--api-key", "sekret", "--parallel", "4"}));
        QCOMPARE(httpRequest("GET", s.url + "/v1/models", {}, "")->status, 401);
        QCOMPARE(httpRequest("GET", s.url + "/v1/models", {{"Authorization", "Bearer sekret"}}, "")->status, 200);
        QCOMPARE(httpRequest("GET", s.url + "/health", {}, "")->status, 200);

        QTemporaryDir dir;
        QProcess load;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("VERDICT_DB", dir.filePath("v.db"));
        env.insert("MY_KEY", "sekret");
        load.setProcessEnvironment(env);
        load.start(VERDICT_BINARY, {"load", QString::fromStdString(s.url), "--api-key-env", "MY_KEY", "--concurrency", "1,4",
                                    "--requests", "8", "--max-tokens", "8", "--prompt-words", "8", "--slo", "ttft=10s,tpot=1s",
                                    "--tokenizer", QString::fromStdString(verdict::test::fixture("models/stories260K.gguf").string()), "--json"});
        QVERIFY(load.waitForFinished(120000));
        QVERIFY2(load.exitCode() == 0, load.readAllStandardError().constData());
        const json j = json::parse(load.readAllStandardOutput().toStdString(), nullptr, false);
        QVERIFY(j.is_object());
        QCOMPARE(j["levels"].size(), size_t(2));
        for (const auto& l : j["levels"]) {
            QCOMPARE(l["metrics"]["requests"].get<int>(), 8);
            QCOMPARE(l["metrics"]["failed"].get<int>(), 0);
            QCOMPARE(l["metrics"]["output_tokens"].get<int>(), 64);  // from usage: 8 tokens each
            QVERIFY(l["metrics"]["ttft_ms"]["p50"].get<double>() > 0);
            QCOMPARE(l["metrics"]["itl_ms"]["n"].get<int>(), 8 * 7);
            QCOMPARE(l["good_requests"].get<int>(), 8);
            QVERIFY(!l["series"].empty());
            // Our own server counts with the model's tokenizer, as the client does: usage on every
            // request, the client's count beside it, max_tokens kept.
            const json& tok = l["token_accounting"];
            QCOMPARE(tok["with_usage"].get<int>(), 8);
            QCOMPARE(tok["counted"].get<int>(), 8);
            QCOMPARE(tok["exceeded_max_tokens"].get<int>(), 0);
            QCOMPARE(tok["usage"]["output"].get<int>(), 64);
            QCOMPARE(tok["prompt_diff_pct"].get<double>(), 0.0);  // one tokenizer on both sides
            // The output is re-tokenized from text: a tiny model's sampled ids need not be the
            // canonical encoding of their text, so only the sign of sense is checked here.
            QVERIFY(tok["client"]["output"].get<int>() > 0);
            qInfo("token accounting: %s", tok.dump().c_str());
        }
        QVERIFY(j["sweep_id"].is_number());
        // every request refused (400: max_tokens beyond the server's limit): said so, exit 3, nothing stored
        QProcess refused;
        refused.setProcessEnvironment(env);
        refused.start(VERDICT_BINARY, {"load", QString::fromStdString(s.url), "--api-key-env", "MY_KEY", "--concurrency", "1",
                                       "--requests", "3", "--max-tokens", "100000", "--json"});
        QVERIFY(refused.waitForFinished(60000));
        const QByteArray refusedErr = refused.readAllStandardError();
        QCOMPARE(refused.exitCode(), 3);
        QVERIFY2(refusedErr.contains("all 3 requests failed") && refusedErr.contains("http_4xx"), refusedErr.constData());
        QVERIFY(refused.readAllStandardOutput().isEmpty());
        // a level above the endpoint's cap is refused before anything is sent (--max-concurrency)
        QProcess capped;
        capped.setProcessEnvironment(env);
        capped.start(VERDICT_BINARY, {"load", QString::fromStdString(s.url), "--api-key-env", "MY_KEY", "--concurrency", "4",
                                      "--max-concurrency", "2", "--requests", "4", "--no-store", "--json"});
        QVERIFY(capped.waitForFinished(60000));
        QCOMPARE(capped.exitCode(), 1);
        QVERIFY2(capped.readAllStandardError().contains("cap of 2"), "no cap named");
        // without the key: every request is a counted 401, never retried
        QProcess denied;
        denied.setProcessEnvironment(QProcessEnvironment::systemEnvironment());
        denied.start(VERDICT_BINARY, {"load", QString::fromStdString(s.url), "--model", "stories260K.gguf", "--requests", "3",
                                      "--concurrency", "1", "--no-store", "--json"});
        QVERIFY(denied.waitForFinished(60000));
        QCOMPARE(denied.exitCode(), 2);  // the endpoint check already says 401
        QVERIFY(denied.readAllStandardError().contains("401"));

        // keys that protect nothing are refused before anything is bound
        const QString model = QString::fromStdString(verdict::test::fixture("models/stories260K.gguf").string());
        for (const QString& key : {QString(" "), QString("short")}) {
            QProcess bad;
            bad.start(VERDICT_BINARY, {"serve", model, "--host", "0.0.0.0", "--port", "0", "--api-key", key});
            QVERIFY(bad.waitForFinished(30000));
            QCOMPARE(bad.exitCode(), 1);
            const QByteArray err = bad.readAllStandardError();
            QVERIFY2(err.contains(key == " " ? "visible characters" : "at least 8 characters"), err.constData());
            QVERIFY(err.contains("process list"));  // the ps warning
        }
    }
    void httpsWithAndWithoutAKey() {
        VERDICT_NEED_FIXTURE(verdict::test::fixture("models/stories260K.gguf"));
        verdict::test::TestCertificate cert;
        QVERIFY2(cert.ok(), cert.error().c_str());
        const QString certFile = QString::fromStdString(cert.certFile()), keyFile = QString::fromStdString(cert.keyFile());
        QTemporaryDir dir;
        auto runLoad = [&](const std::string& url, const QStringList& extra, const QProcessEnvironment& env) {
            QProcess load;
            load.setProcessEnvironment(env);
            load.start(VERDICT_BINARY, QStringList{"load", QString::fromStdString(url), "--ca-file", certFile, "--concurrency", "2",
                                                   "--requests", "4", "--max-tokens", "4", "--prompt-words", "4", "--no-store", "--json"} +
                                           extra);
            load.waitForFinished(120000);
            return std::tuple{load.exitCode(), load.readAllStandardOutput(), load.readAllStandardError()};
        };
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("VERDICT_DB", dir.filePath("v.db"));
        env.remove("VERDICT_API_KEY");
        {  // loopback without a key
            Server s;
            QVERIFY(s.start({"--tls-cert", certFile, "--tls-key", keyFile, "--parallel", "2"}));
            QVERIFY2(s.url.rfind("https://127.0.0.1:", 0) == 0, s.url.c_str());
            HttpClientOptions co;
            co.tls.caFile = cert.certFile();
            auto h = httpRequest("GET", s.url + "/health", {}, "", co);
            QVERIFY2(h.ok(), h.ok() ? "" : h.error().message.c_str());
            QCOMPARE(h->status, 200);
            const auto [rc, out, err] = runLoad(s.url, {}, env);
            QVERIFY2(rc == 0, err.constData());
            const json j = json::parse(out.toStdString(), nullptr, false);
            QCOMPARE(j["levels"][0]["metrics"]["requests"].get<int>(), 4);
            QCOMPARE(j["levels"][0]["metrics"]["failed"].get<int>(), 0);
        }
        {  // with --api-key: the key opens it, its absence is a 401
            Server s;
            QVERIFY(s.start({"--tls-cert", certFile, "--tls-key", keyFile, "--api-key", "sekret-over-tls", "--parallel", "2"}));
            QVERIFY(s.url.rfind("https://", 0) == 0);
            const auto [deniedRc, deniedOut, deniedErr] = runLoad(s.url, {"--model", "stories260K.gguf"}, env);
            QCOMPARE(deniedRc, 2);
            QVERIFY2(deniedErr.contains("401"), deniedErr.constData());
            QProcessEnvironment keyed = env;
            keyed.insert("MY_KEY", "sekret-over-tls");
            const auto [rc, out, err] = runLoad(s.url, {"--api-key-env", "MY_KEY"}, keyed);
            QVERIFY2(rc == 0, err.constData());
            QCOMPARE(json::parse(out.toStdString(), nullptr, false)["levels"][0]["metrics"]["failed"].get<int>(), 0);
        }
        // files that cannot serve: clear errors naming the file, before or after the model loads
        const QString model = QString::fromStdString(verdict::test::fixture("models/stories260K.gguf").string());
        struct Bad {
            QStringList args;
            int exitCode;
            QByteArray says;
        };
        for (const Bad& b : {Bad{{"--tls-cert", "/nonexistent/cert.pem", "--tls-key", keyFile}, 1, "--tls-cert /nonexistent/cert.pem: no such file"},
                             Bad{{"--tls-cert", keyFile, "--tls-key", keyFile}, 3, ("the TLS certificate " + keyFile + " is not a PEM certificate").toUtf8()},
                             Bad{{"--tls-cert", certFile}, 1, "--tls-cert and --tls-key go together"}}) {
            QProcess bad;
            bad.start(VERDICT_BINARY, QStringList{"serve", model, "--port", "0"} + b.args);
            QVERIFY(bad.waitForFinished(60000));
            const QByteArray err = bad.readAllStandardError();
            QCOMPARE(bad.exitCode(), b.exitCode);
            QVERIFY2(err.contains(b.says), err.constData());
        }
    }
};

QTEST_GUILESS_MAIN(TestCliServe)
#include "test_cli_serve.moc"
