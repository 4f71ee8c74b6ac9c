// The window's item models on hand-made data (QAbstractItemModelTester checks the model
// contract on every change) and the background Job (progress, results, cancel, destruction).
#include "models/item_comparison_model.h"
#include "models/model_list_model.h"
#include "report/report_chart_data.h"
#include "workers/job.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>

using namespace verdict;
using namespace verdict::ui;
using namespace verdict::render;

class TestUiModels : public QObject {
    Q_OBJECT

private slots:
    void modelList() {
        ModelListModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        ModelEntry a;
        a.ref = "/models/a.gguf";
        a.name = "A";
        a.source = "file";
        ModelCard card;
        card.arch = "llama";
        card.nParams = 7'240'000'000;
        card.nParamsActive = 7'240'000'000;
        card.fileBytes = 4'100'000'000;
        card.nCtxTrain = 8192;
        card.tensorTypeBytes = {{"q4_K", 3'000'000'000}, {"q6_K", 900'000'000}};
        card.bitsPerWeight = 4.5;
        a.card = card;
        m.upsert(a);
        ModelEntry e;
        e.ref = "http://127.0.0.1:8080 served";
        e.name = "served";
        e.source = "endpoint";
        m.upsert(e);
        QCOMPARE(m.rowCount(), 2);
        QVERIFY(m.index(0, ModelListModel::Params).data().toString().startsWith("7.24"));
        QVERIFY(m.index(0, ModelListModel::Quant).data().toString().startsWith("q4_K"));
        QCOMPARE(m.index(0, ModelListModel::Context).data().toString(), QString("8192"));
        QCOMPARE(m.index(1, ModelListModel::Arch).data().toString(), QString("endpoint"));
        QVERIFY(m.find("http://127.0.0.1:8080 served")->isEndpoint());
        // MoE: total and active both shown.
        card.nParamsActive = 1'000'000'000;
        a.card = card;
        m.upsert(a);  // same ref: replaced, not added
        QCOMPARE(m.rowCount(), 2);
        QVERIFY(m.index(0, ModelListModel::Params).data().toString().contains("active"));
        m.updateFit(0, "tight", "needs 3.9 GB of 4.2 GB free");
        QCOMPARE(m.index(0, ModelListModel::Fit).data().toString(), QString("tight"));
        QCOMPARE(m.index(0, ModelListModel::Fit).data(Qt::ToolTipRole).toString(), QString("needs 3.9 GB of 4.2 GB free"));
        m.removeRow(0);
        QCOMPARE(m.rowCount(), 1);
        QCOMPARE(m.rowOf("/models/a.gguf"), -1);
    }

    void itemComparison() {
        std::vector<core::SuiteItem> suite(4);
        suite[0].prompt = "2+2?";
        suite[0].references = {"4"};
        suite[0].category = "math";
        suite[1].prompt = "Capital of France?";
        suite[1].references = {"Paris"};
        suite[1].category = "geo";
        suite[2].prompt = "Pick";
        suite[2].choices = {"x", "y"};
        suite[2].gold = 1;
        suite[2].category = "math";
        suite[3].prompt = "never run";
        auto rec = [](int64_t idx, const char* out, std::optional<bool> ok, const char* err = "") {
            core::RunItemRecord r;
            r.itemIdx = idx;
            r.output = out;
            r.correct = ok;
            r.error = err;
            return r;
        };
        const std::vector<core::RunItemRecord> a = {rec(0, "4", true), rec(1, "Lyon", false), rec(2, "B", true)};
        const std::vector<core::RunItemRecord> b = {rec(0, "5", false), rec(1, "Paris", true), rec(2, "", false, "context full")};
        ItemComparisonModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m.setRuns(suite, a, b, "A", "B");
        QCOMPARE(m.rowCount(), 3);  // item 3 was stored by neither run
        QCOMPARE(m.index(2, ItemComparisonModel::Reference).data().toString(), QString("B) y"));
        QCOMPARE(m.index(2, ItemComparisonModel::AnswerB).data().toString(), QString("context full"));
        QCOMPARE(m.index(2, ItemComparisonModel::CorrectB).data().toString(), QString("error"));
        QCOMPARE(m.categories(), QStringList({"geo", "math"}));

        ItemFilterProxy f;
        f.setSourceModel(&m);
        QAbstractItemModelTester proxyTester(&f, QAbstractItemModelTester::FailureReportingMode::QtTest);
        f.setCategory("math");
        QCOMPARE(f.rowCount(), 2);
        f.setDisagreementsOnly(true);  // item 0: A right, B wrong; item 2: A right, B wrong (error)
        QCOMPARE(f.rowCount(), 2);
        f.setCategory({});
        QCOMPARE(f.rowCount(), 3);
        f.setDisagreementsOnly(false);
        f.setWrongOnly(true);
        QCOMPARE(f.rowCount(), 3);
        m.setRuns(suite, a, a, "A", "A2");
        QCOMPARE(f.rowCount(), 1);  // only item 1 is wrong in both
        m.clear();
        QCOMPARE(f.rowCount(), 0);
    }

    // Equal costs: one cost line must not hide the other (B dashed over A, and said so).
    void costLinesThatOverlapStayVisible() {
        core::ReportData d;
        d.a.side = 'A';
        d.a.label = "same-a";
        d.b.side = 'B';
        d.b.label = "same-b";
        for (int m = 0; m <= 36; ++m) {
            d.cost.a.cumulativeUsd.push_back(1500.0 + 40.0 * m);
            d.cost.b.cumulativeUsd.push_back(1500.0 + 40.0 * m);
        }
        QVERIFY(costCurvesOverlap(d));
        auto lines = costLines(d);
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[0].dashed, false);
        QCOMPARE(lines[1].dashed, true);
        QVERIFY2(lines[1].name.contains("overlap"), qPrintable(lines[1].name));
        QCOMPARE(lines[1].points.size(), 37);

        // Different costs: both solid, no note.
        for (double& v : d.cost.b.cumulativeUsd) v *= 1.2;
        QVERIFY(!costCurvesOverlap(d));
        lines = costLines(d);
        QCOMPARE(lines[1].dashed, false);
        QVERIFY(!lines[1].name.contains("overlap"));
    }

    void jobReportsAndFinishes() {
        Job job;
        QSignalSpy progress(&job, &Job::progress);
        QSignalSpy finished(&job, &Job::finished);
        int posted = 0;
        QVERIFY(job.start([&posted](JobControl& c) {
            for (int i = 1; i <= 3; ++i) c.report(i / 3.0, QString("step %1").arg(i));
            c.post([&posted] { ++posted; });
            return JobResult{{}, {}, "done"};
        }));
        QVERIFY(job.busy());
        QVERIFY(!job.start([](JobControl&) { return JobResult{}; }));  // one task at a time
        QVERIFY(finished.wait(10000));
        QCOMPARE(progress.size(), 3);
        QCOMPARE(progress.at(2).at(1).toString(), QString("step 3"));
        QCOMPARE(posted, 1);
        QCOMPARE(finished.at(0).at(0).value<JobResult>().message, QString("done"));
        QCOMPARE(finished.at(0).at(1).toBool(), false);
        QVERIFY(!job.busy());
    }

    void jobCancelsAndSurvivesExceptions() {
        Job job;
        QSignalSpy finished(&job, &Job::finished);
        QVERIFY(job.start([](JobControl& c) {
            while (!c.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
            return JobResult{};
        }));
        job.cancel();
        QCOMPARE(job.state(), Job::State::Cancelling);
        QVERIFY(finished.wait(10000));
        QCOMPARE(finished.at(0).at(1).toBool(), true);
        QVERIFY(job.start([](JobControl&) -> JobResult { throw std::runtime_error("boom"); }));
        QVERIFY(finished.wait(10000));
        const JobResult r = finished.at(1).at(0).value<JobResult>();
        QVERIFY(!r.ok());
        QCOMPARE(r.detail, QString("boom"));
    }

    void destroyingARunningJobStopsIt() {
        std::atomic<bool> sawCancel{false};
        {
            Job job;
            QVERIFY(job.start([&sawCancel](JobControl& c) {
                while (!c.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
                sawCancel = true;
                c.report(1, "late");  // dropped: the job is gone
                return JobResult{};
            }));
        }
        QVERIFY(sawCancel.load());
        QCoreApplication::processEvents();  // the late report must not touch the destroyed job
    }
};

QTEST_MAIN(TestUiModels)
#include "test_ui_models.moc"
