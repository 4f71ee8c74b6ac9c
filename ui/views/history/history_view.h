// History screen: every stored run and sweep (newest first). Select two runs to compare them
// (item by item on Suites, criterion by criterion on Decision), two sweeps to chart them on
// Performance, or delete what is no longer wanted.
#pragma once

#include <QWidget>

#include <cstdint>
#include <vector>

class QTableView;
class QTabWidget;

namespace verdict::ui {

class Workbench;
class RunListModel;
class SweepListModel;

class HistoryView : public QWidget {
    Q_OBJECT
public:
    explicit HistoryView(Workbench& workbench, QWidget* parent = nullptr);

    void reload();
    std::vector<int64_t> selectedRuns() const;
    std::vector<int64_t> selectedSweeps() const;
    // Compares the two selected runs (or the given ones). False (reason shown) otherwise.
    bool compareRuns(int64_t a = 0, int64_t b = 0);
    bool compareSweeps(int64_t a = 0, int64_t b = 0);
    // Deletes the selected runs (tab 0) or sweeps (tab 1); `confirm` asks first.
    int deleteSelected(bool confirm = true);
    RunListModel* runModel() const { return m_runModel; }
    SweepListModel* sweepModel() const { return m_sweepModel; }
    QTableView* runTable() const { return m_runs; }
    QTableView* sweepTable() const { return m_sweeps; }
    QTabWidget* tabs() const { return m_tabs; }

signals:
    void showScreenRequested(int screen);
    void sweepsChosen(int64_t a, int64_t b);

private:
    Workbench& m_wb;
    QTabWidget* m_tabs;
    QTableView* m_runs;
    QTableView* m_sweeps;
    RunListModel* m_runModel;
    SweepListModel* m_sweepModel;
};

}  // namespace verdict::ui
