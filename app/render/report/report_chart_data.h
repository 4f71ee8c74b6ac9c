// From the report's data to the chart builders' inputs (charts/report_charts.h). The window's
// Decision and Performance screens use these with the same ReportData the report uses, so the
// charts on screen and in the PDF are drawn from the same numbers.
#pragma once

#include "charts/chart_series.h"
#include "core/report/report_types.h"

#include <QStringList>

class QChart;

namespace verdict::render {

// Category names ("overall" first) and one bar set per model in percent with Wilson whiskers.
QStringList accuracyCategories(const core::ReportAccuracy& accuracy);
QList<BarSeriesData> accuracyBars(const core::ReportData& data);

// TTFT P50 (ms) by prompt length at batch 1, one line per model with data.
QList<XYSeries> ttftLines(const core::ReportData& data);
// Output tok/s by batch; `bounds` receives the roofline decode bounds (when stored).
QList<XYSeries> throughputLines(const core::ReportData& data, QList<XYSeries>* bounds);
// Percentile labels and the values (ms) at each model's reference point.
QStringList percentileLabels();
QList<BarSeriesData> percentileBars(const core::ReportData& data);
// Bar labels and the parts (weights, KV cache, scratch) in MiB at each model's largest point.
QStringList memoryLabels(const core::ReportData& data);
QList<BarSeriesData> memoryParts(const core::ReportData& data);
// Cumulative cost (US$) by month for A, B and the API baseline (when given). When A's and B's
// curves coincide (costCurvesOverlap), B is drawn dashed over A and its name says so, so neither
// hides the other.
QList<XYSeries> costLines(const core::ReportData& data);
// A's and B's cumulative costs agree within 0.5 % of the larger at every month.
bool costCurvesOverlap(const core::ReportData& data);

// The six charts built from `data` (nullptr where the data is missing).
QChart* accuracyChart(const core::ReportData& data);
QChart* ttftChart(const core::ReportData& data);
QChart* throughputChart(const core::ReportData& data);
QChart* percentilesChart(const core::ReportData& data);
QChart* memoryChart(const core::ReportData& data);
QChart* costChart(const core::ReportData& data);

}  // namespace verdict::render
