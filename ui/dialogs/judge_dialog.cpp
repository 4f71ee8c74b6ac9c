#include "dialogs/judge_dialog.h"

#include "core/services/judge.h"
#include "widgets/error_box.h"
#include "workbench.h"
#include "workers/job.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>

namespace verdict::ui {
namespace {

QPlainTextEdit* readOnlyText(const QString& name) {
    auto* t = new QPlainTextEdit;
    t->setObjectName(name);
    t->setReadOnly(true);
    t->setFocusPolicy(Qt::NoFocus);  // the keys 1-4 and the arrows stay with the dialog
    return t;
}

// The label of a person's stored vote as they saw it (left/right).
QString voteLabel(const core::JudgmentRecord& stored) {
    const auto v = core::humanVoteOf(stored);
    if (!v) return {};
    switch (*v) {
    case core::HumanVote::Left: return "left";
    case core::HumanVote::Right: return "right";
    case core::HumanVote::Tie: return "tie";
    case core::HumanVote::BothBad: return "both bad";
    }
    return {};
}

}  // namespace

JudgeDialog::JudgeDialog(Workbench& workbench, int64_t runA, int64_t runB, QWidget* parent)
    : QDialog(parent), m_wb(workbench), m_runA(runA), m_runB(runB) {
    setWindowTitle(tr("Judge runs %1 and %2").arg(runA).arg(runB));
    resize(1000, 720);

    // A person, blind.
    auto* person = new QGroupBox(tr("Judge yourself, blind"));
    m_name = new QLineEdit;
    m_name->setObjectName("judgeName");
    m_name->setPlaceholderText(tr("your name (stored with each vote)"));
    auto* start = new QPushButton(tr("Start"));
    m_status = new QLabel;
    m_status->setObjectName("judgeStatus");
    m_status->setWordWrap(true);
    m_question = readOnlyText("judgeQuestion");
    m_question->setMaximumHeight(120);
    m_left = readOnlyText("judgeLeft");
    m_right = readOnlyText("judgeRight");
    auto* answers = new QSplitter;
    auto wrap = [](const QString& title, QWidget* w) {
        auto* box = new QGroupBox(title);
        auto* l = new QVBoxLayout(box);
        l->addWidget(w);
        return box;
    };
    answers->addWidget(wrap(tr("Left (1)"), m_left));
    answers->addWidget(wrap(tr("Right (2)"), m_right));
    m_voteButtons = new QWidget;
    auto* buttons = new QHBoxLayout(m_voteButtons);
    buttons->setContentsMargins(0, 0, 0, 0);
    auto* prev = new QPushButton(tr("\u2190 Back"));
    buttons->addWidget(prev);
    const QString labels[] = {tr("1  Left is better"), tr("2  Right is better"), tr("3  Tie"), tr("4  Both bad")};
    for (int k = 1; k <= 4; ++k) {
        auto* b = new QPushButton(labels[k - 1]);
        b->setObjectName(QString("vote%1").arg(k));
        connect(b, &QPushButton::clicked, this, [this, k] { vote(k); });
        buttons->addWidget(b);
    }
    auto* skip = new QPushButton(tr("Skip \u2192"));
    buttons->addWidget(skip);
    auto* nameRow = new QHBoxLayout;
    nameRow->addWidget(new QLabel(tr("Name")));
    nameRow->addWidget(m_name, 1);
    nameRow->addWidget(start);
    auto* personLayout = new QVBoxLayout(person);
    personLayout->addLayout(nameRow);
    personLayout->addWidget(m_status);
    personLayout->addWidget(new QLabel(tr("Question")));
    personLayout->addWidget(m_question);
    personLayout->addWidget(answers, 1);
    personLayout->addWidget(m_voteButtons);
    m_voteButtons->setEnabled(false);

    // A judge model.
    auto* model = new QGroupBox(tr("Let a model judge (both orders per item)"));
    m_judgeRef = new QLineEdit;
    m_judgeRef->setObjectName("judgeModel");
    m_judgeRef->setPlaceholderText(tr("a GGUF file or http://host:port/v1 MODEL"));
    m_mode = new QComboBox;
    m_mode->setObjectName("judgeMode");
    m_mode->addItem(tr("pairwise (A vs B, both orders)"), static_cast<int>(core::JudgeMode::Pairwise));
    m_mode->addItem(tr("rubric (each answer 1-10)"), static_cast<int>(core::JudgeMode::Rubric));
    m_mode->addItem(tr("reference (1-10 against the reference)"), static_cast<int>(core::JudgeMode::Reference));
    auto fileField = [this](const QString& name, const QString& placeholder, const QString& title) {
        auto* edit = new QLineEdit;
        edit->setObjectName(name);
        edit->setPlaceholderText(placeholder);
        auto* browse = new QPushButton(tr("…"));
        connect(browse, &QPushButton::clicked, this, [this, edit, title] {
            const QString f = QFileDialog::getOpenFileName(this, title);
            if (!f.isEmpty()) edit->setText(f);
        });
        auto* row = new QHBoxLayout;
        row->addWidget(edit, 1);
        row->addWidget(browse);
        return std::pair{edit, row};
    };
    auto [promptEdit, promptRow] = fileField("judgePromptFile", tr("built in ({question} {answer_a} {answer_b} / {answer} {rubric} {reference})"),
                                             tr("Judge prompt template"));
    auto [rubricEdit, rubricRow] = fileField("judgeRubricFile", tr("general (rubric modes: JSON {\"category\": \"text\", \"*\": \"default\"} or text)"),
                                             tr("Rubrics"));
    m_promptFile = promptEdit;
    m_rubricFile = rubricEdit;
    // The controls start from the service's defaults, the ones `verdict judge --help` shows.
    const core::JudgeRequest defaults;
    m_mode->setCurrentIndex(std::max(0, m_mode->findData(static_cast<int>(defaults.mode))));
    m_concurrency = new QSpinBox;
    m_concurrency->setObjectName("judgeConcurrency");
    m_concurrency->setRange(1, core::kMaxJudgeConcurrency);
    m_concurrency->setValue(defaults.concurrency);
    m_concurrency->setToolTip(tr("judge calls in flight (endpoints; a local model judges one at a time)"));
    m_judge = new QPushButton(tr("Judge"));
    m_judge->setObjectName("judgeRun");
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setEnabled(false);
    m_progress = new QProgressBar;
    auto* form = new QFormLayout(model);
    form->addRow(tr("Judge"), m_judgeRef);
    auto* row = new QHBoxLayout;
    row->addWidget(m_mode, 1);
    row->addWidget(new QLabel(tr("in flight")));
    row->addWidget(m_concurrency);
    row->addWidget(m_judge);
    row->addWidget(m_cancel);
    form->addRow(tr("Mode"), row);
    form->addRow(tr("Prompt"), promptRow);
    form->addRow(tr("Rubrics"), rubricRow);
    form->addRow(QString(), m_progress);

    m_summary = new QLabel;
    m_summary->setObjectName("judgeSummary");
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(person, 3);
    layout->addWidget(model);
    layout->addWidget(m_summary);

    m_job = new Job(this);
    m_wb.registerJob(m_job);
    connect(start, &QPushButton::clicked, this, [this] { startVoting(m_name->text().trimmed()); });
    // The other screens (the Decision screen's preference row) read the votes when it closes.
    connect(this, &QDialog::finished, &m_wb, &Workbench::notifyResultsChanged);
    connect(prev, &QPushButton::clicked, this, &JudgeDialog::previous);
    connect(skip, &QPushButton::clicked, this, &JudgeDialog::next);
    const std::pair<int, int> keys[] = {{Qt::Key_1, 1}, {Qt::Key_2, 2}, {Qt::Key_3, 3}, {Qt::Key_4, 4}};
    for (const auto& [key, k] : keys)
        connect(new QShortcut(QKeySequence(key), this), &QShortcut::activated, this, [this, k = k] { vote(k); });
    connect(new QShortcut(QKeySequence(Qt::Key_Right), this), &QShortcut::activated, this, &JudgeDialog::next);
    connect(new QShortcut(QKeySequence(Qt::Key_Left), this), &QShortcut::activated, this, &JudgeDialog::previous);
    connect(m_judge, &QPushButton::clicked, this, [this] {
        judgeWithModel(m_judgeRef->text().trimmed(), static_cast<core::JudgeMode>(m_mode->currentData().toInt()),
                       m_concurrency->value());
    });
    connect(m_cancel, &QPushButton::clicked, this, &JudgeDialog::cancelJudging);
    connect(m_job, &Job::progress, this, [this](double f, const QString& text, double) {
        m_progress->setValue(f >= 0 ? static_cast<int>(f * 100) : 0);
        m_progress->setFormat(text);
    });
    connect(m_job, &Job::stateChanged, this, [this] {
        m_judge->setEnabled(!m_job->busy());
        m_cancel->setEnabled(m_job->busy());
    });
    refreshSummary();
}

bool JudgeDialog::startVoting(const QString& person) {
    m_items.clear();
    m_votes.clear();
    m_current = -1;
    m_voteButtons->setEnabled(false);
    if (!core::validJudgeName(person.toStdString())) {
        m_status->setText(tr("Enter your name first (it is stored with each vote)."));
        return false;
    }
    auto db = m_wb.openDb();
    if (!db) {
        m_status->setText(QString::fromStdString(db.error().message));
        return false;
    }
    auto session = core::humanJudging(*db, m_runA, m_runB, person.toStdString());
    if (!session) {
        m_status->setText(QString::fromStdString(session.error().message));
        return false;
    }
    m_person = person;
    m_name->setText(person);
    m_items = std::move(session->items);
    m_votes.assign(m_items.size(), QString());
    for (size_t i = 0; i < m_items.size(); ++i)
        if (auto v = session->votes.find(m_items[i].itemIdx); v != session->votes.end()) m_votes[i] = voteLabel(v->second);
    if (m_items.empty()) {
        m_status->setText(tr("No item to judge: the runs have no item both answered without an error."));
        return false;
    }
    int first = 0;
    while (first < itemCount() && !m_votes[static_cast<size_t>(first)].isEmpty()) ++first;
    m_voteButtons->setEnabled(true);
    m_voteButtons->setFocus();
    showItem(first < itemCount() ? first : 0);
    return true;
}

void JudgeDialog::showItem(int index) {
    if (index < 0 || index >= itemCount()) return;
    m_current = index;
    const core::JudgeItem& it = m_items[static_cast<size_t>(index)];
    const bool aLeft = core::blindPosition(m_person.toStdString(), m_runA, m_runB, it.itemIdx) == "ab";
    m_question->setPlainText(QString::fromStdString(it.question));
    m_left->setPlainText(QString::fromStdString(aLeft ? it.answerA : it.answerB));
    m_right->setPlainText(QString::fromStdString(aLeft ? it.answerB : it.answerA));
    m_status->setText(statusText());
}

bool JudgeDialog::vote(int key) {
    if (m_current < 0 || key < 1 || key > 4) return false;
    const core::JudgeItem& it = m_items[static_cast<size_t>(m_current)];
    const core::HumanVote v = key == 1 ? core::HumanVote::Left
                            : key == 2 ? core::HumanVote::Right
                            : key == 3 ? core::HumanVote::Tie
                                       : core::HumanVote::BothBad;
    auto db = m_wb.openDb();
    if (!db) {
        showError(this, tr("The vote could not be stored."), QString::fromStdString(db.error().message));
        return false;
    }
    auto rec = core::storeHumanVote(*db, m_runA, m_runB, m_person.toStdString(), it.itemIdx, v);
    if (!rec) {
        showError(this, tr("The vote could not be stored."), QString::fromStdString(rec.error().message));
        return false;
    }
    m_votes[static_cast<size_t>(m_current)] = voteLabel(*rec);
    emit voted(it.itemIdx);
    refreshSummary();
    // On to the next item not voted on, else stay.
    for (int i = m_current + 1; i < itemCount(); ++i)
        if (m_votes[static_cast<size_t>(i)].isEmpty()) {
            showItem(i);
            return true;
        }
    m_status->setText(statusText());
    return true;
}

void JudgeDialog::next() {
    if (m_current >= 0 && m_current + 1 < itemCount()) showItem(m_current + 1);
}

void JudgeDialog::previous() {
    if (m_current > 0) showItem(m_current - 1);
}

int JudgeDialog::votedCount() const {
    int n = 0;
    for (const QString& v : m_votes) n += v.isEmpty() ? 0 : 1;
    return n;
}

QString JudgeDialog::leftText() const { return m_left->toPlainText(); }
QString JudgeDialog::rightText() const { return m_right->toPlainText(); }

QString JudgeDialog::statusText() const {
    if (m_current < 0) return m_status->text();
    const core::JudgeItem& it = m_items[static_cast<size_t>(m_current)];
    const QString& v = m_votes[static_cast<size_t>(m_current)];
    QString s = tr("Item %1 of %2%3 · %4 of %2 voted by %5")
                    .arg(m_current + 1)
                    .arg(itemCount())
                    .arg(it.category.empty() ? QString() : " (" + QString::fromStdString(it.category) + ")")
                    .arg(votedCount())
                    .arg(m_person);
    if (!v.isEmpty()) s += tr(" · your vote: %1").arg(v);
    if (votedCount() == itemCount()) s += tr(" · all voted");
    return s;
}

core::JudgeRequest JudgeDialog::judgeRequest(const QString& judgeRef, core::JudgeMode mode, int concurrency) const {
    core::JudgeRequest r;  // the service's defaults for what the dialog does not show (greedy, 1024 tokens, every item)
    r.judge = judgeRef.toStdString();
    r.mode = mode;
    r.concurrency = concurrency;
    r.promptFile = m_promptFile->text().trimmed().toStdString();
    r.rubricFile = m_rubricFile->text().trimmed().toStdString();
    r.backend.device = m_wb.runDevice().toStdString();
    r.backend.gpuLayers = m_wb.runGpuLayers();
    return r;
}

bool JudgeDialog::judgeWithModel(const QString& judgeRef, core::JudgeMode mode, int concurrency) {
    if (m_job->busy()) return false;
    if (judgeRef.isEmpty()) {
        showError(this, tr("Name the judge: a GGUF file or an endpoint (http://host:port/v1 MODEL)."));
        return false;
    }
    core::JudgeRequest request = judgeRequest(judgeRef, mode, concurrency);
    // The files are read now, so that what is wrong with them is said before anything runs.
    auto prepared = core::prepareJudgeRun(request);
    if (!prepared) {
        showError(this, tr("The judge's prompt or rubrics cannot be used."), QString::fromStdString(prepared.error().message));
        return false;
    }
    if (QString why; !m_wb.applyEndpointAccess(QString::fromStdString(prepared->judgeRef), request.backend, &why)) {
        showError(this, tr("The judge endpoint cannot be reached."), why);
        return false;
    }
    Workbench* wb = &m_wb;
    const int64_t a = m_runA, b = m_runB;
    m_progress->setValue(0);
    m_job->start([=](JobControl& c) -> JobResult {
        auto db = wb->openDb();
        if (!db) return {tr("The results database cannot be opened."), QString::fromStdString(db.error().message), {}};
        auto done = core::judgeRunPair(
            *db, a, b, request,
            [&c](const core::JudgeRunProgress& p) {
                c.report(p.total > 0 ? static_cast<double>(p.done) / static_cast<double>(p.total) : 1.0,
                         tr("%1/%2 judged · %3 unreadable · %4 stored before").arg(p.done).arg(p.total).arg(p.unreadable).arg(p.skipped));
            },
            c.cancelFlag());
        if (!done) return {tr("The judge could not start."), QString::fromStdString(done.error().message), {}};
        const core::JudgeRunReport& report = done->report;
        if (report.failedCalls > 0)
            return {tr("%1 judge calls failed (not stored: judge again to retry them).").arg(report.failedCalls),
                    QString::fromStdString(report.firstFailure), {}};
        return {{}, {}, tr("%1 judge calls, %2 unreadable").arg(report.calls).arg(report.unreadable)};
    });
    connect(m_job, &Job::finished, this, [this](const JobResult& r, bool) {
        if (!r.ok()) showError(this, r.error, r.detail);
        m_progress->setFormat(r.ok() ? r.message : r.error);
        m_wb.notifyResultsChanged();
        refreshSummary();
        emit judgingFinished(r.ok());
    }, Qt::SingleShotConnection);
    return true;
}

bool JudgeDialog::judging() const { return m_job->busy(); }
void JudgeDialog::cancelJudging() { m_job->cancel(); }

QString JudgeDialog::summaryText() const { return m_summary->text(); }

void JudgeDialog::refreshSummary() {
    auto db = m_wb.openDb();
    if (!db) return;
    auto sum = core::summarizeJudgments(*db, m_runA, m_runB);
    m_summary->setText(sum ? QString::fromStdString(core::describeJudgeSummaries(*sum)).trimmed()
                           : QString::fromStdString(sum.error().message));
}

}  // namespace verdict::ui
