// Provider presets (core/endpoints/provider_catalog.h), the request addressing they drive
// (endpointUrl / endpointHeaders) and the cost of endpoint tokens (core/endpoints/endpoint_cost.h)
// against numbers computed by hand.
#include "core/endpoints/endpoint_cost.h"
#include "core/endpoints/provider_catalog.h"
#include "core/perf/load_runner.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

using namespace verdict::core;
using nlohmann::json;

namespace {

bool near(double got, double want, double rel = 1e-12) { return std::fabs(got - want) <= rel * std::max(1.0, std::fabs(want)); }
std::string nearMessage(double got, double want) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "got %.17g, want %.17g", got, want);
    return buf;
}
#define VERIFY_NEAR(got, want) QVERIFY2(near((got), (want)), nearMessage((got), (want)).c_str())

const char* const kPresetIds[] = {"openai", "deepseek", "moonshot", "openrouter", "together", "fireworks", "groq", "mistral",
                                  "azure-openai", "vllm", "sglang", "tgi", "llama-server", "ollama", "lmstudio"};

ProviderCatalog builtinOrFail() {
    auto c = ProviderCatalog::builtin();
    if (!c) qFatal("%s", c.error().message.c_str());
    return std::move(*c);
}

ModelPrice price(std::optional<double> in, std::optional<double> cached, std::optional<double> out) {
    ModelPrice p;
    p.model = "m";
    p.input = {in, "test", "2026-01", "", ""};
    p.cachedInput = {cached, cached ? "test" : "not published", "2026-01", "", ""};
    p.output = {out, "test", "2026-01", "", ""};
    return p;
}

struct BadUserFile {
    const char* text;
    const char* path;  // the JSON path the message must name
};

}  // namespace
Q_DECLARE_METATYPE(BadUserFile)

class TestProviderCatalog : public QObject {
    Q_OBJECT
private slots:
    void builtinHasTheFifteenPresets() {
        const ProviderCatalog c = builtinOrFail();
        QCOMPARE(c.entries().size(), std::size(kPresetIds));
        for (const char* id : kPresetIds) {
            const ProviderPreset* p = c.find(id);
            QVERIFY2(p, id);
            QVERIFY2(!p->name.empty(), id);
            QVERIFY2(p->baseUrl.rfind("http", 0) == 0, id);
            QVERIFY2(p->chatRoute.rfind('/', 0) == 0, id);
            QCOMPARE(p->origin, ProviderOrigin::Builtin);
            if (p->kind == ProviderKind::SelfHosted) {
                QVERIFY2(p->prices.empty(), id);
                QVERIFY2(p->pricesNote.find("TCO") != std::string::npos, id);
            } else {
                QVERIFY2(!p->keyEnv.empty(), id);
                QVERIFY2(!p->prices.empty() || !p->pricesNote.empty(), id);
            }
            for (const ModelPrice& m : p->prices)
                for (const PriceFigure* f : {&m.input, &m.cachedInput, &m.output}) {
                    QVERIFY2(!f->source.empty() && !f->asOf.empty(), (std::string(id) + " " + m.model).c_str());
                    if (f->value) QVERIFY(*f->value >= 0);
                }
            // JSON of an entry carries the file's fields
            const json j = providerPresetJson(*p);
            for (const char* key : {"id", "name", "kind", "base_url", "auth", "key_env", "routes", "supports", "max_concurrency",
                                    "prices", "prices_note", "origin"})
                QVERIFY2(j.contains(key), key);
            for (const char* key : {"stream_usage", "logprobs", "echo", "tool_calls", "reasoning_field"})
                QVERIFY2(j["supports"].contains(key), key);
        }
        const ProviderPreset* ds = c.find("deepseek");
        QCOMPARE(ds->keyEnv, std::string("DEEPSEEK_API_KEY"));
        QCOMPARE(ds->supports.reasoningField.value_or(""), std::string("reasoning_content"));
        const ModelPrice* r = ds->priceOf("deepseek-reasoner");
        QVERIFY(r);
        QCOMPARE(*r->input.value, 0.28);
        QCOMPARE(*r->cachedInput.value, 0.028);
        QCOMPARE(*r->output.value, 0.42);
        QCOMPARE(c.find("moonshot")->keyEnv, std::string("MOONSHOT_API_KEY"));
        QVERIFY(c.find("moonshot")->priceOf("kimi-k2-thinking"));
        const ProviderPreset* az = c.find("azure-openai");
        QCOMPARE(az->auth, EndpointAuth::ApiKeyHeader);
        QCOMPARE(az->apiVersion, std::string("2024-10-21"));
        QVERIFY(az->baseUrl.find("{resource}") != std::string::npos);
        QCOMPARE(c.find("ollama")->auth, EndpointAuth::None);
        QVERIFY(c.find("groq")->completionsRoute.empty());
        auto unknown = c.lookup("nope");
        QVERIFY(!unknown.ok());
        QVERIFY(unknown.error().message.find("deepseek") != std::string::npos);
    }

    void malformedUserFileNamesFileAndField_data() {
        QTest::addColumn<BadUserFile>("c");
        QTest::addRow("negative price") << BadUserFile{"{\"providers\": [{\"id\": \"deepseek\", \"prices\": [{\"model\": \"deepseek-chat\", \"output\": -1}]}]}",
                                                       "$.providers[0].prices[0].output"};
        QTest::addRow("price value not a number") << BadUserFile{"{\"providers\": [{\"id\": \"openai\", \"prices\": [{\"model\": \"gpt-4o\", \"input\": {\"value\": \"2\", \"source\": \"x\", \"as_of\": \"2026\"}}]}]}",
                                                                 "$.providers[0].prices[0].input.value"};
        QTest::addRow("unknown field") << BadUserFile{"{\"providers\": [{\"id\": \"openai\", \"colour\": \"red\"}]}", "$.providers[0].colour"};
        QTest::addRow("bad kind") << BadUserFile{"{\"providers\": [{\"id\": \"x\", \"name\": \"X\", \"kind\": \"cloud\", \"base_url\": \"https://x\", \"auth\": \"none\"}]}",
                                                 "$.providers[0].kind"};
        QTest::addRow("new preset without base_url") << BadUserFile{"{\"providers\": [{\"id\": \"x\", \"name\": \"X\", \"kind\": \"hosted\", \"auth\": \"none\"}]}",
                                                                    "$.providers[0].base_url"};
        QTest::addRow("bad auth") << BadUserFile{"{\"providers\": [{\"id\": \"vllm\", \"auth\": \"basic\"}]}", "$.providers[0].auth"};
        QTest::addRow("self-hosted priced") << BadUserFile{"{\"providers\": [{\"id\": \"vllm\", \"prices\": [{\"model\": \"m\", \"input\": 1, \"output\": 2}]}]}",
                                                           "$.providers[0].prices"};
        QTest::addRow("new model without output") << BadUserFile{"{\"providers\": [{\"id\": \"groq\", \"prices\": [{\"model\": \"new\", \"input\": 1}]}]}",
                                                                 "$.providers[0].prices[0].output"};
        QTest::addRow("duplicate id") << BadUserFile{"{\"providers\": [{\"id\": \"groq\"}, {\"id\": \"groq\"}]}", "$.providers[1].id"};
        QTest::addRow("bad key_env") << BadUserFile{"{\"providers\": [{\"id\": \"groq\", \"key_env\": \"MY KEY\"}]}", "$.providers[0].key_env"};
        QTest::addRow("route without slash") << BadUserFile{"{\"providers\": [{\"id\": \"groq\", \"routes\": {\"chat\": \"chat\"}}]}",
                                                            "$.providers[0].routes.chat"};
        QTest::addRow("schema version") << BadUserFile{"{\"schema_version\": 2, \"providers\": []}", "$.schema_version"};
        QTest::addRow("not an array") << BadUserFile{"{\"providers\": {}}", "$.providers"};
        QTest::addRow("bad date") << BadUserFile{"{\"providers\": [{\"id\": \"groq\", \"prices\": [{\"model\": \"llama-3.3-70b-versatile\", \"input\": {\"value\": 1, \"source\": \"q\", \"as_of\": \"June\"}}]}]}",
                                                 "$.providers[0].prices[0].input.as_of"};
        QTest::addRow("json syntax") << BadUserFile{"{\"providers\": [", "not valid JSON at byte"};
    }
    void malformedUserFileNamesFileAndField() {
        QFETCH(BadUserFile, c);
        ProviderCatalog cat = builtinOrFail();
        const auto before = providerPresetJson(*cat.find("deepseek"));
        const std::string origin = "/home/u/.config/verdict/providers.json";
        auto r = cat.mergeUser(c.text, origin, "2026-12-01");
        QVERIFY(!r.ok());
        const std::string& m = r.error().message;
        QVERIFY2(m.rfind(origin + ": ", 0) == 0, m.c_str());
        QVERIFY2(m.find(c.path) != std::string::npos, m.c_str());
        QCOMPARE(providerPresetJson(*cat.find("deepseek")), before);  // all or nothing
        QCOMPARE(cat.entries().size(), std::size(kPresetIds));
    }

    void userEntryOverridesAndExtends() {
        ProviderCatalog cat = builtinOrFail();
        const std::string text = "{\"providers\": [\n"
            "            {\"id\": \"deepseek\", \"prices\": [{\"model\": \"deepseek-chat\", \"output\": 0.5},\n"
            "                                          {\"model\": \"deepseek-v9\", \"input\": 0.1, \"output\": 0.2}]},\n"
            "            {\"id\": \"my-gateway\", \"name\": \"Our gateway\", \"kind\": \"hosted\", \"base_url\": \"https://llm.example.com/v1\",\n"
            "             \"auth\": \"api-key\", \"key_env\": \"GATEWAY_KEY\",\n"
            "             \"prices\": [{\"model\": \"big\", \"input\": {\"value\": 3, \"source\": \"contract 2026-11\", \"as_of\": \"2026-11\"}, \"output\": 9}]}]}";
        auto r = cat.mergeUser(text, "/tmp/p.json", "2026-12-01");
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        const ProviderPreset* ds = cat.find("deepseek");
        QCOMPARE(ds->origin, ProviderOrigin::User);
        const ModelPrice* chat = ds->priceOf("deepseek-chat");
        QCOMPARE(*chat->output.value, 0.5);
        QCOMPARE(chat->output.source, std::string("user file /tmp/p.json"));
        QCOMPARE(chat->output.asOf, std::string("2026-12-01"));
        QCOMPARE(*chat->input.value, 0.28);  // untouched
        QVERIFY(chat->input.source.find("BenchLM") != std::string::npos);
        const ModelPrice* v9 = ds->priceOf("deepseek-v9");
        QVERIFY(v9);
        QVERIFY(!v9->cachedInput.value);  // not given: unknown, and says so
        QVERIFY(v9->cachedInput.source.find("not given") != std::string::npos);
        QCOMPARE(ds->baseUrl, std::string("https://api.deepseek.com"));  // the rest of the preset stays
        const ProviderPreset* gw = cat.find("my-gateway");
        QVERIFY(gw);
        QCOMPARE(gw->origin, ProviderOrigin::User);
        QCOMPARE(gw->auth, EndpointAuth::ApiKeyHeader);
        QCOMPARE(gw->chatRoute, std::string("/v1/chat/completions"));  // defaults
        QCOMPARE(gw->priceOf("big")->input.source, std::string("contract 2026-11"));
        QCOMPARE(cat.entries().size(), std::size(kPresetIds) + 1);
        QVERIFY(!cat.mergeUserFile("/nonexistent/providers.json").ok());
    }

    void providerEndpointFillsAzure() {
        const ProviderCatalog c = builtinOrFail();
        const ProviderPreset& az = *c.find("azure-openai");
        auto missing = providerEndpoint(az, {});
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.find("--resource") != std::string::npos);
        auto ep = providerEndpoint(az, {"", "myres", ""});
        QVERIFY2(ep.ok(), ep.ok() ? "" : ep.error().message.c_str());
        QCOMPARE(ep->baseUrl, std::string("https://myres.openai.azure.com/openai"));
        QCOMPARE(ep->api.query, std::string("api-version=2024-10-21"));
        QCOMPARE(ep->api.provider, std::string("azure-openai"));

        EndpointConfig e;
        e.baseUrl = ep->baseUrl;
        e.model = "gpt 4o/prod";
        e.apiKey = "k";
        e.api = ep->api;
        QCOMPARE(endpointUrl(e, EndpointRoute::Chat),
                 std::string("https://myres.openai.azure.com/openai/deployments/gpt%204o%2Fprod/chat/completions?api-version=2024-10-21"));
        QCOMPARE(endpointUrl(e, EndpointRoute::Models), std::string("https://myres.openai.azure.com/openai/models?api-version=2024-10-21"));
        auto h = endpointHeaders(e);
        QCOMPARE(h["api-key"], std::string("k"));
        QVERIFY(!h.count("Authorization"));
        auto v = providerEndpoint(az, {"", "myres", "2025-04-01-preview"});
        QCOMPARE(v->api.query, std::string("api-version=2025-04-01-preview"));

        // OpenAI layout (the default): Bearer, /v1 routes under a base with or without /v1
        EndpointConfig d;
        d.baseUrl = "https://api.groq.com/openai/v1/";
        d.apiKey = "k";
        QCOMPARE(endpointUrl(d, EndpointRoute::Chat), std::string("https://api.groq.com/openai/v1/chat/completions"));
        QCOMPARE(endpointHeaders(d)["Authorization"], std::string("Bearer k"));
        auto groq = providerEndpoint(*c.find("groq"), {});
        d.api = groq->api;
        QCOMPARE(endpointUrl(d, EndpointRoute::Completions), std::string());  // none
        d.api.auth = EndpointAuth::None;
        QVERIFY(!endpointHeaders(d).count("Authorization"));
    }

    // The hand-computed example of docs/tco.md ("Cost of an endpoint run").
    void costArithmetic() {
        // $0.28 input, $0.028 cached input, $0.42 output; 1,000,000 prompt tokens of which 400,000
        // cached; 500,000 output tokens of which 300,000 reasoning (inside the output count).
        BilledTokens t;
        t.prompt = 1'000'000;
        t.cachedPrompt = 400'000;
        t.output = billedOutputTokens(500'000, 300'000);
        t.reasoning = 300'000;
        QCOMPARE(t.output, int64_t(500'000));  // reasoning is part of completion_tokens: not added again
        const EndpointCost c = endpointCost(price(0.28, 0.028, 0.42), t);
        VERIFY_NEAR(*c.inputUsd, 0.168);         // 600,000 × 0.28 / 1e6
        VERIFY_NEAR(*c.cachedInputUsd, 0.0112);  // 400,000 × 0.028 / 1e6
        VERIFY_NEAR(*c.outputUsd, 0.21);         // 500,000 × 0.42 / 1e6, reasoning at the output price
        VERIFY_NEAR(*c.usdTotal, 0.3892);
        VERIFY_NEAR(*c.usdPerMtokOutput, 0.7784);          // 0.3892 / 0.5
        VERIFY_NEAR(*c.usdPerMtokAll, 0.3892 / 1.5);       // 0.259466...
        QVERIFY(c.notes.empty());

        // reasoning counted apart (more reasoning than completion tokens): both billed
        QCOMPARE(billedOutputTokens(100, 250), int64_t(350));
        QCOMPARE(billedOutputTokens(250, 100), int64_t(250));
        QCOMPARE(billedOutputTokens(-5, 0), int64_t(0));

        // no cached-input price: cached tokens at the input price, said in a note
        const EndpointCost u = endpointCost(price(1.0, std::nullopt, 2.0), {1000, 600, 500, 0, 1});
        VERIFY_NEAR(*u.usdTotal, (400 * 1.0 + 600 * 1.0 + 500 * 2.0) / 1e6);  // 0.002
        QCOMPARE(u.notes.size(), size_t(1));
        QVERIFY(u.notes[0].find("input price") != std::string::npos);
        // no output price: no total
        const EndpointCost n = endpointCost(price(1.0, 0.5, std::nullopt), {1000, 0, 500, 0, 1});
        QVERIFY(!n.usdTotal && !n.usdPerMtokOutput);
        QVERIFY(n.inputUsd);
        // more cached than prompt: clamped
        const EndpointCost k = endpointCost(price(1.0, 0.5, 2.0), {100, 300, 0, 0, 1});
        VERIFY_NEAR(*k.usdTotal, 100 * 0.5 / 1e6);
        QVERIFY(!k.usdPerMtokOutput);  // no output tokens
    }

    void runTokensAndRunCost() {
        std::vector<RunItemRecord> items(3);
        items[0].tokensIn = 1000;
        items[0].tokensOut = 300;
        items[0].details = {{"reasoning_tokens", 200}, {"cached_tokens", 400}};
        items[1].tokensIn = 500;
        items[1].tokensOut = 50;
        items[1].details = {{"reasoning_tokens", 80}};  // counted apart: 130 billed
        items[2].tokensIn = 40;                           // log-likelihood: all prompt
        items[2].tokensOut = 2;
        items[2].details = {{"logprobs", json::array({-1.0, -2.0})}};
        const BilledTokens t = runBilledTokens(items);
        QCOMPARE(t.prompt, int64_t(1542));
        QCOMPARE(t.cachedPrompt, int64_t(400));
        QCOMPARE(t.output, int64_t(430));
        QCOMPARE(t.reasoning, int64_t(280));
        QCOMPARE(t.requests, int64_t(3));

        const ProviderCatalog c = builtinOrFail();
        RunRecord run;
        run.id = 7;
        run.generation = {{"max_tokens", 256}, {"provider", {{"id", "deepseek"}, {"model", "deepseek-reasoner"}}}};
        auto j = runCostJson(run, items, c);
        QVERIFY(j.has_value());
        // (1542 − 400) × 0.28 + 400 × 0.028 + 430 × 0.42, per 1e6
        VERIFY_NEAR((*j)["usd_total"].get<double>(), (1142 * 0.28 + 400 * 0.028 + 430 * 0.42) / 1e6);
        QCOMPARE((*j)["provider"], json("deepseek"));
        QCOMPARE((*j)["tokens"]["output"], json(430));
        QVERIFY((*j)["prices"]["output"]["source"].get<std::string>().find("BenchLM") != std::string::npos);
        QCOMPARE((*j)["price_source"], json("catalog"));  // a run from before prices were recorded

        // Prices recorded with the run win over the catalog's current ones (here: 1, 0.1, 2 $/1M),
        // and survive the preset leaving the catalog. The endpoint of a preset carries its table.
        auto ep = providerEndpoint(*c.find("deepseek"), {});
        QVERIFY(ep.ok());
        QVERIFY(ep->api.prices.is_array() && !ep->api.prices.empty());
        const ModelPrice back = modelPriceFromJson(ep->api.prices[0]);
        QCOMPARE(back.model, c.find("deepseek")->prices[0].model);
        QCOMPARE(back.output.value, c.find("deepseek")->prices[0].output.value);
        ModelPrice then;
        then.model = "deepseek-reasoner";
        then.input = {1.0, "recorded", "2026-01", "", ""};
        then.cachedInput = {0.1, "recorded", "2026-01", "", ""};
        then.output = {2.0, "recorded", "2026-01", "", ""};
        run.generation["provider"]["price"] = modelPriceJson(then);
        auto recorded = runCostJson(run, items, ProviderCatalog{});
        QVERIFY(recorded.has_value());
        QCOMPARE((*recorded)["price_source"], json("run"));
        VERIFY_NEAR((*recorded)["usd_total"].get<double>(), (1142 * 1.0 + 400 * 0.1 + 430 * 2.0) / 1e6);
        run.generation["provider"].erase("price");

        run.generation["provider"]["model"] = "no-such-model";
        auto unpriced = runCostJson(run, items, c);
        QVERIFY((*unpriced)["usd_total"].is_null());
        QVERIFY((*unpriced)["reason"].get<std::string>().find("no price") != std::string::npos);
        run.generation["provider"] = {{"id", "vllm"}, {"model", "m"}};
        QVERIFY((*runCostJson(run, items, c))["reason"].get<std::string>().find("TCO") != std::string::npos);
        run.generation.erase("provider");
        QVERIFY(!runCostJson(run, items, c).has_value());  // not a provider run
    }
};

QTEST_GUILESS_MAIN(TestProviderCatalog)
#include "test_provider_catalog.moc"
