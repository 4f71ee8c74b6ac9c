// Decision screen: every criterion side by side (accuracy overall and per category, TTFT,
// tokens/s, P99, memory, $/1M tokens, license, context, parameters) with the winner per row,
// the user's weights -> the recommendation and its reasons, the five-question checklist, and
// Export report… (PDF, HTML or Markdown: the same document `verdict report` writes).
#pragma once

#include "core/report/report_types.h"

#include <QWidget>

#include <map>
#include <optional>
#include <string>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QTableWidget;

namespace verdict::ui {

class Workbench;
class CostView;
class ChartPanel;

class DecisionView : public QWidget {
    Q_OBJECT
public:
    DecisionView(Workbench& workbench, CostView& cost, QWidget* parent = nullptr);

    void refresh();
    // Asks for a file name, then exports.
    void exportReport();
    // Writes the report to `path` (format from the extension). False with the reason shown.
    bool exportReportTo(const QString& path);
    QString recommendationText() const;
    int decisionRows() const;
    const std::optional<core::ReportData>& data() const { return m_data; }
    // The `verdict report` command recorded in the last exported report (re-makes it).
    QString lastCommandLine() const { return m_lastCommand; }

private:
    core::ReportRequest request() const;

    Workbench& m_wb;
    CostView& m_cost;
    std::map<std::string, QDoubleSpinBox*> m_weights;
    QDoubleSpinBox* m_slaTtft;
    QDoubleSpinBox* m_slaTpot;
    QCheckBox* m_gateSignificant;
    QDoubleSpinBox* m_gateMinAccuracy;
    QLabel* m_headline;
    QLabel* m_reasons;
    QTableWidget* m_table;
    QTableWidget* m_checklist;
    ChartPanel* m_accuracy;
    std::optional<core::ReportData> m_data;
    QString m_lastCommand;
};

}  // namespace verdict::ui
