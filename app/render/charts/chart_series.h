// Plain inputs of the chart builders (report_charts.h): numbers with their names, no core types,
// so the window's views and the report feed the same builders. Charts never own data.
#pragma once

#include <QList>
#include <QPointF>
#include <QString>
#include <QStringList>

namespace verdict::render {

// One line: (x, y) points in x order.
struct XYSeries {
    QString name;
    QList<QPointF> points;
    bool dashed = false;   // e.g. a roofline bound or an estimate
    int colorIndex = 0;    // 0 = model A's colour, 1 = model B's, 2+ = neutral
};

// One bar set across categories; lo/hi (optional, same length as values) draw interval whiskers.
struct BarSeriesData {
    QString name;
    QList<double> values;
    QList<double> lo, hi;
    int colorIndex = 0;
};

}  // namespace verdict::render
