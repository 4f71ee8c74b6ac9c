#include "charts/report_charts.h"

#include "charts/chart_style.h"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>

#include <QPen>

#include <algorithm>
#include <cmath>
#include <optional>

namespace verdict::render {
namespace {

// A range with some air that QValueAxis can label nicely; a single value gets +-50 %.
void setPaddedRange(QValueAxis* axis, double lo, double hi, bool fromZero) {
    if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
    const bool nonNegative = lo >= 0;  // counts, months, sizes: never pad below zero
    if (fromZero) lo = std::min(0.0, lo);
    if (hi <= lo) {
        const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.5;
        lo = fromZero ? std::min(0.0, lo - pad) : lo - pad;
        hi = hi + pad;
    } else {
        const double pad = (hi - lo) * 0.08;
        hi += pad;
        if (!fromZero) lo -= pad;
    }
    if (nonNegative) lo = std::max(0.0, lo);
    axis->setRange(lo, hi);
    axis->applyNiceNumbers();
}

QLineSeries* lineOf(const XYSeries& s) {
    auto* line = new QLineSeries;
    line->setName(s.name);
    for (const QPointF& p : s.points) line->append(p);
    QPen pen(chartColor(s.colorIndex));
    pen.setWidthF(2.0);
    if (s.dashed) pen.setStyle(Qt::DashLine);
    line->setPen(pen);
    line->setPointsVisible(!s.dashed && s.points.size() <= 12);  // markers on a long series blur it
    line->setMarkerSize(6);
    return line;
}

// Lines on value axes; x on a log2 axis when it spans a factor of 8 or more (prompt lengths,
// batch sizes grow geometrically).
QChart* lineChart(const QString& title, const QList<XYSeries>& all, const QString& xTitle, const QString& yTitle,
                  bool integerX) {
    auto* chart = new QChart;
    styleChart(chart, title);
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (const auto& s : all)
        for (const QPointF& p : s.points) {
            xmin = std::min(xmin, p.x());
            xmax = std::max(xmax, p.x());
            ymin = std::min(ymin, p.y());
            ymax = std::max(ymax, p.y());
        }
    QAbstractAxis* xAxis = nullptr;
    if (xmin > 0 && xmax / xmin >= 8) {
        auto* log = new QLogValueAxis;
        log->setBase(2);
        log->setLabelFormat(integerX ? "%.0f" : "%g");
        log->setRange(xmin / 1.3, xmax * 1.3);
        xAxis = log;
    } else {
        auto* lin = new QValueAxis;
        setPaddedRange(lin, xmin, xmax, false);
        if (integerX) lin->setLabelFormat("%.0f");
        xAxis = lin;
    }
    auto* yAxis = new QValueAxis;
    setPaddedRange(yAxis, ymin, ymax, true);
    yAxis->setLabelFormat("%.6g");
    styleAxis(xAxis, xTitle);
    styleAxis(yAxis, yTitle);
    chart->addAxis(xAxis, Qt::AlignBottom);
    chart->addAxis(yAxis, Qt::AlignLeft);
    for (const auto& s : all) {
        if (s.points.isEmpty()) continue;
        QLineSeries* line = lineOf(s);
        chart->addSeries(line);
        line->attachAxis(xAxis);
        line->attachAxis(yAxis);
        if (s.points.size() == 1) {
            // A single point draws no line: show it as a marker.
            auto* dot = new QScatterSeries;
            dot->append(s.points.front());
            dot->setColor(chartColor(s.colorIndex));
            dot->setMarkerSize(9);
            dot->setBorderColor(chartColor(s.colorIndex));
            chart->addSeries(dot);
            dot->attachAxis(xAxis);
            dot->attachAxis(yAxis);
            for (auto* m : chart->legend()->markers(dot)) m->setVisible(false);
        }
    }
    return chart;
}

QBarSet* barSetOf(const BarSeriesData& s) {
    auto* set = new QBarSet(s.name);
    for (double v : s.values) set->append(v);
    set->setColor(chartColor(s.colorIndex));
    set->setBorderColor(chartColor(s.colorIndex).darker(120));
    return set;
}

QChart* groupedBars(const QString& title, const QStringList& categories, const QList<BarSeriesData>& sets,
                    const QString& yTitle, std::optional<double> yMax) {
    auto* chart = new QChart;
    styleChart(chart, title);
    auto* bars = new QBarSeries;
    bars->setBarWidth(0.7);
    double top = 0;
    for (const auto& s : sets) {
        bars->append(barSetOf(s));
        for (double v : s.values) top = std::max(top, v);
        for (double v : s.hi) top = std::max(top, v);
    }
    chart->addSeries(bars);
    auto* xAxis = new QBarCategoryAxis;
    xAxis->append(categories);
    auto* yAxis = new QValueAxis;
    if (yMax) yAxis->setRange(0, *yMax);
    else setPaddedRange(yAxis, 0, top, true);
    yAxis->setLabelFormat("%.6g");
    styleAxis(xAxis, QString());
    styleAxis(yAxis, yTitle);
    chart->addAxis(xAxis, Qt::AlignBottom);
    chart->addAxis(yAxis, Qt::AlignLeft);
    bars->attachAxis(xAxis);
    bars->attachAxis(yAxis);

    // Interval whiskers: a vertical line at each bar's centre. With n sets sharing barWidth w,
    // set k of category i is centred at i - w/2 + (k + 0.5) w / n (Qt Charts' bar layout).
    const double w = bars->barWidth();
    const int n = static_cast<int>(sets.size());
    for (int k = 0; k < n; ++k) {
        const auto& s = sets[k];
        if (s.lo.size() != s.values.size() || s.hi.size() != s.values.size()) continue;
        for (int i = 0; i < s.values.size(); ++i) {
            const double x = i - w / 2 + (k + 0.5) * w / n;
            const double cap = w / n * 0.2;
            auto* whisker = new QLineSeries;
            whisker->append(x - cap, s.lo[i]);
            whisker->append(x + cap, s.lo[i]);
            whisker->append(x, s.lo[i]);
            whisker->append(x, s.hi[i]);
            whisker->append(x - cap, s.hi[i]);
            whisker->append(x + cap, s.hi[i]);
            QPen pen(QColor(0x33, 0x33, 0x33));
            pen.setWidthF(1.2);
            whisker->setPen(pen);
            chart->addSeries(whisker);
            // The category axis maps category i to x = i, so lines share the bars' x scale.
            whisker->attachAxis(xAxis);
            whisker->attachAxis(yAxis);
            for (auto* m : chart->legend()->markers(whisker)) m->setVisible(false);
        }
    }
    return chart;
}

}  // namespace

QChart* makeAccuracyByCategoryChart(const QStringList& categories, const QList<BarSeriesData>& models) {
    return groupedBars(QObject::tr("Accuracy by category (Wilson 95 % intervals)"), categories, models,
                       QObject::tr("Accuracy (%)"), 100.0);
}

QChart* makeTtftByPromptChart(const QList<XYSeries>& models) {
    return lineChart(QObject::tr("Time to first token vs prompt length (batch 1, P50)"), models,
                     QObject::tr("Prompt length (tokens)"), QObject::tr("TTFT (ms)"), true);
}

QChart* makeThroughputByBatchChart(const QList<XYSeries>& models, const QList<XYSeries>& bounds) {
    QList<XYSeries> all = models;
    for (XYSeries b : bounds) {
        b.dashed = true;
        all.push_back(b);
    }
    return lineChart(QObject::tr("Output throughput vs batch size, with the roofline bound"), all,
                     QObject::tr("Batch size (concurrent sequences)"), QObject::tr("Output (tokens/s)"), true);
}

QChart* makeLatencyPercentilesChart(const QStringList& percentiles, const QList<BarSeriesData>& models) {
    return groupedBars(QObject::tr("Latency percentiles at the reference point"), percentiles, models,
                       QObject::tr("Latency (ms)"), std::nullopt);
}

QChart* makeMemoryBreakdownChart(const QStringList& models, const QList<BarSeriesData>& parts) {
    auto* chart = new QChart;
    styleChart(chart, QObject::tr("Memory breakdown at the largest measured point"));
    auto* bars = new QStackedBarSeries;
    bars->setBarWidth(0.5);
    QList<double> totals(models.size(), 0.0);
    for (const auto& p : parts) {
        bars->append(barSetOf(p));
        for (int i = 0; i < p.values.size() && i < totals.size(); ++i) totals[i] += p.values[i];
    }
    chart->addSeries(bars);
    auto* xAxis = new QBarCategoryAxis;
    xAxis->append(models);
    auto* yAxis = new QValueAxis;
    setPaddedRange(yAxis, 0, totals.isEmpty() ? 1 : *std::max_element(totals.begin(), totals.end()), true);
    yAxis->setLabelFormat("%.6g");
    styleAxis(xAxis, QString());
    styleAxis(yAxis, QObject::tr("Memory (MiB)"));
    chart->addAxis(xAxis, Qt::AlignBottom);
    chart->addAxis(yAxis, Qt::AlignLeft);
    bars->attachAxis(xAxis);
    bars->attachAxis(yAxis);
    return chart;
}

QChart* makeCumulativeCostChart(const QList<XYSeries>& lines) {
    return lineChart(QObject::tr("Cumulative cost over 3 years (purchase up front, then monthly costs)"), lines,
                     QObject::tr("Month"), QObject::tr("Cumulative cost (US$)"), true);
}

}  // namespace verdict::render
