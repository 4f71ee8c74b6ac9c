// The workbench window end to end on the bundled demo workspace: add a model (and a bad one),
// compare two models side by side and vote, import a suite with a bad line, run it on A and B
// while the event loop stays responsive (and continue the window's run from `verdict run`),
// filter the items, cancel a run, sweep and chart,
// cost, decide, export the report (the same document as the CLI's), the history (compare,
// delete), a model behind an OpenAI-compatible endpoint, the quantization trade-off of one model's
// files, a soak test, and close during a run.
#include "cli_process.h"
#include "fixtures.h"
#include "main_window.h"
#include "models/history_models.h"
#include "models/item_comparison_model.h"
#include "views/compare/compare_view.h"
#include "views/cost/cost_view.h"
#include "views/decision/decision_view.h"
#include "views/history/history_view.h"
#include "views/models/models_view.h"
#include "views/performance/performance_view.h"
#include "views/suites/suites_view.h"
#include "dialogs/conversation_dialog.h"
#include "dialogs/import_suite_dialog.h"
#include "dialogs/needle_dialog.h"
#include "dialogs/judge_dialog.h"
#include "dialogs/quant_compare_dialog.h"
#include "dialogs/soak_dialog.h"
#include "widgets/chart_panel.h"
#include "fake_openai_server.h"
#include "scripted_judge.h"
#include "workbench.h"
#include "core/report/report_data.h"
#include "core/report/report_format.h"
#include "core/services/judge.h"
#include "core/services/quant_compare.h"
#include "core/services/soak.h"
#include "core/services/sweep.h"
#include "core/store/run_repository.h"
#include "core/store/suite_repository.h"
#include "core/store/sweep_repository.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QLocale>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <atomic>
#include <ctime>
#include <memory>

using namespace verdict::ui;

class TestWindow : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_tmp;
    std::unique_ptr<Workbench> m_wb;
    std::unique_ptr<MainWindow> m_window;

    // Closes every error box (they are non-blocking) and returns how many there were. A dialog is
    // a top-level window and a child of its screen at once: count each box once.
    int takeErrorBoxes() {
        QSet<QMessageBox*> boxes;
        for (QWidget* w : QApplication::topLevelWidgets())
            for (auto* box : w->findChildren<QMessageBox*>("errorBox")) boxes.insert(box);
        for (QMessageBox* box : boxes) box->close();
        QCoreApplication::processEvents();
        return static_cast<int>(boxes.size());
    }

    void writeFile(const QString& path, const QByteArray& bytes) {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
    }

    // Imports `path` through the Suites screen's dialog as suite `name` (`rows` items previewed).
    // Failures are QTest failures: callers return when QTest::currentTestFailed().
    void importSuite(const QString& path, const QString& name, int rows) {
        m_window->showScreen(MainWindow::Suites);
        ImportSuiteDialog* dlg = m_window->suitesView()->importFile(path);
        QVERIFY(dlg);
        QSignalSpy loaded(dlg, &ImportSuiteDialog::loadedChanged);
        QVERIFY(loaded.wait(30000));
        QCOMPARE(dlg->previewRows(), rows);
        QVERIFY(dlg->save());
        QVERIFY(m_window->suitesView()->selectSuite(name));
    }

    // Runs stored suite `name` on A and B from the Suites screen and waits for both, no error box.
    void runBothOn(const QString& name) {
        SuitesView* sv = m_window->suitesView();
        QVERIFY(sv->selectSuite(name));
        QSignalSpy finished(sv, &SuitesView::runsFinished);
        QVERIFY(sv->runBoth());
        QVERIFY(finished.wait(300000));
        QCOMPARE(takeErrorBoxes(), 0);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_tmp.isValid());
        // Settings, the hardware catalog and the database all live in the temporary folder.
        qputenv("XDG_CONFIG_HOME", m_tmp.filePath("config").toLocal8Bit());
        QDir().mkpath(m_tmp.filePath("config/verdict"));
        writeFile(m_tmp.filePath("config/verdict/hardware.json"),
                  "{\"hardware\": [{\"id\": \"this-machine\", \"purchase_usd\": {\"value\": 1500, \"source\": \"test\", "
                  "\"as_of\": \"2026-11\"}, \"tdp_w\": {\"value\": 65, \"source\": \"test\", \"as_of\": \"2026-11\"}}]}");
        QCoreApplication::setOrganizationName("VerdictTest");
        QCoreApplication::setApplicationName("VerdictTest");
        QSettings().clear();
        m_wb = std::make_unique<Workbench>(m_tmp.filePath("results.db"));
        QString why;
        QVERIFY2(m_wb->prepareDemoWorkspace(&why), qPrintable(why));
        QCOMPARE(m_wb->models()->rowCount(), 2);
        QVERIFY(!m_wb->modelA().isEmpty() && !m_wb->modelB().isEmpty());
        m_window = std::make_unique<MainWindow>(*m_wb);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        QCOMPARE(m_window->currentScreen(), MainWindow::Compare);
    }

    void addModels() {
        QAbstractItemModelTester tester(m_wb->models(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QString bad = m_tmp.filePath("not-a-model.gguf");
        writeFile(bad, "this is not GGUF");
        QVERIFY(!m_window->addModel(bad));
        QCOMPARE(takeErrorBoxes(), 1);
        QCOMPARE(m_wb->models()->rowCount(), 2);
        const std::string stories = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(stories);
        QVERIFY(m_window->addModel(QString::fromStdString(stories)));
        QCOMPARE(m_wb->models()->rowCount(), 3);
        const ModelEntry& e = m_wb->models()->entries().back();
        QVERIFY(e.card.has_value());
        QVERIFY(!e.fit.isEmpty());  // the fit badge for this machine
        QVERIFY(m_wb->models()->index(2, ModelListModel::Params).data().toString().contains("K"));
        // The badge follows the chosen device (the CPU is always listed).
        auto* device = m_window->modelsView()->findChild<QComboBox*>("fitDevice");
        QVERIFY(device && device->count() >= 1);
        device->setCurrentIndex(device->findData("cpu"));
        QCOMPARE(m_wb->fitDevice(), QString("cpu"));
        // The CPU entry says which kernels run and whether AMX may be used (as `verdict devices`).
        const QString cpuTip = device->itemData(device->findData("cpu"), Qt::ToolTipRole).toString();
        QVERIFY2(cpuTip.contains("Kernels: ") && cpuTip.contains("AMX: "), qPrintable(cpuTip));
        QVERIFY(m_wb->models()->entries().back().fitReason.contains("cpu"));
    }

    void compareSideBySide() {
        CompareView* cv = m_window->compareView();
        // Where local models run: one choice shared by Compare, Suites and Performance, the CPU by default.
        QCOMPARE(m_wb->runDevice(), QString("cpu"));
        const int nDevices = m_window->modelsView()->findChild<QComboBox*>("fitDevice")->count();
        for (QWidget* view : {static_cast<QWidget*>(cv), static_cast<QWidget*>(m_window->suitesView()),
                              static_cast<QWidget*>(m_window->performanceView())}) {
            auto* box = view->findChild<QComboBox*>("runDevice");
            QVERIFY2(box, qPrintable(view->objectName()));
            QCOMPARE(box->currentData().toString(), QString("cpu"));
            QCOMPARE(box->count(), nDevices);  // the same list as the Models screen's
            auto* layers = view->findChild<QSpinBox*>("runGpuLayers");  // partial offload: GPU only
            QVERIFY2(layers, qPrintable(view->objectName()));
            QCOMPARE(layers->value(), -1);
            QCOMPARE(layers->text(), QString("all"));
            QVERIFY(!layers->isEnabled());
        }
        QSignalSpy done(cv, &CompareView::bothFinished);
        // The demo models were trained on "Q: ...\nA:" questions (datasets/demo).
        QVERIFY(cv->send("Q: What is 51 + 15?\nA:"));
        QVERIFY(done.wait(120000));
        QCOMPARE(takeErrorBoxes(), 0);
        for (int side : {0, 1}) {
            QVERIFY2(!cv->answerText(side).trimmed().isEmpty(), qPrintable(cv->statsText(side)));
            QVERIFY2(cv->statsText(side).contains("tok/s"), qPrintable(cv->statsText(side)));
            QVERIFY(cv->statsText(side).contains("TTFT"));
        }
        QVERIFY(cv->vote(-1));          // left = A outside blind mode
        QVERIFY(!cv->vote(1));          // one vote per answer
        QVERIFY2(cv->winRateText().contains("A wins 1 of 1"), qPrintable(cv->winRateText()));
        {
            // The CLI reads the same vote for the same pair.
            QProcess cli;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("VERDICT_DB", m_tmp.filePath("results.db"));
            cli.setProcessEnvironment(env);
            cli.start(VERDICT_BINARY, {"votes", "--a", m_wb->modelA(), "--b", m_wb->modelB(), "--json"});
            QVERIFY(cli.waitForFinished(60000));
            QCOMPARE(cli.exitCode(), 0);
            const QJsonObject summary = QJsonDocument::fromJson(cli.readAllStandardOutput()).object().value("summary").toObject();
            QCOMPARE(summary.value("wins_a").toInt(), 1);
            QCOMPARE(summary.value("decided").toInt(), 1);
        }

        // Blind: names hidden, the vote maps back to the right model whichever side it was on.
        cv->findChild<QCheckBox*>("blindMode")->setChecked(true);
        QVERIFY(cv->send("Q: What is 12 + 30?\nA:"));
        QVERIFY(done.wait(120000));
        QVERIFY(cv->vote(0));  // a tie
        QVERIFY2(cv->winRateText().contains("1 tie"), qPrintable(cv->winRateText()));
        cv->findChild<QCheckBox*>("blindMode")->setChecked(false);
    }

    void importSuiteWithBadLine() {
        const QString path = m_tmp.filePath("mini.jsonl");
        writeFile(path,
                  "{\"prompt\": \"What is 2+2? Answer with a number.\", \"reference\": \"4\", \"category\": \"math\"}\n"
                  "{\"prompt\": \"Capital of France? One word.\", \"reference\": \"Paris\", \"category\": \"geo\"}\n"
                  "{\"prompt\": \"broken line\", \n"
                  "{\"prompt\": \"What is 3+3? Answer with a number.\", \"reference\": \"6\", \"category\": \"math\"}\n");
        m_window->showScreen(MainWindow::Suites);
        ImportSuiteDialog* dlg = m_window->suitesView()->importFile(path);
        QVERIFY(dlg);
        QSignalSpy loaded(dlg, &ImportSuiteDialog::loadedChanged);
        QVERIFY(loaded.wait(30000));
        QVERIFY(dlg->loaded());
        QCOMPARE(dlg->previewRows(), 3);
        QCOMPARE(dlg->rejectedRows(), 1);
        QCOMPARE(takeErrorBoxes(), 0);
        QVERIFY(dlg->save());
        QVERIFY(m_window->suitesView()->selectSuite("mini"));
    }

    void runBothWithoutFreezing() {
        SuitesView* sv = m_window->suitesView();
        QVERIFY(sv->selectSuite("mini"));
        QSignalSpy finished(sv, &SuitesView::runsFinished);
        // The window stays responsive while two models run: the run happens off the UI thread, and
        // nothing the UI thread does for it (progress, tables) keeps it busy for long. A freeze is
        // measured in the UI thread's own CPU time between two ticks of a 5 ms timer, which the
        // scheduler of a loaded CI machine cannot inflate the way it inflates wall-clock gaps (a
        // 129 ms wall gap failed CI's old 100 ms bound with the UI thread nearly idle).
        auto uiCpuMs = [] {
            timespec ts{};
            ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
            return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
        };
        QElapsedTimer clock;
        qint64 lastWall = 0, worstWall = 0, ticks = 0;
        double lastCpu = uiCpuMs(), worstCpu = 0;
        QTimer tick;
        tick.setInterval(5);
        connect(&tick, &QTimer::timeout, [&] {
            const qint64 now = clock.elapsed();
            const double cpu = uiCpuMs();
            worstWall = std::max(worstWall, now - lastWall);
            worstCpu = std::max(worstCpu, cpu - lastCpu);
            lastWall = now;
            lastCpu = cpu;
            ++ticks;
        });
        const double cpuAtStart = lastCpu;
        clock.start();
        tick.start();
        QVERIFY(sv->runBoth());
        QCOMPARE(finished.count(), 0);  // asynchronous: nothing has finished when runBoth returns
        QVERIFY(finished.wait(300000));
        tick.stop();
        worstCpu = std::max(worstCpu, uiCpuMs() - lastCpu);  // the last tick to the end
        QCOMPARE(takeErrorBoxes(), 0);
        qInfo("run: %lld ms; UI thread: %.0f ms of CPU, at most %.1f ms at a stretch; %lld ticks, worst wall gap %lld ms",
              static_cast<long long>(clock.elapsed()), uiCpuMs() - cpuAtStart, worstCpu, static_cast<long long>(ticks),
              static_cast<long long>(worstWall));
        QVERIFY2(ticks > 0, "the timer never fired during the run");
        // The longest stretch is showing the results when the job ends (every screen refreshes,
        // the item table loads): 35-55 ms here. A quarter second at a stretch is a freeze.
        QVERIFY2(worstCpu < 250, qPrintable(QString("the UI thread was busy for %1 ms at a stretch").arg(worstCpu)));
        QVERIFY(m_wb->runA() > 0 && m_wb->runB() > 0);

        ItemComparisonModel* items = sv->itemModel();
        QAbstractItemModelTester tester(items, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(items->rowCount(), 3);
        QVERIFY(sv->significanceText().contains("McNemar"));
        QCOMPARE(items->categories(), QStringList({"geo", "math"}));
        sv->itemFilter()->setCategory("math");
        QCOMPARE(sv->itemFilter()->rowCount(), 2);
        sv->itemFilter()->setCategory({});
        sv->itemFilter()->setWrongOnly(true);
        int wrong = 0;
        for (int r = 0; r < items->rowCount(); ++r) wrong += items->index(r, 0).data(ItemComparisonModel::kAnyWrongRole).toBool();
        QCOMPARE(sv->itemFilter()->rowCount(), wrong);
        sv->itemFilter()->setWrongOnly(false);
    }

    void windowAndCliShareOneRun() {
        // The window and `verdict run` fill the same settings (core/services/suite_run.h), with
        // the same defaults: a run the window started and that stopped half-way is the one the
        // CLI continues for the same choices (same resume key), not a new run. Here run A of
        // the mini suite, marked as interrupted.
        const int64_t runA = m_wb->runA();
        QVERIFY(runA > 0);
        {
            auto db = m_wb->openDb();
            QVERIFY(db.ok());
            QVERIFY(verdict::core::RunRepository(*db).finish(runA, verdict::core::RunStatus::Cancelled, "").ok());
        }
        const auto cli = verdict::test::runVerdict({"run", m_wb->modelA(), "--suite", "mini", "--json"}, m_wb->dbPath());
        QVERIFY2(cli.exitCode == 0, cli.err.constData());
        QVERIFY2(cli.err.contains("resuming run " + QByteArray::number(static_cast<qlonglong>(runA))), cli.err.constData());
        const nlohmann::json j = cli.json();
        QCOMPARE(j.value("run_id", int64_t{0}), runA);
        QCOMPARE(j.value("resumed", false), true);
        QCOMPARE(j.value("status", std::string()), std::string("completed"));
    }

    void judgeRunsInTheWindow() {
        // The two runs of the mini suite, judged item by item: first a person, blind, with the
        // keyboard; then a judge model (the scripted endpoint, scripted_judge.h).
        SuitesView* sv = m_window->suitesView();
        QVERIFY(sv->findChild<QPushButton*>("judgeRuns")->isEnabled());
        JudgeDialog* dlg = sv->openJudgeDialog();
        QVERIFY(dlg);
        QApplication::setActiveWindow(dlg);
        QVERIFY(QTest::qWaitForWindowActive(dlg));
        QVERIFY(!dlg->startVoting(""));  // a name first
        QVERIFY(dlg->startVoting("ann"));
        QCOMPARE(dlg->itemCount(), 3);
        QCOMPARE(dlg->currentIndex(), 0);
        QVERIFY2(dlg->statusText().contains("0 of 3 voted by ann"), qPrintable(dlg->statusText()));
        QTest::keyClick(dlg, Qt::Key_1);  // left is better
        QCOMPARE(dlg->votedCount(), 1);
        QCOMPARE(dlg->currentIndex(), 1);  // on to the next item
        QTest::keyClick(dlg, Qt::Key_Left);
        QCOMPARE(dlg->currentIndex(), 0);
        QVERIFY2(dlg->statusText().contains("your vote: left"), qPrintable(dlg->statusText()));
        QTest::keyClick(dlg, Qt::Key_Right);
        QTest::keyClick(dlg, Qt::Key_3);  // tie
        QCOMPARE(dlg->votedCount(), 2);
        QVERIFY2(dlg->summaryText().contains("human:ann (human): 2 items"), qPrintable(dlg->summaryText()));
        // Resumable: another session of ann's starts at the item she has not voted on.
        {
            JudgeDialog* again = sv->openJudgeDialog();
            QVERIFY(again->startVoting("ann"));
            QCOMPARE(again->currentIndex(), 2);
            QCOMPARE(again->votedCount(), 2);
            again->close();
        }

        std::atomic<int> requests{0};
        auto server = verdict::test::startScriptedJudge(requests);
        QVERIFY(server);
        const QString judgeUrl = QString("http://127.0.0.1:%1/v1 scripted-judge").arg(server->port());
        // A prompt template without the answers' placeholders is refused, said, nothing runs.
        const QString badPrompt = m_tmp.filePath("bad-prompt.txt");
        writeFile(badPrompt, "Judge {question}");
        dlg->findChild<QLineEdit*>("judgePromptFile")->setText(badPrompt);
        QVERIFY(!dlg->judgeWithModel(judgeUrl, verdict::core::JudgeMode::Pairwise, 2));
        QCOMPARE(takeErrorBoxes(), 1);
        dlg->findChild<QLineEdit*>("judgePromptFile")->clear();
        QSignalSpy done(dlg, &JudgeDialog::judgingFinished);
        QVERIFY(dlg->judgeWithModel(judgeUrl, verdict::core::JudgeMode::Pairwise, 2));
        QVERIFY(dlg->judging());
        QVERIFY(done.wait(120000));
        QCOMPARE(takeErrorBoxes(), 0);
        QVERIFY(done.at(0).at(0).toBool());
        QCOMPARE(requests.load(), 6);  // 3 items x both orders
        QVERIFY2(dlg->summaryText().contains("scripted-judge (pairwise): 3 items"), qPrintable(dlg->summaryText()));

        // windowAndCliShareOneJudge: the dialog and `verdict judge` go through one service
        // (core/services/judge.h) with one set of defaults. The dialog's controls start from
        // JudgeRequest's, its request for these choices is that struct with the choices set...
        const verdict::core::JudgeRequest defaults;
        auto* concurrency = dlg->findChild<QSpinBox*>("judgeConcurrency");
        QVERIFY(concurrency);
        auto* mode = dlg->findChild<QComboBox*>("judgeMode");
        QCOMPARE(mode->currentData().toInt(), static_cast<int>(defaults.mode));
        {
            JudgeDialog* fresh = sv->openJudgeDialog();
            QCOMPARE(fresh->findChild<QSpinBox*>("judgeConcurrency")->value(), defaults.concurrency);
            QCOMPARE(fresh->findChild<QComboBox*>("judgeMode")->currentData().toInt(), static_cast<int>(defaults.mode));
            fresh->close();
        }
        const verdict::core::JudgeRequest asked = dlg->judgeRequest(judgeUrl, verdict::core::JudgeMode::Pairwise, 2);
        QCOMPARE(asked.generation.maxTokens, defaults.generation.maxTokens);
        QCOMPARE(asked.generation.temperature, defaults.generation.temperature);
        QVERIFY(!asked.limit);
        QVERIFY(asked.promptFile.empty() && asked.rubricFile.empty());
        auto prepared = verdict::core::prepareJudgeRun(asked);
        QVERIFY(prepared.ok());
        // ... and what it stored is what the CLI stores for the same choices: same judge, mode and
        // prompt hash, so `verdict judge` finds every verdict already there and asks nothing.
        std::string windowHash;
        {
            auto db = m_wb->openDb();
            QVERIFY(db.ok());
            auto stored = verdict::core::JudgmentRepository(*db).list(m_wb->runA(), m_wb->runB(), verdict::core::JudgeMode::Pairwise);
            QVERIFY(stored.ok());
            QCOMPARE(stored->size(), size_t(6));
            for (const auto& j : *stored) {
                QCOMPARE(j.judge, prepared->judgeRef);
                if (windowHash.empty()) windowHash = j.promptHash;
                QCOMPARE(j.promptHash, windowHash);
            }
        }
        const auto cli = verdict::test::runVerdict({"judge", QString::number(m_wb->runA()), QString::number(m_wb->runB()),
                                                    "--judge", judgeUrl, "--concurrency", "2", "--json"},
                                                   m_wb->dbPath());
        QVERIFY2(cli.exitCode == 0, cli.err.constData());
        const nlohmann::json judged = cli.json()["judged"];
        QCOMPARE(judged.value("judge", std::string()), prepared->judgeRef);
        QCOMPARE(judged.value("prompt_hash", std::string()), windowHash);
        QCOMPARE(judged.value("calls", -1), 0);
        QCOMPARE(judged.value("already_stored", -1), 6);
        QCOMPARE(requests.load(), 6);  // the judge was not asked again
        dlg->close();
    }

    void cancelRun() {
        SuitesView* sv = m_window->suitesView();
        QVERIFY(sv->selectSuite("demo-tasks"));
        QVERIFY(sv->runBoth());
        QTRY_VERIFY_WITH_TIMEOUT(sv->progressText(0).contains("items/s"), 60000);
        sv->cancelRuns();
        QTRY_VERIFY_WITH_TIMEOUT(!sv->running(), 30000);
        QVERIFY2(sv->progressText(0).contains("cancelled"), qPrintable(sv->progressText(0)));
        QCOMPARE(takeErrorBoxes(), 0);
    }

    void sweepAndCharts() {
        m_window->showScreen(MainWindow::Performance);
        PerformanceView* pv = m_window->performanceView();
        // The controls start from the sweep service's defaults, the ones `verdict sweep --help` shows.
        {
            const verdict::core::SweepSettings defaults;
            auto joined = [](const std::vector<int64_t>& v) {
                QStringList p;
                for (int64_t x : v) p << QString::number(x);
                return p.join(',');
            };
            QCOMPARE(pv->findChild<QLineEdit*>("sweepPrompts")->text(), joined(defaults.spec.promptTokens));
            QCOMPARE(pv->findChild<QLineEdit*>("sweepGens")->text(), joined(defaults.spec.genTokens));
            QCOMPARE(pv->findChild<QLineEdit*>("sweepBatches")->text(), joined(defaults.spec.batches));
            QCOMPARE(pv->findChild<QSpinBox*>("sweepReps")->value(), defaults.spec.reps);
            QCOMPARE(pv->findChild<QSpinBox*>("sweepWarmups")->value(), defaults.spec.warmups);
            const auto help = verdict::test::runVerdict({"sweep", "--help"}, m_wb->dbPath());
            QVERIFY2(help.out.contains("(default " + joined(defaults.spec.promptTokens).toUtf8() + ")"), help.out.constData());
        }
        pv->findChild<QLineEdit*>("sweepPrompts")->setText("8,16");
        pv->findChild<QLineEdit*>("sweepGens")->setText("4");
        pv->findChild<QLineEdit*>("sweepBatches")->setText("1,2");
        pv->findChild<QSpinBox*>("sweepReps")->setValue(1);
        pv->findChild<QSpinBox*>("sweepWarmups")->setValue(0);
        QVERIFY(pv->runSweeps());
        QTRY_VERIFY_WITH_TIMEOUT(!pv->running(), 300000);
        QCOMPARE(takeErrorBoxes(), 0);
        QCOMPARE(pv->chartsShown(), 4);
        QVERIFY2(pv->summaryText().contains("output tok/s"), qPrintable(pv->summaryText()));

        // `verdict sweep` with the same choices stores the same grid on the same device: one
        // service (core/services/sweep.h) behind both.
        {
            const auto cli = verdict::test::runVerdict({"sweep", m_wb->modelA(), "--prompt", "8,16", "--gen", "4", "--batch",
                                                        "1,2", "--reps", "1", "--warmup", "0", "--json"},
                                                       m_wb->dbPath());
            QVERIFY2(cli.exitCode == 0, cli.err.constData());
            const int64_t cliId = cli.json().value("sweep_id", int64_t{0});
            auto db = m_wb->openDb();
            QVERIFY(db.ok());
            verdict::core::SweepRepository repo(*db);
            auto all = repo.list();
            QVERIFY(all.ok());
            const verdict::core::SweepRecord* window = nullptr;
            const verdict::core::SweepRecord* fromCli = nullptr;
            for (const auto& r : *all) {
                if (r.id == cliId) fromCli = &r;
                else if (r.modelPath == m_wb->modelA().toStdString()) window = &r;
            }
            QVERIFY(window && fromCli);
            QCOMPARE(QString::fromStdString(fromCli->spec.dump()), QString::fromStdString(window->spec.dump()));
            QCOMPARE(fromCli->device, window->device);
            QCOMPARE(fromCli->modelSha256, window->modelSha256);
            auto removed = repo.remove(cliId);  // the later tests count the window's two sweeps
            QVERIFY(removed.ok() && *removed);
        }

        // Bad settings are refused with a message, nothing runs.
        pv->findChild<QLineEdit*>("sweepBatches")->setText("1,x");
        QVERIFY(!pv->runSweeps());
        QCOMPARE(takeErrorBoxes(), 1);
        pv->findChild<QLineEdit*>("sweepBatches")->setText("1,2");
    }

    void costAndDecision() {
        // Compare the two runs of the mini suite.
        HistoryView* hv = m_window->historyView();
        hv->reload();
        QAbstractItemModelTester runTester(hv->runModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester sweepTester(hv->sweepModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(hv->runModel()->rowCount() >= 3);
        QCOMPARE(hv->sweepModel()->rowCount(), 2);
        int64_t a = 0, b = 0;
        for (int r = hv->runModel()->rowCount() - 1; r >= 0; --r) {
            if (hv->runModel()->index(r, RunListModel::Suite).data().toString() != "mini") continue;
            (a == 0 ? a : b) = hv->runModel()->index(r, 0).data(RunListModel::kIdRole).toLongLong();
        }
        QVERIFY(a > 0 && b > 0);
        QVERIFY(hv->compareRuns(a, b));
        QCOMPARE(m_window->currentScreen(), MainWindow::Decision);

        CostView* cv = m_window->costView();
        auto* hw = cv->findChild<QComboBox*>("hardware");
        hw->setCurrentIndex(hw->findData("this-machine"));
        cv->recompute();
        QVERIFY2(cv->summaryText().contains("per 1M output tokens"), qPrintable(cv->summaryText()));
        QVERIFY(cv->hasCurves());
        // Money as the CLI and the report print it (one formatter), with the locale's separators:
        // the NPV against the API is negative on this cheap machine's figures.
        {
            auto db = m_wb->openDb();
            QVERIFY(db.ok());
            verdict::core::ReportRequest req;
            req.runA = a;
            req.runB = b;
            req.tco = cv->tcoInputs();
            auto data = verdict::core::buildReportData(*db, req);
            QVERIFY(data.ok());
            QVERIFY(data->cost.a.baseline.has_value());
            const QLocale loc;
            const auto money = [&](double v) {
                return QString::fromStdString(verdict::core::formatUsd(v, loc.groupSeparator().toStdString(),
                                                                       loc.decimalPoint().toStdString()));
            };
            QCOMPARE(cv->tableCell("NPV vs the API", 0), money(data->cost.a.baseline->npvUsd));
            QCOMPARE(cv->tableCell("3-year TCO", 1), money(data->cost.b.fleet->tco3yUsd));
            QCOMPARE(cv->tableCell("$ per 1M tokens", 0), money(data->cost.a.device.usdPerMtok));
            if (data->cost.a.baseline->npvUsd < 0) QVERIFY(cv->tableCell("NPV vs the API", 0).startsWith("-$"));
        }

        DecisionView* dv = m_window->decisionView();
        dv->refresh();
        QVERIFY2(!dv->recommendationText().isEmpty(), "no recommendation");
        // The quality gate sits next to the SLA, on by default, and its line leads the reasons.
        auto* gate = dv->findChild<QCheckBox*>("gateSignificant");
        QVERIFY(gate && gate->isChecked());
        QVERIFY(dv->findChild<QDoubleSpinBox*>("gateMinAccuracy"));
        QVERIFY(dv->data().has_value());
        QVERIFY2(dv->data()->recommendation.reasons.front().find("Quality gate") == 0,
                 dv->data()->recommendation.reasons.front().c_str());
        QVERIFY(dv->decisionRows() >= 8);
        // The judgments of judgeRunsInTheWindow: the preference row rests on the person.
        QCOMPARE(dv->data()->preference.judges.size(), size_t(2));
        bool preferenceRow = false;
        for (const auto& r : dv->data()->decision)
            if (r.key == "preference") preferenceRow = r.label == "Preference (person ann)";
        QVERIFY(preferenceRow);
        QVERIFY(dv->data().has_value());
        for (const char* ext : {"pdf", "html", "md"}) {
            const QString out = m_tmp.filePath(QString("report.") + ext);
            QVERIFY(dv->exportReportTo(out));
            QFile f(out);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray head = f.read(5);
            QVERIFY(f.size() > 2000);
            if (QString(ext) == "pdf") QCOMPARE(head, QByteArray("%PDF-"));
        }
        QCOMPARE(takeErrorBoxes(), 0);

        // The CLI makes the same document: run the command the export recorded, to another file,
        // and compare the Markdown line by line (only the generation time and the command differ).
        const QString guiMd = m_tmp.filePath("report.md"), cliMd = m_tmp.filePath("cli-report.md");
        QString command = dv->lastCommandLine();
        QVERIFY2(command.startsWith("verdict report --run "), qPrintable(command));
        QVERIFY(command.endsWith(" -o " + guiMd));
        command.chop(guiMd.size());
        command = QString(VERDICT_BINARY) + command.mid(int(strlen("verdict"))) + cliMd;
        QProcess cli;
        cli.start("sh", {"-c", command});
        QVERIFY(cli.waitForFinished(120000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        auto lines = [](const QString& path) {
            QFile f(path);
            if (!f.open(QIODevice::ReadOnly)) return QStringList();
            QStringList keep;
            for (const QString& l : QString::fromUtf8(f.readAll()).split('\n'))
                if (!l.contains("verdict report") && !l.contains("Report generated") && !l.contains("Generated"))
                    keep << l;
            return keep;
        };
        const QStringList gui = lines(guiMd), fromCli = lines(cliMd);
        QVERIFY(gui.size() > 50);
        QCOMPARE(fromCli, gui);
    }

    void historyDelete() {
        HistoryView* hv = m_window->historyView();
        hv->reload();
        const int before = hv->runModel()->rowCount();
        hv->tabs()->setCurrentIndex(0);
        hv->runTable()->selectRow(0);  // the newest run
        QCOMPARE(hv->selectedRuns().size(), size_t(1));
        QCOMPARE(hv->deleteSelected(false), 1);
        QCOMPARE(hv->runModel()->rowCount(), before - 1);
        // Two sweeps to the Performance screen.
        QVERIFY(hv->compareSweeps(hv->sweepModel()->index(1, 0).data(SweepListModel::kIdRole).toLongLong(),
                                  hv->sweepModel()->index(0, 0).data(SweepListModel::kIdRole).toLongLong()));
        QCOMPARE(m_window->currentScreen(), MainWindow::Performance);
        QCOMPARE(m_window->performanceView()->chartsShown(), 4);
    }

    // A model behind an OpenAI-compatible endpoint (here `verdict serve` on the small demo model):
    // added on the Models screen, compared with a local file, and load-tested on Performance.
    void endpointModel() {
        const QString small = m_wb->modelB();
        QProcess server;
        server.start(VERDICT_BINARY, {"serve", small, "--port", "0", "--threads", "1", "--json"});
        QVERIFY(server.waitForReadyRead(60000));
        const QByteArray line = server.readLine();
        const QString url = QJsonDocument::fromJson(line).object().value("url").toString();
        QVERIFY2(url.startsWith("http://127.0.0.1:"), line.constData());
        QString why;
        QVERIFY2(m_wb->addEndpoint(url, "", &why), qPrintable(why));
        QVERIFY(!m_wb->addEndpoint("ftp://example.com", "", &why));  // said, not crashed
        const QString a = m_wb->modelA();
        m_wb->setModels(url, small);

        CompareView* cv = m_window->compareView();
        QSignalSpy done(cv, &CompareView::bothFinished);
        QVERIFY(cv->send("Q: What is 20 + 22?\nA:"));
        QVERIFY(done.wait(120000));
        QCOMPARE(takeErrorBoxes(), 0);
        QVERIFY2(cv->statsText(0).contains("TTFT"), qPrintable(cv->statsText(0)));

        PerformanceView* pv = m_window->performanceView();
        pv->findChild<QLineEdit*>("sweepPrompts")->setText("8");
        pv->findChild<QLineEdit*>("sweepGens")->setText("4");
        pv->findChild<QLineEdit*>("sweepBatches")->setText("1,2");
        pv->findChild<QSpinBox*>("sweepReps")->setValue(1);
        QVERIFY(pv->runSweeps());
        QTRY_VERIFY_WITH_TIMEOUT(!pv->running(), 300000);
        QCOMPARE(takeErrorBoxes(), 0);
        QCOMPARE(pv->chartsShown(), 4);
        QVERIFY2(pv->summaryText().contains(url), qPrintable(pv->summaryText()));

        m_wb->setModels(a, small);
        server.terminate();
        QVERIFY(server.waitForFinished(20000));
    }

    // An https endpoint behind a key (the fake OpenAI server, TLS with a certificate made here): added
    // with its CA file and the key's environment variable, compared with a local model; the key is
    // in neither the saved settings nor the database. A key said to be in the keyring that is not
    // there (CI has no keyring service) is a clear error, not a hang or a crash.
    void endpointOverTlsWithKey() {
        const char* key = "sk-window-planted-5d1c90ab";
        verdict::test::FakeOpenAiServer server({.tls = true, .apiKey = key, .answer = "42"});
        QVERIFY2(server.ok(), server.error().c_str());
        qputenv("VERDICT_WINDOW_TEST_KEY", key);
        const QString url = QString::fromStdString(server.baseUrl());
        EndpointAccess access;
        access.keyEnv = "VERDICT_WINDOW_TEST_KEY";
        access.caFile = QString::fromStdString(server.certFile());
        QString why;
        QVERIFY2(m_wb->addEndpoint(url, "", access, &why), qPrintable(why));
        EndpointAccess both = access;
        both.insecure = true;
        QVERIFY(!m_wb->addEndpoint(url, "", both, &why));  // a CA file and "do not verify": said, not added
        const QString a = m_wb->modelA(), small = m_wb->modelB();
        m_wb->setModels(url, small);
        CompareView* cv = m_window->compareView();
        QSignalSpy done(cv, &CompareView::bothFinished);
        QVERIFY(cv->send("What is 6 x 7?"));
        QVERIFY(done.wait(120000));
        QCOMPARE(takeErrorBoxes(), 0);
        QVERIFY2(cv->statsText(0).contains("TTFT"), qPrintable(cv->statsText(0)));
        QVERIFY(server.completions() >= 1);

        // the same URL with the key "in the keyring", where there is none
        const QString other = url + "/";
        EndpointAccess keyring;
        keyring.keyInKeyring = true;
        keyring.caFile = access.caFile;
        QVERIFY2(m_wb->addEndpoint(other, "", keyring, &why), qPrintable(why));
        m_wb->setModels(other, small);
        verdict::core::BackendOpenOptions o;
        const bool got = m_wb->applyEndpointAccess(other, o, &why);
        qInfo("keyring: %s", got ? "answered" : qPrintable(why));
        if (!got) QVERIFY2(why.contains("keyring"), qPrintable(why));  // CI: no keyring service

        m_wb->removeModel(other);
        m_wb->setModels(a, small);
        m_wb->saveState();
        QSettings().sync();
        QFile settings(QSettings().fileName());
        QVERIFY(settings.open(QIODevice::ReadOnly));
        const QByteArray saved = settings.readAll();
        QVERIFY2(saved.contains("VERDICT_WINDOW_TEST_KEY") && !saved.contains(key), saved.constData());
        QFile db(m_wb->dbPath());
        QVERIFY(db.open(QIODevice::ReadOnly));
        QVERIFY(!db.readAll().contains(key));
        m_wb->removeModel(url);
        qunsetenv("VERDICT_WINDOW_TEST_KEY");
    }

    // A classification suite ("label" scorer): the Suites screen shows per-label precision /
    // recall / F1 of both runs and their confusion matrices, the same figures `verdict results` gives.
    void classificationInTheWindow() {
        const QString path = m_tmp.filePath("labels.jsonl");
        const QByteArray scorer = ", \"scorer\": {\"name\": \"label\", \"params\": {\"labels\": [\"even\", \"odd\"]}}}\n";
        writeFile(path, "{\"prompt\": \"Q: Is 4 even or odd?\\nA:\", \"reference\": \"even\"" + scorer +
                            "{\"prompt\": \"Q: Is 7 even or odd?\\nA:\", \"reference\": \"odd\"" + scorer);
        const int64_t runA = m_wb->runA(), runB = m_wb->runB();
        SuitesView* sv = m_window->suitesView();
        importSuite(path, "labels", 2);
        if (QTest::currentTestFailed()) return;
        runBothOn("labels");
        if (QTest::currentTestFailed()) return;
        const QString text = sv->classificationText();
        QVERIFY2(text.contains("macro-F1") && text.contains("even") && text.contains("odd") &&
                     text.contains("confusion") && text.contains("(no label)"),
                 qPrintable(text));
        QProcess cli;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("VERDICT_DB", m_tmp.filePath("results.db"));
        cli.setProcessEnvironment(env);
        cli.start(VERDICT_BINARY, {"results", QString::number(m_wb->runA()), "--json"});
        QVERIFY(cli.waitForFinished(60000));
        const QJsonObject c =
            QJsonDocument::fromJson(cli.readAllStandardOutput()).object().value("runs").toArray().at(0).toObject().value("classification").toObject();
        QCOMPARE(c.value("n").toInt(), 2);
        QCOMPARE(c.value("labels").toArray().size() >= 2, true);
        // Back to the runs the later tests compare; a plain suite shows no classification table.
        m_wb->setComparedRuns(runA, runB);
        QVERIFY(sv->selectSuite("mini"));
        QTRY_VERIFY(sv->classificationText().isEmpty());
    }

    // A conversation suite with per-turn references: the Suites screen shows accuracy by turn
    // of both runs (the demo models forget everything; the figures are the point, not the score).
    void multiTurnConsistencyInTheWindow() {
        const int64_t runA = m_wb->runA(), runB = m_wb->runB();
        const QString path = m_tmp.filePath("turns.jsonl");
        writeFile(path, "{\"id\": \"t1\", \"turns\": [\"Q: My number is 7.\\nA:\", \"Q: What is my number?\\nA:\"], "
                        "\"turn_references\": [null, \"7\"]}\n");
        SuitesView* sv = m_window->suitesView();
        importSuite(path, "turns", 1);
        if (QTest::currentTestFailed()) return;
        runBothOn("turns");
        if (QTest::currentTestFailed()) return;
        const QString text = sv->turnsText();
        QVERIFY2(text.contains("Multi-turn consistency") && text.contains("1–5") &&
                     (text.contains("(0/1)") || text.contains("(1/1)")),
                 qPrintable(text));
        m_wb->setComparedRuns(runA, runB);
        QVERIFY(sv->selectSuite("mini"));
        QTRY_VERIFY(sv->turnsText().isEmpty());
    }

    // "Conversation suite…": generated long conversations (3 and 6 turns, one each, to stay quick),
    // run on A and B, the accuracy by turn on the Suites screen.
    void conversationSuiteInTheWindow() {
        const int64_t runA = m_wb->runA(), runB = m_wb->runB();
        SuitesView* sv = m_window->suitesView();
        ConversationDialog* dlg = sv->makeConversationSuite();
        QVERIFY(dlg);
        dlg->turnsEdit()->setText("3,2000");
        QVERIFY(!dlg->make());  // 2000 turns is out of range: an error box, the dialog stays
        QCOMPARE(takeErrorBoxes(), 1);
        dlg->turnsEdit()->setText("3,6");
        dlg->conversationsSpin()->setValue(1);
        dlg->nameEdit()->setText("convs");
        QVERIFY(dlg->make());
        auto db = m_wb->openDb();
        QVERIFY(db.ok());
        verdict::core::SuiteRepository suites(*db);
        auto convs = suites.find("convs");
        QVERIFY(convs.ok() && *convs);
        auto items = suites.items((*convs)->id);
        QVERIFY(items.ok());
        QCOMPARE(items->size(), size_t(2));
        QCOMPARE((*items)[1].turns.size(), size_t(6));
        runBothOn("convs");
        if (QTest::currentTestFailed()) return;
        const QString text = sv->turnsText();
        // Turns 2-5 carry sums (turn 6, the question, may lie past the demo models' small context).
        QVERIFY2(text.contains("Multi-turn consistency") && text.contains("1–5"), qPrintable(text));
        m_wb->setComparedRuns(runA, runB);
        QVERIFY(sv->selectSuite("mini"));
    }

    // A function-calling suite: the Suites screen shows the error rate of both runs by class, the
    // figures `verdict results` gives (the demo models call nothing: the table is the point).
    void functionCallingInTheWindow() {
        const int64_t runA = m_wb->runA(), runB = m_wb->runB();
        const QString path = m_tmp.filePath("calls.jsonl");
        const QByteArray tools = "\"tools\": [{\"name\": \"now\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}]";
        writeFile(path, "{\"id\": \"c1\", \"prompt\": \"Q: What time is it?\\nA:\", " + tools +
                            ", \"expected_calls\": [{\"name\": \"now\", \"arguments\": {}}]}\n"
                            "{\"id\": \"c2\", \"prompt\": \"Q: Say hi.\\nA:\", " + tools + ", \"expected_calls\": []}\n");
        SuitesView* sv = m_window->suitesView();
        importSuite(path, "calls", 2);
        if (QTest::currentTestFailed()) return;
        runBothOn("calls");
        if (QTest::currentTestFailed()) return;
        const QString text = sv->toolCallsText();
        QVERIFY2(text.contains("Function calling") && text.contains("any error") && text.contains("/2)"), qPrintable(text));
        QProcess cli;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("VERDICT_DB", m_tmp.filePath("results.db"));
        cli.setProcessEnvironment(env);
        cli.start(VERDICT_BINARY, {"results", QString::number(m_wb->runA()), "--json"});
        QVERIFY(cli.waitForFinished(60000));
        const QJsonObject fc = QJsonDocument::fromJson(cli.readAllStandardOutput())
                                   .object().value("runs").toArray().at(0).toObject().value("function_calling").toObject();
        QCOMPARE(fc.value("items").toInt(), 2);
        const QString anyError = QString("(%1/2)").arg(fc.value("errors").toInt());
        QVERIFY2(text.contains(anyError), qPrintable(text + " / " + anyError));
        m_wb->setComparedRuns(runA, runB);
        QVERIFY(sv->selectSuite("mini"));
        QTRY_VERIFY(sv->toolCallsText().isEmpty());
    }

    // "Needle suite…": made through the dialog (the service `verdict suite make needle` uses), run
    // on A and B; the Suites screen shows the length x depth heat map of both runs, cells that
    // cannot run marked with the reason.
    void needleSuiteInTheWindow() {
        const int64_t runA = m_wb->runA(), runB = m_wb->runB();
        m_window->showScreen(MainWindow::Suites);
        SuitesView* sv = m_window->suitesView();
        NeedleDialog* dlg = sv->makeNeedleSuite();
        QVERIFY(dlg);
        dlg->lengthsEdit()->setText("200,4k");
        dlg->depthsEdit()->setText("0,100");
        dlg->nameEdit()->setText("needles");
        dlg->haystackEdit()->setText(m_tmp.filePath("no-such-haystack.txt"));
        QVERIFY(!dlg->make());  // an unreadable haystack: an error box, the dialog stays
        QCOMPARE(takeErrorBoxes(), 1);
        dlg->haystackEdit()->clear();
        QVERIFY(dlg->make());
        runBothOn("needles");
        if (QTest::currentTestFailed()) return;
        const QString text = sv->needleText();
        qInfo("%s", qPrintable(text));
        QVERIFY2(text.contains("Long context") && text.contains("A: tokens") && text.contains("B: tokens") &&
                     text.contains("200") && text.contains("4096"),
                 qPrintable(text));
        // 200 tokens fit the demo models' context: that row ran (a percentage, not "cannot run").
        QVERIFY2(text.contains("200\n") && !text.contains("200\ncannot run"), qPrintable(text));
        // 4k tokens exceed the demo models' context: marked, with the reason.
        QVERIFY2(text.contains("cannot run") && text.contains("does not fit"), qPrintable(text));
        m_wb->setComparedRuns(runA, runB);
        QVERIFY(sv->selectSuite("mini"));
        QTRY_VERIFY(sv->needleText().isEmpty());
    }

    // "Long-context variant…": the selected suite padded to two lengths, by the service `verdict
    // suite make padded` uses; run on A and B it shows the same heat map as a needle suite.
    void paddedSuiteInTheWindow() {
        const int64_t runA = m_wb->runA(), runB = m_wb->runB();
        m_window->showScreen(MainWindow::Suites);
        SuitesView* sv = m_window->suitesView();
        QVERIFY(sv->selectSuite("mini"));
        NeedleDialog* dlg = sv->makePaddedSuite();
        QVERIFY(dlg);
        QVERIFY(dlg->windowTitle().contains("mini"));
        dlg->lengthsEdit()->setText("12");
        QVERIFY(!dlg->make());  // under 64 tokens: an error box, the dialog stays
        QCOMPARE(takeErrorBoxes(), 1);
        dlg->lengthsEdit()->setText("200,4k");
        QVERIFY(dlg->make());
        auto db = m_wb->openDb();
        QVERIFY(db.ok());
        verdict::core::SuiteRepository suites(*db);
        auto mini = suites.find("mini");
        auto padded = suites.find("mini@200,4k");
        QVERIFY(mini.ok() && *mini && padded.ok() && *padded);
        QCOMPARE((*padded)->shape, (*mini)->shape);
        auto items = suites.items((*padded)->id);
        auto original = suites.items((*mini)->id);
        QVERIFY(items.ok() && original.ok());
        QCOMPARE(items->size(), 2 * original->size());
        QCOMPARE((*items)[0].metadata["padded"]["item"], nlohmann::json((*original)[0].id));
        QVERIFY((*items)[0].prompt.size() > (*original)[0].prompt.size());
        runBothOn("mini@200,4k");
        if (QTest::currentTestFailed()) return;
        const QString text = sv->needleText();
        QVERIFY2(text.contains("200") && text.contains("4096") && text.contains("cannot run"), qPrintable(text));
        m_wb->setComparedRuns(runA, runB);
        QVERIFY(sv->selectSuite("mini"));
    }

    // "Quantization…" on the Performance screen: the F16 fixture as the base against its Q8_0 file,
    // KL-divergence on a text (no speed sweep, to stay quick), by the service `verdict quant-compare`
    // uses; the table shows what the store holds, formatted one way.
    void quantCompareInTheWindow() {
        const std::string f16 = verdict::test::fixture("models/synth-llama-f16.gguf").string();
        const std::string q8 = verdict::test::fixture("models/synth-llama-q8_0.gguf").string();
        VERDICT_NEED_FIXTURE(f16);
        VERDICT_NEED_FIXTURE(q8);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        // Plain English, enough tokens for many 64-token chunks of the fixtures' 512-token vocabulary.
        QByteArray paragraphs;
        for (int i = 0; i < 40; ++i)
            paragraphs += "Once upon a time there was a little girl named Lily. She liked to play in the park with her dog. "
                          "One day the sun was hot and the dog was tired, so they sat under a big tree and ate an apple.\n";
        const QString text = dir.filePath("text.txt");
        writeFile(text, paragraphs);
        m_window->showScreen(MainWindow::Performance);
        QuantCompareDialog* dlg = m_window->performanceView()->openQuantCompare();
        QVERIFY(dlg);
        dlg->baseEdit()->setText(QString::fromStdString(f16));
        dlg->filesList()->clear();
        dlg->textEdit()->setText(text);
        dlg->ctxSpin()->setValue(64);
        dlg->sweepCheck()->setChecked(false);
        // Nothing to compare with the base: refused before anything runs, the field named.
        QVERIFY(!dlg->start());
        auto* box = dlg->findChild<QMessageBox*>("errorBox");
        QVERIFY(box);
        QVERIFY2(box->text().contains("files"), qPrintable(box->text()));
        QCOMPARE(takeErrorBoxes(), 1);
        QVERIFY(!dlg->running());

        dlg->filesList()->addItem(QString::fromStdString(q8));
        QSignalSpy finished(dlg, &QuantCompareDialog::studyFinished);
        QVERIFY(dlg->start());
        QVERIFY(dlg->running());
        QVERIFY(finished.wait(120000));
        QCOMPARE(takeErrorBoxes(), 0);
        const qint64 id = finished.at(0).at(0).toLongLong();
        QVERIFY(id > 0);
        QTableWidget* table = dlg->table();
        QCOMPARE(table->rowCount(), 2);
        auto column = [table](const QString& header) {
            for (int c = 0; c < table->columnCount(); ++c)
                if (table->horizontalHeaderItem(c)->text() == header) return c;
            return -1;
        };
        const int kld = column("Mean KLD"), type = column("Type");
        QVERIFY(kld >= 0 && type >= 0);
        QCOMPARE(table->item(0, type)->text(), QString("F16"));
        QCOMPARE(table->item(1, type)->text(), QString("Q8_0"));
        QCOMPARE(table->item(0, kld)->text(), QString("0.000000"));  // the base against itself
        bool isNumber = false;
        const double shown = table->item(1, kld)->text().toDouble(&isNumber);
        QVERIFY2(isNumber && shown > 0, qPrintable(table->item(1, kld)->text()));
        QVERIFY(dlg->chartPanel()->hasChart());
        // The table is the stored comparison's.
        auto db = m_wb->openDb();
        QVERIFY(db.ok());
        auto stored = verdict::core::loadQuantCompare(*db, id);
        QVERIFY(stored.ok() && stored->has_value());
        const nlohmann::json& c = **stored;
        QCOMPARE(c.value("status", std::string()), std::string("completed"));
        QCOMPARE(QString::number(c["rows"][1]["fidelity"]["mean_kld"].get<double>(), 'f', 6), table->item(1, kld)->text());
        dlg->close();
    }

    // "Soak…" on the Performance screen: the Q8_0 fixture served in-process for three 1-second
    // windows, by the service `verdict soak` uses; the drift table shows what the store holds.
    void soakInTheWindow() {
        const std::string q8 = verdict::test::fixture("models/synth-llama-q8_0.gguf").string();
        VERDICT_NEED_FIXTURE(q8);
        m_window->showScreen(MainWindow::Performance);
        SoakDialog* dlg = m_window->performanceView()->openSoak();
        QVERIFY(dlg);
        // Nothing to soak: refused before anything runs, the field named.
        dlg->targetEdit()->clear();
        QVERIFY(!dlg->start());
        auto* box = dlg->findChild<QMessageBox*>("errorBox");
        QVERIFY(box);
        QVERIFY2(box->text().contains("target"), qPrintable(box->text()));
        QCOMPARE(takeErrorBoxes(), 1);
        QVERIFY(!dlg->running());

        dlg->targetEdit()->setText(QString::fromStdString(q8));
        dlg->durationSpin()->setValue(3.0 / 60);  // minutes
        dlg->windowSpin()->setValue(1);
        dlg->rateSpin()->setValue(4);
        dlg->burstSpin()->setValue(0);
        dlg->maxTokensSpin()->setValue(4);
        dlg->promptWordsSpin()->setValue(8);
        dlg->warmupSpin()->setValue(0);
        QSignalSpy finished(dlg, &SoakDialog::studyFinished);
        QVERIFY(dlg->start());
        QVERIFY(dlg->running());
        QVERIFY(finished.wait(120000));
        QCOMPARE(takeErrorBoxes(), 0);
        const qint64 id = finished.at(0).at(0).toLongLong();
        QVERIFY(id > 0);
        auto db = m_wb->openDb();
        QVERIFY(db.ok());
        auto stored = verdict::core::loadSoak(*db, id);
        QVERIFY(stored.ok() && stored->has_value());
        const nlohmann::json& soak = **stored;
        QCOMPARE(soak.value("status", std::string()), std::string("completed"));
        const nlohmann::json& windows = soak["windows"];
        QCOMPARE(windows.size(), size_t(3));
        for (const nlohmann::json& w : windows) QVERIFY2(w.value("requests", 0) > 0, w.dump().c_str());
        // One row per series; the memory row's first and last window are the stored ones, in MiB.
        QTableWidget* table = dlg->driftTable();
        QCOMPARE(table->rowCount(), 6);
        int memory = -1, firstLast = -1;
        for (int r = 0; r < table->rowCount(); ++r)
            if (table->item(r, 0)->text() == "Memory (RSS)") memory = r;
        for (int c = 0; c < table->columnCount(); ++c)
            if (table->horizontalHeaderItem(c)->text() == "First \u2192 last") firstLast = c;
        QVERIFY(memory >= 0 && firstLast >= 0);
        const nlohmann::json& rss = soak["summary"]["drift"]["rss_bytes"];
        QVERIFY2(rss["first"].is_number() && rss["last"].is_number(), rss.dump().c_str());
        const double mib = 1024.0 * 1024.0;
        QCOMPARE(table->item(memory, firstLast)->text(), QString("%1 \u2192 %2 MiB")
                                                             .arg(rss["first"].get<double>() / mib, 0, 'f', 1)
                                                             .arg(rss["last"].get<double>() / mib, 0, 'f', 1));
        QVERIFY(dlg->chartPanel()->hasChart());
        dlg->close();
    }

    void closeDuringRun() {
        SuitesView* sv = m_window->suitesView();
        QVERIFY(sv->selectSuite("demo-tasks"));
        QVERIFY(sv->runBoth());
        QTRY_VERIFY_WITH_TIMEOUT(sv->progressText(0).contains("items/s"), 60000);
        QElapsedTimer t;
        t.start();
        QVERIFY(m_window->close());
        QVERIFY2(t.elapsed() < 20000, "closing took too long");
        QTRY_VERIFY_WITH_TIMEOUT(!m_wb->anyJobRunning(), 5000);
        QVERIFY(QSettings().value("workspace/initialized").toBool());
    }
};

QTEST_MAIN(TestWindow)
#include "test_window.moc"
