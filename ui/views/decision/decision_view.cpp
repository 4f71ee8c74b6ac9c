#include "views/decision/decision_view.h"

#include "core/report/report_command.h"
#include "core/report/report_data.h"
#include "core/report/report_decision.h"
#include "core/version.h"
#include "report/report_chart_data.h"
#include "report/report_renderer.h"
#include "views/cost/cost_view.h"
#include "widgets/chart_panel.h"
#include "widgets/error_box.h"
#include "widgets/run_pair_picker.h"
#include "workbench.h"

#include <QApplication>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableWidget>
#include <QVBoxLayout>

namespace verdict::ui {

namespace {

QTableWidget* table(const QStringList& headers) {
    auto* t = new QTableWidget(0, int(headers.size()));
    t->setHorizontalHeaderLabels(headers);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->hide();
    t->setWordWrap(true);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

DecisionView::DecisionView(Workbench& workbench, CostView& cost, QWidget* parent)
    : QWidget(parent), m_wb(workbench), m_cost(cost) {
    setObjectName("decisionView");
    auto* picker = new RunPairPicker(m_wb);
    auto* weightsBox = new QGroupBox(tr("What matters to you (weights; 0 = ignore)"));
    auto* wg = new QGridLayout(weightsBox);
    int col = 0;
    for (const auto& c : core::reportCriteria()) {
        if (c.informational) continue;
        auto* s = new QDoubleSpinBox;
        s->setRange(0, 100);
        s->setDecimals(1);
        s->setValue(c.defaultWeight);
        s->setObjectName(QString("weight_") + c.key);
        m_weights[c.key] = s;
        wg->addWidget(new QLabel(qs(c.label)), 0, col);
        wg->addWidget(s, 1, col);
        ++col;
        connect(s, &QDoubleSpinBox::editingFinished, this, &DecisionView::refresh);
    }
    m_slaTtft = new QDoubleSpinBox;
    m_slaTpot = new QDoubleSpinBox;
    for (QDoubleSpinBox* s : {m_slaTtft, m_slaTpot}) {
        s->setRange(0, 1e6);
        s->setSuffix(tr(" ms"));
        s->setSpecialValueText(tr("no SLA"));
        connect(s, &QDoubleSpinBox::editingFinished, this, &DecisionView::refresh);
    }
    wg->addWidget(new QLabel(tr("SLA: TTFT P99 ≤")), 0, col);
    wg->addWidget(m_slaTtft, 1, col++);
    wg->addWidget(new QLabel(tr("TPOT P99 ≤")), 0, col);
    wg->addWidget(m_slaTpot, 1, col++);
    // The quality gate, next to the SLA (docs/report.md "Quality gate").
    m_gateSignificant = new QCheckBox(tr("not significantly worse"));
    m_gateSignificant->setObjectName("gateSignificant");
    m_gateSignificant->setChecked(true);
    m_gateSignificant->setToolTip(tr("Never recommend a model that is significantly less accurate than the other "
                                     "(McNemar p < 0.05), whatever its speed, memory or cost points."));
    connect(m_gateSignificant, &QCheckBox::toggled, this, &DecisionView::refresh);
    m_gateMinAccuracy = new QDoubleSpinBox;
    m_gateMinAccuracy->setObjectName("gateMinAccuracy");
    m_gateMinAccuracy->setRange(0, 100);
    m_gateMinAccuracy->setDecimals(1);
    m_gateMinAccuracy->setSuffix(tr(" %"));
    m_gateMinAccuracy->setSpecialValueText(tr("no minimum"));
    m_gateMinAccuracy->setToolTip(tr("Never recommend a model whose overall accuracy is below this."));
    connect(m_gateMinAccuracy, &QDoubleSpinBox::editingFinished, this, &DecisionView::refresh);
    wg->addWidget(new QLabel(tr("Quality gate:")), 0, col);
    wg->addWidget(m_gateSignificant, 1, col++);
    wg->addWidget(new QLabel(tr("accuracy ≥")), 0, col);
    wg->addWidget(m_gateMinAccuracy, 1, col++);

    m_headline = new QLabel;
    m_headline->setObjectName("recommendation");
    QFont f = m_headline->font();
    f.setPointSizeF(f.pointSizeF() * 1.35);
    f.setBold(true);
    m_headline->setFont(f);
    m_headline->setWordWrap(true);
    m_reasons = new QLabel;
    m_reasons->setWordWrap(true);
    auto* exportBtn = new QPushButton(tr("Export report…"));
    exportBtn->setObjectName("exportButton");
    auto* head = new QHBoxLayout;
    auto* texts = new QVBoxLayout;
    texts->addWidget(m_headline);
    texts->addWidget(m_reasons);
    head->addLayout(texts, 1);
    head->addWidget(exportBtn, 0, Qt::AlignTop);

    m_table = table({tr("Criterion"), tr("A"), tr("B"), tr("Winner"), tr("Weight"), tr("Note")});
    m_table->setObjectName("decisionTable");
    m_checklist = table({tr("Question"), tr("Answer"), tr("From")});
    m_accuracy = new ChartPanel(tr("Accuracy by category appears here for two runs of the same suite."));
    auto* right = new QSplitter(Qt::Vertical);
    right->addWidget(m_accuracy);
    right->addWidget(m_checklist);
    auto* split = new QSplitter;
    split->addWidget(m_table);
    split->addWidget(right);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(picker);
    layout->addWidget(weightsBox);
    layout->addLayout(head);
    layout->addWidget(split, 1);

    connect(exportBtn, &QPushButton::clicked, this, &DecisionView::exportReport);
    connect(&m_wb, &Workbench::comparedRunsChanged, this, &DecisionView::refresh);
    connect(&m_wb, &Workbench::resultsChanged, this, &DecisionView::refresh);
    connect(&m_cost, &CostView::inputsChanged, this, &DecisionView::refresh);
    refresh();
}

core::ReportRequest DecisionView::request() const {
    core::ReportRequest req;
    req.runA = m_wb.runA();
    req.runB = m_wb.runB();
    req.weights = core::defaultCriterionWeights();
    for (const auto& [key, spin] : m_weights) req.weights[key] = spin->value();
    if (m_slaTtft->value() > 0) req.sla.ttftMs = m_slaTtft->value();
    if (m_slaTpot->value() > 0) req.sla.tpotMs = m_slaTpot->value();
    req.quality.noWorseSignificant = m_gateSignificant->isChecked();
    if (m_gateMinAccuracy->value() > 0) req.quality.minAccuracy = m_gateMinAccuracy->value() / 100.0;
    const core::ReportTcoInputs tco = m_cost.tcoInputs();
    if (!tco.hardwareId.empty()) req.tco = tco;
    req.toolVersion = core::toolVersion();
    req.buildCommit = core::buildCommit();
    return req;
}

void DecisionView::refresh() {
    m_data.reset();
    m_table->setRowCount(0);
    m_checklist->setRowCount(0);
    if (m_wb.runA() <= 0 || m_wb.runB() <= 0) {
        m_headline->setText(tr("Run a suite on models A and B (Suites screen), or pick two runs above."));
        m_reasons->clear();
        m_accuracy->setChart(nullptr);
        return;
    }
    auto db = m_wb.openDb();
    if (!db) return;
    auto data = core::buildReportData(*db, request());
    if (!data) {
        m_headline->setText(tr("These runs cannot be compared."));
        m_reasons->setText(qs(data.error().message));
        m_accuracy->setChart(nullptr);
        return;
    }
    m_data = std::move(*data);
    const core::ReportData& d = *m_data;
    m_headline->setText(qs(d.recommendation.headline));
    QStringList reasons;
    for (const auto& r : d.recommendation.reasons) reasons << "• " + qs(r);
    for (const auto& m : d.missing) reasons << "• " + tr("Missing: %1").arg(qs(m));
    m_reasons->setText(reasons.join("\n"));
    m_table->setRowCount(int(d.decision.size()));
    for (size_t i = 0; i < d.decision.size(); ++i) {
        const auto& r = d.decision[i];
        const QString winner = r.winner == core::Winner::A   ? tr("A") + " ✔"
                               : r.winner == core::Winner::B ? tr("B") + " ✔"
                               : r.winner == core::Winner::Tie ? tr("tie")
                                                               : tr("—");
        const QStringList cells = {qs(r.label), qs(r.aValue), qs(r.bValue), winner, QString::number(r.weight), qs(r.note)};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if ((c == 1 && r.winner == core::Winner::A) || (c == 2 && r.winner == core::Winner::B)) {
                QFont bold = item->font();
                bold.setBold(true);
                item->setFont(bold);
            }
            m_table->setItem(int(i), c, item);
        }
    }
    m_checklist->setRowCount(int(d.checklist.size()));
    for (size_t i = 0; i < d.checklist.size(); ++i) {
        m_checklist->setItem(int(i), 0, new QTableWidgetItem(qs(d.checklist[i].question)));
        m_checklist->setItem(int(i), 1, new QTableWidgetItem(qs(d.checklist[i].answer)));
        m_checklist->setItem(int(i), 2, new QTableWidgetItem(d.checklist[i].fromData ? tr("data") : tr("a person")));
    }
    m_accuracy->setChart(render::accuracyChart(d), d.accuracy.refused ? qs(d.accuracy.refusedReason) : QString());
}

QString DecisionView::recommendationText() const { return m_headline->text(); }
int DecisionView::decisionRows() const { return m_table->rowCount(); }

void DecisionView::exportReport() {
    if (m_wb.runA() <= 0 || m_wb.runB() <= 0) {
        showError(this, tr("Choose two runs to compare before exporting a report."));
        return;
    }
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    const QString path = QFileDialog::getSaveFileName(this, tr("Export decision report"), dir + "/verdict-report.pdf",
                                                      tr("PDF (*.pdf);;HTML (*.html);;Markdown (*.md)"));
    if (!path.isEmpty()) exportReportTo(path);
}

bool DecisionView::exportReportTo(const QString& path) {
    const auto format = render::reportFormatOfPath(path.toStdString());
    if (!format) {
        showError(this, tr("Choose a file ending in .pdf, .html or .md."));
        return false;
    }
    auto db = m_wb.openDb();
    if (!db) {
        showError(this, tr("The results database cannot be opened."), qs(db.error().message));
        return false;
    }
    core::ReportRequest req = request();
    // The report names the command that re-makes it; the window's export is that same command.
    req.commandLine = core::reportCommandLine(req, path.toStdString(), m_wb.dbPath().toStdString());
    m_lastCommand = QString::fromStdString(req.commandLine);
    auto data = core::buildReportData(*db, req);
    if (!data) {
        showError(this, tr("The report cannot be made from these runs."), qs(data.error().message));
        return false;
    }
    QApplication::setOverrideCursor(Qt::WaitCursor);
    auto out = render::renderReport(*data, *format, path);
    QApplication::restoreOverrideCursor();
    if (!out) {
        showError(this, tr("The report could not be written."), qs(out.error().message));
        return false;
    }
    return true;
}

}  // namespace verdict::ui
