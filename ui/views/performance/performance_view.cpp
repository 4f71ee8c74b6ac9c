#include "views/performance/performance_view.h"

#include "charts/report_charts.h"
#include "core/perf/load_runner.h"
#include "core/report/report_data.h"
#include "core/run/backend_factory.h"
#include "core/services/load.h"
#include "core/services/sweep.h"
#include "core/store/sweep_repository.h"
#include "dialogs/quant_compare_dialog.h"
#include "dialogs/soak_dialog.h"
#include "report/report_chart_data.h"
#include "widgets/chart_panel.h"
#include "widgets/device_combo.h"
#include "widgets/error_box.h"
#include "workbench.h"
#include "workers/job.h"

#include <QApplication>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>

namespace verdict::ui {

namespace {

// "32,128, 512" -> {32, 128, 512}; false with the offending part.
QString joinList(const std::vector<int64_t>& v) {
    QStringList parts;
    for (int64_t x : v) parts << QString::number(x);
    return parts.join(',');
}

bool parseList(const QString& text, std::vector<int64_t>* out, QString* bad) {
    out->clear();
    for (const QString& part : text.split(',', Qt::SkipEmptyParts)) {
        bool ok = false;
        const qlonglong v = part.trimmed().toLongLong(&ok);
        if (!ok || v <= 0) {
            *bad = part.trimmed();
            return false;
        }
        out->push_back(v);
    }
    if (out->empty()) *bad = text;
    return !out->empty();
}

}  // namespace

PerformanceView::PerformanceView(Workbench& workbench, QWidget* parent) : QWidget(parent), m_wb(workbench) {
    setObjectName("performanceView");
    // The controls start from the service's defaults (core/services/sweep.h), the ones
    // `verdict sweep --help` shows.
    const core::SweepSettings defaults;
    m_prompts = new QLineEdit(joinList(defaults.spec.promptTokens));
    m_gens = new QLineEdit(joinList(defaults.spec.genTokens));
    m_batches = new QLineEdit(joinList(defaults.spec.batches));
    m_reps = new QSpinBox;
    m_reps->setRange(1, 100);
    m_reps->setValue(defaults.spec.reps);
    m_warmups = new QSpinBox;
    m_warmups->setRange(0, 20);
    m_warmups->setValue(defaults.spec.warmups);
    QSettings st;
    m_prompts->setText(st.value("sweep/prompts", m_prompts->text()).toString());
    m_gens->setText(st.value("sweep/gens", m_gens->text()).toString());
    m_batches->setText(st.value("sweep/batches", m_batches->text()).toString());
    m_reps->setValue(st.value("sweep/reps", m_reps->value()).toInt());
    m_warmups->setValue(st.value("sweep/warmups", m_warmups->value()).toInt());
    m_prompts->setObjectName("sweepPrompts");
    m_gens->setObjectName("sweepGens");
    m_batches->setObjectName("sweepBatches");
    m_reps->setObjectName("sweepReps");
    m_warmups->setObjectName("sweepWarmups");
    m_run = new QPushButton(tr("Sweep A and B"));
    m_run->setObjectName("sweepButton");
    m_cancel = new QPushButton(tr("Cancel"));
    auto* quant = new QPushButton(tr("Quantization…"));
    quant->setObjectName("quantCompare");
    quant->setToolTip(tr("One model in several files (F16, Q8_0, Q4_K_M…) against a base file: KL-divergence, "
                         "accuracy delta, speed and memory, as verdict quant-compare measures them"));
    auto* soak = new QPushButton(tr("Soak…"));
    soak->setObjectName("soak");
    soak->setToolTip(tr("An endpoint or a GGUF file under steady or bursty load for minutes or hours: the drift per hour of "
                        "memory, latency, throughput and errors, as verdict soak measures them"));
    m_bar = new QProgressBar;
    m_status = new QLabel;
    auto* settings = new QGroupBox(tr("Latency sweep"));
    auto* grid = new QGridLayout(settings);
    grid->addWidget(new QLabel(tr("Prompt tokens")), 0, 0);
    grid->addWidget(m_prompts, 0, 1);
    grid->addWidget(new QLabel(tr("Output tokens")), 0, 2);
    grid->addWidget(m_gens, 0, 3);
    grid->addWidget(new QLabel(tr("Batch sizes")), 0, 4);
    grid->addWidget(m_batches, 0, 5);
    grid->addWidget(new QLabel(tr("GPU layers")), 0, 6);
    grid->addWidget(createRunGpuLayersSpin(m_wb, this), 0, 7);
    grid->addWidget(new QLabel(tr("Repetitions")), 1, 0);
    grid->addWidget(m_reps, 1, 1);
    grid->addWidget(new QLabel(tr("Warm-ups")), 1, 2);
    grid->addWidget(m_warmups, 1, 3);
    grid->addWidget(new QLabel(tr("Device")), 1, 4);
    grid->addWidget(createRunDeviceCombo(m_wb, this), 1, 5);
    grid->addWidget(m_run, 1, 6);
    grid->addWidget(m_cancel, 1, 7);
    grid->addWidget(quant, 1, 8);
    grid->addWidget(soak, 1, 9);
    grid->addWidget(m_bar, 2, 0, 1, 10);
    grid->addWidget(m_status, 3, 0, 1, 10);

    m_sweepA = new QComboBox;
    m_sweepB = new QComboBox;
    m_sweepA->setObjectName("sweepA");
    m_sweepB->setObjectName("sweepB");
    auto* pick = new QHBoxLayout;
    pick->addWidget(new QLabel(tr("Show sweep A")));
    pick->addWidget(m_sweepA, 1);
    pick->addWidget(new QLabel(tr("against B")));
    pick->addWidget(m_sweepB, 1);
    m_summary = new QLabel;
    m_summary->setWordWrap(true);

    m_ttft = new ChartPanel(tr("Time to first token by prompt length appears here after a sweep."));
    m_throughput = new ChartPanel(tr("Tokens/s by batch size, with the roofline, appears here after a sweep."));
    m_percentiles = new ChartPanel(tr("Latency percentiles appear here after a sweep."));
    m_memory = new ChartPanel(tr("The memory breakdown appears here after a sweep."));
    auto* charts = new QGridLayout;
    charts->addWidget(m_ttft, 0, 0);
    charts->addWidget(m_throughput, 0, 1);
    charts->addWidget(m_percentiles, 1, 0);
    charts->addWidget(m_memory, 1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(settings);
    layout->addLayout(pick);
    layout->addWidget(m_summary);
    layout->addLayout(charts, 1);

    m_job = new Job(this);
    m_wb.registerJob(m_job);
    connect(m_run, &QPushButton::clicked, this, [this] { runSweeps(); });
    connect(m_cancel, &QPushButton::clicked, this, &PerformanceView::cancel);
    connect(quant, &QPushButton::clicked, this, [this] { openQuantCompare(); });
    connect(soak, &QPushButton::clicked, this, [this] { openSoak(); });
    connect(m_job, &Job::stateChanged, this, &PerformanceView::updateButtons);
    connect(m_job, &Job::progress, this, [this](double f, const QString& text, double) {
        if (f >= 0) m_bar->setValue(int(100 * f));
        m_status->setText(text);
    });
    connect(m_sweepA, &QComboBox::activated, this, &PerformanceView::redraw);
    connect(m_sweepB, &QComboBox::activated, this, &PerformanceView::redraw);
    connect(&m_wb, &Workbench::resultsChanged, this, &PerformanceView::reloadSweeps);
    connect(&m_wb, &Workbench::selectionChanged, this, [this] {
        m_sweepA->setCurrentIndex(-1);
        m_sweepB->setCurrentIndex(-1);
        reloadSweeps();
        updateButtons();
    });
    reloadSweeps();
    updateButtons();
}

void PerformanceView::updateButtons() {
    m_run->setEnabled(!m_job->busy() && !m_wb.modelA().isEmpty() && !m_wb.modelB().isEmpty());
    m_cancel->setEnabled(m_job->state() == Job::State::Running);
}

bool PerformanceView::running() const { return m_job->busy(); }
void PerformanceView::cancel() { m_job->cancel(); }
QString PerformanceView::summaryText() const { return m_summary->text(); }

QuantCompareDialog* PerformanceView::openQuantCompare() {
    const QString a = m_wb.modelA();
    auto* dlg = new QuantCompareDialog(m_wb, QFileInfo(a).isFile() ? a : QString(), this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    dlg->open();
    return dlg;
}

SoakDialog* PerformanceView::openSoak() {
    auto* dlg = new SoakDialog(m_wb, m_wb.modelA(), this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    dlg->open();
    return dlg;
}

int PerformanceView::chartsShown() const {
    int n = 0;
    for (ChartPanel* p : {m_ttft, m_throughput, m_percentiles, m_memory}) n += p->hasChart() ? 1 : 0;
    return n;
}

void PerformanceView::reloadSweeps() {
    auto db = m_wb.openDb();
    if (!db) return;
    auto list = core::SweepRepository(*db).list();
    if (!list) return;
    const qlonglong keepA = m_sweepA->currentData().toLongLong(), keepB = m_sweepB->currentData().toLongLong();
    qlonglong newestA = 0, newestB = 0;
    for (QComboBox* c : {m_sweepA, m_sweepB}) {
        const QSignalBlocker block(c);
        c->clear();
    }
    const std::string a = m_wb.modelA().toStdString(), b = m_wb.modelB().toStdString();
    for (auto it = list->rbegin(); it != list->rend(); ++it) {
        const QString label = tr("#%1 %2 (%3, %4)")
                                  .arg(it->id)
                                  .arg(QString::fromStdString(it->name.empty() ? it->modelPath : it->name))
                                  .arg(QString::fromStdString(it->status))
                                  .arg(QString::fromStdString(it->createdAt.substr(0, 16)));
        for (QComboBox* c : {m_sweepA, m_sweepB}) {
            const QSignalBlocker block(c);
            c->addItem(label, QVariant::fromValue<qlonglong>(it->id));
        }
        if (it->status == "completed" && !newestA && it->modelPath == a) newestA = it->id;
        if (it->status == "completed" && !newestB && it->modelPath == b) newestB = it->id;
    }
    auto select = [](QComboBox* c, qlonglong keep, qlonglong fallback) {
        const QSignalBlocker block(c);
        int i = keep ? c->findData(QVariant::fromValue(keep)) : -1;
        if (i < 0 && fallback) i = c->findData(QVariant::fromValue(fallback));
        c->setCurrentIndex(i);
    };
    select(m_sweepA, keepA, newestA);
    select(m_sweepB, keepB, newestB);
    redraw();
}

void PerformanceView::showSweeps(int64_t sweepA, int64_t sweepB) {
    reloadSweeps();
    if (sweepA > 0) m_sweepA->setCurrentIndex(m_sweepA->findData(QVariant::fromValue<qlonglong>(sweepA)));
    if (sweepB > 0) m_sweepB->setCurrentIndex(m_sweepB->findData(QVariant::fromValue<qlonglong>(sweepB)));
    redraw();
}

void PerformanceView::redraw() {
    const qlonglong a = m_sweepA->currentData().toLongLong(), b = m_sweepB->currentData().toLongLong();
    if (a <= 0 || b <= 0) {
        for (ChartPanel* p : {m_ttft, m_throughput, m_percentiles, m_memory}) p->setChart(nullptr);
        m_summary->setText(tr("No sweep of %1 yet: press “Sweep A and B”, or choose stored sweeps above.")
                               .arg(a <= 0 ? tr("model A") : tr("model B")));
        return;
    }
    auto db = m_wb.openDb();
    if (!db) return;
    auto data = core::buildSweepComparison(*db, a, b);
    if (!data) {
        m_summary->setText(QString::fromStdString(data.error().message));
        return;
    }
    const QString missing = tr("No measured point in one of the sweeps.");
    m_ttft->setChart(render::ttftChart(*data), missing);
    m_throughput->setChart(render::throughputChart(*data), missing);
    m_percentiles->setChart(render::percentilesChart(*data), missing);
    m_memory->setChart(render::memoryChart(*data), missing);
    auto line = [](const core::ReportPerf& p, const std::string& label) {
        QString s = QString::fromStdString(label) + ": ";
        if (!p.missing.empty()) return s + QString::fromStdString(p.missing);
        s += tr("best %1 output tok/s").arg(p.maxOutputTokPerS, 0, 'f', 1);
        if (p.reference) {
            const auto& r = p.points[*p.reference];
            s += tr(", TTFT P50 %1 ms / P99 %2 ms at %3 prompt tokens").arg(r.ttftP50, 0, 'f', 1).arg(r.ttftP99, 0, 'f', 1).arg(r.promptTokens);
            if (r.rooflineFraction) {
                s += tr(", decode at %1 % of the bandwidth roofline").arg(100 * *r.rooflineFraction, 0, 'f', 0);
                // Above 100 %: the weights are small enough to be read from the CPU caches, not DRAM.
                if (*r.rooflineFraction > 1) s += tr(" (the weights fit in the caches)");
            }
        }
        if (p.bandwidthGbPerS) s += tr(" (memory bandwidth %1 GB/s measured)").arg(*p.bandwidthGbPerS, 0, 'f', 1);
        for (const auto& n : p.tokenNotes) s += "\n  " + tr("tokens: ") + QString::fromStdString(n);
        return s;
    };
    m_summary->setText(line(data->perfA, "A " + data->a.label) + "\n" + line(data->perfB, "B " + data->b.label));
}

bool PerformanceView::runSweeps() {
    if (m_job->busy()) return false;
    core::SweepSpec spec;
    QString bad;
    if (!parseList(m_prompts->text(), &spec.promptTokens, &bad) || !parseList(m_gens->text(), &spec.genTokens, &bad) ||
        !parseList(m_batches->text(), &spec.batches, &bad)) {
        showError(this, tr("“%1” is not a list of positive whole numbers (e.g. 32,128).").arg(bad));
        return false;
    }
    spec.reps = m_reps->value();
    spec.warmups = m_warmups->value();
    if (auto r = core::validateSweepSpec(spec, core::kMaxSweepBatch); !r) {
        showError(this, tr("These sweep settings cannot be measured."), QString::fromStdString(r.error().message));
        return false;
    }
    QSettings st;
    st.setValue("sweep/prompts", m_prompts->text());
    st.setValue("sweep/gens", m_gens->text());
    st.setValue("sweep/batches", m_batches->text());
    st.setValue("sweep/reps", m_reps->value());
    st.setValue("sweep/warmups", m_warmups->value());
    const QString refs[2] = {m_wb.modelA(), m_wb.modelB()};
    for (const QString& r : refs)
        if (r.isEmpty()) {
            showError(this, tr("Choose models A and B first (Models screen)."));
            return false;
        }
    core::BackendOpenOptions access[2];  // endpoints' keys and TLS settings, read here (the keyring wants this thread)
    for (int side = 0; side < 2; ++side)
        if (QString why; !m_wb.applyEndpointAccess(refs[side], access[side], &why)) {
            showError(this, tr("Model %1 cannot be reached.").arg(side == 0 ? "A" : "B"), why);
            return false;
        }
    auto ids = std::make_shared<std::pair<int64_t, int64_t>>(0, 0);
    const std::string device = m_wb.runDevice().toStdString();
    const int gpuLayers = m_wb.runGpuLayers();
    const QString names[2] = {m_wb.displayName(refs[0]), m_wb.displayName(refs[1])};
    Workbench* wb = &m_wb;
    m_bar->setValue(0);
    m_job->start([=](JobControl& c) -> JobResult {
        auto db = wb->openDb();
        if (!db) return {tr("The results database cannot be opened."), QString::fromStdString(db.error().message), {}};
        int64_t got[2] = {0, 0};
        QStringList warnings;
        for (int side = 0; side < 2 && !c.cancelled(); ++side) {
            const std::string path = refs[side].toStdString();
            if (core::isEndpointRef(path)) {
                // An endpoint is measured as `verdict load` does: closed-loop concurrency levels =
                // the batch sizes, reps x batch requests per level, the first prompt/output length.
                const core::EndpointRef er = core::parseEndpointRef(path);
                core::EndpointConfig ep;
                ep.baseUrl = er.url;
                ep.model = er.model;
                ep.apiKey = access[side].apiKey;
                ep.caFile = access[side].caFile;
                ep.insecure = access[side].insecure;
                ep.api = access[side].endpointApi;  // a preset's key header, routes and concurrency cap
                c.report(side / 2.0, tr("%1: asking %2 for its model…").arg(side == 0 ? "A" : "B", names[side]));
                core::LoadSettings ls;  // what `verdict load` fills from its options
                if (!access[side].tokenizer.empty()) {
                    auto counter = core::TokenCounter::open(access[side].tokenizer);
                    if (!counter)
                        return {tr("The tokenizer of %1 cannot be read.").arg(names[side]), QString::fromStdString(counter.error().message), {}};
                    ls.spec.tokenCounter = std::move(*counter);
                }
                for (int64_t b : spec.batches) ls.spec.concurrency.push_back(static_cast<int>(b));
                ls.spec.requests = spec.reps * *std::max_element(spec.batches.begin(), spec.batches.end());
                ls.spec.promptWords = static_cast<int>(spec.promptTokens.front());
                ls.spec.maxTokens = static_cast<int>(spec.genTokens.front());
                ls.spec.seed = spec.seed;
                ls.name = names[side].toStdString();
                const int levels = static_cast<int>(ls.spec.concurrency.size());
                const int64_t total = ls.spec.requests;
                auto loaded = core::runEndpointLoad(
                    &*db, ep, ls,
                    [&c, side, n = names[side], levels, total](const core::LoadProgress& p) {
                        const double within = total > 0 ? double(p.completed + p.failed) / double(total) / levels : 0;
                        c.report((side + within) / 2.0, tr("%1 %2: concurrency %3 — %4 done, %5 failed")
                                                            .arg(side == 0 ? "A" : "B", n)
                                                            .arg(p.level)
                                                            .arg(p.completed)
                                                            .arg(p.failed));
                    },
                    c.cancelFlag());
                if (!loaded) {
                    const QString why = QString::fromStdString(loaded.error().message);
                    switch (loaded.error().kind) {
                    case core::ServiceFailure::ModelOpen: return {tr("Endpoint %1 does not answer.").arg(names[side]), why, {}};
                    case core::ServiceFailure::Storage: return {tr("The results could not be stored."), why, {}};
                    case core::ServiceFailure::BadInput:
                    case core::ServiceFailure::Runtime:
                    case core::ServiceFailure::Cancelled: break;
                    }
                    return {tr("The load test of %1 failed.").arg(names[side]), why, {}};
                }
                got[side] = loaded->stored ? loaded->stored->id : 0;
                continue;
            }
            core::SweepSettings settings;  // what `verdict sweep` fills from its options
            settings.spec = spec;
            settings.name = names[side].toStdString();
            settings.device = device;
            settings.gpuLayers = gpuLayers;
            core::SweepEvents events;
            events.loading = [&c, side, n = names[side]] { c.report(-1, tr("%1: loading %2…").arg(side == 0 ? "A" : "B", n)); };
            events.progress = [&c, side, n = names[side]](const core::SweepProgress& p) {
                const double within = p.pointCount > 0 ? double(p.pointIndex + (p.phase == "stored" ? 1 : 0)) / p.pointCount : 0;
                c.report((side + within) / 2.0,
                         tr("%1 %2: point %3/%4 — prompt %5, output %6, batch %7 — %8%9")
                             .arg(side == 0 ? "A" : "B", n)
                             .arg(p.pointIndex + 1)
                             .arg(p.pointCount)
                             .arg(p.promptTokens)
                             .arg(p.genTokens)
                             .arg(p.batch)
                             .arg(QString::fromStdString(p.phase))
                             .arg(p.etaS >= 0 ? tr(", ETA %1 s").arg(int(p.etaS)) : QString()),
                         p.etaS);
            };
            auto outcome = core::runModelSweep(*db, path, settings, events, c.cancelFlag());
            if (!outcome) {
                if (outcome.error().kind == core::ServiceFailure::Cancelled) break;  // while loading: nothing stored
                switch (outcome.error().kind) {
                case core::ServiceFailure::Cancelled:
                case core::ServiceFailure::Runtime:
                case core::ServiceFailure::BadInput:
                    return {tr("Model %1 cannot be read.").arg(names[side]), QString::fromStdString(outcome.error().message), {}};
                case core::ServiceFailure::ModelOpen:
                    return {tr("Model %1 could not be loaded.").arg(names[side]), QString::fromStdString(outcome.error().message), {}};
                case core::ServiceFailure::Storage:
                    return {tr("The sweep stopped: the database refused a write."), QString::fromStdString(outcome.error().message), {}};
                }
            }
            got[side] = outcome->sweep.id;
            for (const auto& w : outcome->warnings) warnings << QString::fromStdString(w);
        }
        *ids = {got[0], got[1]};
        QString done = tr("sweeps %1 and %2 stored").arg(got[0]).arg(got[1]);
        warnings.removeDuplicates();
        for (const QString& w : warnings) done += tr(". Warning: %1").arg(w);
        return {{}, {}, done};
    });
    connect(m_job, &Job::finished, this, [this, ids](const JobResult& r, bool cancelled) {
        if (!r.ok()) showError(this, r.error, r.detail);
        m_bar->setValue(r.ok() && !cancelled ? 100 : m_bar->value());
        m_status->setText(cancelled ? tr("Cancelled: the points measured so far are stored.") : r.ok() ? r.message : r.error);
        m_wb.notifyResultsChanged();
        showSweeps(ids->first, ids->second);
    }, Qt::SingleShotConnection);
    return true;
}

}  // namespace verdict::ui
