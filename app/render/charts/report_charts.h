// Chart builders shared by the report (report/ draws them into PDF/SVG) and the window's
// Performance, Cost and Suites screens. Each returns a new, styled QChart the caller owns (put it
// in a QChartView, or render it with chart_render.h). Axis titles carry the units.
#pragma once

#include "charts/chart_series.h"

#include <QStringList>

class QChart;

namespace verdict::render {

// Accuracy per category, one bar per model and category, in percent (0..100), with Wilson
// interval whiskers when lo/hi are given (also in percent).
QChart* makeAccuracyByCategoryChart(const QStringList& categories, const QList<BarSeriesData>& models);

// Time to first token (ms, y) against prompt length (tokens, x), one line per model.
QChart* makeTtftByPromptChart(const QList<XYSeries>& models);

// Output tokens/s (y) against batch size (x); `bounds` are the roofline (memory-bandwidth)
// decode bounds, drawn dashed in the model's colour.
QChart* makeThroughputByBatchChart(const QList<XYSeries>& models, const QList<XYSeries>& bounds);

// Latency percentiles (ms) as grouped bars: one category per percentile label
// ("TTFT P50", ..., "E2E P99"), one bar set per model.
QChart* makeLatencyPercentilesChart(const QStringList& percentiles, const QList<BarSeriesData>& models);

// Memory breakdown (MiB) as stacked bars, one bar per model (`models` are the bar labels); each
// part (weights, KV cache, scratch) is one BarSeriesData with one value per model.
QChart* makeMemoryBreakdownChart(const QStringList& models, const QList<BarSeriesData>& parts);

// Cumulative cost in US$ (y) by month (x), one line per model and the API baseline (dashed).
QChart* makeCumulativeCostChart(const QList<XYSeries>& lines);

}  // namespace verdict::render
