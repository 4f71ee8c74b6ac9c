#include "report/report_renderer.h"

#include "report/pdf_report_writer.h"
#include "report/report_document.h"
#include "report/text_report_writers.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <cctype>

namespace verdict::render {
namespace {

Result<void> writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return Error{"cannot write " + path.toStdString() + ": " + f.errorString().toStdString()};
    if (f.write(bytes) != bytes.size()) return Error{"cannot write " + path.toStdString() + ": " + f.errorString().toStdString()};
    return {};
}

}  // namespace

std::optional<ReportFormat> parseReportFormat(const std::string& name) {
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (n == "pdf") return ReportFormat::Pdf;
    if (n == "html" || n == "htm") return ReportFormat::Html;
    if (n == "md" || n == "markdown") return ReportFormat::Markdown;
    return std::nullopt;
}

std::optional<ReportFormat> reportFormatOfPath(const std::string& path) {
    const std::string suffix = QFileInfo(QString::fromStdString(path)).suffix().toStdString();
    return suffix.empty() ? std::nullopt : parseReportFormat(suffix);
}

const char* reportFormatName(ReportFormat f) {
    switch (f) {
    case ReportFormat::Pdf: return "pdf";
    case ReportFormat::Html: return "html";
    case ReportFormat::Markdown: return "md";
    }
    return "pdf";
}

Result<RenderedReport> renderReport(const core::ReportData& data, ReportFormat format, const QString& path,
                                    const QString& layoutJsonPath) {
    const ReportDocument doc = buildReportDocument(data);
    RenderedReport out;
    out.path = QFileInfo(path).absoluteFilePath();
    out.format = format;
    if (format == ReportFormat::Pdf) {
        auto info = writePdfReport(doc, path);
        if (!info) return info.error();
        out.pages = info->pages;
        if (!layoutJsonPath.isEmpty()) {
            if (auto w = writeFile(layoutJsonPath, layoutJson(*info)); !w) return w.error();
            out.layoutJsonPath = QFileInfo(layoutJsonPath).absoluteFilePath();
        }
    } else {
        const QByteArray bytes = format == ReportFormat::Html ? htmlReport(doc) : markdownReport(doc);
        if (auto w = writeFile(path, bytes); !w) return w.error();
    }
    out.bytes = QFileInfo(path).size();
    return out;
}

}  // namespace verdict::render
