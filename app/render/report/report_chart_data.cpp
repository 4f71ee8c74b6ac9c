#include "report/report_chart_data.h"

#include "charts/report_charts.h"

#include <QObject>

#include <algorithm>
#include <cmath>

namespace verdict::render {
namespace {

QString sideName(const core::ReportModel& m) { return QString("%1: %2").arg(QChar(m.side), QString::fromStdString(m.label)); }

bool hasPerf(const core::ReportPerf& p) { return p.missing.empty() && !p.points.empty(); }

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

QStringList accuracyCategories(const core::ReportAccuracy& acc) {
    QStringList c{QObject::tr("overall")};
    if (acc.refused) return c;
    for (const auto& [name, cell] : acc.a.byCategory) c << (name.empty() ? QObject::tr("(none)") : QString::fromStdString(name));
    for (const auto& [name, cell] : acc.b.byCategory)
        if (!acc.a.byCategory.count(name)) c << (name.empty() ? QObject::tr("(none)") : QString::fromStdString(name));
    return c;
}

QList<BarSeriesData> accuracyBars(const core::ReportData& d) {
    QList<BarSeriesData> out;
    if (d.accuracy.refused) return out;
    const QStringList cats = accuracyCategories(d.accuracy);
    for (int k = 0; k < 2; ++k) {
        const core::AccuracySummary& s = k == 0 ? d.accuracy.a : d.accuracy.b;
        BarSeriesData bars;
        bars.name = sideName(k == 0 ? d.a : d.b);
        bars.colorIndex = k;
        for (int i = 0; i < cats.size(); ++i) {
            core::AccuracyCell cell = s.overall;
            if (i > 0) {
                std::string key = cats[i] == QObject::tr("(none)") ? std::string() : cats[i].toStdString();
                auto it = s.byCategory.find(key);
                cell = it != s.byCategory.end() ? it->second : core::AccuracyCell{};
            }
            bars.values << cell.accuracy * 100;
            bars.lo << (cell.n > 0 ? cell.ci.lo * 100 : 0);
            bars.hi << (cell.n > 0 ? cell.ci.hi * 100 : 0);
        }
        out << bars;
    }
    return out;
}

QList<XYSeries> ttftLines(const core::ReportData& d) {
    QList<XYSeries> out;
    int k = 0;
    for (const auto* perf : {&d.perfA, &d.perfB}) {
        const auto& m = k == 0 ? d.a : d.b;
        if (hasPerf(*perf) && !perf->ttftSeries.empty()) {
            XYSeries s{sideName(m), {}, false, k};
            for (size_t i : perf->ttftSeries)
                s.points << QPointF(static_cast<double>(perf->points[i].promptTokens), perf->points[i].ttftP50);
            out << s;
        }
        ++k;
    }
    return out;
}

QList<XYSeries> throughputLines(const core::ReportData& d, QList<XYSeries>* bounds) {
    QList<XYSeries> out;
    int k = 0;
    for (const auto* perf : {&d.perfA, &d.perfB}) {
        const auto& m = k == 0 ? d.a : d.b;
        if (hasPerf(*perf) && !perf->throughputSeries.empty()) {
            XYSeries s{sideName(m), {}, false, k};
            XYSeries b{QObject::tr("%1 roofline bound").arg(QChar(m.side)), {}, true, k};
            for (size_t i : perf->throughputSeries) {
                const auto& p = perf->points[i];
                s.points << QPointF(static_cast<double>(p.batch), p.outputTokPerS);
                if (p.rooflineBoundTokPerS) b.points << QPointF(static_cast<double>(p.batch), *p.rooflineBoundTokPerS);
            }
            out << s;
            if (bounds && !b.points.isEmpty()) *bounds << b;
        }
        ++k;
    }
    return out;
}

QStringList percentileLabels() {
    return {"TTFT P50", "TTFT P90", "TTFT P99", "E2E P50", "E2E P90", "E2E P95", "E2E P99"};
}

QList<BarSeriesData> percentileBars(const core::ReportData& d) {
    QList<BarSeriesData> out;
    int k = 0;
    for (const auto* perf : {&d.perfA, &d.perfB}) {
        const auto& m = k == 0 ? d.a : d.b;
        if (hasPerf(*perf) && perf->reference) {
            const auto& p = perf->points[*perf->reference];
            BarSeriesData b;
            b.name = sideName(m);
            b.colorIndex = k;
            b.values = {p.ttftP50, p.ttftP90, p.ttftP99, p.e2eP50, p.e2eP90, p.e2eP95, p.e2eP99};
            out << b;
        }
        ++k;
    }
    return out;
}

QStringList memoryLabels(const core::ReportData& d) {
    QStringList out;
    if (hasPerf(d.perfA) && d.perfA.largest) out << sideName(d.a);
    if (hasPerf(d.perfB) && d.perfB.largest) out << sideName(d.b);
    return out;
}

QList<BarSeriesData> memoryParts(const core::ReportData& d) {
    BarSeriesData w{QObject::tr("Weights"), {}, {}, {}, 2}, kv{QObject::tr("KV cache"), {}, {}, {}, 4},
        scratch{QObject::tr("Scratch"), {}, {}, {}, 3};
    for (const auto* perf : {&d.perfA, &d.perfB}) {
        if (!hasPerf(*perf) || !perf->largest) continue;
        const auto& p = perf->points[*perf->largest];
        w.values << p.weightsBytes / kMiB;
        kv.values << p.kvBytes / kMiB;
        scratch.values << p.scratchBytes / kMiB;
    }
    if (w.values.isEmpty()) return {};
    return {w, kv, scratch};
}

bool costCurvesOverlap(const core::ReportData& d) {
    const auto& a = d.cost.a.cumulativeUsd;
    const auto& b = d.cost.b.cumulativeUsd;
    if (!d.cost.missing.empty() || !d.cost.a.missing.empty() || !d.cost.b.missing.empty() || a.empty() || a.size() != b.size())
        return false;
    double scale = 0;
    for (size_t i = 0; i < a.size(); ++i) scale = std::max({scale, std::fabs(a[i]), std::fabs(b[i])});
    for (size_t i = 0; i < a.size(); ++i)
        if (std::fabs(a[i] - b[i]) > 0.005 * scale) return false;
    return true;
}

QList<XYSeries> costLines(const core::ReportData& d) {
    QList<XYSeries> out;
    if (!d.cost.missing.empty()) return out;
    const bool overlap = costCurvesOverlap(d);
    int k = 0;
    for (const auto* c : {&d.cost.a, &d.cost.b}) {
        const auto& m = k == 0 ? d.a : d.b;
        if (c->missing.empty() && !c->cumulativeUsd.empty()) {
            XYSeries s{sideName(m) + (c->estimated ? QObject::tr(" (estimated)") : QString()), {}, false, k};
            if (overlap && k == 1) {
                s.dashed = true;  // drawn over A's solid line: both stay visible
                s.name += QObject::tr(" (same cost as A: the lines overlap)");
            }
            for (size_t i = 0; i < c->cumulativeUsd.size(); ++i) s.points << QPointF(static_cast<double>(i), c->cumulativeUsd[i]);
            out << s;
        }
        ++k;
    }
    if (!d.cost.baselineCumulativeUsd.empty()) {
        XYSeries s{QObject::tr("Hosted API baseline"), {}, true, 3};
        for (size_t i = 0; i < d.cost.baselineCumulativeUsd.size(); ++i)
            s.points << QPointF(static_cast<double>(i), d.cost.baselineCumulativeUsd[i]);
        out << s;
    }
    return out;
}

QChart* accuracyChart(const core::ReportData& d) {
    auto bars = accuracyBars(d);
    return bars.isEmpty() ? nullptr : makeAccuracyByCategoryChart(accuracyCategories(d.accuracy), bars);
}
QChart* ttftChart(const core::ReportData& d) {
    auto lines = ttftLines(d);
    return lines.isEmpty() ? nullptr : makeTtftByPromptChart(lines);
}
QChart* throughputChart(const core::ReportData& d) {
    QList<XYSeries> bounds;
    auto lines = throughputLines(d, &bounds);
    return lines.isEmpty() ? nullptr : makeThroughputByBatchChart(lines, bounds);
}
QChart* percentilesChart(const core::ReportData& d) {
    auto bars = percentileBars(d);
    return bars.isEmpty() ? nullptr : makeLatencyPercentilesChart(percentileLabels(), bars);
}
QChart* memoryChart(const core::ReportData& d) {
    auto parts = memoryParts(d);
    return parts.isEmpty() ? nullptr : makeMemoryBreakdownChart(memoryLabels(d), parts);
}
QChart* costChart(const core::ReportData& d) {
    auto lines = costLines(d);
    return lines.isEmpty() ? nullptr : makeCumulativeCostChart(lines);
}

}  // namespace verdict::render
