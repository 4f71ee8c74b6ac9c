// The look every Verdict chart shares: the A/B colours, a font with a CJK fallback, axis titles with
// units, legend at the bottom. Used by report_charts.cpp; the window's chart views use it too.
#pragma once

#include <QColor>
#include <QFont>
#include <QString>

class QChart;
class QAbstractAxis;

namespace verdict::render {

// 0: model A (blue), 1: model B (orange), 2+: neutral greys/greens.
QColor chartColor(int index);
// The UI/report font: DejaVu Sans, then Noto Sans CJK SC for Chinese/Japanese/Korean glyphs, at
// `pointSize`. (fonts-noto-cjk provides the fallback; packaging/install-deps.sh installs it.)
QFont reportFont(double pointSize, bool bold = false);
// The chart font: like reportFont but sized in pixels of the chart's logical layout. Charts are laid
// out once in logical pixels and scaled into a PDF, SVG or screen; point-sized fonts would be
// re-resolved at the printer's resolution and no longer match the layout.
QFont chartFont(int pixelSize, bool bold = false);
// Title, fonts, light theme, legend at the bottom, no animation (charts render once into a PDF).
void styleChart(QChart* chart, const QString& title);
// Axis title (e.g. "Prompt length (tokens)"), label font and grid colour.
void styleAxis(QAbstractAxis* axis, const QString& title);

}  // namespace verdict::render
