#include "charts/chart_style.h"

#include <QtCharts/QAbstractAxis>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>

namespace verdict::render {

QColor chartColor(int index) {
    static const QColor kColors[] = {QColor(0x1f, 0x6f, 0xb4), QColor(0xe0, 0x7b, 0x10), QColor(0x4d, 0x9a, 0x4d),
                                     QColor(0x88, 0x88, 0x88), QColor(0x9b, 0x59, 0xb6)};
    const int n = static_cast<int>(sizeof kColors / sizeof kColors[0]);
    return kColors[((index % n) + n) % n];
}

QFont reportFont(double pointSize, bool bold) {
    QFont f;
    f.setFamilies({QStringLiteral("DejaVu Sans"), QStringLiteral("Noto Sans CJK SC"), QStringLiteral("Noto Sans CJK JP")});
    f.setPointSizeF(pointSize);
    f.setBold(bold);
    f.setStyleHint(QFont::SansSerif);
    return f;
}

QFont chartFont(int pixelSize, bool bold) {
    QFont f = reportFont(10, bold);
    f.setPixelSize(pixelSize);
    return f;
}

void styleChart(QChart* chart, const QString& title) {
    chart->setTheme(QChart::ChartThemeLight);
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setTitle(title);
    chart->setTitleFont(chartFont(13, true));
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->legend()->setFont(chartFont(11));
    chart->legend()->setVisible(true);
}

void styleAxis(QAbstractAxis* axis, const QString& title) {
    axis->setTitleText(title);
    axis->setTitleFont(chartFont(11, true));
    axis->setLabelsFont(chartFont(10));
    axis->setGridLineColor(QColor(0xdd, 0xdd, 0xdd));
}

}  // namespace verdict::render
