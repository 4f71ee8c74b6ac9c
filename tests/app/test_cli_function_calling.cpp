// Function-calling suites end to end (issue 22): Verdict's shape and BFCL's imported, run against
// the fake OpenAI server (which answers with streamed tool_calls chosen by the prompt, and with
// text after a tool result), graded into error classes, and read back by `verdict results` and
// the report with the error rates worked out by hand; a local model run reads its calls from
// the text.
#include "cli_process.h"
#include "fake_openai_server.h"
#include "fixtures.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

using nlohmann::json;

namespace {

using Run = verdict::test::CliRun;

Run runVerdict(const QStringList& args, const QTemporaryDir& dir) { return verdict::test::runVerdictIn(args, dir.path()); }

bool near(const json& v, double x, double eps = 1e-9) { return v.is_number() && std::fabs(v.get<double>() - x) < eps; }

void writeLines(const QString& path, const std::vector<json>& lines) {
    std::ofstream f(path.toStdString());
    for (const json& l : lines) f << l.dump() << "\n";
}

json weatherTool() {
    return {{"type", "function"},
            {"function",
             {{"name", "get_weather"},
              {"description", "Current weather"},
              {"parameters",
               {{"type", "object"},
                {"properties", {{"city", {{"type", "string"}}}, {"unit", {{"type", "string"}, {"enum", {"celsius", "kelvin"}}}}}},
                {"required", {"city"}}}}}}};
}

json forecastTool() {
    return {{"name", "get_forecast"},
            {"parameters",
             {{"type", "object"},
              {"properties", {{"city", {{"type", "string"}}}, {"days", {{"type", "integer"}}}}},
              {"required", {"city", "days"}}}}};
}

json timeTool() {
    return {{"name", "get_time"}, {"parameters", {{"type", "object"}, {"properties", {{"tz", {{"type", "string"}}}}}}}};
}

std::string call(const std::string& name, const json& args) {
    return "CALL " + json::array({{{"name", name}, {"arguments", args}}}).dump();
}

// Eight items, one per outcome: 3 right (a call, no call, a multi-step answer), 5 wrong.
std::vector<json> suiteLines() {
    const json tools = {weatherTool(), forecastTool(), timeTool()};
    auto item = [&](const std::string& id, const std::string& prompt, const json& expected) {
        return json{{"id", id}, {"category", id.substr(0, 1)}, {"prompt", prompt}, {"tools", tools}, {"expected_calls", expected}};
    };
    json paris = item("w1", "Weather in Paris?", {{{"name", "get_weather"}, {"arguments", {{"city", "Paris"}}}, {"accept", {{"unit", {"celsius", nullptr}}}}}});
    json rome = item("w2", "Weather in Rome?", {{{"name", "get_weather"}, {"arguments", {{"city", "Rome"}}}}});
    json hello = item("n1", "Say hello", json::array());
    json joke = item("n2", "Tell a joke", json::array());
    json tokyo = item("c1", "Time in Tokyo?", {{{"name", "get_time"}, {"arguments", {{"tz", "Asia/Tokyo"}}}}});
    json days = item("t1", "3-day forecast for Lima", {{{"name", "get_forecast"}, {"arguments", {{"city", "Lima"}, {"days", 3}}}}});
    json warm = item("m1", "How warm is it in Oslo?", {{{"name", "get_weather"}, {"arguments", {{"city", "Oslo"}}}}});
    warm["tool_results"] = {{"get_weather", {{"temp_c", 4}}}};
    warm["reference"] = "4";
    json cold = item("m2", "How cold is it in Bergen?", {{{"name", "get_weather"}, {"arguments", {{"city", "Bergen"}}}}});
    cold["tool_results"] = {{"get_weather", "{\"temp_k\": 270}"}};
    cold["reference"] = "270";
    return {paris, rome, hello, joke, tokyo, days, warm, cold};
}

verdict::test::FakeOpenAiOptions serverAnswers() {
    return {.answer = "I cannot help.",
            .answerFor = {{"Paris", call("get_weather", {{"city", "paris"}, {"unit", "celsius"}})},  // standardised: right
                          {"Rome", call("get_weather", {{"city", "Rome"}, {"unit", "kelvin"}})},     // extra argument
                          {"hello", "Hello!"},                                                          // no call: right
                          {"joke", call("get_weather", {{"city", "Nice"}})},                          // unexpected call
                          {"Tokyo", "It is noon."},                                                     // no call
                          {"forecast", call("get_forecast", {{"city", "Lima"}, {"days", "3"}})},      // wrong type
                          {"warm", call("get_weather", {{"city", "Oslo"}})},
                          {"temp_c", "It is 4 degrees."},                                               // final answer: right
                          {"Bergen", call("get_weather", {{"city", "Bergen"}})},
                          {"temp_k", "It is cold."}}};                                                  // wrong answer
}

}  // namespace

class TestCliFunctionCalling : public QObject {
    Q_OBJECT
private slots:
    void endpointRunResultsAndReport() {
        verdict::test::FakeOpenAiServer s(serverAnswers());
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        writeLines(dir.filePath("fc.jsonl"), suiteLines());
        Run imp = runVerdict({"suite", "import", dir.filePath("fc.jsonl"), "--name", "fc", "--json"}, dir);
        QVERIFY2(imp.exitCode == 0, imp.err.constData());
        QCOMPARE(imp.json()["imported"], json(8));
        QCOMPARE(imp.json()["suite"]["shape"], json("tools"));

        Run r = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "fc", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString id = QString::number(r.json()["run_id"].get<long long>());
        // The tools went out as `tools`, the result came back as a tool message for the call's id.
        QVERIFY(s.received().find("\"tools\":[") != std::string::npos);
        QVERIFY(s.received().find("\"tool_call_id\":\"call_0\"") != std::string::npos);
        // 8 first requests + 2 multi-step follow-ups.
        QCOMPARE(s.completions(), int64_t(10));

        Run res = runVerdict({"results", id, "--json"}, dir);
        QVERIFY2(res.exitCode == 0, res.err.constData());
        const json run = res.json()["runs"][0];
        QVERIFY(near(run["accuracy"], 3.0 / 8.0));
        const json fc = run["function_calling"];
        QVERIFY2(fc.is_object(), run.dump().c_str());
        QCOMPARE(fc["items"], json(8));
        QCOMPARE(fc["errors"], json(5));
        QVERIFY(near(fc["error_rate"], 0.625));
        // Wilson 95 % of 5/8, by hand: centre (0.625 + z^2/16) / (1 + z^2/8), half-width as docs/metrics.md.
        QVERIFY(near(fc["error_rate_ci"][0], 0.30574, 1e-4) && near(fc["error_rate_ci"][1], 0.86316, 1e-4));
        std::map<std::string, int64_t> counts;
        for (const auto& c : fc["by_class"]) counts[c["class"].get<std::string>()] = c["count"].get<int64_t>();
        QCOMPARE(counts["extra_argument"], int64_t(1));
        QCOMPARE(counts["unexpected_call"], int64_t(1));
        QCOMPARE(counts["no_call"], int64_t(1));
        QCOMPARE(counts["wrong_type"], int64_t(1));
        QCOMPARE(counts["wrong_answer"], int64_t(1));
        QCOMPARE(counts["wrong_value"], int64_t(0));
        for (const auto& c : fc["by_class"])
            if (c["class"] == "no_call") QVERIFY(near(c["ci"][0], 0.02242, 1e-4) && near(c["ci"][1], 0.47089, 1e-4));

        // The stored items: calls, classes and the multi-step rounds.
        Run exp = runVerdict({"export", id, "--format", "json"}, dir);
        QVERIFY2(exp.exitCode == 0, exp.err.constData());
        const json items = exp.json()["items"];
        std::map<std::string, json> byId;
        for (const auto& it : items) byId[it["item_id"].get<std::string>()] = it;
        QCOMPARE(byId["w1"]["details"]["tool_calls"][0]["arguments"]["city"], json("paris"));
        QCOMPARE(byId["w1"]["details"]["tool_call_format"], json("endpoint"));
        QCOMPARE(byId["w2"]["details"]["tool_error"], json("extra_argument"));
        QCOMPARE(byId["m1"]["details"]["steps"].size(), size_t(2));
        QCOMPARE(byId["m1"]["output"], json("It is 4 degrees."));
        QCOMPARE(byId["m1"]["correct"], json(true));
        QCOMPARE(byId["m2"]["details"]["tool_error"], json("wrong_answer"));

        Run text = runVerdict({"results", id}, dir);
        QVERIFY2(text.out.contains("function calling: 8 items, error rate 62.5% [30.6, 86.3]"), text.out.constData());

        // A second model that never calls: side by side in the report.
        verdict::test::FakeOpenAiServer s2({.answer = "No."});
        QVERIFY2(s2.ok(), s2.error().c_str());
        Run r2 = runVerdict({"run", QString::fromStdString(s2.baseUrl()), "--suite", "fc", "--json"}, dir);
        QVERIFY2(r2.exitCode == 0, r2.err.constData());
        const QString id2 = QString::number(r2.json()["run_id"].get<long long>());
        Run rep = runVerdict({"report", "--run", id, "--run", id2, "-o", dir.filePath("r.md"), "--format", "md",
                              "--data-json", dir.filePath("r.json")},
                             dir);
        QVERIFY2(rep.exitCode == 0, rep.err.constData());
        std::ifstream dataFile(dir.filePath("r.json").toStdString());
        const json data = json::parse(dataFile, nullptr, false);
        const json rf = data["accuracy"]["function_calling"];
        QVERIFY2(rf.is_object(), data.dump().substr(0, 2000).c_str());
        QVERIFY(near(rf["a"]["error_rate"], 0.625));
        // B: never calls: 6 no_call, the 2 no-call items right.
        QVERIFY(near(rf["b"]["error_rate"], 0.75));
        std::ifstream md(dir.filePath("r.md").toStdString());
        const std::string mdText((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
        QVERIFY2(mdText.find("Function calling") != std::string::npos && mdText.find("no_call") != std::string::npos,
                 mdText.c_str());
    }

    // BFCL's question file with its possible_answer file: imported as is, categories from the ids,
    // an irrelevance item expecting no call, a missing answer rejected with its line.
    // Retry behaviour (--tool-retries 2): a malformed call gets the schema's complaint back as its
    // tool result, never the expected answer; a well-formed wrong call gets nothing. Five items:
    // r1 misses a required argument and fixes it, r2 keeps a wrong type through both retries, r3
    // books the wrong number of seats (schema-valid: not retried), r4 is right at once, r5 calls
    // an unknown function and then the right one.
    void retriesSendTheReasonBack() {
        const json tool = {{"type", "function"},
                           {"function",
                            {{"name", "book_flight"},
                             {"parameters",
                              {{"type", "object"},
                               {"properties", {{"to", {{"type", "string"}}}, {"seats", {{"type", "integer"}}}}},
                               {"required", {"to", "seats"}}}}}}};
        auto item = [&](const std::string& id, const std::string& prompt, const std::string& to, int seats) {
            return json{{"id", id}, {"prompt", prompt}, {"tools", {tool}},
                        {"expected_calls", {{{"name", "book_flight"}, {"arguments", {{"to", to}, {"seats", seats}}}}}}};
        };
        QTemporaryDir dir;
        writeLines(dir.filePath("r.jsonl"), {item("r1", "Book 2 seats to Oslo", "Oslo", 2), item("r2", "Book 1 seat to Rome", "Rome", 1),
                                             item("r3", "Book 3 seats to Lima", "Lima", 3), item("r4", "Book 5 seats to Kyiv", "Kyiv", 5),
                                             item("r5", "Book 2 seats to Bern", "Bern", 2)});
        QCOMPARE(runVerdict({"suite", "import", dir.filePath("r.jsonl"), "--name", "r"}, dir).exitCode, 0);
        verdict::test::FakeOpenAiOptions fo;
        fo.answerFor = {{"Oslo", call("book_flight", {{"to", "Oslo"}})},
                        {"required property 'seats'", call("book_flight", {{"to", "Oslo"}, {"seats", 2}})},
                        {"Rome", call("book_flight", {{"to", "Rome"}, {"seats", "one"}})},
                        {"expected integer", call("book_flight", {{"to", "Rome"}, {"seats", "one"}})},
                        {"Lima", call("book_flight", {{"to", "Lima"}, {"seats", 4}})},
                        {"Kyiv", call("book_flight", {{"to", "Kyiv"}, {"seats", 5}})},
                        {"Bern", call("fly_to", {{"to", "Bern"}, {"seats", 2}})},
                        {"no function named 'fly_to'", call("book_flight", {{"to", "Bern"}, {"seats", 2}})}};
        verdict::test::FakeOpenAiServer s(fo);
        QVERIFY2(s.ok(), s.error().c_str());
        Run r = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "r", "--tool-retries", "2", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        // 5 first requests, r1 and r5 one retry each, r2 two.
        QCOMPARE(s.completions(), int64_t(9));
        // What was sent back is the schema's complaint, not the answer.
        QVERIFY2(s.received().find("missing required property 'seats'. Correct the call and call again.") != std::string::npos,
                 s.received().c_str());
        QVERIFY(s.received().find("no function named 'fly_to' (the tools are: book_flight)") != std::string::npos);
        const QString id = QString::number(r.json()["run_id"].get<long long>());
        const json fc = runVerdict({"results", id, "--json"}, dir).json()["runs"][0]["function_calling"];
        QVERIFY2(fc.is_object(), fc.dump().c_str());
        // Graded on the first attempt: r1, r2, r3, r5 wrong.
        QCOMPARE(fc["errors"], json(4));
        QVERIFY(near(fc["error_rate"], 0.8));
        const json& rt = fc["retries"];
        QVERIFY2(rt.is_object(), fc.dump().c_str());
        QCOMPARE(rt["retried"], json(3));    // r1, r2, r5 (r3's call was well-formed)
        QCOMPARE(rt["recovered"], json(2));  // r1, r5
        QVERIFY(near(rt["recovery_rate"], 2.0 / 3.0));
        // Wilson 95 % of 2/3 by hand: centre (2/3 + z^2/6) / (1 + z^2/3) = 0.57308,
        // half-width z sqrt(2/9/3 + z^2/36) / (1 + z^2/3) = 0.36543.
        QVERIFY(near(rt["recovery_ci"][0], 0.20765, 1e-4) && near(rt["recovery_ci"][1], 0.93851, 1e-4));
        QVERIFY(near(rt["error_rate_after"], 0.4));  // (4 - 2) / 5
        // Per item: the attempts and whether they recovered.
        const json items = runVerdict({"export", id, "--format", "json"}, dir).json();
        std::map<std::string, json> byId;
        for (const auto& it : items["items"]) byId[it["item_id"].get<std::string>()] = it;
        QCOMPARE(byId["r1"]["details"]["tool_recovered"], json(true));
        QCOMPARE(byId["r1"]["details"]["tool_retries"].size(), size_t(1));
        QCOMPARE(byId["r2"]["details"]["tool_recovered"], json(false));
        QCOMPARE(byId["r2"]["details"]["tool_retries"].size(), size_t(2));
        QCOMPARE(byId["r2"]["details"]["tool_retries"][1]["tool_error"], json("wrong_type"));
        QVERIFY(!byId["r3"]["details"].contains("tool_retries"));
        QVERIFY(!byId["r4"]["details"].contains("tool_retries"));
        QCOMPARE(byId["r5"]["details"]["tool_retries"][0]["told"], json("no function named 'fly_to' (the tools are: book_flight)"));
        QCOMPARE(byId["r1"]["correct"], json(false));  // still wrong: the first attempt counts
        Run text = runVerdict({"results", id}, dir);
        QVERIFY2(text.out.contains("retries: 2 of 3 retried calls corrected"), text.out.constData());
    }

    void bfclImport() {
        verdict::test::FakeOpenAiServer s({.answer = "cannot",
                                           .answerFor = {{"triangle", call("calc_area", {{"base", 10}, {"height", 5}})}}});
        QVERIFY2(s.ok(), s.error().c_str());
        QTemporaryDir dir;
        const json fn = {{"name", "calc_area"},
                         {"description", "Area of a triangle"},
                         {"parameters",
                          {{"type", "dict"},
                           {"properties", {{"base", {{"type", "integer"}}}, {"height", {{"type", "float"}}}, {"unit", {{"type", "string"}}}}},
                           {"required", {"base", "height"}}}}};
        auto q = [&](const std::string& id, const std::string& text) {
            return json{{"id", id}, {"question", {{{{"role", "user"}, {"content", text}}}}}, {"function", {fn}}};
        };
        writeLines(dir.filePath("BFCL_v3_simple.json"),
                   {q("simple_0", "Area of a triangle, base 10, height 5"), q("simple_1", "Another triangle"),
                    q("irrelevance_0", "What is the capital of Peru?")});
        writeLines(dir.filePath("answers.json"),
                   {{{"id", "simple_0"}, {"ground_truth", {{{"calc_area", {{"base", {10}}, {"height", {5}}, {"unit", {"units", ""}}}}}}}}});
        Run imp = runVerdict({"suite", "import", dir.filePath("BFCL_v3_simple.json"), "--answers", dir.filePath("answers.json"),
                              "--name", "bfcl", "--json"},
                             dir);
        QVERIFY2(imp.exitCode == 0, imp.err.constData());
        const json j = imp.json();
        QCOMPARE(j["imported"], json(2));
        QCOMPARE(j["suite"]["shape"], json("bfcl"));
        QCOMPARE(j["rejected"][0]["line"], json(2));
        QVERIFY2(j["rejected"][0]["reason"].get<std::string>().find("no ground truth for 'simple_1' in the answers file") !=
                     std::string::npos,
                 j.dump().c_str());

        Run r = runVerdict({"run", QString::fromStdString(s.baseUrl()), "--suite", "bfcl", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString id = QString::number(r.json()["run_id"].get<long long>());
        const json run = runVerdict({"results", id, "--json"}, dir).json()["runs"][0];
        QVERIFY(near(run["accuracy"], 1.0));  // base 10 (int), height 5 for a float: BFCL accepts; unit may be left out
        QCOMPARE(run["by_category"]["simple"]["n"], json(1));
        QCOMPARE(run["by_category"]["irrelevance"]["n"], json(1));
        QCOMPARE(run["function_calling"]["errors"], json(0));

        // A malformed answers file fails the import, naming the file and line.
        {
            std::ofstream f(dir.filePath("bad.json").toStdString());
            f << "{\"id\": \"simple_0\", \"ground_truth\": []}\n{\"id\": 3}\n";
        }
        Run bad = runVerdict({"suite", "import", dir.filePath("BFCL_v3_simple.json"), "--answers", dir.filePath("bad.json"),
                              "--name", "bad"},
                             dir);
        QVERIFY(bad.exitCode != 0);
        QVERIFY2(bad.err.contains("bad.json:2:"), bad.err.constData());
    }

    // Malformed function-calling records are rejected with the line and the reason.
    void badRecordsRejected() {
        QTemporaryDir dir;
        json noName = {{"prompt", "x"}, {"tools", {{{"type", "function"}, {"function", {{"description", "d"}}}}}}, {"expected_calls", json::array()}};
        json unknownCall = {{"prompt", "x"}, {"tools", {timeTool()}}, {"expected_calls", {{{"name", "get_weather"}, {"arguments", json::object()}}}}};
        json noExpected = {{"prompt", "x"}, {"tools", {timeTool()}}};
        json ok = {{"prompt", "x"}, {"tools", {timeTool()}}, {"expected_calls", json::array()}};
        writeLines(dir.filePath("b.jsonl"), {noName, unknownCall, noExpected, ok});
        Run imp = runVerdict({"suite", "import", dir.filePath("b.jsonl"), "--name", "b", "--json"}, dir);
        QVERIFY2(imp.exitCode == 0, imp.err.constData());
        const json j = imp.json();
        QCOMPARE(j["imported"], json(1));
        QCOMPARE(j["rejected_count"], json(3));
        const std::string all = j["rejected"].dump();
        QVERIFY2(all.find("no \\\"name\\\"") != std::string::npos, all.c_str());
        QVERIFY2(all.find("'get_weather' is not one of the tools offered") != std::string::npos, all.c_str());
        QVERIFY2(all.find("no 'expected_calls'") != std::string::npos, all.c_str());
    }

    // A local model: the tools are offered in the prompt (the synthetic model has no chat
    // template) and its text read for calls; a random model calls nothing.
    void localModelReadsTheText() {
        const auto model = verdict::test::fixture("v0.5.0/models/synth-qwen3-f16.gguf");
        VERDICT_NEED_FIXTURE(model);
        QTemporaryDir dir;
        const json tools = {weatherTool()};  // one tool: the model's context is 512 tokens
        writeLines(dir.filePath("fc.jsonl"),
                   {{{"id", "w1"}, {"prompt", "Weather in Paris?"}, {"tools", tools},
                     {"expected_calls", {{{"name", "get_weather"}, {"arguments", {{"city", "Paris"}}}}}}},
                    {{"id", "n1"}, {"prompt", "Say hello"}, {"tools", tools}, {"expected_calls", json::array()}}});
        QCOMPARE(runVerdict({"suite", "import", dir.filePath("fc.jsonl"), "--name", "fc"}, dir).exitCode, 0);
        Run r = runVerdict({"run", QString::fromStdString(model.string()), "--suite", "fc", "--max-tokens", "8", "--json"}, dir);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString id = QString::number(r.json()["run_id"].get<long long>());
        const json items = runVerdict({"export", id, "--format", "json"}, dir).json()["items"];
        QCOMPARE(items.size(), size_t(2));
        for (const auto& it : items) {
            QVERIFY2(it["error"] == "" && it["prompt"].get<std::string>().find("You can call these functions") != std::string::npos,
                     it.dump().c_str());
            QCOMPARE(it["details"]["template"], json("raw"));
        }
        QCOMPARE(items[0]["details"]["tool_error"], json("no_call"));  // random weights write no call
        QCOMPARE(items[1]["details"]["tool_error"], json(""));
        const json fc = runVerdict({"results", id, "--json"}, dir).json()["runs"][0]["function_calling"];
        QCOMPARE(fc["items"], json(2));
        QCOMPARE(fc["errors"], json(1));
    }
};

QTEST_GUILESS_MAIN(TestCliFunctionCalling)
#include "test_cli_function_calling.moc"
