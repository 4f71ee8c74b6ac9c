#include "dialogs/soak_dialog.h"

#include "charts/chart_style.h"
#include "core/run/backend_factory.h"
#include "core/services/soak.h"
#include "core/store/study_repository.h"
#include "widgets/chart_panel.h"
#include "widgets/error_box.h"
#include "workbench.h"
#include "workers/job.h"

#include <nlohmann/json.hpp>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPen>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>

namespace verdict::ui {

namespace {

using nlohmann::json;

const QString kNone = QStringLiteral("—");

enum Column { Series, Slope, Interval, FirstLast, Verdict, ColumnCount };

const json& field(const json& j, std::initializer_list<const char*> path) { return core::studyField(j, path); }

// One row of the drift table: a series of summary.drift, in the unit it is read in.
struct DriftSeries {
    const char* key;
    QString label;
    QString unit;       // of the values (first, last)
    QString slopeUnit;  // of the slope, per hour
    double scale;       // stored value -> shown value
};

QList<DriftSeries> driftSeries() {
    const double mib = 1.0 / (1024 * 1024);
    return {{"rss_bytes", QObject::tr("Memory (RSS)"), QObject::tr("MiB"), QObject::tr("MiB"), mib},
            {"ttft_p99_ms", QObject::tr("TTFT P99"), QObject::tr("ms"), QObject::tr("ms"), 1},
            {"e2e_p50_ms", QObject::tr("E2E P50"), QObject::tr("ms"), QObject::tr("ms"), 1},
            {"e2e_p99_ms", QObject::tr("E2E P99"), QObject::tr("ms"), QObject::tr("ms"), 1},
            {"output_tok_per_s", QObject::tr("Output tok/s"), QObject::tr("tok/s"), QObject::tr("tok/s"), 1},
            // A rate in percent drifts in percentage points.
            {"error_rate", QObject::tr("Error rate"), QObject::tr("%"), QObject::tr("points"), 100}};
}

// Three significant digits without an exponent: slopes run from thousandths of a ms per hour to
// thousands of MiB per hour.
QString signedNumber(double v) {
    const double a = std::fabs(v);
    const int decimals = a > 0 ? std::clamp(2 - static_cast<int>(std::floor(std::log10(a))), 0, 6) : 0;
    return (v > 0 ? "+" : "") + QString::number(v, 'f', decimals);
}

QString number(const json& v, int decimals, double scale = 1.0) {
    return v.is_number() ? QString::number(v.get<double>() * scale, 'f', decimals) : kNone;
}

QString text(const json& v) { return v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString(); }

// "412.0 ± 35.1 ms (CV 0.085)": one phase's P99 across its windows, "" when it has none.
QString spreadText(const json& s) {
    if (!field(s, {"mean"}).is_number()) return {};
    return QObject::tr("%1 ± %2 ms (CV %3)").arg(number(field(s, {"mean"}), 1), number(field(s, {"stddev"}), 1), number(field(s, {"cv"}), 3));
}

// The totals, what the fits left out, and with bursts the P99 spread ("jitter") per phase.
QString summaryText(const json& soak) {
    const json& sum = field(soak, {"summary"});
    if (!sum.is_object()) return {};
    QString s = QObject::tr("%1 windows, %2 requests, %3 failed (error rate %4 %)")
                    .arg(number(field(sum, {"windows"}), 0), number(field(sum, {"requests"}), 0), number(field(sum, {"failed"}), 0),
                         number(field(sum, {"error_rate"}), 2, 100));
    if (const json& w = field(soak, {"settings", "warmup_windows"}); w.is_number() && w.get<int>() > 0)
        s += QObject::tr("; warm-up left out of the drift: the first %n window(s)", nullptr, w.get<int>());
    if (text(field(sum, {"latency_fit"})) == "low_rate")
        s += QObject::tr("; latency and throughput drift over the low-rate windows (the baseline)");
    if (soak.contains("rss_source") && soak["rss_source"].is_null())
        s += QObject::tr("; memory not measured (the endpoint's /metrics has no process_resident_memory_bytes: give the server's pid)");
    const json& bursts = field(sum, {"bursts"});
    if (bursts.is_object()) {
        QStringList phases;
        for (const auto& [phase, name] : {std::pair{"high", QObject::tr("high-rate")}, std::pair{"low", QObject::tr("low-rate")}})
            if (const QString t = spreadText(field(bursts, {phase, "e2e_p99_ms"})); !t.isEmpty())
                phases << QObject::tr("%1 windows E2E P99 %2").arg(name, t);
        if (!phases.isEmpty()) s += "\n" + QObject::tr("Bursts: %1").arg(phases.join("; "));
    }
    return s;
}

// A range with some air; memory is not drawn from zero, where a leak of a few MiB on a GiB
// would be a flat line.
void setRange(QValueAxis* axis, const QList<QPointF>& points, bool fromZero) {
    double lo = INFINITY, hi = -INFINITY;
    for (const QPointF& p : points) lo = std::min(lo, p.y()), hi = std::max(hi, p.y());
    if (fromZero) lo = std::min(0.0, lo);
    const double pad = hi > lo ? 0.08 * (hi - lo) : std::max(1.0, 0.5 * std::fabs(hi));
    axis->setRange(fromZero ? lo : std::max(0.0, lo - pad), hi + pad);
    axis->applyNiceNumbers();
}

void addLine(QChart* chart, const QString& name, const QList<QPointF>& points, int color, QValueAxis* x, QValueAxis* y) {
    auto* line = new QLineSeries;
    line->setName(name);
    for (const QPointF& p : points) line->append(p);
    QPen pen(render::chartColor(color));
    pen.setWidthF(2.0);
    line->setPen(pen);
    line->setPointsVisible(points.size() <= 12);  // markers on a long soak blur it; one window draws only its marker
    line->setMarkerSize(6);
    chart->addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
}

// Over time (x: window end in minutes): E2E and TTFT P99 on the left axis, the resident memory
// on a right-hand axis of its own (MiB and ms on one axis would flatten one of them).
QChart* soakChart(const json& windows) {
    QList<QPointF> e2e, ttft, rss, all;
    for (const json& w : windows) {
        const json& end = field(w, {"end_s"});
        if (!end.is_number()) continue;
        const double x = end.get<double>() / 60;
        if (const json& v = field(w, {"e2e_ms", "p99"}); v.is_number()) e2e << QPointF(x, v.get<double>());
        if (const json& v = field(w, {"ttft_ms", "p99"}); v.is_number()) ttft << QPointF(x, v.get<double>());
        if (const json& v = field(w, {"rss_bytes"}); v.is_number()) rss << QPointF(x, v.get<double>() / (1024 * 1024));
    }
    all << e2e << ttft << rss;
    if (all.isEmpty()) return nullptr;
    auto* chart = new QChart;
    render::styleChart(chart, QObject::tr("P99 latency and memory over the soak"));
    double xmax = 0;
    for (const QPointF& p : all) xmax = std::max(xmax, p.x());
    auto* xAxis = new QValueAxis;
    xAxis->setRange(0, xmax > 0 ? xmax : 1);
    xAxis->applyNiceNumbers();
    xAxis->setLabelFormat("%.6g");
    render::styleAxis(xAxis, QObject::tr("Time (min, window end)"));
    chart->addAxis(xAxis, Qt::AlignBottom);
    if (!e2e.isEmpty() || !ttft.isEmpty()) {
        auto* ms = new QValueAxis;
        setRange(ms, QList<QPointF>(e2e) << ttft, true);
        ms->setLabelFormat("%.6g");
        render::styleAxis(ms, QObject::tr("Latency P99 (ms)"));
        chart->addAxis(ms, Qt::AlignLeft);
        if (!e2e.isEmpty()) addLine(chart, QObject::tr("E2E P99"), e2e, 0, xAxis, ms);
        if (!ttft.isEmpty()) addLine(chart, QObject::tr("TTFT P99"), ttft, 1, xAxis, ms);
    }
    if (!rss.isEmpty()) {
        auto* mib = new QValueAxis;
        setRange(mib, rss, false);
        mib->setLabelFormat("%.6g");
        render::styleAxis(mib, QObject::tr("Resident memory (MiB)"));
        chart->addAxis(mib, Qt::AlignRight);
        addLine(chart, QObject::tr("Memory (RSS)"), rss, 2, xAxis, mib);
    }
    return chart;
}

}  // namespace

SoakDialog::SoakDialog(Workbench& wb, const QString& target, QWidget* parent) : StudyDialog(wb, "soak", parent) {
    setWindowTitle(tr("Soak test"));
    setObjectName("soakDialog");
    m_target = new QLineEdit(target);
    m_target->setObjectName("soakTarget");
    m_target->setPlaceholderText(tr("an endpoint URL (http://host:8000/v1 [model]) or a GGUF file, served here"));
    auto* browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Model to soak"), QString(), tr("GGUF models (*.gguf);;All files (*)"));
        if (!f.isEmpty()) m_target->setText(f);
    });
    auto* targetRow = new QHBoxLayout;
    targetRow->addWidget(m_target, 1);
    targetRow->addWidget(browse);
    m_model = new QLineEdit;
    m_model->setObjectName("soakModel");
    m_model->setPlaceholderText(tr("endpoint: the model after the URL, else the first of /v1/models"));

    // The limits are validateSoakRequest's; within them the service has the last word (at least
    // one window, at most 10 000 windows). The values start from the request's defaults, the ones
    // `verdict soak --help` shows.
    const core::SoakRequest defaults;
    m_duration = new QDoubleSpinBox;
    m_duration->setObjectName("soakDuration");
    m_duration->setDecimals(3);  // minutes with fractions: 0.05 = 3 s, for a quick look
    m_duration->setRange(0.01, 7 * 24 * 60);
    m_duration->setValue(defaults.durationS / 60);
    m_duration->setSuffix(tr(" min"));
    m_window = new QDoubleSpinBox;
    m_window->setObjectName("soakWindow");
    m_window->setDecimals(1);
    m_window->setRange(0.5, 24 * 3600);
    m_window->setValue(defaults.windowS);
    m_window->setSuffix(tr(" s"));
    m_window->setToolTip(tr("One measured load level: its percentiles, errors and the server's memory at its end"));
    m_warmup = new QSpinBox;
    m_warmup->setObjectName("soakWarmup");
    m_warmup->setRange(0, 10000);
    m_warmup->setValue(defaults.warmupWindows);
    m_warmup->setToolTip(tr("First windows left out of the drift fits (caches, allocator growth)"));
    auto* timeRow = new QHBoxLayout;
    timeRow->addWidget(m_duration);
    timeRow->addWidget(new QLabel(tr("window")));
    timeRow->addWidget(m_window);
    timeRow->addWidget(new QLabel(tr("warm-up windows")));
    timeRow->addWidget(m_warmup);
    timeRow->addStretch(1);

    m_rate = new QDoubleSpinBox;
    m_rate->setObjectName("soakRate");
    m_rate->setDecimals(2);
    m_rate->setRange(0.01, 10000);
    m_rate->setValue(defaults.rate);
    m_rate->setSuffix(tr(" req/s"));
    m_rate->setToolTip(tr("Open loop: Poisson arrivals at this rate, whatever the server's pace"));
    m_burst = new QDoubleSpinBox;
    m_burst->setObjectName("soakBurst");
    m_burst->setDecimals(2);
    m_burst->setRange(0, 10000);
    m_burst->setValue(defaults.burstRate);
    m_burst->setSuffix(tr(" req/s"));
    m_burst->setSpecialValueText(tr("no bursts"));
    m_burst->setToolTip(tr("Every other window runs at this rate: the P99 spread across bursts, and latency drift over the "
                           "low-rate windows"));
    m_promptWords = new QSpinBox;
    m_promptWords->setObjectName("soakPromptWords");
    m_promptWords->setRange(1, 100000);
    m_promptWords->setValue(defaults.promptWords);
    m_maxTokens = new QSpinBox;
    m_maxTokens->setObjectName("soakMaxTokens");
    m_maxTokens->setRange(1, 100000);
    m_maxTokens->setValue(defaults.maxTokens);
    auto* loadRow = new QHBoxLayout;
    loadRow->addWidget(m_rate);
    loadRow->addWidget(new QLabel(tr("burst rate")));
    loadRow->addWidget(m_burst);
    loadRow->addWidget(new QLabel(tr("prompt words")));
    loadRow->addWidget(m_promptWords);
    loadRow->addWidget(new QLabel(tr("max tokens")));
    loadRow->addWidget(m_maxTokens);
    loadRow->addStretch(1);

    m_pid = new QSpinBox;
    m_pid->setObjectName("soakPid");
    m_pid->setRange(0, INT_MAX);
    m_pid->setSpecialValueText(tr("the endpoint's /metrics"));
    m_pid->setToolTip(tr("Endpoint on this machine: read the server's resident memory from /proc/PID/status. "
                         "A GGUF file is served by this process, which measures itself."));
    auto* form = new QFormLayout;
    form->addRow(tr("Target"), targetRow);
    form->addRow(tr("Endpoint model"), m_model);
    form->addRow(tr("Duration"), timeRow);
    form->addRow(tr("Rate"), loadRow);
    auto* pidRow = new QHBoxLayout;
    pidRow->addWidget(m_pid);
    pidRow->addStretch(1);
    form->addRow(tr("Server pid"), pidRow);
    form->addRow(tr("Device"), deviceLabel(tr("the Performance screen's Device; for a GGUF file")));
    auto* settings = new QGroupBox(tr("Settings"));
    settings->setLayout(form);

    m_drift = new QTableWidget(0, ColumnCount);
    m_drift->setObjectName("soakDrift");
    m_drift->setHorizontalHeaderLabels({tr("Series"), tr("Slope / h"), tr("95 % interval"), tr("First → last"), tr("Verdict")});
    m_drift->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_drift->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_drift->verticalHeader()->hide();
    m_drift->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_drift->horizontalHeader()->setStretchLastSection(true);
    // Tall enough for every series without a scroll bar; the chart takes the rest.
    m_drift->setFixedHeight(m_drift->horizontalHeader()->sizeHint().height() +
                            static_cast<int>(driftSeries().size()) * m_drift->verticalHeader()->defaultSectionSize() +
                            2 * m_drift->frameWidth());
    m_summary = new QLabel;
    m_summary->setObjectName("soakSummary");
    m_summary->setWordWrap(true);
    m_chart = new ChartPanel(tr("E2E and TTFT P99 and the resident memory over time appear here after the first window."));

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(settings);
    layout->addLayout(runRow());
    layout->addWidget(m_status);
    layout->addWidget(m_drift);
    layout->addWidget(m_summary);
    layout->addWidget(m_chart, 1);
    layout->addWidget(buttons);
    resize(1000, 860);

    finishSetup();
}

Result<std::vector<StudyDialog::Entry>> SoakDialog::storedEntries(core::Database& db) {
    auto list = core::listSoaks(db);
    if (!list) return list.error();
    std::vector<Entry> out;
    for (const json& s : *list)
        out.push_back({s.value("id", qint64(0)), tr("#%1 %2 (%3, %n window(s))", nullptr, s.value("windows", 0))
                                                     .arg(s.value("id", qint64(0)))
                                                     .arg(text(field(s, {"name"})), text(field(s, {"status"})))});
    return out;
}

Result<std::optional<json>> SoakDialog::loadStudy(core::Database& db, qint64 id) { return core::loadSoak(db, id); }

QString SoakDialog::storedStatus(qint64 id, const json& soak) {
    const QString error = text(field(soak, {"error"}));
    return tr("Soak #%1, %2: %3%4")
        .arg(id)
        .arg(text(field(soak, {"status"})), text(field(soak, {"target"})), error.isEmpty() ? QString() : tr(" — %1").arg(error));
}

void SoakDialog::showStudy(const json& soak) {
    const json& drift = field(soak, {"summary", "drift"});
    const QList<DriftSeries> series = driftSeries();
    m_drift->setRowCount(static_cast<int>(series.size()));
    for (int k = 0; k < series.size(); ++k) {
        const DriftSeries& s = series[k];
        const json& t = field(drift, {s.key});
        const json& slope = field(t, {"slope_per_hour"});
        const json& ci = field(t, {"ci"});
        const bool haveCi = ci.is_array() && ci.size() == 2 && ci[0].is_number() && ci[1].is_number();
        const json& first = field(t, {"first"});
        const json& last = field(t, {"last"});
        const QString cells[ColumnCount] = {
            s.label,
            slope.is_number() ? tr("%1 %2/h").arg(signedNumber(slope.get<double>() * s.scale), s.slopeUnit) : kNone,
            haveCi ? tr("%1 to %2").arg(signedNumber(ci[0].get<double>() * s.scale), signedNumber(ci[1].get<double>() * s.scale))
                   : kNone,
            first.is_number() && last.is_number() ? tr("%1 → %2 %3").arg(number(first, 1, s.scale), number(last, 1, s.scale), s.unit)
                                                  : kNone,
            // An interval needs three fitted windows; "drifting" = it excludes zero.
            !haveCi ? tr("not enough windows") : field(t, {"drifting"}) == true ? tr("drifting") : tr("no drift shown"),
        };
        for (int col = 0; col < ColumnCount; ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col == Verdict && field(t, {"r2"}).is_number())
                item->setToolTip(tr("least squares over %1 windows, r² %2").arg(number(field(t, {"n"}), 0), number(field(t, {"r2"}), 3)));
            if (col != Series && col != Verdict) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_drift->setItem(k, col, item);
        }
    }
    m_summary->setText(summaryText(soak));
    const json& windows = field(soak, {"windows"});
    m_chart->setChart(windows.is_array() ? soakChart(windows) : nullptr);
}

bool SoakDialog::start() {
    if (m_job->busy()) return false;
    core::SoakRequest r;
    const QString target = m_target->text().trimmed();
    r.target = target.toStdString();
    r.model = m_model->text().trimmed().toStdString();
    r.durationS = 60 * m_duration->value();
    r.windowS = m_window->value();
    r.rate = m_rate->value();
    r.burstRate = m_burst->value();
    r.promptWords = m_promptWords->value();
    r.maxTokens = m_maxTokens->value();
    r.warmupWindows = m_warmup->value();
    r.pid = m_pid->value();
    // A GGUF file is served where the Performance screen's sweeps run; threads as there (0: the physical cores).
    r.device = m_wb.runDevice().toStdString();
    r.gpuLayers = m_wb.runGpuLayers();
    if (auto v = core::validateSoakRequest(r); !v) {
        showError(this, tr("This soak cannot start: %1.").arg(QString::fromStdString(v.error().message)));
        return false;
    }
    // An endpoint's key and TLS settings as the Models screen holds them for this reference, read
    // here (the keyring wants this thread); otherwise $VERDICT_API_KEY.
    core::BackendOpenOptions access;
    if (QString why; !m_wb.applyEndpointAccess(target, access, &why)) {
        showError(this, tr("%1 cannot be reached.").arg(target), why);
        return false;
    }
    r.apiKey = access.apiKey;
    r.caFile = access.caFile;
    r.insecure = access.insecure;
    auto storedId = std::make_shared<qint64>(0);  // the soak's id once the service has stored it
    Workbench* wb = &m_wb;
    m_drift->setRowCount(0);
    m_summary->clear();
    m_chart->setChart(nullptr);
    runJob([=, this](JobControl& c) -> JobResult {
        auto db = wb->openDb();
        if (!db) return {tr("The results database cannot be opened."), QString::fromStdString(db.error().message), {}};
        core::SoakEvents ev;
        ev.progress = [&c](const core::SoakProgress& p) {
            c.report(p.windows > 0 ? double(p.window) / p.windows : -1,
                     tr("window %1/%2 %3 %4 req/s — %5 done, %6 failed — %7 s")
                         .arg(p.window + 1)
                         .arg(p.windows)
                         .arg(QString::fromStdString(p.phase))
                         .arg(p.rate, 0, 'g', 4)
                         .arg(p.completed)
                         .arg(p.failed)
                         .arg(p.elapsedS, 0, 'f', 0));
        };
        // After every stored window, the last one (completed, cancelled, failed) included: the soak
        // as it grows, and its id, which a soak that fails later still has. Posted in order, so all
        // of them arrive before studyFinished().
        ev.stored = [&c, this, storedId](const json& soak) {
            *storedId = soak.value("id", qint64(0));
            c.post([this, soak] { showStudy(soak); });
        };
        auto out = core::runSoak(*db, r, ev, c.stopToken());
        if (!out) return failureResult(out.error(), tr("soak"), tr("The model file could not be loaded or served."));
        *storedId = out->id;
        if (out->cancelled) return {{}, {}, tr("Cancelled: the finished windows are stored as soak #%1.").arg(out->id)};
        const json& sum = field(out->soak, {"summary"});
        return {{}, {}, tr("Soak #%1 stored: %2 windows, %3 requests, %4 failed.")
                            .arg(out->id)
                            .arg(number(field(sum, {"windows"}), 0), number(field(sum, {"requests"}), 0), number(field(sum, {"failed"}), 0))};
    }, storedId, [this](const JobResult& result, bool, qint64 id) {
        return result.ok() ? result.message
               : id > 0    ? tr("%1 The finished windows are stored as soak #%2.").arg(result.error).arg(id)
                           : result.error;
    });
    return true;
}

}  // namespace verdict::ui
