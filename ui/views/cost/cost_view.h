// Cost screen: a hardware profile (the catalog: price, power, bandwidth, each with its source)
// and the workload (tokens per day, hosted-API price to beat, utilisation, years, electricity)
// -> $/1M tokens, monthly cost, 3-year TCO curves and payback for A and B, computed by the same
// cost model as `verdict tco` / `verdict report` from the throughput the runs and sweeps measured.
// Figures projected to a device other than the one measured are marked as estimates.
#pragma once

#include "core/report/report_types.h"

#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QTableWidget;

namespace verdict::ui {

class Workbench;
class ChartPanel;

class CostView : public QWidget {
    Q_OBJECT
public:
    explicit CostView(Workbench& workbench, QWidget* parent = nullptr);

    // The inputs as the report takes them (also used by the Decision screen and the export).
    core::ReportTcoInputs tcoInputs() const;
    void recompute();
    QString summaryText() const;
    // The comparison table's text in the row labelled `rowLabel` for A (side 0) or B (1); "" if none.
    QString tableCell(const QString& rowLabel, int side) const;
    bool hasCurves() const;

signals:
    void inputsChanged();

private:
    Workbench& m_wb;
    QComboBox* m_hardware;
    QComboBox* m_measuredOn;
    QComboBox* m_ownership;
    QDoubleSpinBox* m_tokensPerDay;
    QDoubleSpinBox* m_baseline;
    QDoubleSpinBox* m_utilisation;
    QDoubleSpinBox* m_years;
    QDoubleSpinBox* m_electricity;
    QDoubleSpinBox* m_pue;
    QLabel* m_summary;
    QTableWidget* m_table;
    QTableWidget* m_assumptions;
    ChartPanel* m_chart;
};

}  // namespace verdict::ui
