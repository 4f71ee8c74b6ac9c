#include "report/text_report_writers.h"

#include "charts/chart_render.h"

#include <QtCharts/QChart>

#include <memory>

namespace verdict::render {
namespace {

QString esc(const QString& s) { return s.toHtmlEscaped(); }

const char* kCss = R"(
body { font-family: "DejaVu Sans", "Noto Sans CJK SC", "Noto Sans CJK JP", sans-serif; color: #222; max-width: 60rem;
       margin: 2rem auto; padding: 0 1rem; line-height: 1.45; font-size: 15px; }
h1 { color: #1f4e79; border-bottom: 2px solid #1f4e79; padding-bottom: .2rem; margin-top: 2.5rem; }
h2 { color: #1f4e79; margin-top: 1.6rem; } h3 { margin-top: 1.2rem; }
.title { border-bottom: 3px solid #1f4e79; margin-bottom: 2rem; }
.title .kicker { color: #666; font-weight: bold; } .title h1 { border: none; font-size: 2.2rem; margin: .2rem 0; }
.title .sub { font-size: 1.2rem; } .facts { color: #444; }
table { border-collapse: collapse; width: 100%; margin: .6rem 0 1rem; font-size: 13px; table-layout: fixed; }
th { background: #2f4f6f; color: #fff; text-align: left; padding: .3rem .45rem; }
td { padding: .3rem .45rem; border-bottom: 1px solid #ccc; vertical-align: top; overflow-wrap: anywhere;
     white-space: pre-wrap; }
tr:nth-child(even) td { background: #f4f6f8; } td.hl { background: #d7efd7 !important; } td.first { font-weight: bold; }
.callout { padding: .7rem 1rem; border-left: 4px solid #1f4e79; background: #eef1f5; font-weight: bold; margin: 1rem 0; }
.callout.good { background: #e3f4e3; } .callout.warning { background: #fdecd9; border-color: #8a3b00; color: #8a3b00; }
p.note { color: #666; font-style: italic; font-size: 13px; } p.warning { color: #8a3b00; }
pre { background: #f2f2f2; padding: .6rem; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; }
figure { margin: 1rem 0; } figure svg { width: 100%; height: auto; }
details { font-size: 13px; margin-bottom: 1rem; }
)";

QString toneClass(Tone t) {
    switch (t) {
    case Tone::Good: return "good";
    case Tone::Warning: return "warning";
    case Tone::Note: return "note";
    case Tone::Normal: return "";
    }
    return "";
}

QString htmlTable(const DocTable& t) {
    QString s = "<table>";
    if (!t.columnWeights.isEmpty()) {
        double sum = 0;
        for (double w : t.columnWeights) sum += w;
        s += "<colgroup>";
        for (double w : t.columnWeights) s += QString("<col style=\"width:%1%\">").arg(100.0 * w / sum, 0, 'f', 1);
        s += "</colgroup>";
    }
    s += "<thead><tr>";
    for (const auto& h : t.header) s += "<th>" + esc(h) + "</th>";
    s += "</tr></thead><tbody>";
    for (int r = 0; r < t.rows.size(); ++r) {
        s += "<tr>";
        for (int c = 0; c < t.rows[r].size(); ++c) {
            QStringList cls;
            if (c == 0 && t.firstColumnBold) cls << "first";
            if (r < t.highlight.size() && t.highlight[r].contains(c)) cls << "hl";
            s += (cls.isEmpty() ? QString("<td>") : "<td class=\"" + cls.join(' ') + "\">") + esc(t.rows[r][c]) + "</td>";
        }
        s += "</tr>";
    }
    return s + "</tbody></table>\n";
}

QString mdCell(QString s) {
    if (s.size() > 600) s = s.left(600) + QChar(0x2026);
    s.replace('\\', "\\\\").replace('|', "\\|").replace("\r", "").replace('\n', "<br>");
    return s.isEmpty() ? " " : s;
}

QString mdTable(const DocTable& t) {
    QString s = "|";
    for (const auto& h : t.header) s += " " + mdCell(h) + " |";
    s += "\n|";
    for (int i = 0; i < t.header.size(); ++i) s += "---|";
    s += "\n";
    for (const auto& row : t.rows) {
        s += "|";
        for (int c = 0; c < t.header.size(); ++c) s += " " + mdCell(c < row.size() ? row[c] : QString()) + " |";
        s += "\n";
    }
    return s + "\n";
}

}  // namespace

QByteArray htmlReport(const ReportDocument& doc) {
    QString s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
                esc("Verdict decision report: " + doc.title) + "</title>\n<style>" + kCss + "</style></head><body>\n";
    s += "<div class=\"title\"><div class=\"kicker\">Verdict</div><h1>" + esc(doc.subtitle) + "</h1><div class=\"sub\">" +
         esc(doc.title) + "</div><div class=\"callout good\">" + esc(doc.recommendation) + "</div><div class=\"facts\">";
    for (const auto& f : doc.titleFacts) s += esc(f) + "<br>";
    s += "</div></div>\n";
    for (const DocBlock& b : doc.blocks) {
        switch (b.kind) {
        case BlockKind::Heading:
            s += QString("<h%1>").arg(b.level) + esc(b.text) + QString("</h%1>\n").arg(b.level);
            break;
        case BlockKind::Paragraph:
            s += (b.tone == Tone::Normal ? QString("<p>") : "<p class=\"" + toneClass(b.tone) + "\">") + esc(b.text) + "</p>\n";
            break;
        case BlockKind::Bullets:
            s += "<ul>";
            for (const auto& i : b.items) s += "<li>" + esc(i) + "</li>";
            s += "</ul>\n";
            break;
        case BlockKind::Callout:
            s += "<div class=\"callout " + toneClass(b.tone) + "\">" + esc(b.text) + "</div>\n";
            break;
        case BlockKind::Table:
            s += htmlTable(b.table);
            break;
        case BlockKind::Chart: {
            std::unique_ptr<QChart> chart(b.makeChart ? b.makeChart() : nullptr);
            if (!chart) break;
            QString svg = QString::fromUtf8(chartToSvg(chart.get(), QSizeF(720, 720 * b.aspect)));
            const qsizetype at = svg.indexOf("<svg");
            if (at > 0) svg = svg.mid(at);
            s += "<figure>" + svg + "<details><summary>Data</summary>" + htmlTable(b.chartData) + "</details></figure>\n";
            break;
        }
        case BlockKind::Code:
            s += "<pre>";
            for (const auto& c : b.items) s += "$ " + esc(c) + "\n";
            s += "</pre>\n";
            break;
        }
    }
    s += "</body></html>\n";
    return s.toUtf8();
}

QByteArray markdownReport(const ReportDocument& doc) {
    QString s = "# " + doc.subtitle + ": " + doc.title + "\n\n";
    s += "> **" + doc.recommendation + "**\n\n";
    for (const auto& f : doc.titleFacts) s += "- " + f + "\n";
    s += "\n";
    for (const DocBlock& b : doc.blocks) {
        switch (b.kind) {
        case BlockKind::Heading:
            s += QString(b.level + 1, '#') + " " + b.text + "\n\n";
            break;
        case BlockKind::Paragraph:
            s += (b.tone == Tone::Note ? "*" + b.text + "*" : b.tone == Tone::Warning ? "**" + b.text + "**" : b.text) + "\n\n";
            break;
        case BlockKind::Bullets:
            for (const auto& i : b.items) s += "- " + QString(i).replace('\n', ' ') + "\n";
            s += "\n";
            break;
        case BlockKind::Callout:
            s += "> " + QString(b.tone == Tone::Warning ? "**Warning:** " : "") + QString(b.text).replace('\n', ' ') + "\n\n";
            break;
        case BlockKind::Table:
            s += mdTable(b.table);
            break;
        case BlockKind::Chart: {
            std::unique_ptr<QChart> chart(b.makeChart ? b.makeChart() : nullptr);
            s += "*Chart: " + (chart ? chart->title() : QString("data")) + " (the numbers it draws):*\n\n" + mdTable(b.chartData);
            break;
        }
        case BlockKind::Code:
            s += "```sh\n";
            for (const auto& c : b.items) s += c + "\n";
            s += "```\n\n";
            break;
        }
    }
    return s.toUtf8();
}

}  // namespace verdict::render
