// The report's data assembly (core/report) on hand-made store contents: accuracy and the paired
// test, refusal on different suites, sweep assignment and the reference point, missing sections,
// cost from the cost model, the decision table, the weighted recommendation and weight parsing.
#include "core/report/report_data.h"
#include "core/report/report_decision.h"
#include "core/report/report_format.h"
#include "core/stats/proportion.h"
#include "core/store/judgment_repository.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/suite_repository.h"
#include "core/store/sweep_repository.h"
#include "core/tco/cost_model.h"
#include "core/tco/hardware_catalog.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

using namespace verdict;
using namespace verdict::core;

namespace {

const std::string kShaA(64, 'a'), kShaB(64, 'b');

std::vector<SuiteItem> makeItems(int n, const std::string& tag) {
    std::vector<SuiteItem> v;
    for (int i = 0; i < n; ++i) {
        SuiteItem it;
        it.id = "q";
        it.id += std::to_string(i);
        it.category = i % 2 ? "odd" : "even";
        it.prompt = tag + ": what is " + std::to_string(i) + " + 1?";
        it.references = {std::to_string(i + 1)};
        it.sourceLine = i + 1;
        v.push_back(it);
    }
    return v;
}

int64_t saveSuite(Database& db, const std::string& name, int n) {
    SuiteRecord m;
    m.name = name;
    m.shape = "jsonl";
    m.sourcePath = "/tmp/" + name + ".jsonl";
    auto s = SuiteRepository(db).save(m, makeItems(n, name));
    return s ? s->suite.id : -1;
}

// A run whose item i is correct when right(i).
int64_t saveRun(Database& db, int64_t suiteId, const std::string& sha, int n, const std::function<bool(int)>& right,
                const std::string& device = "cpu (2 threads)") {
    RunRecord r;
    r.modelPath = "/models/" + sha.substr(0, 1) + ".gguf";  // not on disk: the card is "not readable"
    r.modelSha256 = sha;
    r.modelBytes = 1000;
    r.suiteId = suiteId;
    r.generation = {{"max_tokens", 16}, {"temperature", 0.0}};
    r.chatTemplateMode = "raw";
    r.seed = 7;
    r.nPlanned = n;
    r.engineVersion = "verdict test";
    r.device = device;
    RunRepository runs(db);
    auto created = runs.create(r);
    if (!created) return -1;
    for (int i = 0; i < n; ++i) {
        RunItemRecord it;
        it.runId = created->id;
        it.itemIdx = i;
        it.itemId = "q";  // appended, not "q" + ...: GCC 12 warns falsely (-Wrestrict) on that
        it.itemId += std::to_string(i);
        it.category = i % 2 ? "odd" : "even";
        it.prompt = "templated prompt " + std::to_string(i);
        it.output = right(i) ? std::to_string(i + 1) : "no idea";
        it.tokensIn = 10;
        it.tokensOut = 4;
        it.ttftMs = 5.0;
        it.decodeTps = sha == kShaA ? 100.0 : 50.0;
        it.correct = right(i);
        if (!runs.appendItem(it)) return -1;
    }
    if (!runs.finish(created->id, RunStatus::Completed, "")) return -1;
    return created->id;
}

nlohmann::json metrics(double ttft, double tpot, double outTps, double bound) {
    auto dist = [](double v) {
        return nlohmann::json{{"n", 2}, {"mean", v}, {"min", v}, {"max", v * 1.2}, {"p50", v}, {"p90", v * 1.1},
                              {"p95", v * 1.15}, {"p99", v * 1.2}};
    };
    return {{"requests", 2},
            {"failed", 0},
            {"output_tok_per_s", outTps},
            {"prefill_tok_per_s", 800.0},
            {"decode_tok_per_s", outTps * 1.1},
            {"requests_per_s", 3.0},
            {"ttft_ms", dist(ttft)},
            {"tpot_ms", dist(tpot)},
            {"itl_ms", dist(tpot)},
            {"e2e_ms", dist(ttft + 3 * tpot)},
            {"roofline", {{"bandwidth_gb_per_s", 10.0}, {"decode_tok_per_s_bound", bound}, {"fraction", outTps * 1.1 / bound}}},
            {"memory", {{"weights_bytes", 1000000}, {"kv_bytes", 20000}, {"scratch_bytes", 5000}, {"peak_rss_bytes", 9000000}}}};
}

// A sweep of the model `sha` with points (prompt, gen, batch) -> (ttft, tpot, out tok/s).
int64_t saveSweep(Database& db, const std::string& sha, double ttftScale, double tps) {
    SweepRecord s;
    s.name = "sweep " + sha.substr(0, 1);
    s.spec = {{"prompt_tokens", {8, 16}}, {"gen_tokens", {4}}, {"batch", {1, 2}}, {"reps", 1}, {"warmups", 0}, {"seed", 1}};
    s.backend = "engine";
    s.modelPath = "/models/" + sha.substr(0, 1) + ".gguf";
    s.modelSha256 = sha;
    s.modelBytes = 1000;
    s.device = "cpu (2 threads)";
    s.engineVersion = "verdict test";
    s.environment = {{"bandwidth_gb_per_s", 10.0}, {"bandwidth_probe", nullptr}};
    SweepRepository repo(db);
    auto created = repo.create(s);
    if (!created) return -1;
    struct P {
        int64_t prompt, gen, batch;
        double ttft, tpot, tps;
    };
    for (const P& p : {P{16, 4, 1, 20 * ttftScale, 2, tps}, P{8, 4, 1, 10 * ttftScale, 2, tps}, P{8, 4, 2, 15 * ttftScale, 2.5, tps * 1.8}}) {
        SweepPointRecord pt;
        pt.sweepId = created->id;
        pt.promptTokens = p.prompt;
        pt.genTokens = p.gen;
        pt.batch = p.batch;
        pt.metrics = metrics(p.ttft, p.tpot, p.tps, 1000.0 * static_cast<double>(p.batch));
        if (!repo.appendPoint(pt)) return -1;
    }
    if (!repo.finish(created->id, "completed", "")) return -1;
    return created->id;
}

// A decision row as recommend() sees it, and a model with a side and a label.
DecisionRow mk(const char* key, Winner w, double weight) {
    DecisionRow r;
    r.key = key;
    r.label = key;
    r.winner = w;
    r.weight = weight;
    return r;
}

ReportModel model(char side, const char* label) {
    ReportModel m;
    m.side = side;
    m.label = label;
    return m;
}

const DecisionRow* row(const ReportData& d, const std::string& key) {
    for (const auto& r : d.decision)
        if (r.key == key) return &r;
    return nullptr;
}

}  // namespace

class TestReportData : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_n = 0;

    Database freshDb() {
        auto db = openStore(m_dir.filePath(QString("r%1.db").arg(++m_n)).toStdString());
        if (!db) qFatal("open: %s", db.error().message.c_str());
        return std::move(*db);
    }

private slots:
    void accuracyPairedAndDisagreements() {
        Database db = freshDb();
        const int64_t suite = saveSuite(db, "arith", 20);
        // A right on 18 (all but 0, 1), B right on items 0..7 only: 2 B-only, 12 A-only.
        const int64_t a = saveRun(db, suite, kShaA, 20, [](int i) { return i >= 2; });
        const int64_t b = saveRun(db, suite, kShaB, 20, [](int i) { return i < 8; });
        ReportRequest req;
        req.runA = a;
        req.runB = b;
        req.maxDisagreements = 4;
        auto d = buildReportData(db, req);
        QVERIFY2(d.ok(), d ? "" : d.error().message.c_str());
        QVERIFY(!d->accuracy.refused);
        QCOMPARE(d->accuracy.suiteName, std::string("arith"));
        QCOMPARE(d->accuracy.a.overall.correct, int64_t(18));
        QCOMPARE(d->accuracy.b.overall.correct, int64_t(8));
        const Interval w = wilsonInterval(18, 20);
        QCOMPARE(d->accuracy.a.overall.ci.lo, w.lo);
        QCOMPARE(d->accuracy.a.overall.ci.hi, w.hi);
        QCOMPARE(d->accuracy.a.byCategory.at("even").n, int64_t(10));
        QVERIFY(d->accuracy.paired.has_value());
        QCOMPARE(d->accuracy.paired->aOnly, int64_t(12));
        QCOMPARE(d->accuracy.paired->bOnly, int64_t(2));
        QVERIFY(d->accuracy.significant);  // McNemar exact, b = 12, c = 2: p = 0.0129
        QCOMPARE(d->accuracy.disagreements.size(), size_t(4));
        // Alternating: first an A-only item (q8), then a B-only item (q0).
        QCOMPARE(d->accuracy.disagreements[0].itemId, std::string("q8"));
        QVERIFY(d->accuracy.disagreements[0].aCorrect && !d->accuracy.disagreements[0].bCorrect);
        QCOMPARE(d->accuracy.disagreements[1].itemId, std::string("q0"));
        QCOMPARE(d->accuracy.disagreements[1].prompt, std::string("arith: what is 0 + 1?"));  // the suite's prompt
        QCOMPARE(d->accuracy.disagreements[1].reference, std::string("1"));
        const DecisionRow* acc = row(*d, "accuracy");
        QVERIFY(acc);
        QCOMPARE(acc->winner, Winner::A);
        // No sweeps, no cost: those rows are not counted, and the sections say what is missing.
        QVERIFY(!d->perfA.missing.empty());
        QVERIFY(!d->cost.missing.empty());
        QCOMPARE(row(*d, "ttft")->winner, Winner::None);
        QCOMPARE(row(*d, "cost")->winner, Winner::None);
        QCOMPARE(d->recommendation.winner, Winner::A);
        QCOMPARE(d->recommendation.scoreA, 3.0);
        QCOMPARE(d->recommendation.scoreMax, 3.0);
        QCOMPARE(d->checklist.size(), size_t(5));
        QVERIFY(d->checklist[0].fromData);
        QVERIFY(!d->checklist[1].fromData);  // no SLA, no sweeps
        QVERIFY(!d->checklist[3].fromData);  // license unknown (file not readable)
        QVERIFY(!d->checklist[4].fromData);  // ecosystem: always a person
        QCOMPARE(d->a.license, std::string(kLicenseUnknown));
        bool mentionsPerf = false;
        for (const auto& m : d->missing) mentionsPerf |= m.find("Performance data missing for A") != std::string::npos;
        QVERIFY(mentionsPerf);
        const auto j = toJson(*d);
        QCOMPARE(j["accuracy"]["paired"]["a_only"].get<int64_t>(), int64_t(12));
        QCOMPARE(j["recommendation"]["winner"].get<std::string>(), std::string("A"));
        QVERIFY(j["performance"]["a"]["missing"].is_string());
        QVERIFY(j["cost"]["missing"].is_string());
    }

    void judgedPreferenceRow() {
        Database db = freshDb();
        const int64_t suite = saveSuite(db, "open", 10);
        const int64_t a = saveRun(db, suite, kShaA, 10, [](int) { return true; });
        const int64_t b = saveRun(db, suite, kShaB, 10, [](int) { return true; });
        ReportRequest req;
        req.runA = a;
        req.runB = b;
        auto before = buildReportData(db, req);
        QVERIFY(before.ok());
        const DecisionRow* row = nullptr;
        for (const auto& r : before->decision)
            if (r.key == "preference") row = &r;
        QVERIFY(row);
        QCOMPARE(row->winner, Winner::None);  // not judged: not counted
        QVERIFY2(row->note.find("verdict judge") != std::string::npos, row->note.c_str());

        // A judge model (both orders) prefers A on items 0-6, B on 7, flips on 8 and 9; a person
        // votes A on 0-8 and B on 9. The person is the row's judge: 9 of 10 decided for A, Wilson
        // [0.596, 0.982] lies above 50 %: A wins.
        JudgmentRepository repo(db);
        for (int i = 0; i < 10; ++i) {
            JudgmentRecord j;
            j.runA = a;
            j.runB = b;
            j.itemIdx = i;
            j.judge = "/models/judge.gguf";
            j.promptHash = "p";
            for (const char* pos : {"ab", "ba"}) {
                j.position = pos;
                j.winner = i < 7 ? JudgedWinner::A : i == 7 ? JudgedWinner::B
                         : (std::string(pos) == "ab" ? JudgedWinner::A : JudgedWinner::B);
                QVERIFY(repo.add(j).ok());
            }
            JudgmentRecord h;
            h.runA = a;
            h.runB = b;
            h.itemIdx = i;
            h.judge = "human:ann";
            h.mode = JudgeMode::Human;
            h.position = "ab";
            h.winner = i < 9 ? JudgedWinner::A : JudgedWinner::B;
            QVERIFY(repo.add(h).ok());
        }
        req.maxDisagreements = 2;
        auto d = buildReportData(db, req);
        QVERIFY2(d.ok(), d ? "" : d.error().message.c_str());
        const ReportPreference& p = d->preference;
        QVERIFY(p.missing.empty());
        QCOMPARE(p.judges.size(), size_t(2));
        QCOMPARE(p.judges[0].label, std::string("person ann"));  // people first
        QCOMPARE(p.judges[1].label, std::string("judge judge.gguf"));
        QCOMPARE(*p.primary, size_t(0));
        QCOMPARE(p.judges[1].winRate.ties, int64_t(2));
        QCOMPARE(*p.judges[1].positionBias.flipRate, 0.2);
        for (const auto& r : d->decision)
            if (r.key == "preference") row = &r;
        QCOMPARE(row->label, std::string("Preference (person ann)"));
        QCOMPARE(row->winner, Winner::A);
        QCOMPARE(*row->aNumber, 0.9);
        QVERIFY(std::abs(*row->bNumber - 0.1) < 1e-12);
        const Interval w = wilsonInterval(9, 10);
        QVERIFY(w.lo > 0.5);
        QVERIFY2(row->note.find("10 items: 9 A, 1 B, 0 ties") != std::string::npos, row->note.c_str());
        // They disagree on items 7 (A / B), 8 (A / tie) and 9 (B / tie); the first two are listed.
        QCOMPARE(p.disagreements.size(), size_t(2));
        QCOMPARE(p.disagreements[0].itemId, std::string("q7"));
        QCOMPARE(p.disagreements[0].verdicts.size(), size_t(2));
        QCOMPARE(p.disagreements[0].verdicts[1].second, std::string("B"));
        QCOMPARE(p.disagreements[1].verdicts[1].second, std::string("tie"));
        QCOMPARE(p.agreement.size(), size_t(1));
        QCOMPARE(p.agreement[0].kappa.n, int64_t(10));
        // The row counts toward the recommendation with its weight.
        QVERIFY2(d->recommendation.scoreA >= 3.0, d->recommendation.headline.c_str());
    }

    void differentSuitesRefused() {
        Database db = freshDb();
        const int64_t s1 = saveSuite(db, "one", 6), s2 = saveSuite(db, "two", 6);
        const int64_t a = saveRun(db, s1, kShaA, 6, [](int) { return true; });
        const int64_t b = saveRun(db, s2, kShaB, 6, [](int) { return false; });
        ReportRequest req;
        req.runA = a;
        req.runB = b;
        auto d = buildReportData(db, req);
        QVERIFY2(d.ok(), d ? "" : d.error().message.c_str());
        QVERIFY(d->accuracy.refused);
        QVERIFY(d->accuracy.refusedReason.find("different suites") != std::string::npos);
        QVERIFY(d->accuracy.refusedReason.find("'one'") != std::string::npos);
        QVERIFY(!d->accuracy.paired.has_value());
        QCOMPARE(row(*d, "accuracy")->winner, Winner::None);
        QVERIFY(!d->checklist[0].fromData);
        QCOMPARE(d->recommendation.winner, Winner::None);
        QVERIFY(toJson(*d)["accuracy"]["refused"].get<bool>());
    }

    void sweepsReferencePointAndSpeedRows() {
        Database db = freshDb();
        const int64_t suite = saveSuite(db, "s", 4);
        const int64_t a = saveRun(db, suite, kShaA, 4, [](int) { return true; });
        const int64_t b = saveRun(db, suite, kShaB, 4, [](int) { return true; });
        const int64_t sa = saveSweep(db, kShaA, 1.0, 50);   // A: TTFT 10 ms at prompt 8
        const int64_t sb = saveSweep(db, kShaB, 2.0, 51);   // B: TTFT 20 ms; throughput within 5 %
        ReportRequest req;
        req.runA = a;
        req.runB = b;
        req.sla.ttftMs = 15;  // A's P99 (12 ms) meets it, B's (24 ms) does not
        auto d = buildReportData(db, req);  // sweeps found automatically by the model's SHA-256
        QVERIFY2(d.ok(), d ? "" : d.error().message.c_str());
        QCOMPARE(d->perfA.sweepIds, std::vector<int64_t>{sa});
        QCOMPARE(d->perfB.sweepIds, std::vector<int64_t>{sb});
        QVERIFY(d->perfA.missing.empty());
        QVERIFY(d->perfA.reference.has_value());
        const auto& ref = d->perfA.points[*d->perfA.reference];
        QCOMPARE(ref.promptTokens, int64_t(8));
        QCOMPARE(ref.batch, int64_t(1));
        QCOMPARE(ref.ttftP50, 10.0);
        QCOMPARE(d->perfA.ttftSeries.size(), size_t(2));
        QCOMPARE(d->perfA.points[d->perfA.ttftSeries[0]].promptTokens, int64_t(8));
        QCOMPARE(d->perfA.points[d->perfA.ttftSeries[1]].promptTokens, int64_t(16));
        QCOMPARE(d->perfA.throughputSeries.size(), size_t(2));
        QCOMPARE(d->perfA.points[d->perfA.throughputSeries[1]].batch, int64_t(2));
        QCOMPARE(d->perfA.maxOutputTokPerS, 90.0);
        QCOMPARE(row(*d, "ttft")->winner, Winner::A);
        QCOMPARE(row(*d, "ttft")->aValue, formatMs(10.0));
        QCOMPARE(row(*d, "tpot")->winner, Winner::Tie);        // equal TPOT
        QCOMPARE(row(*d, "throughput")->winner, Winner::Tie);  // 90 vs 91.8: within 5 %
        QCOMPARE(row(*d, "accuracy")->winner, Winner::Tie);    // both 100 %: not significant
        QVERIFY(d->checklist[1].fromData);
        QVERIFY2(d->checklist[1].answer.find("misses the SLA") != std::string::npos, d->checklist[1].answer.c_str());
        QVERIFY(d->checklist[1].answer.find("meets the SLA") != std::string::npos);

        // An explicit sweep of a third model is refused; an unknown one too.
        SweepRecord other;
        other.name = "other";
        other.modelPath = "/models/c.gguf";
        other.modelSha256 = std::string(64, 'c');
        auto oc = SweepRepository(db).create(other);
        QVERIFY(oc.ok());
        req.sweepIds = {oc->id};
        auto bad = buildReportData(db, req);
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().message.find("neither") != std::string::npos);
        req.sweepIds = {9999};
        QVERIFY(!buildReportData(db, req).ok());
        // Only A's sweep given, no automatic lookup: B's performance is missing.
        req.sweepIds = {sa};
        req.autoSweeps = false;
        auto onlyA = buildReportData(db, req);
        QVERIFY(onlyA.ok());
        QVERIFY(onlyA->perfA.missing.empty());
        QVERIFY(!onlyA->perfB.missing.empty());
        QCOMPARE(row(*onlyA, "ttft")->winner, Winner::None);
    }

    void costFromTheCostModel() {
        Database db = freshDb();
        const int64_t suite = saveSuite(db, "s", 4);
        const int64_t a = saveRun(db, suite, kShaA, 4, [](int) { return true; });
        const int64_t b = saveRun(db, suite, kShaB, 4, [](int) { return true; });
        saveSweep(db, kShaA, 1.0, 50);  // best output tok/s 90 (batch 2); B has no sweep: run median 50
        ReportRequest req;
        req.runA = a;
        req.runB = b;
        ReportTcoInputs t;
        t.hardwareId = "h100-sxm";
        t.measuredOnId = "h100-sxm";
        t.tokensPerDay = 1e7;
        t.baselineUsdPerMtok = 2.0;
        req.tco = t;
        auto d = buildReportData(db, req);
        QVERIFY2(d.ok(), d ? "" : d.error().message.c_str());
        QVERIFY2(d->cost.missing.empty(), d->cost.missing.c_str());
        QVERIFY2(d->cost.a.missing.empty(), d->cost.a.missing.c_str());
        QCOMPARE(d->cost.a.throughputTokPerS, 90.0);
        QCOMPARE(d->cost.b.throughputTokPerS, 50.0);
        QVERIFY(!d->cost.a.estimated);
        auto catalog = loadHardwareCatalog(std::nullopt);
        QVERIFY(catalog.ok());
        const HardwareEntry* h = catalog->find("h100-sxm");
        QVERIFY(h);
        auto expect = deviceCost(devicePriceOf(*h), 90.0, t.assumptions, h->name);
        QVERIFY(expect.ok());
        QCOMPARE(d->cost.a.device.usdPerMtok, expect->usdPerMtok);
        QCOMPARE(d->cost.a.cumulativeUsd.size(), size_t(37));
        QVERIFY(d->cost.a.fleet.has_value());
        QCOMPARE(d->cost.a.cumulativeUsd[0], d->cost.a.fleet->capexUsd);
        QCOMPARE(d->cost.a.cumulativeUsd[12], d->cost.a.fleet->capexUsd + 12 * d->cost.a.fleet->monthlyCashOperatingUsd);
        QCOMPARE(d->cost.baselineCumulativeUsd.size(), size_t(37));
        QCOMPARE(row(*d, "cost")->winner, Winner::A);  // more tok/s on the same device: cheaper per token
        QVERIFY(!d->cost.assumptionRows.empty());
        // An unknown device is the user's error.
        req.tco->hardwareId = "no-such-gpu";
        QVERIFY(!buildReportData(db, req).ok());
    }

    void weightedRecommendation() {
        const ReportModel a = model('A', "alpha"), b = model('B', "beta");
        auto rec = recommend({mk("accuracy", Winner::B, 3), mk("ttft", Winner::A, 1), mk("tpot", Winner::A, 1),
                              mk("cost", Winner::None, 1), mk("memory", Winner::Tie, 1)},
                             a, b);
        QCOMPARE(rec.winner, Winner::B);
        QCOMPARE(rec.scoreA, 2.0);
        QCOMPARE(rec.scoreB, 3.0);
        QCOMPARE(rec.scoreMax, 6.0);  // the tie counts in the total, the uncounted row does not
        QVERIFY(rec.headline.find("Recommend B (beta)") == 0);
        bool notCounted = false;
        for (const auto& r : rec.reasons) notCounted |= r.find("Not counted: cost") == 0;
        QVERIFY(notCounted);
        // Reweighting flips it (with the quality gate off: the weights alone decide).
        const QualityGate off{false, std::nullopt};
        auto flipped = recommend({mk("accuracy", Winner::B, 1), mk("ttft", Winner::A, 1), mk("tpot", Winner::A, 1)}, a, b, off);
        QCOMPARE(flipped.winner, Winner::A);
        QCOMPARE(recommend({mk("accuracy", Winner::B, 1), mk("ttft", Winner::A, 1)}, a, b, off).winner, Winner::Tie);
        QCOMPARE(recommend({mk("accuracy", Winner::None, 3)}, a, b).winner, Winner::None);
        // A zero weight takes a criterion out of the decision.
        QCOMPARE(recommend({mk("accuracy", Winner::B, 0), mk("ttft", Winner::A, 1)}, a, b, off).winner, Winner::A);
    }

    // The demo's case: B is significantly more accurate (14.3 % vs 7.9 %, p = 0.02) but A wins
    // speed, memory and cost, 4 points to 3. The default gate must not recommend A.
    void qualityGate() {
        const ReportModel a = model('A', "demo-small"), b = model('B', "demo-large");
        DecisionRow acc = mk("accuracy", Winner::B, 3);
        acc.aNumber = 0.079;
        acc.bNumber = 0.143;
        acc.aValue = "7.9 %";
        acc.bValue = "14.3 %";
        acc.note = "significant (McNemar p = 0.020)";
        const std::vector<DecisionRow> rows = {acc, mk("ttft", Winner::A, 1), mk("tpot", Winner::A, 1), mk("memory", Winner::A, 1),
                                               mk("cost", Winner::A, 1)};
        auto rec = recommend(rows, a, b);  // default gate: no worse at p < 0.05
        QCOMPARE(rec.winner, Winner::B);
        QVERIFY(rec.gateApplied);
        QVERIFY(!rec.gatePassA);
        QVERIFY(rec.gatePassB);
        QVERIFY2(rec.headline.find("Recommend B (demo-large): A fails the quality gate") == 0, rec.headline.c_str());
        QVERIFY2(rec.headline.find("weighted points A 4, B 3 of 7") != std::string::npos, rec.headline.c_str());
        QVERIFY(rec.reasons.front().find("Quality gate (no worse than the other at p < 0.05): A fails (significantly less "
                                         "accurate: 7.9 % vs 14.3 %") == 0);
        // Off: the weights decide, as before.
        QCOMPARE(recommend(rows, a, b, QualityGate{false, std::nullopt}).winner, Winner::A);
        // A minimum both miss: no recommendation.
        auto both = recommend(rows, a, b, QualityGate{false, 0.5});
        QCOMPARE(both.winner, Winner::None);
        QVERIFY2(both.headline.find("neither model passes the quality gate") != std::string::npos, both.headline.c_str());
        // A minimum only A misses.
        QCOMPARE(recommend(rows, a, b, QualityGate{false, 0.10}).winner, Winner::B);
        // Not significant: the gate passes both and the weights decide.
        DecisionRow tie = acc;
        tie.winner = Winner::Tie;
        auto r2 = recommend({tie, mk("ttft", Winner::A, 1)}, a, b);
        QCOMPARE(r2.winner, Winner::A);
        QVERIFY(r2.gatePassA && r2.gatePassB);
        // Accuracy not compared: the gate says it was not applied.
        auto r3 = recommend({mk("accuracy", Winner::None, 3), mk("ttft", Winner::A, 1)}, a, b);
        QVERIFY(!r3.gateApplied);
        QVERIFY(r3.gate.find("not applied") != std::string::npos);
        QCOMPARE(r3.winner, Winner::A);
        // Parsing the flags.
        QualityGate g;
        QVERIFY(parseQualityGate("off", g).ok());
        QVERIFY(!g.noWorseSignificant);
        QVERIFY(!parseQualityGate("maybe", g).ok());
        QVERIFY(parseMinAccuracy("60", g).ok());
        QCOMPARE(*g.minAccuracy, 0.6);
        QVERIFY(parseMinAccuracy("42.5%", g).ok());
        QVERIFY(!parseMinAccuracy("101", g).ok());
        QVERIFY(!parseMinAccuracy("-1", g).ok());
        QVERIFY(!parseMinAccuracy("abc", g).ok());
        QCOMPARE(describeQualityGate(QualityGate{true, 0.6}), std::string("no worse than the other at p < 0.05, accuracy at least 60.0 %"));
    }

    void parseWeights() {
        auto w = parseCriterionWeights("accuracy=5, ttft=0.5,cost=0");
        QVERIFY(w.ok());
        QCOMPARE(w->at("accuracy"), 5.0);
        QCOMPARE(w->at("ttft"), 0.5);
        QCOMPARE(w->at("cost"), 0.0);
        QCOMPARE(w->at("tpot"), 1.0);  // defaults kept
        auto unknown = parseCriterionWeights("speed=2");
        QVERIFY(!unknown.ok());
        QVERIFY(unknown.error().message.find("known: accuracy") != std::string::npos);
        QVERIFY(!parseCriterionWeights("accuracy=-1").ok());
        QVERIFY(!parseCriterionWeights("accuracy").ok());
        QVERIFY(!parseCriterionWeights("accuracy=abc").ok());
        QVERIFY(!parseCriterionWeights("accuracy=inf").ok());
        QVERIFY(!validateCriterionWeights({{"nope", 1.0}}).ok());
    }

    void numberFormats() {
        QCOMPARE(formatMs(4.567), std::string("4.57 ms"));
        QCOMPARE(formatMs(45.67), std::string("45.7 ms"));
        QCOMPARE(formatMs(4567.8), std::string("4568 ms"));
        QCOMPARE(formatPercent(0.625), std::string("62.5 %"));
        QCOMPARE(formatUsd(0.01234), std::string("$0.0123"));
        QCOMPARE(formatUsd(1234567), std::string("$1,234,567"));
        // One money format for the CLI, the window and the report: the sign before the symbol.
        QCOMPARE(formatUsd(-1252146.3), std::string("-$1,252,146"));
        QCOMPARE(formatUsd(-1252.146), std::string("-$1,252"));
        QCOMPARE(formatUsd(12.345), std::string("$12.35"));
        QCOMPARE(formatUsd(999.999), std::string("$1,000.00"));  // rounding carries into the grouping
        QCOMPARE(formatUsd(-0.00001), std::string("$0.0000"));   // no "-$0"
        QCOMPARE(formatUsd(0), std::string("$0"));
        QCOMPARE(formatUsd(1234567.6, ".", ","), std::string("$1.234.568"));  // a German locale's separators
        QCOMPARE(formatUsd(-12.5, ".", ","), std::string("-$12,50"));
        QCOMPARE(formatPValue(0.0001), std::string("< 0.001"));
    }

    void missingRun() {
        Database db = freshDb();
        ReportRequest req;
        req.runA = 1;
        req.runB = 2;
        auto d = buildReportData(db, req);
        QVERIFY(!d.ok());
        QVERIFY(d.error().message.find("run 1 does not exist") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestReportData)
#include "test_report_data.moc"
