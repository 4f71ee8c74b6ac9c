#include "dialogs/quant_compare_dialog.h"

#include "charts/chart_style.h"
#include "core/models/model_card_json.h"
#include "core/services/quant_compare.h"
#include "core/store/study_repository.h"
#include "core/store/suite_repository.h"
#include "widgets/chart_panel.h"
#include "widgets/error_box.h"
#include "workbench.h"
#include "workers/job.h"

#include <nlohmann/json.hpp>

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <memory>

namespace verdict::ui {

namespace {

using nlohmann::json;

const QString kNone = QStringLiteral("—");

enum Column { File, Type, Size, Bpw, Kld, SameTop, Ppl, Accuracy, AccuracyDelta, Decode, DecodeChange, ItlChange, Errors, ColumnCount };

const json& field(const json& j, std::initializer_list<const char*> path) { return core::studyField(j, path); }

QString number(const json& v, int decimals, double scale = 1.0) {
    return v.is_number() ? QString::number(v.get<double>() * scale, 'f', decimals) : kNone;
}

// A change against the base (file / base - 1) in percent, signed.
QString change(const json& v) {
    return v.is_number() ? QString::asprintf("%+.1f %%", 100.0 * v.get<double>()) : kNone;
}

QString text(const json& v) { return v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString(); }

QString fileName(const json& row) { return QFileInfo(text(field(row, {"file", "path"}))).fileName(); }

QString errorsText(const json& row) {
    QStringList parts;
    for (const auto& [part, why] : field(row, {"errors"}).items())
        parts << QString::fromStdString(part) + ": " + (why.is_string() ? text(why) : QString::fromStdString(why.dump()));
    return parts.join("; ");
}

// Per file against the base: decode change and mean KLD, both scaled so that they share one axis.
// A bar set a comparison did not measure at all is left out rather than drawn as zeros.
QChart* tradeOffChart(const json& rows) {
    QStringList categories;
    QList<double> decode, kld;
    bool anyDecode = false, anyKld = false;
    for (size_t k = 1; k < rows.size(); ++k) {
        const json& d = field(rows[k], {"vs_base"});
        // The axis refuses repeated categories: two files of one type are told apart by name.
        QString label = text(field(rows[k], {"file", "file_type"}));
        if (label.isEmpty() || categories.contains(label)) label = fileName(rows[k]);
        const json& dc = field(d, {"decode_change"});
        const json& kl = field(d, {"mean_kld"});
        anyDecode = anyDecode || dc.is_number();
        anyKld = anyKld || kl.is_number();
        decode << (dc.is_number() ? 100.0 * dc.get<double>() : 0.0);
        kld << (kl.is_number() ? 100.0 * kl.get<double>() : 0.0);
        categories << label;
    }
    if (categories.isEmpty() || (!anyDecode && !anyKld)) return nullptr;
    auto* chart = new QChart;
    render::styleChart(chart, QObject::tr("Against the base: speed gained, fidelity lost"));
    auto* bars = new QBarSeries;
    double lo = 0, hi = 0;
    auto add = [&](const QString& name, const QList<double>& values, int color) {
        auto* set = new QBarSet(name);
        for (double v : values) {
            set->append(v);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        set->setColor(render::chartColor(color));
        set->setBorderColor(render::chartColor(color).darker(120));
        bars->append(set);
    };
    if (anyDecode) add(QObject::tr("decode change %"), decode, 0);
    if (anyKld) add(QObject::tr("mean KLD ×100"), kld, 1);
    chart->addSeries(bars);
    auto* xAxis = new QBarCategoryAxis;
    xAxis->append(categories);
    auto* yAxis = new QValueAxis;
    const double pad = hi > lo ? 0.08 * (hi - lo) : 1.0;
    yAxis->setRange(lo < 0 ? lo - pad : 0, hi + pad);
    yAxis->setLabelFormat("%.6g");
    render::styleAxis(xAxis, QObject::tr("File type"));
    render::styleAxis(yAxis, QObject::tr("Change (%) / KLD ×100"));
    chart->addAxis(xAxis, Qt::AlignBottom);
    chart->addAxis(yAxis, Qt::AlignLeft);
    bars->attachAxis(xAxis);
    bars->attachAxis(yAxis);
    return chart;
}

}  // namespace

QuantCompareDialog::QuantCompareDialog(Workbench& wb, const QString& base, QWidget* parent) : StudyDialog(wb, "quant", parent) {
    setWindowTitle(tr("Quantization trade-off"));
    setObjectName("quantCompareDialog");
    m_base = new QLineEdit(base);
    m_base->setObjectName("quantBase");
    m_base->setPlaceholderText(tr("the reference file, usually the F16, BF16 or Q8_0 one"));
    auto* browseBase = new QPushButton(tr("Browse…"));
    connect(browseBase, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Base file"), QString(), tr("GGUF models (*.gguf);;All files (*)"));
        if (!f.isEmpty()) m_base->setText(f);
    });
    auto* baseRow = new QHBoxLayout;
    baseRow->addWidget(m_base, 1);
    baseRow->addWidget(browseBase);

    m_files = new QListWidget;
    m_files->setObjectName("quantFiles");
    m_files->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_files->setMaximumHeight(110);
    auto* addFiles = new QPushButton(tr("Add…"));
    auto* removeFiles = new QPushButton(tr("Remove"));
    connect(addFiles, &QPushButton::clicked, this, [this] {
        const QStringList paths = QFileDialog::getOpenFileNames(this, tr("Files to compare with the base"), QString(),
                                                                tr("GGUF models (*.gguf);;All files (*)"));
        for (const QString& p : paths)
            if (m_files->findItems(p, Qt::MatchExactly).isEmpty()) m_files->addItem(p);
    });
    connect(removeFiles, &QPushButton::clicked, this, [this] { qDeleteAll(m_files->selectedItems()); });
    auto* fileButtons = new QVBoxLayout;
    fileButtons->addWidget(addFiles);
    fileButtons->addWidget(removeFiles);
    fileButtons->addStretch(1);
    auto* filesRow = new QHBoxLayout;
    filesRow->addWidget(m_files, 1);
    filesRow->addLayout(fileButtons);

    m_suite = new QComboBox;
    m_suite->setObjectName("quantSuite");
    m_suite->setToolTip(tr("A stored suite run on every file: the accuracy delta against the base, paired item by item"));
    m_suite->addItem(tr("(none)"), QString());
    if (auto db = m_wb.openDb())
        if (auto suites = core::SuiteRepository(*db).list())
            for (const auto& s : *suites) m_suite->addItem(QString::fromStdString(s.name), QString::fromStdString(s.name));

    m_text = new QLineEdit;
    m_text->setObjectName("quantText");
    m_text->setPlaceholderText(tr("none: no KL-divergence"));
    m_text->setToolTip(tr("A UTF-8 text of at least two contexts' worth of tokens: KL-divergence and top-1 agreement against the base"));
    auto* browseText = new QPushButton(tr("Browse…"));
    connect(browseText, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Text for KL-divergence"), QString(), tr("Text (*.txt *.md);;All files (*)"));
        if (!f.isEmpty()) m_text->setText(f);
    });
    auto* textRow = new QHBoxLayout;
    textRow->addWidget(m_text, 1);
    textRow->addWidget(browseText);
    // The values start from the request's defaults, the ones `verdict quant-compare --help` shows.
    const core::QuantCompareRequest defaults;
    m_ctx = new QSpinBox;
    m_ctx->setObjectName("quantCtx");
    m_ctx->setRange(4, 1 << 20);
    m_ctx->setValue(static_cast<int>(defaults.ctx));
    m_ctx->setToolTip(tr("KL-divergence chunk size in tokens (llama-perplexity -c)"));

    // The sweep's limits are validateSweepSpec's: TPOT and ITL need two output tokens.
    m_sweep = new QCheckBox(tr("Speed sweep"));
    m_sweep->setObjectName("quantSweep");
    m_sweep->setChecked(defaults.sweep);
    m_prompt = new QSpinBox;
    m_prompt->setRange(1, 1 << 20);
    m_prompt->setValue(static_cast<int>(defaults.sweepSpec.promptTokens.front()));
    m_gen = new QSpinBox;
    m_gen->setRange(2, 1 << 20);
    m_gen->setValue(static_cast<int>(defaults.sweepSpec.genTokens.front()));
    m_reps = new QSpinBox;
    m_reps->setRange(1, 100);
    m_reps->setValue(defaults.sweepSpec.reps);
    auto* sweepRow = new QHBoxLayout;
    sweepRow->addWidget(m_sweep);
    sweepRow->addWidget(new QLabel(tr("prompt tokens")));
    sweepRow->addWidget(m_prompt);
    sweepRow->addWidget(new QLabel(tr("output tokens")));
    sweepRow->addWidget(m_gen);
    sweepRow->addWidget(new QLabel(tr("repetitions")));
    sweepRow->addWidget(m_reps);
    sweepRow->addStretch(1);
    connect(m_sweep, &QCheckBox::toggled, this, [this](bool on) {
        for (QSpinBox* s : {m_prompt, m_gen, m_reps}) s->setEnabled(on);
    });
    auto* form = new QFormLayout;
    form->addRow(tr("Base file"), baseRow);
    form->addRow(tr("Compare"), filesRow);
    form->addRow(tr("Suite"), m_suite);
    form->addRow(tr("Text (KLD)"), textRow);
    form->addRow(tr("Context (tokens)"), m_ctx);
    form->addRow(tr("Speed"), sweepRow);
    form->addRow(tr("Device"), deviceLabel(tr("the Performance screen's Device")));
    auto* settings = new QGroupBox(tr("Settings"));
    settings->setLayout(form);

    m_table = new QTableWidget(0, ColumnCount);
    m_table->setObjectName("quantTable");
    m_table->setHorizontalHeaderLabels({tr("File"), tr("Type"), tr("Size"), tr("Bits/weight"), tr("Mean KLD"), tr("Same top"),
                                        tr("PPL"), tr("Accuracy"), tr("Accuracy Δ (95 % CI)"), tr("Decode tok/s"),
                                        tr("Decode change"), tr("ITL P99 change"), tr("Errors")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_chart = new ChartPanel(tr("Decode change and mean KLD per file appear here once measured."));

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(settings);
    layout->addLayout(runRow());
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_chart, 1);
    layout->addWidget(buttons);
    resize(1100, 820);

    finishSetup();
}

Result<std::vector<StudyDialog::Entry>> QuantCompareDialog::storedEntries(core::Database& db) {
    auto list = core::listQuantCompares(db);
    if (!list) return list.error();
    std::vector<Entry> out;
    for (const auto& s : *list)
        out.push_back({s.id, tr("#%1 %2 (%3)").arg(s.id).arg(QString::fromStdString(s.name), QString::fromStdString(s.status))});
    return out;
}

Result<std::optional<json>> QuantCompareDialog::loadStudy(core::Database& db, qint64 id) { return core::loadQuantCompare(db, id); }

QString QuantCompareDialog::storedStatus(qint64 id, const json& c) {
    return tr("Comparison #%1, %2: base %3")
        .arg(id)
        .arg(QString::fromStdString(c.value("status", "")))
        .arg(QString::fromStdString(c.value("base", "")));
}

void QuantCompareDialog::showStudy(const json& c) {
    const json& rows = field(c, {"rows"});
    const int n = rows.is_array() ? static_cast<int>(rows.size()) : 0;
    m_table->setRowCount(n);
    for (int k = 0; k < n; ++k) {
        const json& row = rows[static_cast<size_t>(k)];
        const json& d = field(row, {"vs_base"});
        const bool base = k == 0;
        const json& bytes = field(row, {"file", "bytes"});
        QString accuracy = kNone;
        if (const json& cell = field(row, {"accuracy", "cell"}); field(cell, {"accuracy"}).is_number())
            accuracy = tr("%1 % (%2)").arg(number(field(cell, {"accuracy"}), 1, 100), number(field(cell, {"n"}), 0));
        // The paired difference in percentage points with its bootstrap interval, as the Suites screen says it.
        QString delta = base ? tr("base") : kNone;
        if (const json& dv = field(row, {"accuracy", "delta"}); !base && dv.is_number()) {
            delta = tr("%1 points").arg(QString::asprintf("%+.1f", 100.0 * dv.get<double>()));
            const json& ci = field(row, {"accuracy", "delta_ci"});
            if (ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number())
                delta += QString::asprintf(" (%+.1f to %+.1f)", 100.0 * ci[0].get<double>(), 100.0 * ci[1].get<double>());
        }
        const QString cells[ColumnCount] = {
            fileName(row),
            text(field(row, {"file", "file_type"})),
            bytes.is_number_unsigned() ? QString::fromStdString(core::formatBytes(bytes.get<uint64_t>())) : kNone,
            number(field(row, {"file", "bits_per_weight"}), 2),
            number(field(row, {"fidelity", "mean_kld"}), 6),
            field(row, {"fidelity", "same_top_p"}).is_number() ? number(field(row, {"fidelity", "same_top_p"}), 1, 100) + " %" : kNone,
            number(field(row, {"fidelity", "ppl"}), 3),
            accuracy,
            delta,
            number(field(row, {"speed", "decode_tok_per_s"}), 1),
            base ? tr("base") : change(field(d, {"decode_change"})),
            base ? tr("base") : change(field(d, {"itl_p99_change"})),
            errorsText(row),
        };
        for (int col = 0; col < ColumnCount; ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col == File) item->setToolTip(text(field(row, {"file", "path"})));
            if (col == Errors) item->setToolTip(cells[col]);
            if (col == AccuracyDelta) item->setToolTip(text(field(row, {"accuracy", "why_no_delta"})));
            if (col != File && col != Type && col != Errors) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(k, col, item);
        }
    }
    m_chart->setChart(rows.is_array() ? tradeOffChart(rows) : nullptr);
}

bool QuantCompareDialog::start() {
    if (m_job->busy()) return false;
    core::QuantCompareRequest r;
    r.basePath = m_base->text().trimmed().toStdString();
    for (int i = 0; i < m_files->count(); ++i)
        if (const QString f = m_files->item(i)->text().trimmed(); !f.isEmpty()) r.files.push_back(f.toStdString());
    r.suite = m_suite->currentData().toString().toStdString();
    r.textPath = m_text->text().trimmed().toStdString();
    r.ctx = m_ctx->value();
    r.sweep = m_sweep->isChecked();
    r.sweepSpec.promptTokens = {m_prompt->value()};
    r.sweepSpec.genTokens = {m_gen->value()};
    r.sweepSpec.reps = m_reps->value();
    // Where the Performance screen's sweeps run; threads as there (0: the physical cores).
    r.device = m_wb.runDevice().toStdString();
    r.gpuLayers = m_wb.runGpuLayers();
    if (auto v = core::validateQuantCompareRequest(r); !v) {
        showError(this, tr("These settings cannot be compared: %1.").arg(QString::fromStdString(v.error().message)));
        return false;
    }
    // What the progress bar counts: each enabled part once per file, in the service's order.
    QStringList parts;
    if (!r.textPath.empty()) parts << "fidelity";
    if (!r.suite.empty()) parts << "accuracy";
    if (r.sweep) parts << "speed";
    auto storedId = std::make_shared<qint64>(0);  // the comparison's id once the service returns it
    Workbench* wb = &m_wb;
    m_table->setRowCount(0);
    m_chart->setChart(nullptr);
    runJob([=, this](JobControl& c) -> JobResult {
        auto db = wb->openDb();
        if (!db) return {tr("The results database cannot be opened."), QString::fromStdString(db.error().message), {}};
        core::QuantCompareEvents ev;
        ev.progress = [&c, parts](const core::QuantCompareProgress& p) {
            const QString stage = QString::fromStdString(p.stage);
            const int part = static_cast<int>(parts.indexOf(stage));
            const double f = stage == "done" ? 1.0
                             : part < 0 || p.fileCount <= 0
                                 ? -1.0
                                 : double(part * p.fileCount + p.file) / double(parts.size() * p.fileCount);
            c.report(f, stage == "done" ? tr("done")
                                        : tr("file %1/%2 %3 %4 %5")
                                              .arg(p.file + 1)
                                              .arg(p.fileCount)
                                              .arg(QFileInfo(QString::fromStdString(p.path)).fileName(), stage,
                                                   QString::fromStdString(p.detail))
                                              .trimmed());
        };
        // After every stored step, the last one (completed, cancelled, failed) included: the
        // comparison as it grows. Posted in order, so all of them arrive before studyFinished().
        ev.stored = [&c, this](const json& comparison) { c.post([this, comparison] { showStudy(comparison); }); };
        auto out = core::runQuantCompare(*db, r, ev, c.stopToken());
        if (!out) return failureResult(out.error(), tr("comparison"), tr("A model file could not be loaded."));
        *storedId = out->id;
        return {{}, {}, tr("Comparison #%1 stored: %2 files against the base.").arg(out->id).arg(r.files.size())};
    }, storedId, [this](const JobResult& result, bool cancelled, qint64 id) {
        return cancelled && id > 0 ? tr("Cancelled: what was measured is stored as comparison #%1.").arg(id)
               : result.ok()       ? result.message
                                   : result.error;
    });
    return true;
}

}  // namespace verdict::ui
