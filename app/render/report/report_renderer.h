// One call that writes the decision report in a format: what `verdict report` and the window's
// File > Export report… both use, so the two produce the same document.
//
//   auto data = core::buildReportData(db, request);
//   auto out = render::renderReport(*data, render::ReportFormat::Pdf, "report.pdf");   // needs a QApplication
#pragma once

#include "core/report/report_types.h"
#include "verdict/engine/result.h"

#include <QString>

#include <optional>
#include <string>

namespace verdict::render {

enum class ReportFormat { Pdf, Html, Markdown };

// "pdf" | "html" | "md" (also "markdown", "htm"); nullopt otherwise.
std::optional<ReportFormat> parseReportFormat(const std::string& name);
// From the file name's extension (.pdf, .html/.htm, .md/.markdown); nullopt when none matches.
std::optional<ReportFormat> reportFormatOfPath(const std::string& path);
const char* reportFormatName(ReportFormat f);  // "pdf" | "html" | "md"

struct RenderedReport {
    QString path;
    ReportFormat format = ReportFormat::Pdf;
    int pages = 0;              // PDF only
    QString layoutJsonPath;     // PDF only, when asked for
    qint64 bytes = 0;
};

// Writes the report. `layoutJsonPath` (PDF, optional): also write the layout boxes there
// (pdf_report_writer.h), which the tests use to check that nothing is drawn off the page.
// Errors: the file cannot be written. Needs a QApplication (charts are graphics widgets).
Result<RenderedReport> renderReport(const core::ReportData& data, ReportFormat format, const QString& path,
                                    const QString& layoutJsonPath = {});

}  // namespace verdict::render
