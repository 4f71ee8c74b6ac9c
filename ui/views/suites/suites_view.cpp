#include "views/suites/suites_view.h"

#include "core/services/suite_run.h"
#include "core/stats/classification.h"
#include "core/stats/needle_grid.h"
#include "core/stats/tool_call_stats.h"
#include "core/stats/turn_accuracy.h"
#include "core/stats/paired_comparison.h"
#include "core/stats/run_summary.h"
#include "core/store/run_repository.h"
#include "core/store/suite_repository.h"
#include "core/version.h"
#include "dialogs/conversation_dialog.h"
#include "dialogs/import_suite_dialog.h"
#include "dialogs/judge_dialog.h"
#include "dialogs/needle_dialog.h"
#include "main_window.h"
#include "models/item_comparison_model.h"
#include "widgets/device_combo.h"
#include "widgets/error_box.h"
#include "workbench.h"
#include "workers/job.h"

#include <algorithm>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QColor>
#include <QTextDocument>

#include <tuple>
#include <QTableWidget>
#include <QVBoxLayout>

#include <memory>

namespace verdict::ui {

namespace {

QString eta(double secs) {
    if (secs < 0) return QObject::tr("ETA ?");
    if (secs >= 3600) return QObject::tr("ETA %1 h %2 min").arg(int(secs / 3600)).arg(int(secs / 60) % 60);
    if (secs >= 60) return QObject::tr("ETA %1 min %2 s").arg(int(secs / 60)).arg(int(secs) % 60);
    return QObject::tr("ETA %1 s").arg(int(secs));
}

}  // namespace

SuitesView::SuitesView(Workbench& workbench, QWidget* parent) : QWidget(parent), m_wb(workbench) {
    setObjectName("suitesView");
    // Left: the stored suites.
    m_suites = new QTableWidget(0, 4);
    m_suites->setObjectName("suiteTable");
    m_suites->setHorizontalHeaderLabels({tr("Suite"), tr("Shape"), tr("Items"), tr("Imported")});
    m_suites->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_suites->setSelectionMode(QAbstractItemView::SingleSelection);
    m_suites->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_suites->verticalHeader()->hide();
    m_suites->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* importBtn = new QPushButton(tr("Import suite…"));
    auto* needleBtn = new QPushButton(tr("Needle suite…"));
    needleBtn->setObjectName("makeNeedleSuite");
    needleBtn->setToolTip(tr("Make a needle-in-a-haystack suite: one fact hidden at several depths of texts of several "
                             "lengths, for the long-context heat map"));
    connect(needleBtn, &QPushButton::clicked, this, [this] { makeNeedleSuite(); });
    auto* padBtn = new QPushButton(tr("Long-context variant…"));
    padBtn->setObjectName("makePaddedSuite");
    padBtn->setToolTip(tr("The selected suite at several context lengths: each prompt after filler text, for accuracy "
                          "by context length"));
    connect(padBtn, &QPushButton::clicked, this, [this] { makePaddedSuite(); });
    auto* convBtn = new QPushButton(tr("Conversation suite…"));
    convBtn->setObjectName("makeConversationSuite");
    convBtn->setToolTip(tr("Make long conversations: a fact first, small tasks, the fact asked for last — accuracy by turn"));
    connect(convBtn, &QPushButton::clicked, this, [this] { makeConversationSuite(); });
    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    auto* suiteButtons = new QHBoxLayout;
    suiteButtons->addWidget(importBtn);
    suiteButtons->addWidget(needleBtn);
    suiteButtons->addWidget(padBtn);
    suiteButtons->addWidget(convBtn);
    leftLayout->addLayout(suiteButtons);
    leftLayout->addWidget(m_suites, 1);

    // Right top: run the selected suite on A and B.
    m_models = new QLabel;
    m_models->setWordWrap(true);
    m_limit = new QSpinBox;
    m_limit->setRange(0, 1000000);
    m_limit->setSpecialValueText(tr("all items"));
    m_maxTokens = new QSpinBox;
    m_maxTokens->setRange(1, 32768);
    const core::SuiteRunSettings defaults;  // the same defaults as `verdict run`
    m_maxTokens->setValue(defaults.generation.maxTokens);
    m_shots = new QSpinBox;
    m_shots->setRange(0, 64);
    m_shots->setValue(defaults.prompting.shots);
    m_toolRetries = new QSpinBox;
    m_toolRetries->setObjectName("toolRetries");
    m_toolRetries->setRange(0, 5);
    m_toolRetries->setValue(defaults.prompting.toolRetries);
    m_toolRetries->setToolTip(tr("Function-calling items: after a wrong call, send the reason back this many times for the "
                                 "model to correct it. Graded on the first attempt; the recovery rate is shown beside it."));
    m_parallel = new QSpinBox;
    m_parallel->setObjectName("parallel");
    m_parallel->setRange(0, 64);
    m_parallel->setSpecialValueText(tr("auto"));
    m_parallel->setValue(defaults.parallel);
    m_parallel->setToolTip(tr("Items in flight at once: batched by the engine, or concurrent requests to an endpoint. "
                              "The answers are the same as one at a time. Auto: from the device's free memory."));
    m_run = new QPushButton(tr("Run on A and B"));
    m_run->setObjectName("runButton");
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName("cancelButton");
    m_barA = new QProgressBar;
    m_barB = new QProgressBar;
    m_textA = new QLabel;
    m_textB = new QLabel;
    auto* runBox = new QGroupBox(tr("Run"));
    auto* form = new QFormLayout(runBox);
    form->addRow(m_models);
    auto* opts = new QHBoxLayout;
    opts->addWidget(new QLabel(tr("Items")));
    opts->addWidget(m_limit);
    opts->addWidget(new QLabel(tr("Max tokens")));
    opts->addWidget(m_maxTokens);
    opts->addWidget(new QLabel(tr("Few-shot")));
    opts->addWidget(m_shots);
    opts->addWidget(new QLabel(tr("Tool retries")));
    opts->addWidget(m_toolRetries);
    opts->addWidget(new QLabel(tr("Parallel")));
    opts->addWidget(m_parallel);
    opts->addWidget(new QLabel(tr("Device")));
    opts->addWidget(createRunDeviceCombo(m_wb, this));
    opts->addWidget(new QLabel(tr("GPU layers")));
    opts->addWidget(createRunGpuLayersSpin(m_wb, this));
    opts->addStretch();
    opts->addWidget(m_run);
    opts->addWidget(m_cancel);
    form->addRow(opts);
    form->addRow(tr("A"), m_barA);
    form->addRow(QString(), m_textA);
    form->addRow(tr("B"), m_barB);
    form->addRow(QString(), m_textB);

    // Right bottom: the compared runs, item by item.
    m_runsTitle = new QLabel;
    m_runsTitle->setWordWrap(true);
    m_category = new QComboBox;
    m_disagree = new QCheckBox(tr("Only where they disagree"));
    m_disagree->setObjectName("disagreeFilter");
    m_wrong = new QCheckBox(tr("Only wrong answers"));
    m_wrong->setObjectName("wrongFilter");
    m_significance = new QLabel;
    m_significance->setObjectName("significance");
    m_significance->setWordWrap(true);
    m_classification = new QLabel;
    m_classification->setObjectName("classification");
    m_classification->setTextFormat(Qt::RichText);
    m_classification->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_classification->hide();
    m_needle = new QLabel;
    m_needle->setObjectName("needleHeatMap");
    m_needle->setTextFormat(Qt::RichText);
    m_needle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_needle->hide();
    m_turns = new QLabel;
    m_turns->setObjectName("turnAccuracy");
    m_turns->setTextFormat(Qt::RichText);
    m_turns->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_turns->hide();
    m_toolCalls = new QLabel;
    m_toolCalls->setObjectName("functionCallingRates");
    m_toolCalls->setTextFormat(Qt::RichText);
    m_toolCalls->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_toolCalls->hide();
    m_itemModel = new ItemComparisonModel(this);
    m_filter = new ItemFilterProxy(this);
    m_filter->setSourceModel(m_itemModel);
    m_items = new QTableView;
    m_items->setObjectName("itemTable");
    m_items->setModel(m_filter);
    m_items->setSortingEnabled(true);
    m_items->setWordWrap(false);
    m_items->verticalHeader()->hide();
    m_items->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_items->horizontalHeader()->setStretchLastSection(false);
    m_items->setTextElideMode(Qt::ElideRight);
    auto* filters = new QHBoxLayout;
    filters->addWidget(new QLabel(tr("Category")));
    filters->addWidget(m_category);
    filters->addWidget(m_disagree);
    filters->addWidget(m_wrong);
    filters->addStretch();
    m_judge = new QPushButton(tr("Judge A vs B…"));
    m_judge->setObjectName("judgeRuns");
    m_judge->setToolTip(tr("Judge the two runs' answers item by item: yourself, blind, or with a judge model "
                           "(for suites without reference answers)"));
    filters->addWidget(m_judge);
    auto* results = new QWidget;
    auto* resultsLayout = new QVBoxLayout(results);
    resultsLayout->setContentsMargins(0, 0, 0, 0);
    resultsLayout->addWidget(m_runsTitle);
    resultsLayout->addWidget(m_significance);
    resultsLayout->addWidget(m_classification);
    resultsLayout->addWidget(m_needle);
    resultsLayout->addWidget(m_turns);
    resultsLayout->addWidget(m_toolCalls);
    resultsLayout->addLayout(filters);
    resultsLayout->addWidget(m_items, 1);

    auto* right = new QWidget;
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(runBox);
    rightLayout->addWidget(results, 1);
    auto* split = new QSplitter;
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    m_job = new Job(this);
    m_wb.registerJob(m_job);
    connect(importBtn, &QPushButton::clicked, this, [this] { importFile(); });
    connect(m_run, &QPushButton::clicked, this, [this] { runBoth(m_limit->value() > 0 ? m_limit->value() : -1); });
    connect(m_cancel, &QPushButton::clicked, this, &SuitesView::cancelRuns);
    connect(m_judge, &QPushButton::clicked, this, [this] { openJudgeDialog(); });
    connect(m_job, &Job::stateChanged, this, &SuitesView::updateButtons);
    connect(m_category, &QComboBox::currentIndexChanged, this, [this] { m_filter->setCategory(m_category->currentData().toString()); });
    connect(m_disagree, &QCheckBox::toggled, m_filter, &ItemFilterProxy::setDisagreementsOnly);
    connect(m_wrong, &QCheckBox::toggled, m_filter, &ItemFilterProxy::setWrongOnly);
    connect(&m_wb, &Workbench::resultsChanged, this, &SuitesView::reloadSuites);
    connect(&m_wb, &Workbench::comparedRunsChanged, this, &SuitesView::loadComparedRuns);
    connect(&m_wb, &Workbench::comparedRunsChanged, this, &SuitesView::updateButtons);
    connect(&m_wb, &Workbench::selectionChanged, this, &SuitesView::updateButtons);
    reloadSuites();
    loadComparedRuns();
    updateButtons();
}

void SuitesView::reloadSuites() {
    const QString current = m_suites->currentRow() >= 0 && m_suites->item(m_suites->currentRow(), 0)
                                ? m_suites->item(m_suites->currentRow(), 0)->text()
                                : QString();
    auto db = m_wb.openDb();
    if (!db) return;
    auto list = core::SuiteRepository(*db).list();
    if (!list) return;
    m_suites->setRowCount(static_cast<int>(list->size()));
    for (size_t i = 0; i < list->size(); ++i) {
        const auto& s = (*list)[i];
        auto* name = new QTableWidgetItem(QString::fromStdString(s.name));
        name->setData(Qt::UserRole, QVariant::fromValue<qlonglong>(s.id));
        name->setToolTip(QString::fromStdString(s.sourcePath));
        m_suites->setItem(int(i), 0, name);
        m_suites->setItem(int(i), 1, new QTableWidgetItem(QString::fromStdString(s.shape)));
        m_suites->setItem(int(i), 2, new QTableWidgetItem(QString::number(s.nItems)));
        m_suites->setItem(int(i), 3, new QTableWidgetItem(QString::fromStdString(s.importedAt.substr(0, 16))));
    }
    if (!current.isEmpty()) selectSuite(current);
    if (m_suites->currentRow() < 0 && m_suites->rowCount() > 0) m_suites->selectRow(0);
}

bool SuitesView::selectSuite(const QString& name) {
    for (int r = 0; r < m_suites->rowCount(); ++r)
        if (m_suites->item(r, 0)->text() == name) {
            m_suites->selectRow(r);
            return true;
        }
    return false;
}

ImportSuiteDialog* SuitesView::importFile(const QString& pathArg) {
    QString path = pathArg;
    if (path.isEmpty())
        path = QFileDialog::getOpenFileName(this, tr("Import a test suite"), QString(),
                                            tr("Test suites (*.jsonl *.json *.csv *.tsv *.gz);;All files (*)"));
    if (path.isEmpty()) return nullptr;
    auto* dlg = new ImportSuiteDialog(m_wb, path, this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    connect(dlg, &ImportSuiteDialog::saved, this, [this](const QString& name) {
        reloadSuites();
        selectSuite(name);
    });
    dlg->open();
    return dlg;
}

NeedleDialog* SuitesView::makeNeedleSuite() { return openNeedleDialog({}); }

ConversationDialog* SuitesView::makeConversationSuite() {
    auto* dlg = new ConversationDialog(m_wb, this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    connect(dlg, &ConversationDialog::made, this, [this](const QString& name) {
        reloadSuites();
        selectSuite(name);
    });
    dlg->open();
    return dlg;
}

NeedleDialog* SuitesView::makePaddedSuite() {
    const int row = m_suites->currentRow();
    if (row < 0 || !m_suites->item(row, 0)) return nullptr;
    return openNeedleDialog(m_suites->item(row, 0)->text());
}

NeedleDialog* SuitesView::openNeedleDialog(const QString& padSuite) {
    // Model A's tokenizer counts the tokens when A is a local GGUF; an endpoint's is not at hand.
    const QString a = m_wb.modelA();
    const QString tokenizer = QFileInfo(a).isFile() ? a : QString();
    auto* dlg = new NeedleDialog(m_wb, tokenizer, this, padSuite);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    connect(dlg, &NeedleDialog::made, this, [this](const QString& name) {
        reloadSuites();
        selectSuite(name);
    });
    dlg->open();
    return dlg;
}

void SuitesView::updateButtons() {
    const bool busy = m_job->busy();
    m_run->setEnabled(!busy && !m_wb.modelA().isEmpty() && !m_wb.modelB().isEmpty());
    m_cancel->setEnabled(m_job->state() == Job::State::Running);
    m_judge->setEnabled(m_wb.runA() > 0 && m_wb.runB() > 0);
    m_models->setText(tr("A: %1\nB: %2").arg(m_wb.modelA().isEmpty() ? tr("(choose on the Models screen)") : m_wb.displayName(m_wb.modelA()),
                                             m_wb.modelB().isEmpty() ? tr("(choose on the Models screen)") : m_wb.displayName(m_wb.modelB())));
}

bool SuitesView::running() const { return m_job->busy(); }

void SuitesView::cancelRuns() { m_job->cancel(); }

QString SuitesView::significanceText() const { return m_significance->text(); }

QString SuitesView::classificationText() const {
    if (m_classification->isHidden()) return {};
    QTextDocument doc;
    doc.setHtml(m_classification->text());
    return doc.toPlainText();
}

QString SuitesView::turnsText() const {
    if (m_turns->isHidden()) return {};
    QTextDocument doc;
    doc.setHtml(m_turns->text());
    return doc.toPlainText();
}

QString SuitesView::toolCallsText() const {
    if (m_toolCalls->isHidden()) return {};
    QTextDocument doc;
    doc.setHtml(m_toolCalls->text());
    return doc.toPlainText();
}

QString SuitesView::needleText() const {
    if (m_needle->isHidden()) return {};
    QTextDocument doc;
    doc.setHtml(m_needle->text());
    return doc.toPlainText();
}

namespace {

// Accuracy per prompt length (rows) x needle depth (columns) of both runs side by side, each cell
// shaded from red (0 %) to green (100 %); "cannot run" where no item of the cell ran (the first
// reason in the cell's tooltip-free footnote), with the KV cache each length needs for local models.
QString needleHtml(const std::optional<core::NeedleGrid>& a, const std::optional<core::NeedleGrid>& b,
                   std::optional<uint64_t> kvA, std::optional<uint64_t> kvB) {
    QString h = QObject::tr("<b>Long context</b>: accuracy by prompt length (rows) and needle depth (columns)<table><tr>");
    QStringList reasons;
    for (const auto& [side, g, kv] : {std::tuple{"A", &a, kvA}, std::tuple{"B", &b, kvB}}) {
        if (!*g) continue;
        h += "<td valign=\"top\"><table cellspacing=\"0\" cellpadding=\"3\" border=\"1\"><tr><th>" +
             QString("%1: tokens").arg(side) + "</th>";
        for (double d : (*g)->depths) h += QString("<th>%1 %</th>").arg(d);
        if (kv) h += QObject::tr("<th>KV cache</th>");
        h += "</tr>";
        for (size_t li = 0; li < (*g)->lengths.size(); ++li) {
            h += QString("<tr><td>%1</td>").arg((*g)->lengths[li]);
            for (size_t di = 0; di < (*g)->depths.size(); ++di) {
                const core::NeedleCell& c = (*g)->at(li, di);
                if (c.n == 0) {
                    h += "<td>—</td>";
                } else if (!c.held()) {
                    h += QObject::tr("<td bgcolor=\"#bbbbbb\">cannot run</td>");
                } else {
                    const double acc = *c.accuracy();
                    const QColor bg = QColor::fromHsv(int(120 * acc), 90, 240);
                    h += QString("<td bgcolor=\"%1\">%2 %</td>").arg(bg.name()).arg(100 * acc, 0, 'f', 0);
                }
                const QString why = QString::fromStdString(c.error).toHtmlEscaped();
                if (!c.error.empty() && reasons.size() < 3 && !reasons.contains(why)) reasons << why;
            }
            if (kv) h += QString("<td>%1 MiB</td>").arg(double(*kv * uint64_t((*g)->lengths[li])) / (1024.0 * 1024.0), 0, 'f', 1);
            h += "</tr>";
        }
        h += "</table></td>";
    }
    h += "</tr></table>";
    for (const QString& r : reasons) h += QObject::tr("<br>cannot run: ") + r;
    return h;
}

// Multi-turn consistency: accuracy by range of turn indices of both runs, Wilson 95 %.
QString turnsHtml(const std::optional<core::TurnAccuracy>& a, const std::optional<core::TurnAccuracy>& b) {
    QString h = QObject::tr("<b>Multi-turn consistency</b>: accuracy of the scored turns by turn index (Wilson 95 %)"
                            "<table cellspacing=\"0\" cellpadding=\"3\" border=\"1\"><tr><th>turns</th><th>A</th><th>B</th></tr>");
    for (const auto& [first, last] : core::unionRanges(a, b)) {
        h += "<tr><td>" + (first == last ? QString::number(first) : QString("%1–%2").arg(first).arg(last)) + "</td>";
        for (const auto* t : {&a, &b}) {
            const core::TurnCell* c = *t ? (*t)->range(first, last) : nullptr;
            const QString cell = !c ? QString("—")
                                    : QString("%1 % <small>[%2–%3] (%4/%5)</small>")
                                          .arg(100 * c->acc.accuracy, 0, 'f', 1)
                                          .arg(100 * c->acc.ci.lo, 0, 'f', 1)
                                          .arg(100 * c->acc.ci.hi, 0, 'f', 1)
                                          .arg(c->acc.correct)
                                          .arg(c->acc.n);
            h += "<td>" + cell + "</td>";
        }
        h += "</tr>";
    }
    return h + "</table>";
}

// Function calling: the error rate of both runs and of each error class seen, Wilson 95 %.
QString toolCallsHtml(const std::optional<core::ToolCallStats>& a, const std::optional<core::ToolCallStats>& b) {
    auto cell = [](const std::optional<core::ToolCallStats>& s, const std::string& cls) {
        if (!s) return QString("—");
        double rate = s->errorRate;
        core::Interval ci = s->errorCi;
        int64_t count = s->errors;
        if (!cls.empty()) {
            rate = 0;
            ci = core::wilsonInterval(0, s->items);
            count = 0;
            for (const auto& c : s->byClass)
                if (c.name == cls) {
                    rate = c.rate;
                    ci = c.ci;
                    count = c.count;
                }
        }
        return QString("%1 % <small>[%2–%3] (%4/%5)</small>")
            .arg(100 * rate, 0, 'f', 1)
            .arg(100 * ci.lo, 0, 'f', 1)
            .arg(100 * ci.hi, 0, 'f', 1)
            .arg(count)
            .arg(s->items);
    };
    QString h = QObject::tr("<b>Function calling</b>: error rate, in all and by class (Wilson 95 %; lower is better)"
                            "<table cellspacing=\"0\" cellpadding=\"3\" border=\"1\"><tr><th>error</th><th>A</th><th>B</th></tr>");
    h += "<tr><td>any error</td><td>" + cell(a, "") + "</td><td>" + cell(b, "") + "</td></tr>";
    std::vector<std::string> classes;
    for (const auto* s : {&a, &b})
        if (*s)
            for (const auto& c : (*s)->byClass)
                if (c.count > 0 && std::find(classes.begin(), classes.end(), c.name) == classes.end()) classes.push_back(c.name);
    for (const std::string& c : classes)
        h += "<tr><td>" + QString::fromStdString(c).toHtmlEscaped() + "</td><td>" + cell(a, c) + "</td><td>" + cell(b, c) + "</td></tr>";
    // Retry behaviour, when the runs retried malformed calls: how many the model corrected.
    auto recovery = [](const std::optional<core::ToolCallStats>& s) {
        if (!s || s->retried == 0) return QString("—");
        return QString("%1 % <small>[%2–%3] (%4/%5)</small>")
            .arg(100 * s->recoveryRate, 0, 'f', 1)
            .arg(100 * s->recoveryCi.lo, 0, 'f', 1)
            .arg(100 * s->recoveryCi.hi, 0, 'f', 1)
            .arg(s->recovered)
            .arg(s->retried);
    };
    if ((a && a->retried > 0) || (b && b->retried > 0))
        h += "<tr><td>" + QObject::tr("corrected after the error was sent back") + "</td><td>" + recovery(a) + "</td><td>" +
             recovery(b) + "</td></tr>";
    return h + "</table>";
}

// Per-label precision / recall / F1 of both runs (95 % intervals) and each run's confusion matrix.
QString classificationHtml(const std::optional<core::ClassificationSummary>& a,
                           const std::optional<core::ClassificationSummary>& b) {
    auto cell = [](const std::optional<double>& v, const core::Interval& i) {
        if (!v) return QString("—");
        return QString("%1 <small>[%2–%3]</small>").arg(100 * *v, 0, 'f', 1).arg(100 * i.lo, 0, 'f', 1).arg(100 * i.hi, 0, 'f', 1);
    };
    QString h = QObject::tr("<b>Classification</b> (precision, recall: Wilson 95 %; F1, macro-F1: bootstrap 95 %)"
                            "<table cellspacing=\"0\" cellpadding=\"3\" border=\"1\"><tr><th>label</th>"
                            "<th>A precision</th><th>A recall</th><th>A F1</th><th>B precision</th><th>B recall</th>"
                            "<th>B F1</th></tr>");
    for (const std::string& l : core::unionLabels(a, b)) {
        h += "<tr><td>" + QString::fromStdString(l).toHtmlEscaped() + "</td>";
        for (const auto* c : {&a, &b}) {
            const core::LabelMetrics* m = *c ? (*c)->find(l) : nullptr;
            if (!m) {
                h += "<td>—</td><td>—</td><td>—</td>";
                continue;
            }
            h += "<td>" + cell(m->precision, m->precisionCi) + "</td><td>" + cell(m->recall, m->recallCi) + "</td><td>" +
                 cell(m->f1, m->f1Ci) + "</td>";
        }
        h += "</tr>";
    }
    h += "<tr><td><b>macro-F1</b></td>";
    for (const auto* c : {&a, &b})
        h += "<td colspan=\"3\">" + (*c ? cell((*c)->macroF1, (*c)->macroF1Ci) : QString("—")) + "</td>";
    h += "</tr></table>";
    for (const auto& [side, c] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
        if (!*c) continue;
        h += QObject::tr("<br>%1 confusion (rows gold, columns predicted):"
                         "<table cellspacing=\"0\" cellpadding=\"3\" border=\"1\"><tr><th></th>")
                 .arg(side);
        for (const auto& l : (*c)->labels) h += "<th>" + QString::fromStdString(l).toHtmlEscaped() + "</th>";
        h += QObject::tr("<th>(no label)</th></tr>");
        for (size_t g = 0; g < (*c)->labels.size(); ++g) {
            h += "<tr><td>" + QString::fromStdString((*c)->labels[g]).toHtmlEscaped() + "</td>";
            for (int64_t v : (*c)->confusion[g]) h += QString("<td>%1</td>").arg(v);
            h += "</tr>";
        }
        h += "</table>";
    }
    return h;
}

}  // namespace

JudgeDialog* SuitesView::openJudgeDialog() {
    if (m_wb.runA() <= 0 || m_wb.runB() <= 0) return nullptr;
    auto* dlg = new JudgeDialog(m_wb, m_wb.runA(), m_wb.runB(), this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    dlg->show();
    return dlg;
}
QString SuitesView::progressText(int side) const { return (side == 0 ? m_textA : m_textB)->text(); }

bool SuitesView::runBoth(int64_t limit) {
    if (m_job->busy()) return false;
    const int row = m_suites->currentRow();
    if (row < 0) {
        showError(this, tr("Choose a suite to run (or import one)."));
        return false;
    }
    const QString a = m_wb.modelA(), b = m_wb.modelB();
    if (a.isEmpty() || b.isEmpty()) {
        showError(this, tr("Choose models A and B first (Models screen)."));
        return false;
    }
    const int64_t suiteId = m_suites->item(row, 0)->data(Qt::UserRole).toLongLong();
    // The choices of this screen in the suite-run service's settings; what is not on the screen
    // keeps the service's defaults (the CLI's), so a run started here continues from `verdict run`.
    core::SuiteRunSettings settings;
    settings.suite = "#";
    settings.suite += std::to_string(suiteId);
    if (limit > 0) settings.limit = limit;
    settings.generation.maxTokens = m_maxTokens->value();
    settings.prompting.shots = m_shots->value();
    settings.prompting.toolRetries = m_toolRetries->value();
    settings.parallel = m_parallel->value();
    settings.backend.engineVersion = core::toolVersion();
    settings.backend.device = m_wb.runDevice().toStdString();
    settings.backend.gpuLayers = m_wb.runGpuLayers();
    core::BackendOpenOptions sideBackend[2] = {settings.backend, settings.backend};  // endpoint keys and TLS per side
    for (int side = 0; side < 2; ++side) {
        if (QString why; !m_wb.applyEndpointAccess(side == 0 ? a : b, sideBackend[side], &why)) {
            showError(this, tr("Model %1 cannot be reached.").arg(side == 0 ? "A" : "B"), why);
            return false;
        }
    }
    auto runIds = std::make_shared<std::pair<int64_t, int64_t>>(0, 0);
    for (QProgressBar* bar : {m_barA, m_barB}) bar->setValue(0);
    m_textA->setText(tr("waiting"));
    m_textB->setText(tr("waiting"));
    QLabel* texts[2] = {m_textA, m_textB};
    QProgressBar* bars[2] = {m_barA, m_barB};
    Workbench* wb = &m_wb;
    m_job->start([=](JobControl& c) -> JobResult {
        auto db = wb->openDb();
        if (!db) return {tr("The results database cannot be opened."), QString::fromStdString(db.error().message), {}};
        const QString refs[2] = {a, b};
        int64_t ids[2] = {0, 0};
        for (int side = 0; side < 2 && !c.cancelled(); ++side) {
            QLabel* text = texts[side];
            QProgressBar* bar = bars[side];
            core::SuiteRunSettings s = settings;
            s.backend = sideBackend[side];
            s.modelRef = refs[side].toStdString();
            s.backend.cancelLoad = c.cancelFlag();
            core::SuiteRunEvents events;
            events.loading = [&c, text] { c.post([text] { text->setText(tr("loading the model…")); }); };
            events.prepared = [&ids, side](const core::PreparedRun& p) { ids[side] = p.run.id; };
            events.progress = [&c, text, bar](const core::RunProgress& p) {
                const int pct = p.total > 0 ? int(100 * p.done / p.total) : 0;
                const QString msg = tr("run %1: %2/%3 items · %4 items/s · %5")
                                        .arg(p.runId)
                                        .arg(p.done)
                                        .arg(p.total)
                                        .arg(p.itemsPerSecond, 0, 'f', 2)
                                        .arg(eta(p.etaSeconds.value_or(-1)));
                c.post([text, bar, pct, msg] {
                    bar->setValue(pct);
                    text->setText(msg);
                });
            };
            auto done = core::runSuite(*db, s, events, c.stopToken());
            if (!done) {
                const core::ServiceError& e = done.error();
                const QString detail = QString::fromStdString(e.message);
                switch (e.kind) {
                case core::ServiceFailure::Cancelled: break;
                case core::ServiceFailure::ModelOpen:
                    return {tr("Model %1 could not be loaded.").arg(side == 0 ? "A" : "B"), detail, {}};
                case core::ServiceFailure::Storage:
                    return {tr("The run stopped: the database refused a read or a write."), detail, {}};
                case core::ServiceFailure::Runtime: return {tr("The run failed."), detail, {}};
                case core::ServiceFailure::BadInput: return {tr("The run could not start."), detail, {}};
                }
                break;
            }
            const bool cancelled = done->outcome.run.status == core::RunStatus::Cancelled;
            c.post([text, cancelled, id = ids[side]] {
                text->setText(cancelled ? tr("run %1 cancelled — Run again to continue it where it stopped").arg(id)
                                        : text->text() + tr(" — done"));
            });
        }
        *runIds = {ids[0], ids[1]};
        return {{}, {}, tr("runs %1 and %2").arg(ids[0]).arg(ids[1])};
    });
    connect(m_job, &Job::finished, this, [this, runIds](const JobResult& r, bool cancelled) {
        if (!r.ok()) showError(this, r.error, r.detail);
        m_wb.notifyResultsChanged();
        if (runIds->first > 0 && runIds->second > 0) {
            m_wb.setComparedRuns(runIds->first, runIds->second);
            if (!cancelled) emit runsFinished(runIds->first, runIds->second);
        }
    }, Qt::SingleShotConnection);
    return true;
}

void SuitesView::loadComparedRuns() {
    m_itemModel->clear();
    m_significance->clear();
    m_classification->clear();
    m_classification->hide();
    m_needle->clear();
    m_needle->hide();
    m_turns->clear();
    m_turns->hide();
    m_toolCalls->clear();
    m_toolCalls->hide();
    const int64_t a = m_wb.runA(), b = m_wb.runB();
    if (a <= 0 || b <= 0) {
        m_runsTitle->setText(tr("No runs compared yet: run a suite on A and B, or pick two runs on the History screen."));
        return;
    }
    auto db = m_wb.openDb();
    if (!db) return;
    core::RunRepository runs(*db);
    auto ra = runs.find(a), rb = runs.find(b);
    if (!ra || !rb || !*ra || !*rb) {
        m_runsTitle->setText(tr("Run %1 or %2 is no longer in the database.").arg(a).arg(b));
        return;
    }
    auto ia = runs.items(a), ib = runs.items(b);
    core::SuiteRepository suites(*db);
    auto suite = suites.findById((*ra)->suiteId);
    auto items = suites.items((*ra)->suiteId);
    if (!ia || !ib || !items || !suite || !*suite) return;
    const QString la = QFileInfo(QString::fromStdString((*ra)->modelPath)).completeBaseName();
    const QString lb = QFileInfo(QString::fromStdString((*rb)->modelPath)).completeBaseName();
    m_itemModel->setRuns(*items, *ia, *ib, "A", "B");
    m_items->resizeColumnsToContents();
    for (int col : {ItemComparisonModel::Prompt, ItemComparisonModel::AnswerA, ItemComparisonModel::AnswerB})
        m_items->setColumnWidth(col, std::min(m_items->columnWidth(col), 260));
    {
        const QSignalBlocker block(m_category);
        m_category->clear();
        m_category->addItem(tr("all"), QString());
        for (const QString& c : m_itemModel->categories()) m_category->addItem(c, c);
    }
    m_filter->setCategory({});
    const core::RunSummary sa = core::summarizeRun(*ia), sb = core::summarizeRun(*ib);
    const auto ca = core::classificationOfRun(*ia), cb = core::classificationOfRun(*ib);
    if ((ca || cb) && (*ra)->suiteId == (*rb)->suiteId) {
        m_classification->setText(classificationHtml(ca, cb));
        m_classification->show();
    }
    if ((*ra)->suiteId == (*rb)->suiteId) {
        const auto na = core::needleGridOfRun(*items, *ia), nb = core::needleGridOfRun(*items, *ib);
        if (na || nb) {
            auto kvOf = [this](const core::RunRecord& r) -> std::optional<uint64_t> {
                const ModelEntry* e = m_wb.models()->find(QString::fromStdString(r.modelPath));
                if (!e || !e->card || e->card->memoryTrained.kvBytesPerToken == 0) return std::nullopt;
                return e->card->memoryTrained.kvBytesPerToken;
            };
            m_needle->setText(needleHtml(na, nb, kvOf(**ra), kvOf(**rb)));
            m_needle->show();
        }
        const auto ta = core::turnAccuracyOfRun(*ia), tb = core::turnAccuracyOfRun(*ib);
        if (ta || tb) {
            m_turns->setText(turnsHtml(ta, tb));
            m_turns->show();
        }
        const auto fa = core::toolCallStatsOfRun(*ia), fb = core::toolCallStatsOfRun(*ib);
        if (fa || fb) {
            m_toolCalls->setText(toolCallsHtml(fa, fb));
            m_toolCalls->show();
        }
    }
    // "—" (not 0 %) for a run with no scored item: nothing was measured.
    auto acc = [](const core::RunSummary& rs) {
        return rs.accuracy.overall.n > 0 ? QString("%1 %").arg(100 * rs.accuracy.overall.accuracy, 0, 'f', 1)
                                         : QObject::tr("— (nothing scored)");
    };
    m_runsTitle->setText(tr("<b>A</b> = run %1 (%2): %3   ·   <b>B</b> = run %4 (%5): %6   on suite %7")
                             .arg(a)
                             .arg(la.toHtmlEscaped())
                             .arg(acc(sa))
                             .arg(b)
                             .arg(lb.toHtmlEscaped())
                             .arg(acc(sb))
                             .arg(QString::fromStdString((*suite)->name).toHtmlEscaped()));
    if ((*ra)->suiteId != (*rb)->suiteId) {
        m_significance->setText(tr("These runs evaluated different suites: their items cannot be compared."));
        return;
    }
    const core::RunPairing pairing = core::pairRuns(*ia, *ib);
    if (pairing.pairs.empty()) {
        const QString why = QString::fromStdString(core::nothingScoredReason(pairing));
        m_significance->setText(why.left(1).toUpper() + why.mid(1) + ".");
        return;
    }
    const core::PairedComparison pc = core::comparePaired(pairing.pairs);
    m_significance->setText(
        tr("Paired over %1 items: A − B = %2 points (95 % CI %3 to %4); A alone right on %5, B alone on %6; "
           "McNemar exact p = %7 — %8")
            .arg(pc.nPairs)
            .arg(100 * pc.difference, 0, 'f', 1)
            .arg(100 * pc.differenceCi.lo, 0, 'f', 1)
            .arg(100 * pc.differenceCi.hi, 0, 'f', 1)
            .arg(pc.aOnly)
            .arg(pc.bOnly)
            .arg(pc.mcnemarP, 0, 'g', 3)
            .arg(pc.mcnemarP < 0.05 ? tr("the difference is statistically significant.")
                                    : tr("not significant: more items are needed to tell them apart.")));
}

}  // namespace verdict::ui
