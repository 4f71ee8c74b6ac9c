// The pure parts of core/services/quant_compare.h: the deltas against the base (hand-computed
// values), file type names (llama.h's llama_ftype), and the request checks.
#include "core/services/quant_compare.h"

#include <QtTest/QtTest>

using nlohmann::json;
using namespace verdict::core;

class TestQuantCompare : public QObject {
    Q_OBJECT
private slots:
    void deltasAreFileOverBaseMinusOne() {
        json c = {{"rows",
                   {{{"file", {{"bytes", 1000}}},
                     {"fidelity", {{"mean_kld", 0.0}, {"same_top_p", 1.0}}},
                     {"accuracy", {{"cell", {{"accuracy", 0.5}}}}},
                     {"speed", {{"decode_tok_per_s", 100.0}, {"prefill_tok_per_s", 400.0}, {"tpot_ms_p50", 10.0}, {"itl_ms_p99", 12.0}}},
                     {"memory", {{"engine_bytes", 2000}}}},
                    {{"file", {{"bytes", 250}}},
                     {"fidelity", {{"mean_kld", 0.02}, {"same_top_p", 0.9}, {"ppl_ratio", 1.05}}},
                     {"accuracy", {{"delta", -0.125}, {"mcnemar_p", 0.25}}},
                     {"speed", {{"decode_tok_per_s", 250.0}, {"prefill_tok_per_s", 300.0}, {"tpot_ms_p50", 4.0}, {"itl_ms_p99", 15.0}}},
                     {"memory", {{"engine_bytes", 500}}}},
                    {{"file", {{"bytes", 500}}}, {"fidelity", nullptr}, {"accuracy", nullptr}, {"speed", nullptr}, {"memory", json::object()}}}}};
        addQuantDeltas(c);
        QVERIFY(c["rows"][0]["vs_base"].is_null());
        const json& d = c["rows"][1]["vs_base"];
        QCOMPARE(d["size_ratio"].get<double>(), 0.25);
        QCOMPARE(d["decode_change"].get<double>(), 1.5);     // 250 / 100 - 1
        QCOMPARE(d["prefill_change"].get<double>(), -0.25);  // 300 / 400 - 1
        QCOMPARE(d["tpot_p50_change"].get<double>(), -0.6);  // 4 / 10 - 1
        QCOMPARE(d["itl_p99_change"].get<double>(), 0.25);   // 15 / 12 - 1
        QCOMPARE(d["memory_change"].get<double>(), -0.75);
        QCOMPARE(d["mean_kld"].get<double>(), 0.02);
        QCOMPARE(d["same_top_p"].get<double>(), 0.9);
        QCOMPARE(d["ppl_ratio"].get<double>(), 1.05);
        QCOMPARE(d["accuracy_delta"].get<double>(), -0.125);
        QCOMPARE(d["mcnemar_p"].get<double>(), 0.25);
        // A file with nothing measured: every delta null, never a 0 that was not measured.
        const json& e = c["rows"][2]["vs_base"];
        QCOMPARE(e["size_ratio"].get<double>(), 0.5);
        for (const char* k : {"decode_change", "prefill_change", "itl_p99_change", "mean_kld", "accuracy_delta", "memory_change"})
            QVERIFY2(e[k].is_null(), k);
        // A base whose value is 0 gives no change either.
        c["rows"][0]["speed"]["decode_tok_per_s"] = 0.0;
        addQuantDeltas(c);
        QVERIFY(c["rows"][1]["vs_base"]["decode_change"].is_null());
    }

    void fileTypeNames() {
        QCOMPARE(fileTypeName(0), std::string("F32"));
        QCOMPARE(fileTypeName(1), std::string("F16"));
        QCOMPARE(fileTypeName(7), std::string("Q8_0"));
        QCOMPARE(fileTypeName(15), std::string("Q4_K_M"));
        QCOMPARE(fileTypeName(30), std::string("IQ4_XS"));
        QCOMPARE(fileTypeName(32), std::string("BF16"));
        QCOMPARE(fileTypeName(1024 + 15), std::string("Q4_K_M"));  // LLAMA_FTYPE_GUESSED
        QCOMPARE(fileTypeName(5), std::string());                  // removed in llama.cpp
        QCOMPARE(fileTypeName(999), std::string());
    }

    void requestChecks() {
        QuantCompareRequest ok;
        ok.basePath = "a.gguf";
        ok.files = {"b.gguf"};
        QVERIFY(validateQuantCompareRequest(ok).ok());
        auto expectError = [](QuantCompareRequest r, const std::string& says) {
            auto v = validateQuantCompareRequest(r);
            QVERIFY(!v.ok());
            QVERIFY2(v.error().message.find(says) != std::string::npos, v.error().message.c_str());
        };
        QuantCompareRequest r = ok;
        r.basePath.clear();
        expectError(r, "base");
        r = ok;
        r.files.clear();
        expectError(r, "at least one file");
        r = ok;
        r.files = {"b.gguf", "./b.gguf"};
        expectError(r, "twice");
        r = ok;
        r.files = {"./a.gguf"};
        expectError(r, "twice");
        r = ok;
        r.files = {""};
        expectError(r, "empty path");
        r = ok;
        r.files.assign(17, "x");
        expectError(r, "at most 16");
        r = ok;
        r.ctx = 3;
        expectError(r, "ctx");
        r = ok;
        r.sweep = false;
        expectError(r, "nothing to measure");
        r = ok;
        r.sweepSpec.genTokens = {1};
        expectError(r, "sweep");
        r = ok;
        r.limit = 0;
        expectError(r, "limit");
    }
};

QTEST_MAIN(TestQuantCompare)
#include "test_quant_compare.moc"
