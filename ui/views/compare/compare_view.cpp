#include "views/compare/compare_view.h"

#include "core/models/model_card_json.h"
#include "core/run/backend_factory.h"
#include "core/services/compare.h"
#include "core/store/vote_repository.h"
#include "core/version.h"
#include "widgets/device_combo.h"
#include "widgets/error_box.h"
#include "workbench.h"
#include "workers/job.h"

#include <nlohmann/json.hpp>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRandomGenerator>
#include <QSettings>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include <chrono>
#include <thread>

namespace verdict::ui {

// One side's loaded model, used only by that side's job thread (and replaced there when the
// side's model changes), so a model is loaded once and stays loaded between prompts.
struct LoadedBackend {
    QString ref;
    QString device;  // where it was opened (a change of the run device reopens it)
    int gpuLayers = -1;  // and how much of it went there (a change reopens it too)
    std::unique_ptr<core::ModelBackend> backend;
};

namespace {

QString memoryText(const Workbench& wb, const QString& ref) {
    const ModelEntry* e = wb.models()->find(ref);
    if (!e || !e->card) return {};
    const MemoryEstimate& m = e->card->memoryAtCtx ? *e->card->memoryAtCtx : e->card->memoryTrained;
    return QObject::tr("≈ %1 (weights + KV at %2 tokens)")
        .arg(QString::fromStdString(core::formatBytes(m.totalBytes())))
        .arg(m.ctx);
}

}  // namespace

CompareView::CompareView(Workbench& workbench, QWidget* parent) : QWidget(parent), m_wb(workbench) {
    setObjectName("compareView");
    m_modelA = new QComboBox;
    m_modelB = new QComboBox;
    m_modelA->setObjectName("modelA");
    m_modelB->setObjectName("modelB");
    for (QComboBox* c : {m_modelA, m_modelB}) {
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(24);
    }
    auto* swap = new QPushButton(tr("⇄ Swap"));
    m_blind = new QCheckBox(tr("Blind (hide names, shuffle sides)"));
    m_blind->setObjectName("blindMode");
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Model A")));
    top->addWidget(m_modelA, 1);
    top->addWidget(swap);
    top->addWidget(new QLabel(tr("Model B")));
    top->addWidget(m_modelB, 1);
    top->addWidget(m_blind);
    top->addWidget(new QLabel(tr("Device")));
    top->addWidget(createRunDeviceCombo(m_wb, this));
    top->addWidget(new QLabel(tr("GPU layers")));
    top->addWidget(createRunGpuLayersSpin(m_wb, this));

    m_system = new QLineEdit;
    m_system->setPlaceholderText(tr("System message (optional)"));
    m_perSide = new QCheckBox(tr("Separate settings for model B"));
    auto* settingsRow = new QHBoxLayout;
    settingsRow->addWidget(buildSettings(m_shared, tr("Settings")), 1);
    m_sideBBox = static_cast<QGroupBox*>(buildSettings(m_sideB, tr("Model B's settings")));
    m_sideBBox->setVisible(false);
    settingsRow->addWidget(m_sideBBox, 1);

    m_prompt = new QPlainTextEdit;
    m_prompt->setObjectName("prompt");
    m_prompt->setPlaceholderText(tr("Type a prompt and press Ctrl+Enter: both models answer it side by side. "
                                    "Follow-up prompts continue the chat (New chat starts over)."));
    m_prompt->setMaximumHeight(90);
    m_send = new QPushButton(tr("Send to both"));
    m_send->setObjectName("sendButton");
    m_send->setDefault(true);
    m_stop = new QPushButton(tr("Stop"));
    auto* newChatBtn = new QPushButton(tr("New chat"));
    auto* promptButtons = new QVBoxLayout;
    promptButtons->addWidget(m_send);
    promptButtons->addWidget(m_stop);
    promptButtons->addWidget(newChatBtn);
    auto* promptRow = new QHBoxLayout;
    promptRow->addWidget(m_prompt, 1);
    promptRow->addLayout(promptButtons);

    m_left.index = 0;
    m_right.index = 1;
    buildSide(m_left);
    buildSide(m_right);
    m_asked = new QLabel;
    m_asked->setObjectName("askedPrompt");
    m_asked->setWordWrap(true);
    m_asked->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* panes = new QSplitter;
    for (Side* s : {&m_left, &m_right}) {
        auto* w = new QWidget;
        auto* l = new QVBoxLayout(w);
        l->setContentsMargins(0, 0, 0, 0);
        l->addWidget(s->title);
        l->addWidget(s->stats);
        l->addWidget(s->output, 1);
        panes->addWidget(w);
    }

    m_voteLeft = new QPushButton;
    m_voteTie = new QPushButton(tr("Tie"));
    m_voteRight = new QPushButton;
    m_voteLeft->setObjectName("voteLeft");
    m_voteRight->setObjectName("voteRight");
    m_winRate = new QLabel;
    m_winRate->setObjectName("winRate");
    m_winRate->setWordWrap(true);
    auto* votes = new QHBoxLayout;
    votes->addWidget(m_voteLeft);
    votes->addWidget(m_voteTie);
    votes->addWidget(m_voteRight);
    votes->addWidget(m_winRate, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_system);
    layout->addWidget(m_perSide);
    layout->addLayout(settingsRow);
    layout->addLayout(promptRow);
    layout->addWidget(m_asked);
    layout->addWidget(panes, 1);
    layout->addLayout(votes);

    connect(m_send, &QPushButton::clicked, this, [this] { send(); });
    connect(m_stop, &QPushButton::clicked, this, &CompareView::stop);
    connect(newChatBtn, &QPushButton::clicked, this, &CompareView::newChat);
    auto* sendShortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this);
    connect(sendShortcut, &QShortcut::activated, this, [this] { send(); });
    connect(swap, &QPushButton::clicked, this, [this] { m_wb.setModels(m_wb.modelB(), m_wb.modelA()); });
    connect(m_perSide, &QCheckBox::toggled, m_sideBBox, &QWidget::setVisible);
    connect(m_blind, &QCheckBox::toggled, this, [this] {
        newChat();
        updateButtons();
    });
    auto chosen = [this] {
        m_wb.setModels(m_modelA->currentData().toString(), m_modelB->currentData().toString());
    };
    connect(m_modelA, &QComboBox::activated, this, chosen);
    connect(m_modelB, &QComboBox::activated, this, chosen);
    connect(m_voteLeft, &QPushButton::clicked, this, [this] { vote(-1); });
    connect(m_voteTie, &QPushButton::clicked, this, [this] { vote(0); });
    connect(m_voteRight, &QPushButton::clicked, this, [this] { vote(1); });
    connect(&m_wb, &Workbench::modelsChanged, this, &CompareView::refreshModels);
    connect(&m_wb, &Workbench::selectionChanged, this, [this] {
        refreshModels();
        newChat();
        refreshWinRate();
    });
    // Last choices; the first time, the compare service's defaults (the same as `verdict compare`).
    QSettings st;
    const core::CompareSettings defaults;
    m_shared.temperature->setValue(st.value("compare/temperature", defaults.generation.temperature).toDouble());
    m_shared.maxTokens->setValue(st.value("compare/maxTokens", defaults.generation.maxTokens).toInt());
    m_shared.seed->setValue(st.value("compare/seed", static_cast<qulonglong>(defaults.generation.seed)).toInt());
    m_shared.chatTemplate->setChecked(st.value("compare/chatTemplate", defaults.useChatTemplate).toBool());
    m_system->setText(st.value("compare/system").toString());
    refreshModels();
    refreshWinRate();
    updateButtons();
}

core::CompareSettings CompareView::compareSettingsOf(const Settings& w) const {
    core::CompareSettings s;
    s.system = m_system->text().trimmed().toStdString();
    s.useChatTemplate = w.chatTemplate->isChecked();
    s.generation.temperature = w.temperature->value();
    s.generation.maxTokens = w.maxTokens->value();
    s.generation.seed = static_cast<uint64_t>(w.seed->value());
    return s;
}

CompareView::~CompareView() {
    // The jobs are children and would be destroyed after the sides they write to: stop them first.
    for (Side* s : {&m_left, &m_right}) delete s->job;
}

QWidget* CompareView::buildSettings(Settings& s, const QString& title) {
    auto* box = new QGroupBox(title);
    const core::CompareSettings defaults;
    s.temperature = new QDoubleSpinBox;
    s.temperature->setRange(0, 2);
    s.temperature->setSingleStep(0.1);
    s.temperature->setValue(defaults.generation.temperature);
    s.temperature->setToolTip(tr("0 = greedy (deterministic)"));
    s.maxTokens = new QSpinBox;
    s.maxTokens->setRange(1, 32768);
    s.maxTokens->setValue(defaults.generation.maxTokens);
    s.seed = new QSpinBox;
    s.seed->setRange(0, 1 << 30);
    s.seed->setValue(static_cast<int>(defaults.generation.seed));
    s.chatTemplate = new QCheckBox(tr("Use the model's chat template"));
    s.chatTemplate->setChecked(defaults.useChatTemplate);
    auto* l = new QHBoxLayout(box);
    l->addWidget(new QLabel(tr("Temperature")));
    l->addWidget(s.temperature);
    l->addWidget(new QLabel(tr("Max tokens")));
    l->addWidget(s.maxTokens);
    l->addWidget(new QLabel(tr("Seed")));
    l->addWidget(s.seed);
    l->addWidget(s.chatTemplate);
    l->addStretch();
    return box;
}

void CompareView::buildSide(Side& side) {
    side.job = new Job(this);
    m_wb.registerJob(side.job);
    side.backend = std::make_shared<LoadedBackend>();
    side.title = new QLabel;
    QFont f = side.title->font();
    f.setBold(true);
    f.setPointSizeF(f.pointSizeF() * 1.15);
    side.title->setFont(f);
    side.stats = new QLabel(tr("—"));
    side.stats->setObjectName(side.index == 0 ? "statsLeft" : "statsRight");
    side.output = new QPlainTextEdit;
    side.output->setObjectName(side.index == 0 ? "answerLeft" : "answerRight");
    side.output->setReadOnly(true);
    connect(side.job, &Job::finished, this, [this, &side](const JobResult& r, bool cancelled) {
        side.done = true;
        side.failed = !r.ok();
        if (!r.ok()) {
            side.output->appendPlainText("\n[" + r.error + "]");
            showError(this, r.error, r.detail);
        } else if (cancelled) {
            side.output->appendPlainText(tr("\n[stopped]"));
        }
        sideFinished();
    });
    connect(side.job, &Job::stateChanged, this, [this] { updateButtons(); });
}

void CompareView::refreshModels() {
    for (QComboBox* c : {m_modelA, m_modelB}) {
        const QSignalBlocker block(c);
        c->clear();
        for (const ModelEntry& e : m_wb.models()->entries()) c->addItem(e.name, e.ref);
    }
    m_modelA->setCurrentIndex(m_modelA->findData(m_wb.modelA()));
    m_modelB->setCurrentIndex(m_modelB->findData(m_wb.modelB()));
    if (!busy()) {
        const bool blind = m_blind->isChecked();
        m_left.title->setText(blind ? tr("Answer 1") : tr("A: %1").arg(m_wb.displayName(m_wb.modelA())));
        m_right.title->setText(blind ? tr("Answer 2") : tr("B: %1").arg(m_wb.displayName(m_wb.modelB())));
    }
}

bool CompareView::busy() const { return m_left.job->busy() || m_right.job->busy(); }

bool CompareView::send(const QString& promptArg) {
    if (busy()) return false;
    const QString prompt = promptArg.isEmpty() ? m_prompt->toPlainText().trimmed() : promptArg;
    if (prompt.isEmpty()) {
        showError(this, tr("Type a prompt first."));
        return false;
    }
    const QString a = m_wb.modelA(), b = m_wb.modelB();
    if (a.isEmpty() || b.isEmpty()) {
        showError(this, tr("Choose two models (A and B) first: on the Models screen, or in the lists above."));
        return false;
    }
    const bool blind = m_blind->isChecked();
    // A fresh chat in blind mode draws the sides; follow-ups keep them.
    if (blind && m_left.history.empty()) m_swapped = QRandomGenerator::global()->bounded(2) == 1;
    if (!blind) m_swapped = false;
    m_lastPrompt = prompt;
    m_voted = false;
    QSettings st;
    st.setValue("compare/temperature", m_shared.temperature->value());
    st.setValue("compare/maxTokens", m_shared.maxTokens->value());
    st.setValue("compare/seed", m_shared.seed->value());
    st.setValue("compare/chatTemplate", m_shared.chatTemplate->isChecked());
    st.setValue("compare/system", m_system->text());
    m_asked->setText(tr("<b>Prompt:</b> %1").arg(prompt.toHtmlEscaped().replace('\n', "<br>")));
    refreshModels();
    const Settings& settingsB = m_perSide->isChecked() ? m_sideB : m_shared;
    startSide(m_left, m_swapped ? b : a, m_swapped ? settingsB : m_shared, prompt);
    startSide(m_right, m_swapped ? a : b, m_swapped ? m_shared : settingsB, prompt);
    m_prompt->clear();
    updateButtons();
    return true;
}

void CompareView::startSide(Side& side, const QString& ref, const Settings& settings, const QString& prompt) {
    side.ref = ref;
    side.answer.clear();
    side.done = false;
    side.failed = false;
    if (!side.history.empty()) side.output->appendPlainText("\n— " + prompt + "\n");
    else side.output->clear();
    side.stats->setText(tr("loading…"));

    const core::CompareSettings cs = compareSettingsOf(settings);
    const core::Prompt p = core::comparePrompt(cs, side.history, prompt.toStdString());
    const core::GenerationParams gp = cs.generation;

    // Both sides decode at once: each gets half the cores so neither starves the other.
    const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2);
    const QString memory = memoryText(m_wb, ref).isEmpty() ? QString() : " · " + memoryText(m_wb, ref);
    const QString device = m_wb.runDevice();
    const int gpuLayers = m_wb.runGpuLayers();
    core::BackendOpenOptions access;  // an endpoint's key and TLS settings, read here (the keyring wants this thread)
    if (QString why; !m_wb.applyEndpointAccess(ref, access, &why)) {
        side.failed = side.done = true;
        side.stats->setText(tr("failed"));
        showError(this, tr("The model could not be reached."), why);
        return;
    }
    auto holder = side.backend;
    Side* sp = &side;
    side.job->start([holder, ref, device, gpuLayers, p, gp, threads, memory, sp, access](JobControl& c) -> JobResult {
        if (!holder->backend || holder->ref != ref || holder->device != device ||
            holder->gpuLayers != gpuLayers) {
            holder->backend.reset();
            core::BackendOpenOptions o;
            o.threads = threads;
            o.device = device.toStdString();
            o.gpuLayers = gpuLayers;
            o.engineVersion = core::toolVersion();
            o.cancelLoad = c.cancelFlag();
            o.apiKey = access.apiKey;
            o.caFile = access.caFile;
            o.insecure = access.insecure;
            o.endpointApi = access.endpointApi;  // a preset's key header, routes and concurrency cap
            auto b = core::openModelBackend(ref.toStdString(), o);
            if (!b) {
                if (c.cancelled()) return {};
                return {tr("The model could not be loaded."), QString::fromStdString(b.error().message), {}};
            }
            holder->backend = std::move(*b);
            holder->ref = ref;
            holder->device = device;
            holder->gpuLayers = gpuLayers;
        }
        using Clock = std::chrono::steady_clock;
        const auto t0 = Clock::now();
        std::optional<Clock::time_point> first;
        int64_t pieces = 0;
        auto lastPost = t0;
        std::string pending;
        auto flush = [&](bool force) {
            const auto now = Clock::now();
            // At most ~60 updates a second: the UI thread stays free however fast the model is.
            if (!force && now - lastPost < std::chrono::milliseconds(16)) return;
            lastPost = now;
            const double ttft = first ? std::chrono::duration<double, std::milli>(*first - t0).count() : 0;
            const double secs = first ? std::chrono::duration<double>(now - *first).count() : 0;
            const double tps = secs > 0 && pieces > 1 ? (pieces - 1) / secs : 0;
            const QString text = QString::fromStdString(pending);
            pending.clear();
            const QString stats = tr("TTFT %1 ms · %2 tok/s · %3 tokens%4")
                                      .arg(ttft, 0, 'f', 0)
                                      .arg(tps, 0, 'f', 1)
                                      .arg(pieces)
                                      .arg(memory);
            c.post([sp, text, stats] {
                sp->answer += text;
                sp->output->moveCursor(QTextCursor::End);
                sp->output->insertPlainText(text);
                sp->stats->setText(stats);
            });
        };
        auto onToken = [&](std::string_view piece) {
            if (c.cancelled()) return false;
            if (!first) first = Clock::now();
            ++pieces;
            pending.append(piece);
            flush(false);
            return true;
        };
        auto g = holder->backend->generate(p, gp, onToken);
        flush(true);
        if (!g) return {tr("The model could not answer this prompt."), QString::fromStdString(g.error().message), {}};
        // The backend's own figures are the measured ones (the same as verdict generate / run).
        const QString stats = tr("TTFT %1 ms · %2 tok/s · %3 tokens (%4 in)%5 · stop: %6")
                                  .arg(g->ttftMs.value_or(0), 0, 'f', 0)
                                  .arg(g->decodeTps.value_or(0), 0, 'f', 1)
                                  .arg(g->tokensOut)
                                  .arg(g->tokensIn)
                                  .arg(memory)
                                  .arg(QString::fromStdString(g->stopReason));
        const QString full = QString::fromStdString(g->text);
        c.post([sp, stats, full] {
            sp->stats->setText(stats);
            sp->answer = full;  // the backend's text (stop strings cut) is what the vote stores
        });
        return {};
    });
}

void CompareView::sideFinished() {
    if (!m_left.done || !m_right.done) return;
    for (Side* s : {&m_left, &m_right}) {
        if (s->failed) continue;
        s->history.push_back({"user", m_lastPrompt.toStdString()});
        s->history.push_back({"assistant", s->answer.toStdString()});
    }
    if (m_left.failed || m_right.failed) m_voted = true;
    updateButtons();
    emit bothFinished();
}

void CompareView::stop() {
    m_left.job->cancel();
    m_right.job->cancel();
}

void CompareView::newChat() {
    if (busy()) stop();
    for (Side* s : {&m_left, &m_right}) {
        s->history.clear();
        s->output->clear();
        s->stats->setText(tr("—"));
    }
    m_voted = true;
    m_swapped = false;
    m_asked->clear();
    refreshModels();
    updateButtons();
}

void CompareView::updateButtons() {
    const bool running = busy();
    m_send->setEnabled(!running);
    m_stop->setEnabled(running);
    const bool canVote = !running && !m_voted && m_left.done && m_right.done;
    const bool blind = m_blind->isChecked();
    m_voteLeft->setText(blind ? tr("◀ Answer 1 is better") : tr("◀ A is better"));
    m_voteRight->setText(blind ? tr("Answer 2 is better ▶") : tr("B is better ▶"));
    for (QPushButton* b : {m_voteLeft, m_voteTie, m_voteRight}) b->setEnabled(canVote);
}

bool CompareView::vote(int side) {
    if (m_voted || busy() || !m_left.done || !m_right.done) return false;
    // Map the pane back to the model: left is A unless blind mode swapped the sides.
    const Side& sideA = m_swapped ? m_right : m_left;
    const Side& sideB = m_swapped ? m_left : m_right;
    core::VoteWinner winner = core::VoteWinner::Tie;
    if (side != 0) winner = ((side < 0) != m_swapped) ? core::VoteWinner::A : core::VoteWinner::B;
    core::VoteRecord v;
    // Stored as the CLI stores them (verdict compare --vote), so `verdict votes` sees the same pair.
    v.modelA = core::normalizeModelRef(sideA.ref.toStdString());
    v.modelB = core::normalizeModelRef(sideB.ref.toStdString());
    v.prompt = m_lastPrompt.toStdString();
    v.answerA = sideA.answer.toStdString();
    v.answerB = sideB.answer.toStdString();
    v.winner = winner;
    v.blind = m_blind->isChecked();
    const Settings& sb = m_perSide->isChecked() ? m_sideB : m_shared;
    v.settings = core::compareVoteSettings(compareSettingsOf(m_shared), compareSettingsOf(sb), "window");
    auto db = m_wb.openDb();
    if (!db) {
        showError(this, tr("The vote could not be stored."), QString::fromStdString(db.error().message));
        return false;
    }
    if (auto r = core::VoteRepository(*db).add(v); !r) {
        showError(this, tr("The vote could not be stored."), QString::fromStdString(r.error().message));
        return false;
    }
    m_voted = true;
    if (m_blind->isChecked()) {  // reveal who was who
        m_left.title->setText(tr("Answer 1 was %1").arg(m_wb.displayName(m_left.ref)));
        m_right.title->setText(tr("Answer 2 was %1").arg(m_wb.displayName(m_right.ref)));
    }
    updateButtons();
    refreshWinRate();
    m_wb.notifyResultsChanged();
    return true;
}

void CompareView::refreshWinRate() {
    const QString a = m_wb.modelA(), b = m_wb.modelB();
    if (a.isEmpty() || b.isEmpty()) {
        m_winRate->clear();
        return;
    }
    auto db = m_wb.openDb();
    if (!db) return;
    auto s = core::VoteRepository(*db).summary(core::normalizeModelRef(a.toStdString()),
                                               core::normalizeModelRef(b.toStdString()));
    if (!s) {
        m_winRate->setText(QString::fromStdString(s.error().message));
        return;
    }
    const int64_t decided = s->decided;
    if (s->votes == 0) {
        m_winRate->setText(tr("No votes yet for this pair: ask both, then pick the better answer."));
        return;
    }
    if (decided == 0 || !s->winRateA) {
        m_winRate->setText(tr("%n tie(s), no decided vote yet.", nullptr, int(s->ties)));
        return;
    }
    m_winRate->setText(tr("A wins %1 of %2 decided votes (%3 %, 95 % CI %4–%5 %), %6 tie(s); B wins %7.")
                           .arg(s->winsA)
                           .arg(decided)
                           .arg(100 * *s->winRateA, 0, 'f', 0)
                           .arg(100 * s->winRateACi.lo, 0, 'f', 0)
                           .arg(100 * s->winRateACi.hi, 0, 'f', 0)
                           .arg(s->ties)
                           .arg(s->winsB));
}

QString CompareView::answerText(int side) const { return (side == 0 ? m_left : m_right).output->toPlainText(); }
QString CompareView::statsText(int side) const { return (side == 0 ? m_left : m_right).stats->text(); }
QString CompareView::winRateText() const { return m_winRate->text(); }

}  // namespace verdict::ui
