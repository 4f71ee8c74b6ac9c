// What the study dialogs of the Performance screen share (Quantization…, Soak…): settings above a
// run row — Run, Cancel, a progress bar, "Open stored…" — and a status line; the study runs on a
// background Job, its results fill in after every stored step, and stored studies can be reopened.
// A subclass builds its settings and results widgets, says how to list, load and show its kind,
// and starts its service through runJob().
#pragma once

#include "core/services/service_result.h"
#include "workers/job.h"

#include <verdict/engine/result.h>

#include <nlohmann/json.hpp>

#include <QDialog>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QProgressBar;
class QPushButton;

namespace verdict::core {
class Database;
}

namespace verdict::ui {

class Workbench;

class StudyDialog : public QDialog {
    Q_OBJECT
public:
    bool running() const;
    void cancel();
    // Starts the study with the settings on screen; false (with an error box) when they are
    // invalid or a study is already running. studyFinished() follows.
    virtual bool start() = 0;
    // Shows stored study `id` (the "Open stored" choice); false (with an error box) when it
    // cannot be read.
    bool showStored(qint64 id);

signals:
    // The study ended (completed, cancelled or failed): its id, 0 when nothing was stored.
    void studyFinished(qint64 id);

protected:
    // `prefix` names the widgets for tests ("quant": quantRun, quantCancel, quantStatus, quantStored).
    StudyDialog(Workbench& wb, const QString& prefix, QWidget* parent);

    struct Entry {
        qint64 id = 0;
        QString label;  // "#3 name (status)"
    };
    virtual Result<std::vector<Entry>> storedEntries(core::Database& db) = 0;
    virtual Result<std::optional<nlohmann::json>> loadStudy(core::Database& db, qint64 id) = 0;
    virtual void showStudy(const nlohmann::json& study) = 0;
    // The status line of a reopened study, and what "cannot be read" names ("Soak test").
    virtual QString storedStatus(qint64 id, const nlohmann::json& study) = 0;
    virtual QString noun() const = 0;

    // What the service refused, for the user ("The soak cannot go on: <why>."); the services'
    // messages name the file, the field or the endpoint. `modelOpen`: the sentence for a model
    // that could not be loaded.
    static JobResult failureResult(const core::ServiceError& e, const QString& study, const QString& modelOpen);

    QHBoxLayout* runRow() const { return m_runRow; }
    // The Workbench's run device and GPU layers, kept up to date, with `note` after them.
    QLabel* deviceLabel(const QString& note);
    // The end of the subclass's constructor: the stored list and the buttons.
    void finishSetup();
    // Runs `task` on the job. When it ends: an error box for a failure, the status line from
    // `statusOf(result, cancelled, id)`, the stored list reloaded with the study selected, the
    // Workbench told, studyFinished(id). `storedId` is what the task set (0: nothing stored).
    void runJob(Job::Task task, std::shared_ptr<qint64> storedId,
                std::function<QString(const JobResult&, bool cancelled, qint64 id)> statusOf);

    Workbench& m_wb;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QProgressBar* m_bar;
    QLabel* m_status;
    QComboBox* m_stored;
    Job* m_job;

private:
    void reloadStored();
    void updateButtons();

    QHBoxLayout* m_runRow;
};

}  // namespace verdict::ui
