#include "widgets/chart_panel.h"

#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLegend>
#include <QStackedLayout>

namespace verdict::ui {

namespace {

// The chart builders draw for paper (the report). On a dark desktop palette the window's copy
// takes the palette's background and text colours; the series keep their A/B colours.
void adaptToPalette(QChart* chart, const QPalette& palette) {
    if (palette.color(QPalette::Window).lightness() >= 128) return;
    const QColor text = palette.color(QPalette::WindowText);
    chart->setBackgroundBrush(palette.color(QPalette::Base));
    chart->setTitleBrush(text);
    chart->legend()->setLabelColor(text);
    for (QAbstractAxis* axis : chart->axes()) {
        axis->setLabelsColor(text);
        axis->setTitleBrush(text);
        axis->setGridLineColor(palette.color(QPalette::Mid));
        axis->setLinePenColor(palette.color(QPalette::Mid));
    }
}

}  // namespace

ChartPanel::ChartPanel(const QString& emptyText, QWidget* parent) : QWidget(parent), m_emptyText(emptyText) {
    m_stack = new QStackedLayout(this);
    m_empty = new QLabel(emptyText);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->setFrameShape(QFrame::StyledPanel);
    m_view = new QChartView;
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumSize(320, 220);
    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_view);
}

void ChartPanel::setChart(QChart* chart, const QString& why) {
    QChart* old = m_view->chart();
    if (chart) {
        adaptToPalette(chart, palette());
        m_view->setChart(chart);  // the view takes ownership
        m_stack->setCurrentWidget(m_view);
    } else {
        m_view->setChart(new QChart);
        m_empty->setText(why.isEmpty() ? m_emptyText : why);
        m_stack->setCurrentWidget(m_empty);
    }
    delete old;  // setChart does not delete the previous chart
}

QChart* ChartPanel::chart() const {
    return m_stack->currentWidget() == m_view ? m_view->chart() : nullptr;
}

}  // namespace verdict::ui
