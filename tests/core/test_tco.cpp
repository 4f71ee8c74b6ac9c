// The cost model, the projection and the hardware catalog against values computed by hand.
// The worked example of docs/tco.md is `workedExample` below: change one, change the other.
#include "core/tco/cost_model.h"
#include "core/tco/hardware_catalog.h"
#include "core/tco/projection.h"
#include "core/tco/tco_report.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

using namespace verdict::core;
using nlohmann::json;

namespace {

bool near(double got, double want, double rel = 1e-9) {
    return std::fabs(got - want) <= rel * std::max(1.0, std::fabs(want));
}
std::string nearMessage(double got, double want) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "got %.17g, want %.17g", got, want);
    return buf;
}
#define VERIFY_NEAR(got, want) QVERIFY2(near((got), (want)), nearMessage((got), (want)).c_str())

json figure(std::optional<double> v, const char* source = "test datasheet", const char* asOf = "2024-01") {
    return {{"value", v ? json(*v) : json(nullptr)}, {"source", source}, {"as_of", asOf}};
}

json entry(const char* id, const char* kind, std::optional<double> mem, std::optional<double> bw,
           std::optional<double> tflops, std::optional<double> tdp, std::optional<double> price,
           std::optional<double> cloud, const char* vendor = "V") {
    return {{"id", id},
            {"name", std::string("Test ") + id},
            {"kind", kind},
            {"vendor", vendor},
            {"memory_gb", figure(mem)},
            {"memory_bandwidth_gbs", figure(bw)},
            {"fp16_tflops_dense", figure(tflops)},
            {"tdp_w", figure(tdp)},
            {"purchase_usd", figure(price)},
            {"cloud_usd_per_hour", figure(cloud)}};
}

// A small catalog with round figures (independent of resources/hardware.json).
json testDocument() {
    return {{"schema_version", 1},
            {"hardware",
             {entry("gpu-a", "gpu", 24, 1008, 165.2, 450, 1599, 0.34),
              entry("gpu-b", "gpu", 80, 3350, 989.5, 700, 30000, 2.69),
              entry("cpu-x", "cpu", std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, "W")}}};
}

HardwareCatalog testCatalog() {
    auto c = HardwareCatalog::parse(testDocument().dump(), "test.json");
    if (!c) qFatal("%s", c.error().message.c_str());
    return *c;
}

// docs/tco.md "Worked example": 1,500 tok/s on a $30,000, 700 W device, bought.
CostAssumptions workedAssumptions() {
    CostAssumptions a;
    a.mode = Ownership::Buy;
    a.utilisation = 0.5;
    a.years = 3;
    a.electricityUsdPerKwh = 0.15;
    a.pue = 1.5;
    a.loadFactor = 0.7;
    a.opsUsdPerMonth = 100;
    a.fixedUsdPerYear = 60000;
    a.discountRate = 0.08;
    return a;
}


RunItemRecord item(std::optional<double> decode, int64_t tokensIn, std::optional<double> ttftMs, std::string error = "") {
    RunItemRecord r;
    r.decodeTps = decode;
    r.tokensIn = tokensIn;
    r.ttftMs = ttftMs;
    r.error = std::move(error);
    return r;
}

}  // namespace

class TestTco : public QObject {
    Q_OBJECT
private slots:
    // ---- cost model, by hand --------------------------------------------------------------
    void workedExample() {
        const CostAssumptions a = workedAssumptions();
        const DevicePrice price{30000.0, 2.69, 700.0};
        auto d = deviceCost(price, 1500, a, "gpu-b");
        QVERIFY(d);
        // amortisation = 30000 / (3 x 8760) = 1.141552511...
        VERIFY_NEAR(d->amortisationUsdPerHour, 30000.0 / 26280.0);
        // power = 0.7 kW x 0.7 x 1.5 x 0.15 = 0.11025
        VERIFY_NEAR(d->powerUsdPerHour, 0.11025);
        // ops = 100 x 12 / 8760 = 0.136986...
        VERIFY_NEAR(d->opsUsdPerHour, 1200.0 / 8760.0);
        VERIFY_NEAR(d->hourlyUsd, 1.3887888127853882);
        // $/1M = 1.388789 / (1500 x 3600 x 0.5) x 1e6 = 0.514366
        VERIFY_NEAR(d->usdPerMtok, 0.5143662269575512);

        auto f = fleetCost(*d, price, 1500, 5e8, a);
        QVERIFY(f);
        // 5e8 / 86400 = 5787.04 tok/s; / (1500 x 0.5) = 7.72 -> 8 devices
        VERIFY_NEAR(f->requiredTps, 5787.037037037037);
        QCOMPARE(f->devices, int64_t(8));
        VERIFY_NEAR(f->capexUsd, 240000);
        VERIFY_NEAR(f->monthlyAmortisationUsd, 6666.666666666667);  // 8 x 30000 / 36
        VERIFY_NEAR(f->monthlyPowerUsd, 643.86);                    // 8 x 0.11025 x 730
        VERIFY_NEAR(f->monthlyOpsUsd, 800);                         // 8 x 100
        VERIFY_NEAR(f->monthlyFixedUsd, 5000);                      // 60000 / 12
        VERIFY_NEAR(f->monthlyUsd, 13110.526666666667);
        VERIFY_NEAR(f->monthlyCashOperatingUsd, 6443.86);
        // 3-year: 8 x 1.388789 x 26280 + 3 x 60000 = 291978.96 + 180000
        VERIFY_NEAR(f->tco3yUsd, 471978.96);
        // all-in: 13110.53 / (5e8 x 365/12 / 1e6 = 15208.33 Mtok) = 0.862062
        VERIFY_NEAR(f->usdPerMtokAllIn, 0.8620620273972602);

        auto b = compareToBaseline(*f, 2.0, a);
        QVERIFY(b);
        VERIFY_NEAR(b->baselineMonthlyUsd, 30416.666666666668);  // 15208.33 x $2
        VERIFY_NEAR(b->monthlySavingsUsd, 23972.806666666667);   // 30416.67 - 6443.86
        QVERIFY(b->paybackMonths);
        VERIFY_NEAR(*b->paybackMonths, 10.011343408267312);      // 240000 / 23972.81
        QCOMPARE(b->horizonMonths, int64_t(36));
        // r_m = 1.08^(1/12) - 1 = 0.00643403; annuity(36) = (1 - 1.08^-3) / r_m = 32.0433314
        // NPV = -240000 + 23972.81 x 32.0433314 = 528168.59
        VERIFY_NEAR(b->npvUsd, 528168.5883376682);
    }

    void rentedDevice() {
        CostAssumptions a = workedAssumptions();
        a.mode = Ownership::Rent;
        const DevicePrice price{30000.0, 2.69, 700.0};
        auto d = deviceCost(price, 1500, a, "gpu-b");
        QVERIFY(d);
        // rent only: power, ops and amortisation are in the price
        VERIFY_NEAR(d->hourlyUsd, 2.69);
        QCOMPARE(d->amortisationUsdPerHour, 0.0);
        VERIFY_NEAR(d->usdPerMtok, 2.69 / 2.7e6 * 1e6);  // 0.996296
        auto f = fleetCost(*d, price, 1500, 5e8, a);
        QVERIFY(f);
        QCOMPARE(f->capexUsd, 0.0);
        VERIFY_NEAR(f->monthlyUsd, 8 * 2.69 * 730 + 5000);  // 20709.6
        auto b = compareToBaseline(*f, 2.0, a);
        QVERIFY(b);
        QVERIFY(b->paybackMonths);
        QCOMPARE(*b->paybackMonths, 0.0);  // nothing bought, cheaper than the API from month one
        VERIFY_NEAR(b->npvUsd, 9707.06666666667 * 32.043331388718);
    }

    void amortisationOverFiveYears() {
        CostAssumptions a = workedAssumptions();
        a.years = 5;
        a.opsUsdPerMonth = 0;
        auto d = deviceCost({43800.0, std::nullopt, 100.0}, 1000, a, "x");
        QVERIFY(d);
        VERIFY_NEAR(d->amortisationUsdPerHour, 1.0);  // 43800 / (5 x 8760)
        // 0.1 kW x 0.7 x 1.5 x 0.15 = 0.01575
        VERIFY_NEAR(d->powerUsdPerHour, 0.01575);
    }

    void devicesNeeded_data() {
        QTest::addColumn<double>("tokensPerDay");
        QTest::addColumn<qlonglong>("devices");
        // per device: 1500 x 0.5 = 750 tok/s = 64.8e6 tokens/day
        QTest::newRow("exactly 8") << 8 * 64.8e6 << qlonglong(8);       // no 9th device from rounding
        QTest::newRow("just over 8") << 8 * 64.8e6 + 1 << qlonglong(9);
        QTest::newRow("tiny volume") << 1.0 << qlonglong(1);
        QTest::newRow("one device") << 64.8e6 << qlonglong(1);
    }
    void devicesNeeded() {
        QFETCH(double, tokensPerDay);
        QFETCH(qlonglong, devices);
        const CostAssumptions a = workedAssumptions();
        auto d = deviceCost({30000.0, std::nullopt, 700.0}, 1500, a, "x");
        QVERIFY(d);
        auto f = fleetCost(*d, {30000.0, std::nullopt, 700.0}, 1500, tokensPerDay, a);
        QVERIFY(f);
        QCOMPARE(qlonglong(f->devices), devices);
    }

    void npv() {
        VERIFY_NEAR(netPresentValue(1000, 100, 12, 0.0), 200.0);  // no discounting: -1000 + 12 x 100
        // 12 % a year: r_m = 1.12^(1/12) - 1 = 0.00948879; one month: 100 / 1.00948879
        VERIFY_NEAR(netPresentValue(0, 100, 1, 0.12), 100.0 / std::pow(1.12, 1.0 / 12.0));
        // 12 months at 12 %: the annuity equals (1 - 1/1.12) / r_m = 0.107142857 / 0.00948879 = 11.29154
        VERIFY_NEAR(netPresentValue(0, 100, 12, 0.12), 100 * (1 - 1 / 1.12) / (std::pow(1.12, 1.0 / 12.0) - 1));
        QVERIFY(netPresentValue(0, 100, 12, 0.12) < 1200);  // discounting lowers it
        VERIFY_NEAR(netPresentValue(500, 100, 0, 0.08), -500);
    }

    void noPayback() {
        CostAssumptions a = workedAssumptions();
        const DevicePrice price{30000.0, std::nullopt, 700.0};
        auto d = deviceCost(price, 1500, a, "x");
        auto f = fleetCost(*d, price, 1500, 5e8, a);
        QVERIFY(f);
        // API at $0.10/1M: 1520.83 a month, less than the 6443.86 operating cost
        auto b = compareToBaseline(*f, 0.10, a);
        QVERIFY(b);
        QVERIFY(!b->paybackMonths);
        QVERIFY(b->monthlySavingsUsd < 0);
        QVERIFY(b->npvUsd < -240000);
    }

    void badInputs() {
        const CostAssumptions a = workedAssumptions();
        const DevicePrice price{30000.0, 2.0, 700.0};
        for (double tps : {0.0, -5.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
            auto d = deviceCost(price, tps, a, "x");
            QVERIFY(!d);
            QVERIFY(d.error().message.find("throughput") != std::string::npos);
        }
        for (double u : {0.0, -0.1, 1.5}) {
            CostAssumptions b = a;
            b.utilisation = u;
            auto d = deviceCost(price, 100, b, "x");
            QVERIFY(!d);
            QVERIFY(d.error().message.find("utilisation") != std::string::npos);
        }
        CostAssumptions full = a;
        full.utilisation = 1.0;  // the closed end of (0, 1]
        QVERIFY(deviceCost(price, 100, full, "x"));
        CostAssumptions b = a;
        b.pue = 0.9;
        QVERIFY(!validateAssumptions(b));
        b = a;
        b.years = 0;
        QVERIFY(!validateAssumptions(b));
        b = a;
        b.loadFactor = 1.2;
        QVERIFY(!validateAssumptions(b));
        b = a;
        b.discountRate = -0.01;
        QVERIFY(!validateAssumptions(b));
        // a bought device needs a price and a TDP; a rented one a cloud price
        auto noPrice = deviceCost({std::nullopt, 2.0, 700.0}, 100, a, "this-machine");
        QVERIFY(!noPrice);
        QVERIFY(noPrice.error().message.find("this-machine has no purchase price") != std::string::npos);
        QVERIFY(!deviceCost({30000.0, 2.0, std::nullopt}, 100, a, "x"));
        CostAssumptions rent = a;
        rent.mode = Ownership::Rent;
        QVERIFY(!deviceCost({30000.0, std::nullopt, 700.0}, 100, rent, "x"));
        auto d = deviceCost(price, 100, a, "x");
        QVERIFY(!fleetCost(*d, price, 100, 0, a));
        QVERIFY(!fleetCost(*d, price, 100, -1e6, a));
        auto f = fleetCost(*d, price, 100, 1e6, a);
        QVERIFY(!compareToBaseline(*f, 0, a));
    }

    // ---- projection ----------------------------------------------------------------------
    void projectionRatios() {
        const HardwareCatalog c = testCatalog();
        auto p = projectThroughput(*c.find("gpu-a"), *c.find("gpu-b"), 100, 2000.0);
        QVERIFY(p);
        QVERIFY(p->estimated);
        VERIFY_NEAR(p->decodeRatio, 3350.0 / 1008.0);   // 3.3234
        VERIFY_NEAR(p->decodeTps, 332.3412698412698);
        QVERIFY(p->prefillRatio);
        VERIFY_NEAR(*p->prefillRatio, 989.5 / 165.2);   // 5.9897
        VERIFY_NEAR(*p->prefillTps, 11979.418886198548);
        QCOMPARE(p->measuredDecodeTps, 100.0);          // the measurement is kept as it was
        QVERIFY(p->basis.find("3350 GB/s / 1008 GB/s") != std::string::npos);
        QVERIFY(p->basis.find("989.5 TFLOPS / 165.2 TFLOPS") != std::string::npos);
        QVERIFY(!p->caveats.empty());
        // decode only: no prefill ratio
        auto q = projectThroughput(*c.find("gpu-b"), *c.find("gpu-a"), 300, std::nullopt, 40e9);
        QVERIFY(q);
        QVERIFY(!q->prefillRatio);
        VERIFY_NEAR(q->decodeTps, 300 * 1008.0 / 3350.0);
        bool fitsCaveat = false;  // 40 GB of weights on a 24 GB device
        for (const auto& s : q->caveats) fitsCaveat |= s.find("does not fit") != std::string::npos;
        QVERIFY(fitsCaveat);
    }

    void projectionErrors() {
        const HardwareCatalog c = testCatalog();
        auto noBw = projectThroughput(*c.find("cpu-x"), *c.find("gpu-b"), 10, std::nullopt);
        QVERIFY(!noBw);
        QVERIFY(noBw.error().message.find("'cpu-x' has no memory_bandwidth_gbs") != std::string::npos);
        QVERIFY(!projectThroughput(*c.find("gpu-a"), *c.find("gpu-b"), 0, std::nullopt));
        QVERIFY(!projectThroughput(*c.find("gpu-a"), *c.find("gpu-b"), 10, -1.0));
    }

    void reportKeepsMeasuredAndEstimatedApart() {
        const HardwareCatalog c = testCatalog();
        TcoRequest req;
        req.hardwareId = "gpu-b";
        req.measuredOnId = "gpu-a";
        req.decodeTps = 100;
        req.assumptions = workedAssumptions();
        req.tokensPerDay = 5e8;
        req.baselineUsdPerMtok = 2.0;
        auto r = computeTco(c, req);
        QVERIFY(r);
        QVERIFY(r->estimated);
        QVERIFY(r->projection);
        VERIFY_NEAR(r->costTps, 332.3412698412698);
        const json j = tcoReportJson(*r);
        QCOMPARE(j["estimated"], json(true));
        QCOMPARE(j["throughput"]["estimated"], json(false));
        QCOMPARE(j["throughput"]["decode_tps"], json(100.0));
        QCOMPARE(j["projection"]["estimated"], json(true));
        QCOMPARE(j["per_device"]["estimated"], json(true));
        QCOMPARE(j["fleet"]["estimated"], json(true));
        // the same device measured and costed: nothing is estimated
        req.measuredOnId.reset();
        auto m = computeTco(c, req);
        QVERIFY(m);
        QVERIFY(!m->estimated);
        QVERIFY(!m->projection);
        QCOMPARE(tcoReportJson(*m)["projection"], json(nullptr));
        // unknown ids list the known ones
        req.hardwareId = "h900";
        auto u = computeTco(c, req);
        QVERIFY(!u);
        QVERIFY(u.error().message.find("unknown hardware id 'h900'; known ids: gpu-a, gpu-b, cpu-x") != std::string::npos);
        req.hardwareId = "gpu-b";
        req.tokensPerDay.reset();
        QVERIFY(!computeTco(c, req));  // baseline without a daily volume
    }

    void runThroughputMedian() {
        std::vector<RunItemRecord> items = {item(10, 100, 50.0), item(30, 200, 100.0), item(20, 0, 10.0),
                                            item(1000, 100, 1.0, "failed"), item(std::nullopt, 50, 25.0)};
        const RunThroughput t = runThroughputOf(items);
        QCOMPARE(t.itemsWithDecode, int64_t(3));
        VERIFY_NEAR(*t.medianDecodeTps, 20);          // {10, 20, 30}; the failed item is left out
        QCOMPARE(t.itemsWithPrefill, int64_t(3));     // 100/0.05 = 2000, 200/0.1 = 2000, 50/0.025 = 2000
        VERIFY_NEAR(*t.medianPrefillTps, 2000);
        VERIFY_NEAR(medianOf({4, 1, 3, 2}), 2.5);
        QVERIFY(!runThroughputOf({}).medianDecodeTps);
    }

    // ---- catalog ------------------------------------------------------------------------
    void builtinCatalogComplete() {
        auto c = HardwareCatalog::builtin();
        QVERIFY2(c, c ? "" : c.error().message.c_str());
        for (const char* id : {"a10", "l4", "l40s", "a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200", "b200",
                               "rtx-3090", "rtx-4090", "rtx-5090", "mi300x", "this-machine"})
            QVERIFY2(c->find(id), id);
        bool hasCpu = false;
        for (const HardwareEntry& e : c->entries()) {
            hasCpu |= e.kind == HardwareKind::Cpu && e.id != kThisMachineId;
            for (const HardwareFigure* f : {&e.memoryGb, &e.memoryBandwidthGbs, &e.fp16TflopsDense, &e.tdpW,
                                            &e.purchaseUsd, &e.cloudUsdPerHour}) {
                QVERIFY2(!f->source.empty(), e.id.c_str());
                QVERIFY2(!f->asOf.empty(), e.id.c_str());
            }
            if (e.kind == HardwareKind::Gpu) {  // every GPU has every figure
                for (const HardwareFigure* f : {&e.memoryGb, &e.memoryBandwidthGbs, &e.fp16TflopsDense, &e.tdpW,
                                                &e.purchaseUsd, &e.cloudUsdPerHour})
                    QVERIFY2(f->value && *f->value > 0, e.id.c_str());
            }
        }
        QVERIFY(hasCpu);
        // dense, not sparse: the H100 SXM datasheet's 1979 (sparse) halves to 989.5
        VERIFY_NEAR(*c->find("h100-sxm")->fp16TflopsDense.value, 989.5);
    }

    void thisMachine() {
        QCOMPARE(cpuModelFromCpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n"),
                 std::string("AMD EPYC 7B13"));
        QCOMPARE(cpuModelFromCpuinfo("processor : 0\nHardware : BCM2835\n"), std::string("BCM2835"));
        QCOMPARE(cpuModelFromCpuinfo("nothing here\n"), std::string());
        auto c = HardwareCatalog::builtin();
        QVERIFY(c);
        c->applyMachineInfo({"Test CPU 9000", 12, 64.0, "2026-01-02"});
        const HardwareEntry* e = c->find(kThisMachineId);
        QCOMPARE(e->name, std::string("this machine: Test CPU 9000"));
        QCOMPARE(*e->cores, int64_t(12));
        QCOMPARE(*e->memoryGb.value, 64.0);
        QCOMPARE(e->memoryGb.asOf, std::string("2026-01-02"));
        QCOMPARE(e->origin, HardwareOrigin::Runtime);
        const MachineInfo real = probeThisMachine();
        QVERIFY(real.logicalCores > 0);
        QVERIFY(real.memoryGb && *real.memoryGb > 0);
    }

    void catalogValidation_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error");
        json d = testDocument();
        QTest::newRow("syntax") << QString("{\"schema_version\": 1, \"hardware\": [") << QString("test.json: not valid JSON at byte");
        json v = d;
        v["schema_version"] = 2;
        QTest::newRow("version") << QString::fromStdString(v.dump()) << QString("test.json: $.schema_version: must be 1");
        json s = d;
        s["hardware"][1]["tdp_w"].erase("source");
        QTest::newRow("no source") << QString::fromStdString(s.dump()) << QString("test.json: $.hardware[1].tdp_w.source: missing");
        json n = d;
        n["hardware"][0]["purchase_usd"]["value"] = -5;
        QTest::newRow("negative") << QString::fromStdString(n.dump())
                                  << QString("$.hardware[0].purchase_usd.value: must be a positive number or null");
        json a = d;
        a["hardware"][0]["memory_gb"]["as_of"] = "last year";
        QTest::newRow("date") << QString::fromStdString(a.dump()) << QString("$.hardware[0].memory_gb.as_of: 'last year' is not a date");
        json dup = d;
        dup["hardware"][1]["id"] = "gpu-a";
        QTest::newRow("duplicate") << QString::fromStdString(dup.dump()) << QString("$.hardware[1].id: duplicate id 'gpu-a'");
        json k = d;
        k["hardware"][2]["kind"] = "tpu";
        QTest::newRow("kind") << QString::fromStdString(k.dump()) << QString("$.hardware[2].kind: 'tpu' is neither");
        json u = d;
        u["hardware"][0]["tdp"] = 5;
        QTest::newRow("unknown field") << QString::fromStdString(u.dump()) << QString("$.hardware[0].tdp: unknown field");
        json m = d;
        m["hardware"][0].erase("fp16_tflops_dense");
        QTest::newRow("missing figure") << QString::fromStdString(m.dump()) << QString("$.hardware[0].fp16_tflops_dense: missing");
        json bare = d;
        bare["hardware"][0]["tdp_w"] = 450;  // bare numbers only in a user file
        QTest::newRow("bare number") << QString::fromStdString(bare.dump()) << QString("$.hardware[0].tdp_w: must be an object");
    }
    void catalogValidation() {
        QFETCH(QString, text);
        QFETCH(QString, error);
        auto c = HardwareCatalog::parse(text.toStdString(), "test.json");
        QVERIFY(!c);
        QVERIFY2(QString::fromStdString(c.error().message).contains(error), c.error().message.c_str());
    }

    void userOverrideMerge() {
        HardwareCatalog c = testCatalog();
        const json user = {{"hardware",
                            {{{"id", "gpu-a"}, {"purchase_usd", 1800}},                     // bare number override
                             {{"id", "cpu-x"}, {"memory_bandwidth_gbs", figure(200.0, "stream benchmark", "2025-05")}},
                             {{"id", "my-npu"}, {"name", "My NPU"}, {"kind", "gpu"}, {"tdp_w", 30}}}}};
        auto r = c.mergeUser(user.dump(), "/home/u/.config/verdict/hardware.json", "2025-06-01");
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        const HardwareEntry* a = c.find("gpu-a");
        QCOMPARE(*a->purchaseUsd.value, 1800.0);
        QCOMPARE(a->purchaseUsd.source, std::string("user file /home/u/.config/verdict/hardware.json"));
        QCOMPARE(a->purchaseUsd.asOf, std::string("2025-06-01"));
        QCOMPARE(*a->memoryBandwidthGbs.value, 1008.0);  // untouched fields stay
        QCOMPARE(a->origin, HardwareOrigin::User);
        QCOMPARE(c.find("cpu-x")->memoryBandwidthGbs.source, std::string("stream benchmark"));
        const HardwareEntry* npu = c.find("my-npu");
        QVERIFY(npu);
        QCOMPARE(*npu->tdpW.value, 30.0);
        QVERIFY(!npu->memoryGb.value);  // not given: unknown, and it says so
        QVERIFY(npu->memoryGb.source.find("not given in user file") != std::string::npos);
        QCOMPARE(c.ids().size(), std::size_t(4));
        QCOMPARE(c.find("gpu-b")->origin, HardwareOrigin::Builtin);
    }

    void userFileErrors() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("hardware.json").toStdString();
        HardwareCatalog c = testCatalog();
        {
            std::ofstream f(path);
            f << json({{"hardware", {{{"id", "gpu-a"}, {"tdp_w", {{"value", "450 W"}}}}}}}).dump();
        }
        auto r = c.mergeUserFile(path);
        QVERIFY(!r);
        QVERIFY2(r.error().message == path + ": $.hardware[0].tdp_w.value: must be a positive number or null",
                 r.error().message.c_str());
        QCOMPARE(*c.find("gpu-a")->tdpW.value, 450.0);  // unchanged on error
        {
            std::ofstream f(path);
            f << json({{"hardware", {{{"id", "new-one"}, {"tdp_w", 5}}}}}).dump();
        }
        auto n = c.mergeUserFile(path);
        QVERIFY(!n);
        QVERIFY2(n.error().message == path + ": $.hardware[0].name: missing", n.error().message.c_str());
        QVERIFY(!c.find("new-one"));
        {
            std::ofstream f(path);
            f << "{\"hardware\": [ {\"id\": \"gpu-a\",, } ]}";
        }
        auto s = c.mergeUserFile(path);
        QVERIFY(!s);
        QVERIFY(s.error().message.rfind(path + ": not valid JSON at byte", 0) == 0);
        auto missing = c.mergeUserFile(dir.filePath("absent.json").toStdString());
        QVERIFY(!missing);
        QVERIFY(missing.error().message.find("absent.json") != std::string::npos);
    }

    void entryJsonRoundTrip() {
        const HardwareCatalog c = testCatalog();
        json doc = {{"schema_version", 1}, {"hardware", json::array()}};
        for (const HardwareEntry& e : c.entries()) {
            json j = hardwareEntryJson(e);
            QCOMPARE(j["origin"], json("builtin"));
            j.erase("origin");
            if (j["cores"].is_null()) j.erase("cores");
            doc["hardware"].push_back(j);
        }
        auto again = HardwareCatalog::parse(doc.dump(), "round trip");
        QVERIFY2(again, again ? "" : again.error().message.c_str());
        QCOMPARE(*again->find("gpu-b")->fp16TflopsDense.value, 989.5);
    }
};

QTEST_GUILESS_MAIN(TestTco)
#include "test_tco.moc"
