// Suites screen: the stored test suites, importing new ones (with preview and the rejected
// lines), running a suite on models A and B with progress, ETA and cancel, and the two runs side
// by side per item with filters and the paired significance test.
#pragma once

#include <QWidget>

#include <cstdint>

class QComboBox;
class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class QTableWidget;

namespace verdict::ui {

class Workbench;
class Job;
class ImportSuiteDialog;
class NeedleDialog;
class ConversationDialog;
class JudgeDialog;
class ItemComparisonModel;
class ItemFilterProxy;

class SuitesView : public QWidget {
    Q_OBJECT
public:
    explicit SuitesView(Workbench& workbench, QWidget* parent = nullptr);

    // Opens the import dialog for `path` (asks for a file when empty); null when none chosen.
    ImportSuiteDialog* importFile(const QString& path = {});
    // "Needle suite…": the dialog, open (model A's tokenizer counts when A is a local file).
    NeedleDialog* makeNeedleSuite();
    // "Long-context variant…": the same dialog padding the selected suite to several context
    // lengths; null when no suite is selected.
    NeedleDialog* makePaddedSuite();
    // "Conversation suite…": the dialog, open.
    ConversationDialog* makeConversationSuite();
    // Runs the selected suite on A, then B. False when no suite/models are chosen or a run is going.
    bool runBoth(int64_t limit = -1);
    void cancelRuns();
    bool running() const;
    bool selectSuite(const QString& name);

    QTableView* itemTable() const { return m_items; }
    ItemComparisonModel* itemModel() const { return m_itemModel; }
    ItemFilterProxy* itemFilter() const { return m_filter; }
    QString significanceText() const;
    QString classificationText() const;  // the classification table (plain text), "" when hidden
    QString needleText() const;          // the needle-in-a-haystack heat maps (plain text), "" when hidden
    QString turnsText() const;           // multi-turn consistency by turn (plain text), "" when hidden
    QString toolCallsText() const;       // function-calling error rates (plain text), "" when hidden
    // Opens the judging dialog for the compared runs (a person blind, or a judge model); null
    // when no two runs are compared.
    JudgeDialog* openJudgeDialog();
    QString progressText(int side) const;

signals:
    void showScreenRequested(int screen);
    void runsFinished(int64_t runA, int64_t runB);

private:
    NeedleDialog* openNeedleDialog(const QString& padSuite);
    void reloadSuites();
    void loadComparedRuns();
    void updateButtons();

    Workbench& m_wb;
    QTableWidget* m_suites;
    QSpinBox* m_limit;
    QSpinBox* m_maxTokens;
    QSpinBox* m_shots;
    QSpinBox* m_toolRetries;
    QSpinBox* m_parallel;
    QLabel* m_models;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QProgressBar* m_barA;
    QProgressBar* m_barB;
    QLabel* m_textA;
    QLabel* m_textB;
    Job* m_job;
    QLabel* m_runsTitle;
    QComboBox* m_category;
    QCheckBox* m_disagree;
    QCheckBox* m_wrong;
    QLabel* m_significance;
    QLabel* m_classification;  // per-label P / R / F1 and confusion matrices of classification runs
    QLabel* m_needle;          // accuracy by prompt length x needle depth of needle-in-a-haystack runs
    QLabel* m_turns;           // accuracy by turn of conversation suites with per-turn references
    QLabel* m_toolCalls;       // function-calling error rate and classes of both runs
    QPushButton* m_judge;
    QTableView* m_items;
    ItemComparisonModel* m_itemModel;
    ItemFilterProxy* m_filter;
};

}  // namespace verdict::ui
