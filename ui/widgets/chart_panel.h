// A chart view that takes a freshly built QChart (charts/report_charts.h) and owns it, with a
// placeholder text when there is no data. Charts never own data: they are rebuilt from core
// results whenever those change.
#pragma once

#include <QWidget>

class QChart;
class QChartView;
class QLabel;
class QStackedLayout;


namespace verdict::ui {

class ChartPanel : public QWidget {
    Q_OBJECT
public:
    explicit ChartPanel(const QString& emptyText, QWidget* parent = nullptr);
    // Takes ownership; null shows the placeholder (with `why` when given).
    void setChart(QChart* chart, const QString& why = {});
    QChart* chart() const;
    bool hasChart() const { return chart() != nullptr; }

private:
    QStackedLayout* m_stack;
    QLabel* m_empty;
    QChartView* m_view;
    QString m_emptyText;
};

}  // namespace verdict::ui
