#include "views/cost/cost_view.h"

#include "core/report/report_data.h"
#include "core/report/report_format.h"
#include "core/tco/cost_model.h"
#include "core/tco/hardware_catalog.h"
#include "report/report_chart_data.h"
#include "widgets/chart_panel.h"
#include "widgets/run_pair_picker.h"
#include "workbench.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSettings>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace verdict::ui {

namespace {

QDoubleSpinBox* spin(double lo, double hi, double value, int decimals, const QString& suffix = {}) {
    auto* s = new QDoubleSpinBox;
    s->setRange(lo, hi);
    s->setDecimals(decimals);
    s->setValue(value);
    s->setSuffix(suffix);
    s->setGroupSeparatorShown(true);
    return s;
}

// Money as the CLI and the report print it (core::formatUsd), with this locale's separators.
QString usd(double v) {
    const QLocale loc;
    return QString::fromStdString(core::formatUsd(v, loc.groupSeparator().toStdString(), loc.decimalPoint().toStdString()));
}

QTableWidget* table(const QStringList& headers) {
    auto* t = new QTableWidget(0, int(headers.size()));
    t->setHorizontalHeaderLabels(headers);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->hide();
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

}  // namespace

CostView::CostView(Workbench& workbench, QWidget* parent) : QWidget(parent), m_wb(workbench) {
    setObjectName("costView");
    auto* picker = new RunPairPicker(m_wb);
    m_hardware = new QComboBox;
    m_hardware->setObjectName("hardware");
    m_measuredOn = new QComboBox;
    m_ownership = new QComboBox;
    m_ownership->addItem(tr("Buy"), "buy");
    m_ownership->addItem(tr("Rent (cloud $/hour)"), "rent");
    auto catalog = core::loadHardwareCatalog(std::nullopt);
    m_measuredOn->addItem(tr("this machine (where the runs were measured)"), QString());
    if (catalog) {
        for (const auto& e : catalog->entries()) {
            const QString label = QString::fromStdString(e.name.empty() ? e.id : e.name) + " [" + QString::fromStdString(e.id) + "]";
            m_hardware->addItem(label, QString::fromStdString(e.id));
            m_measuredOn->addItem(label, QString::fromStdString(e.id));
        }
    }
    QSettings s;
    m_hardware->setCurrentIndex(std::max(0, m_hardware->findData(s.value("cost/hardware", "this-machine"))));
    m_tokensPerDay = spin(0, 1e13, s.value("cost/tokensPerDay", 1e6).toDouble(), 0, tr(" tokens/day"));
    m_baseline = spin(0, 1000, s.value("cost/baseline", 0.5).toDouble(), 3, tr(" $/1M tokens"));
    m_baseline->setSpecialValueText(tr("no API baseline"));
    // The assumptions start from the cost model's defaults, the ones `verdict tco --help` shows.
    const core::CostAssumptions defaults;
    m_utilisation = spin(0.01, 1, defaults.utilisation, 2);
    m_years = spin(0.25, 10, defaults.years, 2, tr(" years"));
    m_electricity = spin(0, 5, defaults.electricityUsdPerKwh, 3, tr(" $/kWh"));
    m_pue = spin(1, 3, defaults.pue, 2);

    auto* inputs = new QGroupBox(tr("Hardware and workload"));
    auto* g = new QGridLayout(inputs);
    g->addWidget(new QLabel(tr("Deploy on")), 0, 0);
    g->addWidget(m_hardware, 0, 1);
    g->addWidget(new QLabel(tr("Measured on")), 0, 2);
    g->addWidget(m_measuredOn, 0, 3);
    g->addWidget(new QLabel(tr("Ownership")), 0, 4);
    g->addWidget(m_ownership, 0, 5);
    g->addWidget(new QLabel(tr("Volume")), 1, 0);
    g->addWidget(m_tokensPerDay, 1, 1);
    g->addWidget(new QLabel(tr("Hosted API")), 1, 2);
    g->addWidget(m_baseline, 1, 3);
    g->addWidget(new QLabel(tr("Utilisation")), 1, 4);
    g->addWidget(m_utilisation, 1, 5);
    g->addWidget(new QLabel(tr("Horizon")), 2, 0);
    g->addWidget(m_years, 2, 1);
    g->addWidget(new QLabel(tr("Electricity")), 2, 2);
    g->addWidget(m_electricity, 2, 3);
    g->addWidget(new QLabel(tr("PUE")), 2, 4);
    g->addWidget(m_pue, 2, 5);

    m_summary = new QLabel;
    m_summary->setWordWrap(true);
    m_summary->setObjectName("costSummary");
    m_table = table({tr("Figure"), tr("A"), tr("B")});
    m_table->setObjectName("costTable");
    m_assumptions = table({tr("Assumption"), tr("Value"), tr("Source")});
    m_chart = new ChartPanel(tr("The 3-year cost curves appear here once both runs have a measured throughput."));
    auto* lower = new QSplitter;
    auto* tables = new QSplitter(Qt::Vertical);
    tables->addWidget(m_table);
    tables->addWidget(m_assumptions);
    lower->addWidget(tables);
    lower->addWidget(m_chart);
    lower->setStretchFactor(0, 2);
    lower->setStretchFactor(1, 3);
    lower->setSizes({560, 840});

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(picker);
    layout->addWidget(inputs);
    layout->addWidget(m_summary);
    layout->addWidget(lower, 1);

    for (QComboBox* c : {m_hardware, m_measuredOn, m_ownership})
        connect(c, &QComboBox::currentIndexChanged, this, &CostView::recompute);
    for (QDoubleSpinBox* sp : {m_tokensPerDay, m_baseline, m_utilisation, m_years, m_electricity, m_pue})
        connect(sp, &QDoubleSpinBox::editingFinished, this, &CostView::recompute);
    connect(&m_wb, &Workbench::comparedRunsChanged, this, &CostView::recompute);
    connect(&m_wb, &Workbench::resultsChanged, this, &CostView::recompute);
    recompute();
}

core::ReportTcoInputs CostView::tcoInputs() const {
    core::ReportTcoInputs t;
    t.hardwareId = m_hardware->currentData().toString().toStdString();
    if (const QString m = m_measuredOn->currentData().toString(); !m.isEmpty()) t.measuredOnId = m.toStdString();
    if (m_tokensPerDay->value() > 0) t.tokensPerDay = m_tokensPerDay->value();
    if (m_baseline->value() > 0 && t.tokensPerDay) t.baselineUsdPerMtok = m_baseline->value();
    t.assumptions.mode = m_ownership->currentData().toString() == "rent" ? core::Ownership::Rent : core::Ownership::Buy;
    t.assumptions.utilisation = m_utilisation->value();
    t.assumptions.years = m_years->value();
    t.assumptions.electricityUsdPerKwh = m_electricity->value();
    t.assumptions.pue = m_pue->value();
    return t;
}

QString CostView::summaryText() const { return m_summary->text(); }

QString CostView::tableCell(const QString& rowLabel, int side) const {
    for (int r = 0; r < m_table->rowCount(); ++r)
        if (m_table->item(r, 0) && m_table->item(r, 0)->text() == rowLabel && m_table->item(r, 1 + side))
            return m_table->item(r, 1 + side)->text();
    return {};
}
bool CostView::hasCurves() const { return m_chart->hasChart(); }

void CostView::recompute() {
    QSettings s;
    s.setValue("cost/hardware", m_hardware->currentData());
    s.setValue("cost/tokensPerDay", m_tokensPerDay->value());
    s.setValue("cost/baseline", m_baseline->value());
    emit inputsChanged();
    m_table->setRowCount(0);
    m_assumptions->setRowCount(0);
    if (m_wb.runA() <= 0 || m_wb.runB() <= 0) {
        m_summary->setText(tr("Choose two runs above (or run a suite on A and B): the cost uses the throughput they "
                              "and their sweeps measured."));
        m_chart->setChart(nullptr);
        return;
    }
    auto db = m_wb.openDb();
    if (!db) return;
    core::ReportRequest req;
    req.runA = m_wb.runA();
    req.runB = m_wb.runB();
    req.tco = tcoInputs();
    auto data = core::buildReportData(*db, req);
    if (!data) {
        m_summary->setText(QString::fromStdString(data.error().message));
        m_chart->setChart(nullptr);
        return;
    }
    const core::ReportCost& c = data->cost;
    if (!c.missing.empty()) {
        m_summary->setText(QString::fromStdString(c.missing));
        m_chart->setChart(nullptr);
        return;
    }
    auto rows = std::vector<std::pair<QString, std::pair<QString, QString>>>{};
    auto both = [&](const QString& label, auto fn) {
        rows.push_back({label, {fn(c.a), fn(c.b)}});
    };
    auto missingOr = [](const core::ReportCostModel& m, const QString& v) {
        return m.missing.empty() ? v : QString::fromStdString(m.missing);
    };
    both(tr("Model"), [&](const core::ReportCostModel& m) { return QString::fromStdString(&m == &c.a ? data->a.label : data->b.label); });
    both(tr("Throughput used"), [&](const core::ReportCostModel& m) {
        return missingOr(m, tr("%1 tok/s%2 — %3")
                                .arg(m.throughputTokPerS, 0, 'f', 1)
                                .arg(m.estimated ? tr(" (ESTIMATED: projected)") : tr(" (measured)"))
                                .arg(QString::fromStdString(m.throughputSource)));
    });
    both(tr("$ per 1M tokens"), [&](const core::ReportCostModel& m) { return missingOr(m, usd(m.device.usdPerMtok)); });
    both(tr("Cost per device-hour"), [&](const core::ReportCostModel& m) { return missingOr(m, usd(m.device.hourlyUsd)); });
    both(tr("Devices for the volume"), [&](const core::ReportCostModel& m) {
        return m.fleet ? QString::number(m.fleet->devices) : QString("—");
    });
    both(tr("Monthly cost"), [&](const core::ReportCostModel& m) { return m.fleet ? usd(m.fleet->monthlyUsd) : QString("—"); });
    both(tr("3-year TCO"), [&](const core::ReportCostModel& m) { return m.fleet ? usd(m.fleet->tco3yUsd) : QString("—"); });
    both(tr("Payback vs the API"), [&](const core::ReportCostModel& m) {
        if (!m.baseline) return QString("—");
        if (!m.baseline->paybackMonths) return tr("never (the API is cheaper)");
        return tr("%1 months").arg(*m.baseline->paybackMonths, 0, 'f', 1);
    });
    both(tr("NPV vs the API"), [&](const core::ReportCostModel& m) { return m.baseline ? usd(m.baseline->npvUsd) : QString("—"); });
    m_table->setRowCount(int(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) {
        m_table->setItem(int(i), 0, new QTableWidgetItem(rows[i].first));
        m_table->setItem(int(i), 1, new QTableWidgetItem(rows[i].second.first));
        m_table->setItem(int(i), 2, new QTableWidgetItem(rows[i].second.second));
    }
    m_assumptions->setRowCount(int(c.assumptionRows.size()));
    for (size_t i = 0; i < c.assumptionRows.size(); ++i)
        for (size_t j = 0; j < c.assumptionRows[i].size() && j < 3; ++j)
            m_assumptions->setItem(int(i), int(j), new QTableWidgetItem(QString::fromStdString(c.assumptionRows[i][j])));
    m_chart->setChart(render::costChart(*data));
    QString summary = tr("On %1: A costs %2, B costs %3 per 1M output tokens.")
                          .arg(QString::fromStdString(c.hardwareName.empty() ? c.hardwareId : c.hardwareName))
                          .arg(c.a.missing.empty() ? usd(c.a.device.usdPerMtok) : tr("?"))
                          .arg(c.b.missing.empty() ? usd(c.b.device.usdPerMtok) : tr("?"));
    if (c.a.estimated || c.b.estimated) summary += tr(" Figures marked ESTIMATED are projected from the measuring device.");
    if (render::costCurvesOverlap(*data)) summary += tr(" A and B cost the same: their curves overlap (B dashed over A).");
    m_summary->setText(summary);
}

}  // namespace verdict::ui
