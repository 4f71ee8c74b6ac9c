// The report as a sequence of blocks (headings, paragraphs, tables, charts), built once from
// core::ReportData and written by three writers: PDF (pdf_report_writer.h), HTML and Markdown
// (text_report_writers.h). One builder means the three formats say the same things in the same
// order; only the drawing differs.
#pragma once

#include "core/report/report_types.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

class QChart;

namespace verdict::render {

enum class BlockKind {
    Heading,    // level 1 = numbered section (starts a new PDF page), 2 = subsection, 3 = minor
    Paragraph,
    Bullets,    // items
    Callout,    // a boxed message; tone says which
    Table,
    Chart,
    Code,       // monospace lines (commands)
};

enum class Tone { Normal, Note, Good, Warning };

struct DocTable {
    QStringList header;
    QList<QStringList> rows;
    QList<double> columnWeights;   // relative widths (default: equal)
    QList<QList<int>> highlight;   // per row: column indices drawn highlighted (the winner's cell)
    int maxLinesPerCell = 10;      // longer cell text is elided with "…"
    bool firstColumnBold = false;
};

struct DocBlock {
    BlockKind kind = BlockKind::Paragraph;
    int level = 1;                 // headings
    QString text;                  // heading, paragraph, callout text
    Tone tone = Tone::Normal;
    QStringList items;             // bullets, code lines
    DocTable table;
    // Charts: a factory (the writer renders and deletes the chart) plus the numbers behind it,
    // which the Markdown writer prints as a table.
    std::function<QChart*()> makeChart;
    double aspect = 0.5;           // height / width
    DocTable chartData;
};

struct ReportDocument {
    QString title;                 // "Model A vs Model B on suite"
    QString subtitle;              // "Decision report"
    QString generatedAt;
    QString recommendation;        // headline on the title page
    QStringList titleFacts;        // short lines under the title (models, suite, data present)
    QList<DocBlock> blocks;
};

// Section headings, in order (the tests look for them in every output format).
QStringList reportSectionTitles();

// Builds the document. Charts appear only where their data exists; missing data becomes a
// Warning callout saying what is missing and how to get it.
ReportDocument buildReportDocument(const core::ReportData& data);

}  // namespace verdict::render
