#include "main_window.h"

#include "core/version.h"
#include "views/compare/compare_view.h"
#include "views/cost/cost_view.h"
#include "views/decision/decision_view.h"
#include "views/history/history_view.h"
#include "views/models/models_view.h"
#include "views/performance/performance_view.h"
#include "views/suites/suites_view.h"
#include "widgets/error_box.h"
#include "workbench.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>

namespace verdict::ui {

MainWindow::MainWindow(Workbench& workbench, QWidget* parent) : QMainWindow(parent), m_wb(workbench) {
    setWindowTitle(tr("Verdict — choose between two language models"));
    setObjectName("mainWindow");

    m_nav = new QListWidget;
    m_nav->setObjectName("navigation");
    m_nav->setFixedWidth(160);
    m_nav->setSpacing(2);
    m_stack = new QStackedWidget;
    m_compare = new CompareView(m_wb);
    m_models = new ModelsView(m_wb);
    m_suites = new SuitesView(m_wb);
    m_performance = new PerformanceView(m_wb);
    m_cost = new CostView(m_wb);
    m_decision = new DecisionView(m_wb, *m_cost);
    m_history = new HistoryView(m_wb);
    const std::array<QWidget*, ScreenCount> screens = {m_compare, m_models, m_suites, m_performance,
                                                       m_cost,    m_decision, m_history};
    const std::array<QString, ScreenCount> titles = {tr("Compare"), tr("Models"),   tr("Suites"), tr("Performance"),
                                                     tr("Cost"),    tr("Decision"), tr("History")};
    for (int i = 0; i < ScreenCount; ++i) {
        m_stack->addWidget(screens[static_cast<size_t>(i)]);
        m_nav->addItem(titles[static_cast<size_t>(i)]);
    }
    connect(m_nav, &QListWidget::currentRowChanged, m_stack, &QStackedWidget::setCurrentIndex);

    auto* split = new QSplitter;
    split->addWidget(m_nav);
    split->addWidget(m_stack);
    split->setStretchFactor(1, 1);
    split->setChildrenCollapsible(false);
    setCentralWidget(split);

    // Screens ask to be shown (History's "compare these", Suites' results -> Decision).
    connect(m_history, &HistoryView::showScreenRequested, this, [this](int s) { showScreen(Screen(s)); });
    connect(m_suites, &SuitesView::showScreenRequested, this, [this](int s) { showScreen(Screen(s)); });
    connect(m_models, &ModelsView::showScreenRequested, this, [this](int s) { showScreen(Screen(s)); });
    connect(m_history, &HistoryView::sweepsChosen, m_performance, &PerformanceView::showSweeps);

    m_jobLabel = new QLabel;
    statusBar()->addPermanentWidget(m_jobLabel);
    statusBar()->showMessage(tr("Database: %1").arg(m_wb.dbPath()));
    buildMenus();
    restoreWindowState();
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* add = file->addAction(tr("&Add models…"), m_models, &ModelsView::addFiles);
    add->setShortcut(QKeySequence::Open);
    file->addAction(tr("Add &folder…"), m_models, &ModelsView::addFolder);
    file->addAction(tr("Add &endpoint…"), m_models, &ModelsView::addEndpoint);
    file->addAction(tr("&Discover models on disk"), m_models, &ModelsView::discover);
    file->addSeparator();
    QAction* imp = file->addAction(tr("&Import suite…"), this, [this] {
        showScreen(Suites);
        m_suites->importFile();
    });
    imp->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_I));
    QAction* exp = file->addAction(tr("&Export report…"), this, [this] {
        showScreen(Decision);
        m_decision->exportReport();
    });
    exp->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < ScreenCount; ++i) {
        QAction* a = view->addAction(m_nav->item(i)->text(), this, [this, i] { showScreen(Screen(i)); });
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Verdict"), this, [this] {
        QMessageBox::about(this, tr("About Verdict"),
                           tr("<b>Verdict %1</b><p>Compare two language models on your own hardware: accuracy on "
                              "your test suites, latency and throughput, cost, and a decision report.</p>"
                              "<p>Results database: %2</p><p>Every screen has a command-line twin: "
                              "<code>verdict --help</code>.</p>")
                               .arg(QString::fromLatin1(core::versionNumber()), m_wb.dbPath().toHtmlEscaped()));
    });
}

void MainWindow::restoreWindowState() {
    QSettings s;
    if (!restoreGeometry(s.value("window/geometry").toByteArray())) resize(1280, 820);
    const int screen = s.value("window/screen", int(Compare)).toInt();
    showScreen(Screen(screen >= 0 && screen < ScreenCount ? screen : Compare));
}

void MainWindow::showScreen(Screen screen) {
    m_nav->setCurrentRow(int(screen));
    m_stack->setCurrentIndex(int(screen));
}

MainWindow::Screen MainWindow::currentScreen() const { return Screen(m_stack->currentIndex()); }

QString MainWindow::screenName(Screen screen) {
    static const char* kNames[] = {"compare", "models", "suites", "performance", "cost", "decision", "history"};
    return screen >= 0 && screen < ScreenCount ? kNames[screen] : "screen";
}

bool MainWindow::addModel(const QString& path) {
    QString why;
    if (m_wb.addModelFile(path, "file", &why)) return true;
    showError(this, tr("This file cannot be used as a model."), why);
    return false;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    // Shutdown = cancel, wait, destroy: every job stops at its next check (a token, an item, a
    // batch); what was stored stays stored.
    if (m_wb.anyJobRunning()) {
        statusBar()->showMessage(tr("Cancelling running work…"));
        m_wb.cancelAllJobs();
        m_wb.waitAllJobs();
    }
    QSettings s;
    s.setValue("window/geometry", saveGeometry());
    s.setValue("window/screen", int(currentScreen()));
    m_wb.saveState();
    event->accept();
}

}  // namespace verdict::ui
