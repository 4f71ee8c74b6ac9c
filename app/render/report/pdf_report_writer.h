// The report as a PDF: A4, a title page, headers and footers with "Page i of N", styled tables,
// charts drawn as vectors (QChart scenes rendered into the PDF painter), text wrapped at word
// boundaries (anywhere for long tokens such as hashes) and long cells elided with "…".
//
// Two passes: the layout places every piece of text, box and chart on a page (so the page count is
// known for the footers), then the painter draws the pages. Every placed piece is also a LayoutBox:
// the layout JSON lets a test check that nothing is drawn outside the page.
#pragma once

#include "report/report_document.h"
#include "verdict/engine/result.h"

#include <QList>
#include <QRectF>
#include <QString>

namespace verdict::render {

struct LayoutBox {
    int page = 0;        // 1-based
    QString kind;        // "text", "fill", "line", "chart"
    QRectF rect;         // in points (1/72 inch) from the page's top-left corner
    QString text;        // the text drawn (text boxes)
};

struct PdfLayoutInfo {
    int pages = 0;
    QSizeF pageSizePt;   // A4: 595.3 x 841.9
    QRectF contentPt;    // the area inside the margins (header and footer lie outside it)
    QList<LayoutBox> boxes;
};

// Writes `path`. Errors: the file cannot be written. `info` (optional) receives the layout.
Result<PdfLayoutInfo> writePdfReport(const ReportDocument& doc, const QString& path);

// The layout as JSON: {"pages", "page_size_pt": [w, h], "content_pt": [x, y, w, h],
// "boxes": [{"page", "kind", "rect": [x, y, w, h], "text"}]}.
QByteArray layoutJson(const PdfLayoutInfo& info);

}  // namespace verdict::render
