// The workbench window: a navigation list on the left and one screen at a time on the right —
// Compare (the first screen), Models, Suites, Performance, Cost, Decision, History. Screens share
// the Workbench (models A and B, the compared runs, background jobs) and read results from the
// database. Closing the window cancels every running job and waits for it.
#pragma once

#include <QMainWindow>

#include <array>

class QListWidget;
class QStackedWidget;
class QLabel;

namespace verdict::ui {

class Workbench;
class CompareView;
class ModelsView;
class SuitesView;
class PerformanceView;
class CostView;
class DecisionView;
class HistoryView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum Screen { Compare, Models, Suites, Performance, Cost, Decision, History, ScreenCount };

    explicit MainWindow(Workbench& workbench, QWidget* parent = nullptr);

    void showScreen(Screen screen);
    Screen currentScreen() const;
    static QString screenName(Screen screen);  // untranslated id for files: "compare", ...

    CompareView* compareView() const { return m_compare; }
    ModelsView* modelsView() const { return m_models; }
    SuitesView* suitesView() const { return m_suites; }
    PerformanceView* performanceView() const { return m_performance; }
    CostView* costView() const { return m_cost; }
    DecisionView* decisionView() const { return m_decision; }
    HistoryView* historyView() const { return m_history; }

    // Adds a GGUF file to the workspace; false (and an error shown) when it cannot be read.
    bool addModel(const QString& path);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildMenus();
    void restoreWindowState();

    Workbench& m_wb;
    QListWidget* m_nav = nullptr;
    QStackedWidget* m_stack = nullptr;
    QLabel* m_jobLabel = nullptr;
    CompareView* m_compare = nullptr;
    ModelsView* m_models = nullptr;
    SuitesView* m_suites = nullptr;
    PerformanceView* m_performance = nullptr;
    CostView* m_cost = nullptr;
    DecisionView* m_decision = nullptr;
    HistoryView* m_history = nullptr;
};

}  // namespace verdict::ui
