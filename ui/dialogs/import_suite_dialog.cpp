#include "dialogs/import_suite_dialog.h"

#include "core/store/id_claims.h"

#include "core/store/suite_repository.h"
#include "core/suite/suite_shape.h"
#include "widgets/error_box.h"
#include "workbench.h"
#include "workers/job.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <memory>
#include <optional>

namespace verdict::ui {

namespace {
constexpr int kPreviewRows = 200;

QTableWidget* makeTable(const QStringList& headers) {
    auto* t = new QTableWidget(0, int(headers.size()));
    t->setHorizontalHeaderLabels(headers);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->hide();
    t->horizontalHeader()->setStretchLastSection(true);
    t->setWordWrap(false);
    return t;
}

void setCell(QTableWidget* t, int row, int col, const QString& text) {
    auto* item = new QTableWidgetItem(QString(text).replace('\n', QStringLiteral(" ⏎ ")).left(300));
    item->setToolTip(text.left(4000));
    t->setItem(row, col, item);
}
}  // namespace

ImportSuiteDialog::ImportSuiteDialog(Workbench& workbench, QString path, QWidget* parent)
    : QDialog(parent), m_wb(workbench), m_path(std::move(path)) {
    setObjectName("importSuiteDialog");
    setWindowTitle(tr("Import suite — %1").arg(QFileInfo(m_path).fileName()));
    resize(980, 640);
    m_job = new Job(this);
    m_wb.registerJob(m_job);

    m_summary = new QLabel(tr("Reading %1…").arg(m_path));
    m_summary->setWordWrap(true);
    m_summary->setObjectName("importSummary");
    m_shape = new QComboBox;
    m_shape->addItem(tr("detect"), QString());
    for (int s = int(core::SuiteShape::Prompt); s <= int(core::SuiteShape::Bfcl); ++s)
        m_shape->addItem(core::shapeName(core::SuiteShape(s)), QString(core::shapeName(core::SuiteShape(s))));
    m_mapping = new QLineEdit;
    m_mapping->setPlaceholderText(tr("detected from the shape; e.g. prompt=question,reference=answer,category=subject"));
    m_answers = new QLineEdit;
    m_answers->setObjectName("answersFile");
    m_answers->setPlaceholderText(tr("BFCL only: its possible_answer file, the ground truth of each item by id"));
    auto* answersBtn = new QPushButton(tr("Choose…"));
    connect(answersBtn, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("BFCL possible_answer file"), QFileInfo(m_path).absolutePath());
        if (!f.isEmpty()) m_answers->setText(f);
    });
    auto* answersRow = new QHBoxLayout;
    answersRow->addWidget(m_answers, 1);
    answersRow->addWidget(answersBtn);
    m_name = new QLineEdit(QFileInfo(m_path).completeBaseName().section('.', 0, 0));
    auto* rereadBtn = new QPushButton(tr("Read again with these settings"));
    auto* form = new QFormLayout;
    form->addRow(tr("Shape"), m_shape);
    form->addRow(tr("Field mapping"), m_mapping);
    form->addRow(tr("Answers file"), answersRow);
    form->addRow(QString(), rereadBtn);
    form->addRow(tr("Suite name"), m_name);

    m_preview = makeTable({tr("Line"), tr("Id"), tr("Category"), tr("Prompt"), tr("Choices"), tr("Reference"), tr("Scorers")});
    m_preview->setObjectName("previewTable");
    m_rejected = makeTable({tr("Line"), tr("Why it was rejected")});
    m_rejected->setObjectName("rejectedTable");
    auto* tabs = new QTabWidget;
    tabs->addTab(m_preview, tr("Preview"));
    tabs->addTab(m_rejected, tr("Rejected lines"));

    auto* bb = new QDialogButtonBox(QDialogButtonBox::Cancel);
    m_save = bb->addButton(tr("Store suite"), QDialogButtonBox::AcceptRole);
    m_save->setObjectName("storeSuite");
    m_save->setEnabled(false);
    connect(bb, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_save, &QPushButton::clicked, this, [this] { save(); });
    connect(rereadBtn, &QPushButton::clicked, this, &ImportSuiteDialog::reread);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addLayout(form);
    layout->addWidget(tabs, 1);
    layout->addWidget(bb);

    reread();
}

void ImportSuiteDialog::reread() {
    if (m_job->busy()) return;
    core::ImportOptions opts;
    opts.name = m_name->text().trimmed().toStdString();
    opts.shape = m_shape->currentData().toString().toStdString();
    opts.answersPath = m_answers->text().trimmed().toStdString();
    if (!m_mapping->text().trimmed().isEmpty()) {
        auto mapping = core::FieldMapping::parse(m_mapping->text().trimmed().toStdString());
        if (!mapping) {
            showError(this, tr("The field mapping is not valid."), QString::fromStdString(mapping.error().message));
            return;
        }
        opts.mapping = *mapping;
    }
    m_result.reset();
    m_options = opts;
    m_save->setEnabled(false);
    m_summary->setText(tr("Reading %1…").arg(m_path));
    auto out = std::make_shared<std::optional<core::ImportResult>>();
    const std::string path = m_path.toStdString();
    Workbench* wb = &m_wb;
    m_job->start([out, path, opts, wb](JobControl& c) -> JobResult {
        // The preview keeps the first kPreviewRows items and the exact counts: memory does not
        // grow with the file (saving streams it again, straight into the database). Repeated ids
        // are found through a temporary table of a results-database connection (IdClaims), not
        // a set in memory; without the database, the set it is.
        std::vector<core::SuiteItem> preview;
        core::ImportOptions o = opts;
        auto db = wb->openDb();
        std::optional<core::IdClaims> claims;
        if (db) {
            if (auto opened = core::IdClaims::open(*db)) claims.emplace(std::move(*opened));
        }
        if (claims)
            o.claimId = [&claims](const std::string& id) {
                auto claimed = claims->claim(id);
                return !claimed || *claimed;  // a failed claim counts the id as new: a preview
            };
        auto r = core::importSuiteStreaming(path, o, [&](core::SuiteItem&& item) {
            if (preview.size() < size_t(kPreviewRows)) preview.push_back(std::move(item));
            return !c.cancelled();
        });
        if (c.cancelled()) return {};  // the dialog was closed
        if (!r) return {tr("The file could not be read as a test suite."), QString::fromStdString(r.error().message), {}};
        *out = core::importResult(std::move(*r), std::move(preview));
        return {};
    });
    connect(m_job, &Job::finished, this, [this, out](const JobResult& r, bool) {
        if (!r.ok()) {
            showError(this, r.error, r.detail);
            m_summary->setText(r.error + "\n" + r.detail);
        }
        m_result = std::move(*out);
        if (m_result) showResult();
        emit loadedChanged();
    }, Qt::SingleShotConnection);
}

void ImportSuiteDialog::showResult() {
    m_preview->setRowCount(0);
    m_rejected->setRowCount(0);
    if (!m_result) return;
    const core::ImportResult& r = *m_result;
    m_summary->setText(tr("%1: %2%3, shape <b>%4</b> — %5 items taken, %6 rejected, %7 warnings.")
                           .arg(m_path.toHtmlEscaped(), QString::fromStdString(r.format), r.gzip ? " (gzip)" : "",
                                QString::fromStdString(r.shape))
                           .arg(r.takenCount)
                           .arg(r.rejectedCount)
                           .arg(r.warnings.size()));
    if (m_name->text().isEmpty()) m_name->setText(QString::fromStdString(r.suiteName));
    const int n = static_cast<int>(std::min<size_t>(r.items.size(), kPreviewRows));
    m_preview->setRowCount(n);
    for (int i = 0; i < n; ++i) {
        const core::SuiteItem& it = r.items[size_t(i)];
        QStringList choices, refs, scorers;
        for (const auto& c : it.choices) choices << QString::fromStdString(c);
        for (const auto& x : it.references) refs << QString::fromStdString(x);
        if (it.gold && *it.gold >= 0 && size_t(*it.gold) < it.choices.size()) refs.prepend(QString(QChar('A' + *it.gold)));
        for (const auto& s : it.scorers) scorers << QString::fromStdString(s.name);
        if (scorers.isEmpty())
            for (const auto& s : r.defaultScorers) scorers << QString::fromStdString(s.name);
        QString prompt = QString::fromStdString(it.prompt);
        if (prompt.isEmpty() && !it.messages.empty()) prompt = QString::fromStdString(it.messages.back().content);
        setCell(m_preview, i, 0, QString::number(it.sourceLine));
        setCell(m_preview, i, 1, QString::fromStdString(it.id));
        setCell(m_preview, i, 2, QString::fromStdString(it.category));
        setCell(m_preview, i, 3, prompt);
        setCell(m_preview, i, 4, choices.join(" | "));
        if (it.expectedCalls) {  // function calling: the calls expected, then any final answer
            QStringList calls;
            for (const auto& c : *it.expectedCalls) calls << QString::fromStdString(c.name) + "(…)";
            refs.prepend(calls.isEmpty() ? tr("no call") : tr("calls: ") + calls.join(", "));
        }
        setCell(m_preview, i, 5, refs.join(" | "));
        setCell(m_preview, i, 6, scorers.join(", "));
    }
    std::vector<core::RejectedRecord> rows = r.rejected;
    for (const auto& w : r.warnings) rows.push_back({w.line, tr("warning (kept): ").toStdString() + w.reason});
    m_rejected->setRowCount(static_cast<int>(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) {
        setCell(m_rejected, int(i), 0, QString::number(rows[i].line));
        setCell(m_rejected, int(i), 1, QString::fromStdString(rows[i].reason));
    }
    m_save->setEnabled(r.takenCount > 0);
}

int ImportSuiteDialog::previewRows() const { return m_preview->rowCount(); }
int ImportSuiteDialog::rejectedRows() const { return m_rejected->rowCount(); }

bool ImportSuiteDialog::save() {
    if (!m_result) return false;
    const QString name = m_name->text().trimmed();
    if (name.isEmpty()) {
        showError(this, tr("Give the suite a name."));
        return false;
    }
    auto db = m_wb.openDb();
    if (!db) {
        showError(this, tr("The results database cannot be opened."), QString::fromStdString(db.error().message));
        return false;
    }
    core::ImportOptions opts = m_options;
    opts.name = name.toStdString();
    auto stored = core::importSuiteToStore(*db, m_path.toStdString(), opts);
    if (!stored) {
        showError(this, tr("The suite could not be stored."), QString::fromStdString(stored.error().message));
        return false;
    }
    m_wb.notifyResultsChanged();
    emit saved(QString::fromStdString(stored->saved.suite.name));
    accept();
    return true;
}

}  // namespace verdict::ui
