#include "dialogs/study_dialog.h"

#include "widgets/error_box.h"
#include "workbench.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>

namespace verdict::ui {

StudyDialog::StudyDialog(Workbench& wb, const QString& prefix, QWidget* parent) : QDialog(parent), m_wb(wb) {
    m_run = new QPushButton(tr("Run"));
    m_run->setObjectName(prefix + "Run");
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName(prefix + "Cancel");
    m_bar = new QProgressBar;
    m_status = new QLabel;
    m_status->setObjectName(prefix + "Status");
    m_status->setWordWrap(true);
    m_stored = new QComboBox;
    m_stored->setObjectName(prefix + "Stored");
    m_runRow = new QHBoxLayout;
    m_runRow->addWidget(m_run);
    m_runRow->addWidget(m_cancel);
    m_runRow->addWidget(m_bar, 1);
    m_runRow->addWidget(new QLabel(tr("Open stored…")));
    m_runRow->addWidget(m_stored, 1);

    m_job = new Job(this);
    m_wb.registerJob(m_job);
    connect(m_run, &QPushButton::clicked, this, [this] { start(); });
    connect(m_cancel, &QPushButton::clicked, this, &StudyDialog::cancel);
    connect(m_job, &Job::stateChanged, this, &StudyDialog::updateButtons);
    connect(m_job, &Job::progress, this, [this](double f, const QString& text, double) {
        if (f >= 0) m_bar->setValue(int(100 * f));
        m_status->setText(text);
    });
    connect(m_stored, &QComboBox::activated, this, [this] {
        if (const qlonglong id = m_stored->currentData().toLongLong(); id > 0) showStored(id);
    });
}

JobResult StudyDialog::failureResult(const core::ServiceError& e, const QString& study, const QString& modelOpen) {
    const QString why = QString::fromStdString(e.message);
    switch (e.kind) {
    case core::ServiceFailure::BadInput: return {tr("The %1 cannot go on: %2.").arg(study, why), {}, {}};
    case core::ServiceFailure::ModelOpen: return {modelOpen, why, {}};
    case core::ServiceFailure::Cancelled: return {{}, {}, tr("Cancelled before anything was stored.")};
    case core::ServiceFailure::Runtime: return {tr("The %1 failed.").arg(study), why, {}};
    case core::ServiceFailure::Storage: break;
    }
    return {tr("The %1 stopped: the database refused a write.").arg(study), why, {}};
}

bool StudyDialog::running() const { return m_job->busy(); }
void StudyDialog::cancel() { m_job->cancel(); }

void StudyDialog::finishSetup() {
    reloadStored();
    updateButtons();
}

QLabel* StudyDialog::deviceLabel(const QString& note) {
    auto* label = new QLabel;
    auto show = [this, label, note] {
        const int layers = m_wb.runGpuLayers();
        label->setText(tr("%1%2 (%3)")
                           .arg(m_wb.runDevice())
                           .arg(m_wb.runDevice() != "cpu" && layers >= 0 ? tr(", %1 GPU layers").arg(layers) : QString(), note));
    };
    show();
    connect(&m_wb, &Workbench::runDeviceChanged, label, show);
    connect(&m_wb, &Workbench::runGpuLayersChanged, label, show);
    return label;
}

void StudyDialog::updateButtons() {
    m_run->setEnabled(!m_job->busy());
    m_cancel->setEnabled(m_job->state() == Job::State::Running);
    m_stored->setEnabled(!m_job->busy());  // the results show the running study meanwhile
}

void StudyDialog::reloadStored() {
    auto db = m_wb.openDb();
    if (!db) return;
    auto list = storedEntries(*db);
    if (!list) return;
    const QSignalBlocker block(m_stored);
    m_stored->clear();
    for (const Entry& e : *list) m_stored->addItem(e.label, QVariant::fromValue<qlonglong>(e.id));
    m_stored->setCurrentIndex(-1);
}

bool StudyDialog::showStored(qint64 id) {
    auto db = m_wb.openDb();
    if (!db) {
        showError(this, tr("The results database cannot be opened."), QString::fromStdString(db.error().message));
        return false;
    }
    auto s = loadStudy(*db, id);
    if (!s || !*s) {
        showError(this, tr("%1 #%2 cannot be read.").arg(noun()).arg(id), s ? QString() : QString::fromStdString(s.error().message));
        return false;
    }
    showStudy(**s);
    m_status->setText(storedStatus(id, **s));
    return true;
}

void StudyDialog::runJob(Job::Task task, std::shared_ptr<qint64> storedId,
                         std::function<QString(const JobResult&, bool cancelled, qint64 id)> statusOf) {
    m_bar->setValue(0);
    m_job->start(std::move(task));
    connect(m_job, &Job::finished, this, [this, storedId, statusOf](const JobResult& result, bool cancelled) {
        if (!result.ok()) showError(this, result.error, result.detail);
        m_bar->setValue(result.ok() && !cancelled ? 100 : m_bar->value());
        m_status->setText(statusOf(result, cancelled, *storedId));
        // The runs and sweeps a study made are ordinary ones: History and the other screens list them.
        m_wb.notifyResultsChanged();
        reloadStored();
        if (*storedId > 0) m_stored->setCurrentIndex(m_stored->findData(QVariant::fromValue<qlonglong>(*storedId)));
        emit studyFinished(*storedId);
    }, Qt::SingleShotConnection);
}

}  // namespace verdict::ui
