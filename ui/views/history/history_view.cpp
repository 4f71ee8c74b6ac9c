#include "views/history/history_view.h"

#include "core/store/run_repository.h"
#include "core/store/sweep_repository.h"
#include "main_window.h"
#include "models/history_models.h"
#include "widgets/error_box.h"
#include "workbench.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace verdict::ui {

namespace {

QTableView* makeTable(QAbstractItemModel* model, QObject* owner) {
    auto* proxy = new QSortFilterProxyModel(owner);
    proxy->setSourceModel(model);
    auto* t = new QTableView;
    t->setModel(proxy);
    t->setSortingEnabled(true);
    t->sortByColumn(0, Qt::DescendingOrder);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::ExtendedSelection);
    t->verticalHeader()->hide();
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

std::vector<int64_t> selectedIds(const QTableView* t, int role) {
    std::vector<int64_t> ids;
    for (const QModelIndex& i : t->selectionModel()->selectedRows()) ids.push_back(i.data(role).toLongLong());
    std::sort(ids.begin(), ids.end());
    return ids;
}

}  // namespace

HistoryView::HistoryView(Workbench& workbench, QWidget* parent) : QWidget(parent), m_wb(workbench) {
    setObjectName("historyView");
    m_runModel = new RunListModel(this);
    m_sweepModel = new SweepListModel(this);
    m_runs = makeTable(m_runModel, this);
    m_runs->setObjectName("runHistory");
    m_sweeps = makeTable(m_sweepModel, this);
    m_sweeps->setObjectName("sweepHistory");
    m_tabs = new QTabWidget;
    m_tabs->addTab(m_runs, tr("Runs"));
    m_tabs->addTab(m_sweeps, tr("Sweeps"));

    auto* compare = new QPushButton(tr("Compare the two selected"));
    auto* open = new QPushButton(tr("Open items"));
    auto* del = new QPushButton(tr("Delete…"));
    auto* hint = new QLabel(tr("Select two runs (Ctrl+click) to compare them, or two sweeps to chart them."));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(hint, 1);
    buttons->addWidget(open);
    buttons->addWidget(compare);
    buttons->addWidget(del);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_tabs, 1);
    layout->addLayout(buttons);

    connect(compare, &QPushButton::clicked, this, [this] {
        if (m_tabs->currentIndex() == 0) compareRuns();
        else compareSweeps();
    });
    connect(open, &QPushButton::clicked, this, [this] {
        const auto ids = selectedRuns();
        if (m_tabs->currentIndex() != 0 || ids.empty() || ids.size() > 2) {
            showError(this, tr("Select one or two runs on the Runs tab."));
            return;
        }
        m_wb.setComparedRuns(ids.front(), ids.back());
        emit showScreenRequested(MainWindow::Suites);
    });
    connect(del, &QPushButton::clicked, this, [this] { deleteSelected(true); });
    connect(m_runs, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
        const int64_t id = i.data(RunListModel::kIdRole).toLongLong();
        m_wb.setComparedRuns(id, id);
        emit showScreenRequested(MainWindow::Suites);
    });
    connect(&m_wb, &Workbench::resultsChanged, this, &HistoryView::reload);
    reload();
}

void HistoryView::reload() {
    auto db = m_wb.openDb();
    if (!db) return;
    if (auto r = m_runModel->reload(*db); !r) showError(this, tr("The stored runs cannot be read."), QString::fromStdString(r.error().message));
    if (auto r = m_sweepModel->reload(*db); !r) showError(this, tr("The stored sweeps cannot be read."), QString::fromStdString(r.error().message));
}

std::vector<int64_t> HistoryView::selectedRuns() const { return selectedIds(m_runs, RunListModel::kIdRole); }
std::vector<int64_t> HistoryView::selectedSweeps() const { return selectedIds(m_sweeps, SweepListModel::kIdRole); }

bool HistoryView::compareRuns(int64_t a, int64_t b) {
    if (a <= 0 || b <= 0) {
        const auto ids = selectedRuns();
        if (ids.size() != 2) {
            showError(this, tr("Select exactly two runs to compare."));
            return false;
        }
        a = ids[0];
        b = ids[1];
    }
    m_wb.setComparedRuns(a, b);
    emit showScreenRequested(MainWindow::Decision);
    return true;
}

bool HistoryView::compareSweeps(int64_t a, int64_t b) {
    if (a <= 0 || b <= 0) {
        const auto ids = selectedSweeps();
        if (ids.size() != 2) {
            showError(this, tr("Select exactly two sweeps to compare."));
            return false;
        }
        a = ids[0];
        b = ids[1];
    }
    emit sweepsChosen(a, b);
    emit showScreenRequested(MainWindow::Performance);
    return true;
}

int HistoryView::deleteSelected(bool confirm) {
    const bool runs = m_tabs->currentIndex() == 0;
    const auto ids = runs ? selectedRuns() : selectedSweeps();
    if (ids.empty()) return 0;
    if (confirm &&
        QMessageBox::question(this, tr("Delete"),
                              tr("Delete %n stored %1 and everything measured in it? This cannot be undone.", nullptr,
                                 int(ids.size()))
                                  .arg(runs ? tr("run(s)") : tr("sweep(s)"))) != QMessageBox::Yes)
        return 0;
    auto db = m_wb.openDb();
    if (!db) return 0;
    int n = 0;
    for (int64_t id : ids) {
        auto r = runs ? core::RunRepository(*db).remove(id) : core::SweepRepository(*db).remove(id);
        if (!r) {
            showError(this, tr("%1 %2 could not be deleted.").arg(runs ? tr("Run") : tr("Sweep")).arg(id),
                      QString::fromStdString(r.error().message));
            break;
        }
        n += *r ? 1 : 0;
        if (runs && (m_wb.runA() == id || m_wb.runB() == id)) m_wb.setComparedRuns(0, 0);
    }
    m_wb.notifyResultsChanged();
    return n;
}

}  // namespace verdict::ui
