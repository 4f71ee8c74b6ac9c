#include "report/pdf_report_writer.h"

#include "charts/chart_render.h"
#include "charts/chart_style.h"

#include <QtCharts/QChart>

#include <QFontMetricsF>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QTextLayout>

#include <functional>
#include <memory>

namespace verdict::render {
namespace {

// Page geometry in points.
constexpr double kMarginLeft = 48, kMarginRight = 48, kMarginTop = 62, kMarginBottom = 58;
constexpr double kHeaderBaseline = 36, kFooterTop = 800;
constexpr int kDpi = 600;

const QColor kInk(0x22, 0x22, 0x22), kMuted(0x66, 0x66, 0x66), kAccent(0x1f, 0x4e, 0x79), kRule(0xcc, 0xcc, 0xcc),
    kHeaderFill(0x2f, 0x4f, 0x6f), kZebra(0xf4, 0xf6, 0xf8), kHighlight(0xd7, 0xef, 0xd7), kGoodFill(0xe3, 0xf4, 0xe3),
    kWarnFill(0xfd, 0xec, 0xd9), kNoteFill(0xee, 0xf1, 0xf5), kWarnInk(0x8a, 0x3b, 0x00), kCodeFill(0xf2, 0xf2, 0xf2);

struct Op {
    enum Type { Text, Fill, Line, Chart } type = Text;
    QRectF rect;         // device units
    QString text;
    QFont font;
    QColor color;
    double penWidth = 0;  // Line: a line from rect.topLeft() to rect.bottomRight()
    std::function<QChart*()> chart;
};

// Control characters other than newline would draw as boxes or break the layout.
QString clean(const QString& s) {
    QString out;
    out.reserve(s.size());
    for (QChar c : s) {
        if (c == '\t') out += "    ";
        else if (c == '\r') continue;
        else if (c.unicode() < 0x20 && c != '\n') out += QChar(0xfffd);
        else out += c;
    }
    return out;
}

class Layout {
public:
    explicit Layout(QPdfWriter* writer) : m_dev(writer) {
        m_k = kDpi / 72.0;
        m_page = QSizeF(writer->width(), writer->height());
        m_content = QRectF(pt(kMarginLeft), pt(kMarginTop), m_page.width() - pt(kMarginLeft + kMarginRight),
                           m_page.height() - pt(kMarginTop + kMarginBottom));
        newPage();
    }

    double pt(double points) const { return points * m_k; }
    double k() const { return m_k; }
    QRectF content() const { return m_content; }
    QSizeF pageSize() const { return m_page; }
    QList<QList<Op>>& pages() { return m_pages; }
    double y() const { return m_y; }
    void advance(double dy) { m_y += dy; }
    bool pageEmpty() const { return m_y <= m_content.top() + 0.5; }
    double remaining() const { return m_content.bottom() - m_y; }

    void newPage() {
        m_pages.push_back({});
        m_target = static_cast<int>(m_pages.size()) - 1;
        m_y = m_content.top();
    }
    // Ops go to page `index` (0-based) until the next newPage(): headers and footers.
    void target(int index) { m_target = index; }
    // Starts a new page unless `height` still fits on this one.
    void ensure(double height) {
        if (height > remaining() && !pageEmpty()) newPage();
    }

    double lineHeight(const QFont& f) const { return QFontMetricsF(f, m_dev).lineSpacing(); }
    double ascent(const QFont& f) const { return QFontMetricsF(f, m_dev).ascent(); }
    double advanceOf(const QFont& f, const QString& s) const { return QFontMetricsF(f, m_dev).horizontalAdvance(s); }

    // Wraps at word boundaries, anywhere inside a word longer than the line; at most `maxLines`
    // (0 = no limit), the last one elided with "…" when text was cut.
    QStringList wrap(const QString& raw, const QFont& font, double width, int maxLines) const {
        QStringList lines;
        const QString text = clean(raw);
        bool cut = false;
        for (const QString& para : text.split('\n')) {
            if (maxLines > 0 && lines.size() >= maxLines) {
                cut = true;
                break;
            }
            if (para.isEmpty()) {
                lines << QString();
                continue;
            }
            QTextLayout layout(para, font, m_dev);
            QTextOption opt;
            opt.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
            layout.setTextOption(opt);
            layout.beginLayout();
            for (QTextLine line = layout.createLine(); line.isValid(); line = layout.createLine()) {
                line.setLineWidth(width);
                if (maxLines > 0 && lines.size() >= maxLines) {
                    cut = true;
                    break;
                }
                QString piece = para.mid(line.textStart(), line.textLength());
                while (piece.endsWith(' ')) piece.chop(1);
                lines << piece;
            }
            layout.endLayout();
        }
        if (cut && !lines.isEmpty()) {
            const QFontMetricsF fm(font, m_dev);
            QString last = lines.back();
            while (!last.isEmpty() && fm.horizontalAdvance(last + QChar(0x2026)) > width) last.chop(1);
            lines.back() = last + QChar(0x2026);
        }
        return lines;
    }

    void text(double x, double y, const QString& line, const QFont& font, const QColor& color) {
        Op op;
        op.type = Op::Text;
        op.rect = QRectF(x, y, advanceOf(font, line), lineHeight(font));
        op.text = line;
        op.font = font;
        op.color = color;
        m_pages[m_target].push_back(op);
    }
    void fill(const QRectF& r, const QColor& c) {
        Op op;
        op.type = Op::Fill;
        op.rect = r;
        op.color = c;
        m_pages[m_target].push_back(op);
    }
    void line(QPointF a, QPointF b, const QColor& c, double widthPt) {
        Op op;
        op.type = Op::Line;
        op.rect = QRectF(a, b);
        op.color = c;
        op.penWidth = pt(widthPt);
        m_pages[m_target].push_back(op);
    }
    void chart(const QRectF& r, std::function<QChart*()> make) {
        Op op;
        op.type = Op::Chart;
        op.rect = r;
        op.chart = std::move(make);
        m_pages[m_target].push_back(op);
    }

    // A paragraph of wrapped lines at `x` with `width`, breaking pages between lines.
    void paragraph(const QString& s, const QFont& font, const QColor& color, double x, double width, int maxLines = 0) {
        const double lh = lineHeight(font);
        for (const QString& l : wrap(s, font, width, maxLines)) {
            ensure(lh);
            text(x, m_y, l, font, color);
            m_y += lh;
        }
    }

private:
    QPaintDevice* m_dev;
    double m_k = 1;
    QSizeF m_page;
    QRectF m_content;
    QList<QList<Op>> m_pages;
    int m_target = 0;
    double m_y = 0;
};

QFont bodyFont() { return reportFont(9.5); }

void layoutTable(Layout& L, const DocTable& t) {
    const QRectF c = L.content();
    const int cols = static_cast<int>(t.header.size());
    if (cols == 0) return;
    QList<double> weights = t.columnWeights;
    while (weights.size() < cols) weights << 1.0;
    double sum = 0;
    for (int i = 0; i < cols; ++i) sum += weights[i];
    QList<double> widths, xs;
    double x = c.left();
    for (int i = 0; i < cols; ++i) {
        xs << x;
        widths << c.width() * weights[i] / sum;
        x += widths.back();
    }
    const double pad = L.pt(3.5);
    const QFont cellFont = reportFont(8.5), boldFont = reportFont(8.5, true), headFont = reportFont(8.5, true);
    const double lh = L.lineHeight(cellFont);

    auto measureRow = [&](const QStringList& cells, const QFont& f0, const QFont& f, int maxLines) {
        QList<QStringList> wrapped;
        int most = 1;
        for (int i = 0; i < cols; ++i) {
            const QString cell = i < cells.size() ? cells[i] : QString();
            wrapped << L.wrap(cell, i == 0 ? f0 : f, widths[i] - 2 * pad, maxLines);
            most = std::max(most, static_cast<int>(wrapped.back().size()));
        }
        return std::make_pair(wrapped, most * lh + 2 * pad);
    };
    auto drawHeader = [&] {
        auto [wrapped, h] = measureRow(t.header, headFont, headFont, 3);
        L.fill(QRectF(c.left(), L.y(), c.width(), h), kHeaderFill);
        for (int i = 0; i < cols; ++i)
            for (int j = 0; j < wrapped[i].size(); ++j)
                L.text(xs[i] + pad, L.y() + pad + j * lh, wrapped[i][j], headFont, Qt::white);
        L.advance(h);
    };
    const auto header = measureRow(t.header, headFont, headFont, 3);
    const auto first = t.rows.isEmpty() ? std::make_pair(QList<QStringList>{}, 0.0)
                                        : measureRow(t.rows[0], t.firstColumnBold ? boldFont : cellFont, cellFont, t.maxLinesPerCell);
    L.ensure(header.second + first.second);
    drawHeader();
    for (int r = 0; r < t.rows.size(); ++r) {
        auto [wrapped, h] = measureRow(t.rows[r], t.firstColumnBold ? boldFont : cellFont, cellFont, t.maxLinesPerCell);
        if (h > L.remaining()) {
            L.newPage();
            drawHeader();
        }
        const double top = L.y();
        if (r % 2 == 1) L.fill(QRectF(c.left(), top, c.width(), h), kZebra);
        if (r < t.highlight.size())
            for (int col : t.highlight[r])
                if (col >= 0 && col < cols) L.fill(QRectF(xs[col], top, widths[col], h), kHighlight);
        for (int i = 0; i < cols; ++i)
            for (int j = 0; j < wrapped[i].size(); ++j)
                L.text(xs[i] + pad, top + pad + j * lh, wrapped[i][j], i == 0 && t.firstColumnBold ? boldFont : cellFont, kInk);
        L.line(QPointF(c.left(), top + h), QPointF(c.right(), top + h), kRule, 0.5);
        L.advance(h);
    }
    L.advance(L.pt(8));
}

void layoutBlock(Layout& L, const DocBlock& b) {
    const QRectF c = L.content();
    switch (b.kind) {
    case BlockKind::Heading: {
        const QFont f = reportFont(b.level == 1 ? 16 : b.level == 2 ? 12 : 10, true);
        const double lh = L.lineHeight(f);
        if (b.level == 1) {
            if (!L.pageEmpty()) L.newPage();
        } else {
            L.ensure(lh * 2 + L.pt(b.level == 2 ? 90 : 60));  // keep with what follows
            L.advance(L.pt(b.level == 2 ? 8 : 5));
        }
        L.paragraph(b.text, f, b.level == 3 ? kInk : kAccent, c.left(), c.width());
        if (b.level == 1) {
            L.line(QPointF(c.left(), L.y() + L.pt(2)), QPointF(c.right(), L.y() + L.pt(2)), kAccent, 1.0);
            L.advance(L.pt(10));
        } else {
            L.advance(L.pt(3));
        }
        break;
    }
    case BlockKind::Paragraph: {
        QFont f = b.tone == Tone::Note ? reportFont(8.5) : bodyFont();
        if (b.tone == Tone::Note) f.setItalic(true);
        L.paragraph(b.text, f, b.tone == Tone::Note ? kMuted : b.tone == Tone::Warning ? kWarnInk : kInk, c.left(), c.width());
        L.advance(L.pt(6));
        break;
    }
    case BlockKind::Bullets: {
        const QFont f = bodyFont();
        const double indent = L.pt(12);
        for (const QString& item : b.items) {
            const QStringList lines = L.wrap(item, f, c.width() - indent, 0);
            const double lh = L.lineHeight(f);
            for (int i = 0; i < lines.size(); ++i) {
                L.ensure(lh);
                if (i == 0) L.text(c.left() + L.pt(2), L.y(), QString(QChar(0x2022)), f, kAccent);
                L.text(c.left() + indent, L.y(), lines[i], f, kInk);
                L.advance(lh);
            }
            L.advance(L.pt(2));
        }
        L.advance(L.pt(4));
        break;
    }
    case BlockKind::Callout: {
        const QFont f = reportFont(b.tone == Tone::Good ? 11 : 10, true);
        const double pad = L.pt(8);
        const QStringList lines = L.wrap(b.text, f, c.width() - 2 * pad, 30);
        const double lh = L.lineHeight(f);
        const double h = lines.size() * lh + 2 * pad;
        L.ensure(h);
        const QColor fill = b.tone == Tone::Good ? kGoodFill : b.tone == Tone::Warning ? kWarnFill : kNoteFill;
        L.fill(QRectF(c.left(), L.y(), c.width(), h), fill);
        L.fill(QRectF(c.left(), L.y(), L.pt(3), h), b.tone == Tone::Warning ? kWarnInk : kAccent);
        for (int i = 0; i < lines.size(); ++i)
            L.text(c.left() + pad, L.y() + pad + i * lh, lines[i], f, b.tone == Tone::Warning ? kWarnInk : kInk);
        L.advance(h + L.pt(10));
        break;
    }
    case BlockKind::Table:
        layoutTable(L, b.table);
        break;
    case BlockKind::Chart: {
        const double w = c.width(), h = c.width() * b.aspect;
        L.ensure(h + L.pt(8));
        L.chart(QRectF(c.left(), L.y(), w, h), b.makeChart);
        L.advance(h + L.pt(12));
        break;
    }
    case BlockKind::Code: {
        QFont f = reportFont(8);
        f.setFamilies({"DejaVu Sans Mono", "Noto Sans Mono CJK SC"});
        const double pad = L.pt(5), lh = L.lineHeight(f);
        for (const QString& cmd : b.items) {
            const QStringList lines = L.wrap("$ " + cmd, f, c.width() - 2 * pad, 40);
            const double h = lines.size() * lh + 2 * pad;
            L.ensure(h);
            L.fill(QRectF(c.left(), L.y(), c.width(), h), kCodeFill);
            for (int i = 0; i < lines.size(); ++i) L.text(c.left() + pad, L.y() + pad + i * lh, lines[i], f, kInk);
            L.advance(h + L.pt(5));
        }
        break;
    }
    }
}

void layoutTitlePage(Layout& L, const ReportDocument& doc) {
    const QRectF c = L.content();
    L.advance(L.pt(120));
    L.paragraph("Verdict", reportFont(12, true), kMuted, c.left(), c.width());
    L.advance(L.pt(6));
    L.paragraph(doc.subtitle, reportFont(28, true), kAccent, c.left(), c.width());
    L.advance(L.pt(8));
    L.paragraph(doc.title, reportFont(16), kInk, c.left(), c.width(), 4);
    L.advance(L.pt(24));
    L.line(QPointF(c.left(), L.y()), QPointF(c.right(), L.y()), kAccent, 1.5);
    L.advance(L.pt(24));
    DocBlock rec;
    rec.kind = BlockKind::Callout;
    rec.tone = Tone::Good;
    rec.text = doc.recommendation;
    layoutBlock(L, rec);
    L.advance(L.pt(12));
    for (const QString& fact : doc.titleFacts) {
        L.paragraph(fact, reportFont(10), kInk, c.left(), c.width(), 3);
        L.advance(L.pt(4));
    }
}

// Header and footer of every page (title page: footer only).
void addFurniture(Layout& L, const ReportDocument& doc) {
    const int n = static_cast<int>(L.pages().size());
    const QRectF c = L.content();
    const QFont f = reportFont(8);
    for (int i = 0; i < n; ++i) {
        L.target(i);
        if (i > 0) {
            const QString left = L.wrap("Verdict decision report \u00b7 " + doc.title, f, c.width() * 0.7, 1).value(0);
            L.text(c.left(), L.pt(kHeaderBaseline) - L.ascent(f), left, f, kMuted);
            const QString right = doc.generatedAt.left(10);
            L.text(c.right() - L.advanceOf(f, right), L.pt(kHeaderBaseline) - L.ascent(f), right, f, kMuted);
            L.line(QPointF(c.left(), L.pt(kHeaderBaseline + 6)), QPointF(c.right(), L.pt(kHeaderBaseline + 6)), kRule, 0.5);
        }
        L.line(QPointF(c.left(), L.pt(kFooterTop)), QPointF(c.right(), L.pt(kFooterTop)), kRule, 0.5);
        const QString page = QString("Page %1 of %2").arg(i + 1).arg(n);
        L.text(c.center().x() - L.advanceOf(f, page) / 2, L.pt(kFooterTop + 6), page, f, kMuted);
        L.text(c.left(), L.pt(kFooterTop + 6), "Generated by Verdict", f, kMuted);
    }
}

void paintOps(QPainter& p, const QList<Op>& ops) {
    for (const Op& op : ops) {
        switch (op.type) {
        case Op::Fill:
            p.fillRect(op.rect, op.color);
            break;
        case Op::Line:
            p.setPen(QPen(op.color, op.penWidth));
            p.drawLine(op.rect.topLeft(), op.rect.bottomRight());
            break;
        case Op::Text: {
            p.setFont(op.font);
            p.setPen(op.color);
            const QFontMetricsF fm(op.font, p.device());
            p.drawText(QPointF(op.rect.left(), op.rect.top() + fm.ascent()), op.text);
            break;
        }
        case Op::Chart: {
            std::unique_ptr<QChart> chart(op.chart ? op.chart() : nullptr);
            if (chart) renderChart(chart.get(), &p, op.rect);
            break;
        }
        }
    }
}

}  // namespace

Result<PdfLayoutInfo> writePdfReport(const ReportDocument& doc, const QString& path) {
    QPdfWriter writer(path);
    writer.setResolution(kDpi);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageMargins(QMarginsF(0, 0, 0, 0));
    writer.setTitle("Verdict decision report: " + doc.title);
    writer.setCreator("Verdict");

    Layout L(&writer);
    layoutTitlePage(L, doc);
    for (const DocBlock& b : doc.blocks) layoutBlock(L, b);
    addFurniture(L, doc);

    QPainter painter;
    if (!painter.begin(&writer)) return Error{"cannot write " + path.toStdString() + " (is the folder writable?)"};
    painter.setRenderHint(QPainter::Antialiasing, true);
    painter.setRenderHint(QPainter::TextAntialiasing, true);
    const auto& pages = L.pages();
    for (int i = 0; i < pages.size(); ++i) {
        if (i > 0) writer.newPage();
        paintOps(painter, pages[i]);
    }
    if (!painter.end()) return Error{"cannot finish " + path.toStdString()};

    PdfLayoutInfo info;
    const double k = L.k();
    info.pages = static_cast<int>(pages.size());
    info.pageSizePt = QSizeF(L.pageSize().width() / k, L.pageSize().height() / k);
    const QRectF c = L.content();
    info.contentPt = QRectF(c.left() / k, c.top() / k, c.width() / k, c.height() / k);
    for (int i = 0; i < pages.size(); ++i)
        for (const Op& op : pages[i]) {
            LayoutBox box;
            box.page = i + 1;
            box.kind = op.type == Op::Text ? "text" : op.type == Op::Fill ? "fill" : op.type == Op::Line ? "line" : "chart";
            const QRectF r = op.rect.normalized();
            box.rect = QRectF(r.left() / k, r.top() / k, r.width() / k, r.height() / k);
            box.text = op.text;
            info.boxes << box;
        }
    return info;
}

QByteArray layoutJson(const PdfLayoutInfo& info) {
    QJsonArray boxes;
    for (const auto& b : info.boxes)
        boxes.append(QJsonObject{{"page", b.page},
                                 {"kind", b.kind},
                                 {"rect", QJsonArray{b.rect.x(), b.rect.y(), b.rect.width(), b.rect.height()}},
                                 {"text", b.text}});
    QJsonObject o{{"pages", info.pages},
                  {"page_size_pt", QJsonArray{info.pageSizePt.width(), info.pageSizePt.height()}},
                  {"content_pt", QJsonArray{info.contentPt.x(), info.contentPt.y(), info.contentPt.width(), info.contentPt.height()}},
                  {"boxes", boxes}};
    return QJsonDocument(o).toJson(QJsonDocument::Indented);
}

}  // namespace verdict::render
