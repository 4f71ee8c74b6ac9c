#include "report/report_blocks.h"

#include "core/report/report_format.h"

#include <algorithm>
#include <cstdio>

namespace verdict::render::report_blocks {

QString q(const std::string& s) { return QString::fromStdString(s); }

QString fmt(const char* f, double v) {
    char buf[96];
    std::snprintf(buf, sizeof buf, f, v);
    return QString::fromUtf8(buf);
}

QString ci(const core::AccuracyCell& c) {
    if (c.n == 0) return QString::fromUtf8(core::kDash);
    return q(core::formatPercent(c.accuracy)) + QString(" [%1\u2013%2] (%3/%4)")
                                                   .arg(fmt("%.1f", c.ci.lo * 100), fmt("%.1f", c.ci.hi * 100))
                                                   .arg(c.correct)
                                                   .arg(c.n);
}

QString sideName(const core::ReportModel& m) { return QString("%1: %2").arg(QChar(m.side), q(m.label)); }

DocBlock heading(const QString& text, int level) {
    DocBlock b;
    b.kind = BlockKind::Heading;
    b.level = level;
    b.text = text;
    return b;
}
DocBlock para(const QString& text, Tone tone) {
    DocBlock b;
    b.kind = BlockKind::Paragraph;
    b.text = text;
    b.tone = tone;
    return b;
}
DocBlock callout(const QString& text, Tone tone) {
    DocBlock b;
    b.kind = BlockKind::Callout;
    b.text = text;
    b.tone = tone;
    return b;
}
DocBlock bullets(const QStringList& items) {
    DocBlock b;
    b.kind = BlockKind::Bullets;
    b.items = items;
    return b;
}
DocBlock table(DocTable t) {
    DocBlock b;
    b.kind = BlockKind::Table;
    b.table = std::move(t);
    return b;
}
DocBlock chart(std::function<QChart*()> make, DocTable data, double aspect) {
    DocBlock b;
    b.kind = BlockKind::Chart;
    b.makeChart = std::move(make);
    b.chartData = std::move(data);
    b.aspect = aspect;
    return b;
}

DocTable xyTable(const QString& xName, const QList<XYSeries>& lines) {
    DocTable t;
    t.header << xName;
    QList<double> xs;
    for (const auto& s : lines) {
        t.header << s.name;
        for (const auto& p : s.points)
            if (!xs.contains(p.x())) xs << p.x();
    }
    std::sort(xs.begin(), xs.end());
    for (double x : xs) {
        QStringList row{fmt("%g", x)};
        for (const auto& s : lines) {
            QString cell = QString::fromUtf8(core::kDash);
            for (const auto& p : s.points)
                if (p.x() == x) cell = fmt("%.4g", p.y());
            row << cell;
        }
        t.rows << row;
    }
    return t;
}

DocTable barTable(const QString& catName, const QStringList& cats, const QList<BarSeriesData>& sets) {
    DocTable t;
    t.header << catName;
    for (const auto& s : sets) t.header << s.name;
    for (int i = 0; i < cats.size(); ++i) {
        QStringList row{cats[i]};
        for (const auto& s : sets) {
            QString cell = i < s.values.size() ? fmt("%.4g", s.values[i]) : QString::fromUtf8(core::kDash);
            if (i < s.lo.size() && i < s.hi.size()) cell += QString(" [%1, %2]").arg(fmt("%.4g", s.lo[i]), fmt("%.4g", s.hi[i]));
            row << cell;
        }
        t.rows << row;
    }
    return t;
}

}  // namespace verdict::render::report_blocks
