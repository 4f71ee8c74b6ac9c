// Latency sweeps (core/perf/sweep_runner.h): the grid, warm-ups and repetitions against a
// scripted target whose timings are known, the stored points and their hash chain (edits are
// caught), cancellation keeping finished points, and a real sweep on the stories260K fixture.
#include "core/perf/engine_sweep_target.h"
#include "core/perf/sweep_runner.h"
#include "core/store/audit_chain.h"
#include "core/store/store.h"
#include "core/store/sweep_repository.h"
#include "core/tco/hardware_catalog.h"
#include "fixtures.h"

#include <QtTest/QtTest>

using namespace verdict;
using namespace verdict::core;

namespace {

// Every request: TTFT = prompt tokens ms, then one token every (2 * batch) ms.
class ScriptedTarget final : public SweepTarget {
public:
    int calls = 0;
    std::vector<size_t> batchSizes;
    std::vector<std::vector<int32_t>> firstPrompts;
    std::atomic<bool>* cancelAfterCall = nullptr;
    int cancelAt = -1;
    int failAtPrompt = -1;

    SweepTargetInfo info() const override {
        SweepTargetInfo i;
        i.backend = "engine";
        i.modelPath = "/models/scripted.gguf";
        i.device = "test";
        i.nVocab = 100;
        i.threads = 1;
        i.loadMs = 42;
        i.weightsBytes = 1000;
        i.kvBytesPerToken = 10;
        i.maxBatch = 8;
        return i;
    }
    Result<std::vector<RequestTiming>> runBatch(const std::vector<std::vector<int32_t>>& prompts, int64_t gen) override {
        ++calls;
        batchSizes.push_back(prompts.size());
        firstPrompts.push_back(prompts.front());
        if (cancelAfterCall && calls == cancelAt) *cancelAfterCall = true;
        if (static_cast<int>(prompts.front().size()) == failAtPrompt) return Error{"cannot allocate the context"};
        std::vector<RequestTiming> out;
        for (const auto& p : prompts) {
            for (int32_t t : p)
                if (t < 0 || t >= 100) return Error{"token outside the vocabulary"};
            RequestTiming r;
            r.promptTokens = static_cast<int64_t>(p.size());
            r.outputTokens = gen;
            r.ttftMs = static_cast<double>(p.size());
            r.itlMs.assign(static_cast<size_t>(gen - 1), 2.0 * static_cast<double>(prompts.size()));
            r.e2eMs = r.ttftMs + 2.0 * static_cast<double>(prompts.size()) * static_cast<double>(gen - 1);
            out.push_back(r);
        }
        return out;
    }
    TargetMemory memory() const override { return {1000, 500, 50, 12345}; }
};

QString tempDb(QTemporaryDir& dir) { return dir.filePath("sweep.db"); }

}  // namespace

class TestSweep : public QObject {
    Q_OBJECT
private slots:
    void specValidation() {
        SweepSpec s;
        QVERIFY(validateSweepSpec(s, 32).ok());
        s.genTokens = {1};
        QVERIFY(validateSweepSpec(s, 32).error().message.find("2 output tokens") != std::string::npos);
        s = SweepSpec{};
        s.batches = {64};
        QVERIFY(validateSweepSpec(s, 32).error().message.find("batch: 64") != std::string::npos);
        s = SweepSpec{};
        s.promptTokens = {};
        QVERIFY(!validateSweepSpec(s, 32).ok());
        s = SweepSpec{};
        s.reps = 0;
        QVERIFY(!validateSweepSpec(s, 32).ok());
    }

    void gridMetricsAndChain() {
        QTemporaryDir dir;
        auto db = openStore(tempDb(dir).toStdString());
        QVERIFY2(db.ok(), db ? "" : db.error().message.c_str());
        ScriptedTarget target;
        SweepSpec spec;
        spec.promptTokens = {8, 16};
        spec.genTokens = {5};
        spec.batches = {1, 4};
        spec.reps = 3;
        spec.warmups = 2;
        SweepOptions o;
        o.bandwidthGbPerS = 1e-6;  // 1000 bytes/s: easy roofline arithmetic
        std::vector<std::string> phases;
        o.progress = [&](const SweepProgress& p) { phases.push_back(p.phase); };
        auto out = runSweep(*db, target, spec, o);
        QVERIFY2(out.ok(), out ? "" : out.error().message.c_str());
        QCOMPARE(out->points.size(), size_t(4));
        QCOMPARE(target.calls, 4 * (2 + 3));  // warm-ups + reps per point
        QCOMPARE(out->sweep.status, std::string("completed"));
        QCOMPARE(out->sweep.name, std::string("scripted.gguf"));
        QCOMPARE(std::count(phases.begin(), phases.end(), std::string("stored")), 4l);

        // point (prompt 16, gen 5, batch 4): 12 requests; TTFT 16; ITL 8 each; TPOT 8; E2E 48
        const SweepPointRecord& p = out->points[3];
        QCOMPARE(p.promptTokens, int64_t(16));
        QCOMPARE(p.batch, int64_t(4));
        QCOMPARE(p.metrics["requests"].get<int>(), 12);
        QCOMPARE(p.requests.size(), size_t(12));
        QCOMPARE(p.metrics["ttft_ms"]["p99"].get<double>(), 16.0);
        QCOMPARE(p.metrics["tpot_ms"]["p50"].get<double>(), 8.0);
        QCOMPARE(p.metrics["itl_ms"]["n"].get<int>(), 12 * 4);
        QCOMPARE(p.metrics["e2e_ms"]["p50"].get<double>(), 48.0);
        QCOMPARE(p.metrics["decode_tok_per_s"].get<double>(), 4 * 1000.0 / 8.0);
        // roofline: bytes/step = 1000 + 4 * (16 + 2.5) * 10 = 1740; bound = 4 * 1000 / 1740 tok/s
        QVERIFY(std::abs(p.metrics["roofline"]["bytes_per_step"].get<double>() - 1740.0) < 1e-9);
        QVERIFY(std::abs(p.metrics["roofline"]["decode_tok_per_s_bound"].get<double>() - 4000.0 / 1740.0) < 1e-9);
        QCOMPARE(p.metrics["memory"]["kv_bytes"].get<int>(), 500);
        // prompts are seeded: the same spec sends the same tokens, different reps differ
        QVERIFY(target.firstPrompts[2] != target.firstPrompts[3]);
        // cold start stored with the first point: the first warm-up request against the warm median
        const auto& cold = out->points[0].metrics["cold_start"];
        QCOMPARE(cold["load_ms"].get<double>(), 42.0);
        QCOMPARE(cold["first_request_ms"].get<double>(), 8.0 + 2 * 4);
        QVERIFY(!out->points[1].metrics.contains("cold_start"));

        // stored and chained
        SweepRepository repo(*db);
        auto pts = repo.points(out->sweep.id);
        QVERIFY(pts.ok());
        QCOMPARE(pts->size(), size_t(4));
        QCOMPARE((*pts)[3].metrics, p.metrics);
        auto report = verifyChain(*db);
        QVERIFY(report.ok());
        QVERIFY(report->ok());
        QCOMPARE(report->sweepsChecked, int64_t(1));
        QCOMPARE(report->pointsChecked, int64_t(4));

        // a second identical sweep sends identical prompts
        ScriptedTarget again;
        QVERIFY(runSweep(*db, again, spec, o).ok());
        QCOMPARE(again.firstPrompts, target.firstPrompts);

        // tampering: an edited metric, then an edited sweep header
        QVERIFY(db->exec("UPDATE sweep_points SET metrics = replace(metrics, '\"requests\":12', '\"requests\":13') "
                         "WHERE seq = 4").ok());
        report = verifyChain(*db);
        QVERIFY(report.ok());
        QVERIFY(!report->ok());
        QCOMPARE(report->breaks.front().table, std::string("sweep_points"));
        QCOMPARE(report->breaks.front().seq, int64_t(4));
        QVERIFY(db->exec("UPDATE sweeps SET device = 'faster' WHERE id = 1").ok());
        report = verifyChain(*db);
        QCOMPARE(report->breaks.front().table, std::string("sweeps"));
    }

    void failedPointIsStoredAndSweepGoesOn() {
        QTemporaryDir dir;
        auto db = openStore(tempDb(dir).toStdString());
        QVERIFY(db.ok());
        ScriptedTarget target;
        target.failAtPrompt = 16;
        SweepSpec spec;
        spec.promptTokens = {16, 8};
        spec.genTokens = {3};
        spec.batches = {1};
        spec.reps = 1;
        spec.warmups = 0;
        SweepOptions o;
        o.bandwidthGbPerS = 1;
        auto out = runSweep(*db, target, spec, o);
        QVERIFY(out.ok());
        QCOMPARE(out->points.size(), size_t(2));
        QCOMPARE(out->points[0].error, std::string("cannot allocate the context"));
        QVERIFY(out->points[1].error.empty());
        QCOMPARE(out->points[1].metrics["requests"].get<int>(), 1);
    }

    void cancelKeepsFinishedPoints() {
        QTemporaryDir dir;
        auto db = openStore(tempDb(dir).toStdString());
        QVERIFY(db.ok());
        std::atomic<bool> cancel{false};
        ScriptedTarget target;
        target.cancelAfterCall = &cancel;
        target.cancelAt = 3;  // during the second point's measurement (1 warm-up + 1 rep per point)
        SweepSpec spec;
        spec.promptTokens = {4, 8, 12};
        spec.genTokens = {3};
        spec.reps = 1;
        spec.warmups = 1;
        SweepOptions o;
        o.bandwidthGbPerS = 1;
        o.cancel = &cancel;
        auto out = runSweep(*db, target, spec, o);
        QVERIFY(out.ok());
        QVERIFY(out->cancelled);
        QCOMPARE(out->points.size(), size_t(1));
        SweepRepository repo(*db);
        auto s = repo.find(out->sweep.id);
        QVERIFY(s.ok() && *s);
        QCOMPARE((*s)->status, std::string("cancelled"));
        QCOMPARE(repo.points(out->sweep.id)->size(), size_t(1));
    }

    void engineSweepOnFixture() {
        const auto path = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(path);
        QTemporaryDir dir;
        auto db = openStore(tempDb(dir).toStdString());
        QVERIFY(db.ok());
        EngineSweepTargetOptions to;
        to.threads = 1;
        to.maxBatch = 4;
        auto target = EngineSweepTarget::open(path.string(), to);
        QVERIFY2(target.ok(), target ? "" : target.error().message.c_str());
        SweepSpec spec;
        spec.promptTokens = {8, 32};
        spec.genTokens = {6};
        spec.batches = {1, 3};
        spec.reps = 2;
        spec.warmups = 1;
        SweepOptions o;
        auto out = runSweep(*db, **target, spec, o);
        QVERIFY2(out.ok(), out ? "" : out.error().message.c_str());
        QCOMPARE(out->points.size(), size_t(4));
        for (const auto& p : out->points) {
            QVERIFY2(p.error.empty(), p.error.c_str());
            const auto& m = p.metrics;
            QCOMPARE(m["requests"].get<int64_t>(), 2 * p.batch);
            QCOMPARE(m["failed"].get<int>(), 0);
            QCOMPARE(m["output_tokens"].get<int64_t>(), 2 * p.batch * 6);
            QCOMPARE(m["itl_ms"]["n"].get<int64_t>(), 2 * p.batch * 5);
            QVERIFY(m["ttft_ms"]["p50"].get<double>() > 0);
            QVERIFY(m["e2e_ms"]["p50"].get<double>() >= m["ttft_ms"]["p50"].get<double>());
            QVERIFY(m["output_tok_per_s"].get<double>() > 0);
            QVERIFY(m["roofline"]["bandwidth_gb_per_s"].get<double>() > 0);
            QVERIFY(m["memory"]["weights_bytes"].get<int64_t>() > 0);
            QVERIFY(m["memory"]["kv_bytes"].get<int64_t>() > 0);
            for (const auto& r : p.requests) {
                // E2E = TTFT + the gaps, as a client sees the tokens arrive
                double sum = r["ttft_ms"].get<double>();
                for (const auto& g : r["itl_ms"]) sum += g.get<double>();
                QVERIFY(std::abs(sum - r["e2e_ms"].get<double>()) < 1e-6);
            }
        }
        QVERIFY(out->points[0].metrics.contains("cold_start"));
        QVERIFY(out->sweep.environment["load_ms"].get<double>() > 0);
        // The probe's passes and spread are recorded with the figure.
        const auto& probe = out->sweep.environment["bandwidth_probe"];
        QVERIFY(probe.is_object());
        QCOMPARE(probe["pass_gb_per_s"].size(), size_t(4));
        QVERIFY(probe["min_gb_per_s"].get<double>() <= probe["median_gb_per_s"].get<double>());
        QVERIFY(probe["median_gb_per_s"].get<double>() <= out->sweep.environment["bandwidth_gb_per_s"].get<double>());
        QVERIFY(probe["spread"].get<double>() >= 0 && probe["spread"].get<double>() < 1);
        QVERIFY(probe["warnings"].is_array());
        QCOMPARE(probe["warnings"].size(), out->warnings.size());
    }

    // A busy machine's probe (passes far apart, or far below the catalogue) is flagged.
    void bandwidthProbeWarns() {
        BandwidthProbeResult quiet;
        quiet.threads = 2;
        quiet.passGbPerS = {19.0, 19.2, 18.9, 19.1};
        summarizeBandwidthPasses(quiet);
        QCOMPARE(quiet.gbPerS, 19.2);
        QCOMPARE(quiet.minGbPerS, 18.9);
        QCOMPARE(quiet.medianGbPerS, 19.05);
        QVERIFY(bandwidthProbeWarnings(quiet, std::nullopt).empty());

        BandwidthProbeResult busy = quiet;
        busy.passGbPerS = {5.7, 7.5, 6.1, 6.8};  // what a busy machine gave
        summarizeBandwidthPasses(busy);
        QVERIFY(std::abs(busy.spread - (7.5 - 5.7) / 7.5) < 1e-12);
        auto w = bandwidthProbeWarnings(busy, std::nullopt);
        QCOMPARE(w.size(), size_t(1));
        QVERIFY2(w[0].find("varied between the probe's passes (5.7 to 7.5 GB/s, spread 24.0 %)") != std::string::npos, w[0].c_str());

        // Against a catalogue figure: 55 GB/s for this machine (user file), all its cores used.
        const BandwidthReference self{55.0, 2, "catalog: this-machine (STREAM triad)"};
        BandwidthProbeResult low = quiet;
        low.passGbPerS = {7.4, 7.5, 7.3, 7.45};  // steady but far too low
        summarizeBandwidthPasses(low);
        w = bandwidthProbeWarnings(low, self);
        QCOMPARE(w.size(), size_t(1));
        QVERIFY2(w[0].find("far below the 55.0 GB/s expected") != std::string::npos, w[0].c_str());
        BandwidthProbeResult good = quiet;
        good.passGbPerS = {41.0, 40.2, 40.8, 41.3};  // within the expectation
        summarizeBandwidthPasses(good);
        QVERIFY(bandwidthProbeWarnings(good, self).empty());
        // A 56-core server's peak, 2 threads: the expectation is their share, 307.2 x 2 / 56 = 11 GB/s.
        const BandwidthReference server{307.2, 56, "catalog: Intel Xeon Platinum 8480+"};
        QVERIFY(bandwidthProbeWarnings(quiet, server).empty());
        w = bandwidthProbeWarnings(busy, server);
        QCOMPARE(w.size(), size_t(1));  // 7.5 >= 5.5: only the spread
    }

    void cpuModelMatchesCatalogEntry() {
        auto catalog = HardwareCatalog::builtin();
        QVERIFY(catalog.ok());
        const HardwareEntry* e = matchCpuEntry(catalog->entries(), "AMD EPYC 9654 96-Core Processor");
        QVERIFY(e);
        QCOMPARE(e->id, std::string("epyc-9654"));
        e = matchCpuEntry(catalog->entries(), "Intel(R) Xeon(R) Platinum 8480+");
        QVERIFY(e);
        QCOMPARE(e->id, std::string("xeon-8480p"));
        QVERIFY(!matchCpuEntry(catalog->entries(), "Intel(R) Xeon(R) Platinum 8480"));  // not the 8480+
        QVERIFY(!matchCpuEntry(catalog->entries(), "AMD EPYC 7763 64-Core Processor"));
        QVERIFY(!matchCpuEntry(catalog->entries(), ""));
    }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "test_sweep.moc"
