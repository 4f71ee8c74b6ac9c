// Drawing a QChart outside a window: into any QPainter (the PDF writer: vectors, not pixels), into
// SVG text (the HTML report), or into a PNG. Needs a QApplication (Qt Charts are graphics widgets);
// the CLI creates one with the offscreen platform when there is no display.
#pragma once

#include <QByteArray>
#include <QRectF>
#include <QSizeF>

class QChart;
class QPainter;

namespace verdict::render {

// Lays the chart out at `target`'s size (in the painter's units) and renders it there. Takes
// ownership of nothing; the chart may be reused afterwards.
void renderChart(QChart* chart, QPainter* painter, const QRectF& target);

// The chart as an SVG document of `size` (CSS pixels), via QSvgGenerator: vectors, scalable.
QByteArray chartToSvg(QChart* chart, const QSizeF& size);

}  // namespace verdict::render
