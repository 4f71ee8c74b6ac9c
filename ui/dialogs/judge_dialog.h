// Judge runs A and B item by item (issue 21), the window's side of `verdict judge`:
//  - a person votes blind: the question and the two answers as "left" and "right" in an order
//    fixed per person and item (core::blindPosition), no model names; 1 = left better, 2 = right
//    better, 3 = tie, 4 = both bad, arrows to move; each vote is stored at once and a person's
//    session resumes at the first item they have not voted on;
//  - a judge model (a GGUF file or an endpoint) judges on a job (core::judgeRunPair: pairwise in
//    both orders, or rubric grades), with progress and cancel; resumable like the CLI.
// Both go through the service `verdict judge` uses (core/services/judge.h: the votes, the judge's
// backend, the defaults the controls start from) and end in the same summaries it prints
// (core::describeJudgeSummaries).
#pragma once

#include "core/services/judge.h"

#include <QDialog>

#include <cstdint>
#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace verdict::ui {

class Workbench;
class Job;

class JudgeDialog : public QDialog {
    Q_OBJECT
public:
    JudgeDialog(Workbench& workbench, int64_t runA, int64_t runB, QWidget* parent = nullptr);

    // --- A person, blind
    // Loads the items and shows the first one `person` has not voted on. False (and why, in
    // statusText) for an empty name or when the runs cannot be judged.
    bool startVoting(const QString& person);
    // 1 left better, 2 right better, 3 tie, 4 both bad: stores the vote and shows the next item.
    bool vote(int key);
    void next();
    void previous();
    int currentIndex() const { return m_current; }     // into the judgeable items; -1: none shown
    int itemCount() const { return static_cast<int>(m_items.size()); }
    int votedCount() const;
    QString leftText() const;
    QString rightText() const;
    QString statusText() const;

    // --- A judge model
    // Starts judging on a job, with the prompt template and rubric files named in the dialog
    // (empty: the built-in ones). False (with the reason shown) for an empty reference, a file
    // that cannot be used, or while a job runs.
    bool judgeWithModel(const QString& judgeRef, core::JudgeMode mode, int concurrency);
    // The service request judgeWithModel sends for these choices: the prompt and rubric files
    // named in the dialog, the window's device, the service's defaults for the rest.
    core::JudgeRequest judgeRequest(const QString& judgeRef, core::JudgeMode mode, int concurrency) const;
    bool judging() const;
    void cancelJudging();

    QString summaryText() const;  // what is stored for the two runs, per judge

signals:
    void voted(int64_t itemIdx);
    void judgingFinished(bool ok);

private:
    void showItem(int index);
    void refreshSummary();

    Workbench& m_wb;
    int64_t m_runA, m_runB;
    QString m_person;
    std::vector<core::JudgeItem> m_items;
    std::vector<QString> m_votes;  // per item: "" (not voted), "left", "right", "tie", "both bad"
    int m_current = -1;
    Job* m_job;

    QLineEdit* m_name;
    QLabel* m_status;
    QPlainTextEdit* m_question;
    QPlainTextEdit* m_left;
    QPlainTextEdit* m_right;
    QWidget* m_voteButtons;
    QLineEdit* m_judgeRef;
    QLineEdit* m_promptFile;
    QLineEdit* m_rubricFile;
    QComboBox* m_mode;
    QSpinBox* m_concurrency;
    QPushButton* m_judge;
    QPushButton* m_cancel;
    QProgressBar* m_progress;
    QLabel* m_summary;
};

}  // namespace verdict::ui
