// The report as HTML (one self-contained file: CSS inline, charts as inline SVG vectors) and as
// Markdown (pipe tables; each chart as a table of the numbers it draws).
#pragma once

#include "report/report_document.h"

#include <QByteArray>

namespace verdict::render {

QByteArray htmlReport(const ReportDocument& doc);
QByteArray markdownReport(const ReportDocument& doc);

}  // namespace verdict::render
