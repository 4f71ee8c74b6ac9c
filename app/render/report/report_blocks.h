// The building blocks of the decision report's document (report_document.h), shared by the files
// that write its sections: formatting (q, fmt, ci, sideName), the blocks (heading, paragraph,
// callout, bullets, table, chart) and a chart's numbers as a table for Markdown. Internal to
// app/render/report.
#pragma once

#include "core/report/report_types.h"
#include "report/report_chart_data.h"
#include "report/report_document.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <string>

namespace verdict::render::report_blocks {

QString q(const std::string& s);
QString fmt(const char* f, double v);                 // printf of one number
QString ci(const core::AccuracyCell& c);              // "62.5 % [40.9–80.0] (10/16)", a dash when n = 0
QString sideName(const core::ReportModel& m);         // "A: label"

DocBlock heading(const QString& text, int level);
DocBlock para(const QString& text, Tone tone = Tone::Normal);
DocBlock callout(const QString& text, Tone tone);
DocBlock bullets(const QStringList& items);
DocBlock table(DocTable t);
DocBlock chart(std::function<QChart*()> make, DocTable data, double aspect = 0.5);

// A chart's numbers as a table (x, then one column per series), for Markdown.
DocTable xyTable(const QString& xName, const QList<XYSeries>& lines);
DocTable barTable(const QString& catName, const QStringList& cats, const QList<BarSeriesData>& sets);

// The sections of the studies (report_studies.cpp), under Performance: the quantization trade-off
// (`verdict quant-compare`) and the stability under load (`verdict soak`); nothing when absent.
void quantSection(const core::ReportData& d, QList<DocBlock>& out);
void stabilitySection(const core::ReportData& d, QList<DocBlock>& out);

}  // namespace verdict::render::report_blocks
