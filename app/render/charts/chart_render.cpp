#include "charts/chart_render.h"

#include <QtCharts/QChart>
#include <QGraphicsLayout>

#include <QBuffer>
#include <QGraphicsScene>
#include <QPainter>
#include <QSvgGenerator>

namespace verdict::render {
namespace {

// The chart lives in a scene only while it is drawn; the scene must not delete it.
class SceneGuard {
public:
    SceneGuard(QChart* chart, const QSizeF& size) : m_chart(chart) {
        m_scene.addItem(chart);
        chart->setGeometry(QRectF(QPointF(0, 0), size));
        chart->layout()->activate();
        m_scene.setSceneRect(QRectF(QPointF(0, 0), size));
    }
    ~SceneGuard() { m_scene.removeItem(m_chart); }
    QGraphicsScene& scene() { return m_scene; }

private:
    QChart* m_chart;
    QGraphicsScene m_scene;
};

}  // namespace

void renderChart(QChart* chart, QPainter* painter, const QRectF& target) {
    // Lay out at a fixed logical size (points), then scale into the target: fonts and line widths
    // keep the proportions they have on screen whatever the device resolution.
    const QSizeF logical(target.width() / target.height() * 300.0, 300.0);
    SceneGuard guard(chart, logical);
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, true);
    guard.scene().render(painter, target, QRectF(QPointF(0, 0), logical), Qt::KeepAspectRatio);
    painter->restore();
}

QByteArray chartToSvg(QChart* chart, const QSizeF& size) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(size.toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), size));
    svg.setTitle(chart->title());
    {
        SceneGuard guard(chart, size);
        QPainter painter(&svg);
        painter.setRenderHint(QPainter::Antialiasing, true);
        guard.scene().render(&painter, QRectF(QPointF(0, 0), size), QRectF(QPointF(0, 0), size));
    }
    return bytes;
}

}  // namespace verdict::render
