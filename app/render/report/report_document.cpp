#include "report/report_document.h"

#include "core/models/model_card_json.h"
#include "core/report/report_format.h"
#include "report/report_blocks.h"
#include "report/report_chart_data.h"

#include <QObject>

#include <algorithm>
#include <cstdio>

namespace verdict::render {
namespace {

using core::ReportData;
using namespace report_blocks;

void summarySection(const ReportData& d, QList<DocBlock>& out) {
    const QStringList titles = reportSectionTitles();
    out << heading(titles[0], 1);
    const Tone tone = d.recommendation.winner == core::Winner::A || d.recommendation.winner == core::Winner::B ? Tone::Good
                                                                                                               : Tone::Note;
    out << callout(q(d.recommendation.headline), tone);
    if (d.accuracy.refused) {
        out << para("Accuracy: " + q(d.accuracy.refusedReason) + ".", Tone::Warning);
    } else if (!d.accuracy.nothingScored.empty()) {
        out << para("Accuracy: " + q(d.accuracy.nothingScored) + ".", Tone::Warning);
    } else if (d.accuracy.paired) {
        const auto& p = *d.accuracy.paired;
        out << para(QString("Accuracy on '%1': A %2, B %3. The difference (A \u2212 B) is %4, 95 % bootstrap interval "
                            "%5 to %6 points; McNemar's exact test gives p = %7, so the difference is %8.")
                        .arg(q(d.accuracy.suiteName), ci(d.accuracy.a.overall), ci(d.accuracy.b.overall),
                             q(core::formatPoints(p.difference)), fmt("%+.1f", p.differenceCi.lo * 100),
                             fmt("%+.1f", p.differenceCi.hi * 100), q(core::formatPValue(p.mcnemarP)),
                             d.accuracy.significant ? "statistically significant at the 5 % level"
                                                    : "not statistically significant at the 5 % level"));
    }
    out << heading("Winner per criterion", 2);
    DocTable t;
    t.header = {"Criterion", "A", "B", "Winner", "Weight", "Note"};
    t.columnWeights = {2.2, 1.9, 1.9, 0.9, 1.0, 2.6};
    t.firstColumnBold = true;
    for (const auto& r : d.decision) {
        QString winner = r.winner == core::Winner::A     ? "A"
                         : r.winner == core::Winner::B   ? "B"
                         : r.winner == core::Winner::Tie ? "tie"
                                                         : QString::fromUtf8(core::kDash);
        t.rows << QStringList{q(r.label), q(r.aValue), q(r.bValue), winner, fmt("%g", r.weight), q(r.note)};
        QList<int> hl;
        if (r.winner == core::Winner::A) hl << 1;
        if (r.winner == core::Winner::B) hl << 2;
        t.highlight << hl;
    }
    out << table(t);
    out << heading("Why", 2);
    QStringList reasons;
    for (const auto& r : d.recommendation.reasons) reasons << q(r);
    out << bullets(reasons);
    if (!d.missing.empty()) {
        out << heading("What this report does not cover", 2);
        QStringList miss;
        for (const auto& m : d.missing) miss << q(m);
        out << bullets(miss);
    }
}

void modelsSection(const ReportData& d, QList<DocBlock>& out) {
    out << heading(reportSectionTitles()[1], 1);
    DocTable t;
    t.header = {"", sideName(d.a), sideName(d.b)};
    t.columnWeights = {1.3, 2.5, 2.5};
    t.firstColumnBold = true;
    auto row = [&](const QString& name, auto get) { t.rows << QStringList{name, get(d.a), get(d.b)}; };
    auto card = [](const core::ReportModel& m, const QString& v) {
        return m.cardAvailable ? v : QString("file not readable: ") + q(m.cardError);
    };
    row("Run", [](const core::ReportModel& m) { return QString("#%1").arg(m.runId); });
    row("File", [](const core::ReportModel& m) { return q(m.path); });
    row("Architecture", [&](const core::ReportModel& m) { return card(m, q(m.arch)); });
    row("Parameters (total)", [&](const core::ReportModel& m) { return card(m, q(core::formatCount(m.paramsTotal))); });
    row("Parameters (active per token)", [&](const core::ReportModel& m) { return card(m, q(core::formatCount(m.paramsActive))); });
    row("Quantization", [&](const core::ReportModel& m) { return card(m, q(m.quantization)); });
    row("File size", [](const core::ReportModel& m) {
        return q(core::formatBytes(static_cast<uint64_t>(m.fileBytes))) + QString(" (%1 bytes)").arg(m.fileBytes);
    });
    row("Context (trained)", [&](const core::ReportModel& m) { return card(m, QString("%1 tokens").arg(m.contextTrain)); });
    row("KV cache per token", [&](const core::ReportModel& m) { return card(m, q(core::formatBytes(m.kvBytesPerToken))); });
    row("License", [](const core::ReportModel& m) { return q(m.license); });
    row("Chat template", [](const core::ReportModel& m) {
        return q(m.chatTemplateFamily.empty() ? "none" : m.chatTemplateFamily) + " (run used: " + q(m.chatTemplateMode) + ")";
    });
    row("Template SHA-256", [](const core::ReportModel& m) {
        return m.chatTemplateHash.empty() ? QString("none (raw prompts)") : q(m.chatTemplateHash);
    });
    row("Tokenizer", [&](const core::ReportModel& m) { return card(m, q(m.tokenizer)); });
    row("File SHA-256", [](const core::ReportModel& m) { return q(m.sha256); });
    out << table(t);
    out << para("Figures read from the GGUF metadata and tensor table (the same card as `verdict info`); the SHA-256 "
                "is of the file bytes the runs used.",
                Tone::Note);
}

// Classification suites: per-label precision / recall / F1 of both runs, macro-F1, and each run's
// confusion matrix (definitions: docs/metrics.md "Classification").
void classificationSection(const ReportData& d, QList<DocBlock>& out) {
    const auto& acc = d.accuracy;
    out << heading("Classification", 2);
    out << para(QString("Per label: precision TP/(TP+FP) and recall TP/(TP+FN) with Wilson 95 % intervals, F1 = "
                        "2TP/(2TP+FP+FN) and macro-F1 (the mean F1 over the labels) with percentile bootstrap 95 % "
                        "intervals over items (%1 resamples). An output naming no label counts against its gold "
                        "label's recall.")
                    .arg(core::kBootstrapResamples));
    auto pct = [](const std::optional<double>& v, const core::Interval& i) {
        if (!v) return QString::fromUtf8(core::kDash);
        return fmt("%.1f", *v * 100) + QString(" [%1\u2013%2]").arg(fmt("%.1f", i.lo * 100), fmt("%.1f", i.hi * 100));
    };
    const std::vector<std::string> labels = core::unionLabels(acc.classificationA, acc.classificationB);
    DocTable t;
    t.header = {"Label", "A precision", "A recall", "A F1", "B precision", "B recall", "B F1"};
    t.columnWeights = {1.2, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5};
    t.firstColumnBold = true;
    for (const auto& l : labels) {
        QStringList row{q(l)};
        for (const auto* c : {&acc.classificationA, &acc.classificationB}) {
            const core::LabelMetrics* m = *c ? (*c)->find(l) : nullptr;
            if (!m) {
                row << QString::fromUtf8(core::kDash) << QString::fromUtf8(core::kDash) << QString::fromUtf8(core::kDash);
                continue;
            }
            row << pct(m->precision, m->precisionCi) << pct(m->recall, m->recallCi) << pct(m->f1, m->f1Ci);
        }
        t.rows << row;
    }
    QStringList macro{"macro-F1"};
    for (const auto* c : {&acc.classificationA, &acc.classificationB}) {
        macro << "" << "" << (*c ? pct((*c)->macroF1, (*c)->macroF1Ci) : QString::fromUtf8(core::kDash));
    }
    t.rows << macro;
    out << table(t);
    for (const auto& [side, c] : {std::pair{&d.a, &acc.classificationA}, std::pair{&d.b, &acc.classificationB}}) {
        if (!*c) continue;
        DocTable m;
        m.header << QString("%1: gold \u2193 / predicted \u2192").arg(QChar(side->side));
        for (const auto& l : (*c)->labels) m.header << q(l);
        m.header << "(no label)";
        m.firstColumnBold = true;
        for (size_t g = 0; g < (*c)->labels.size(); ++g) {
            QStringList row{q((*c)->labels[g])};
            for (int64_t v : (*c)->confusion[g]) row << QString::number(v);
            m.rows << row;
        }
        out << table(m);
    }
}

// Needle-in-a-haystack suites: accuracy per prompt length (rows) and needle depth (columns) of
// each run, the cells that could not run marked, and the KV cache each length needs.
void needleSection(const ReportData& d, QList<DocBlock>& out) {
    const auto& acc = d.accuracy;
    out << heading("Long context (needle in a haystack)", 2);
    out << para("Accuracy by prompt length in tokens (rows) and where the needle sits in the text (columns, 0 % = "
                "first sentence, 100 % = last). \u201ccannot run\u201d: no item of that cell ran (the prompt did not "
                "fit the context, or the device's memory); the reason is given below the table.");
    for (const auto& [side, g] : {std::pair{&d.a, &acc.needleA}, std::pair{&d.b, &acc.needleB}}) {
        if (!*g) continue;
        DocTable t;
        t.header << QString("%1: tokens").arg(QChar(side->side));
        for (double dp : (*g)->depths) t.header << fmt("%g %%", dp);
        const bool kv = side->cardAvailable && side->kvBytesPerToken > 0;
        if (kv) t.header << "KV cache";
        t.firstColumnBold = true;
        QStringList reasons;
        for (size_t li = 0; li < (*g)->lengths.size(); ++li) {
            QStringList row{QString::number((*g)->lengths[li])};
            for (size_t di = 0; di < (*g)->depths.size(); ++di) {
                const core::NeedleCell& c = (*g)->at(li, di);
                if (c.n == 0) row << QString::fromUtf8(core::kDash);
                else if (!c.held()) row << "cannot run";
                else row << fmt("%.0f %%", 100 * *c.accuracy()) + QString(" (%1/%2)").arg(c.correct).arg(c.n);
                if (!c.error.empty() && reasons.size() < 3 && !reasons.contains(q(c.error))) reasons << q(c.error);
            }
            if (kv) row << q(core::formatBytes(side->kvBytesPerToken * uint64_t((*g)->lengths[li])));
            t.rows << row;
        }
        out << table(t);
        if (!reasons.isEmpty()) out << bullets(reasons);
    }
}

// Conversation suites: accuracy by range of turn indices of both runs (turns 1-5 against 101-200:
// does the model still hold what it was told early on).
void turnsSection(const ReportData& d, QList<DocBlock>& out) {
    const auto& acc = d.accuracy;
    out << heading("Multi-turn consistency", 2);
    out << para("Accuracy of the turns that carry a reference, by turn index (ranges of turns), with Wilson 95 % "
                "intervals: whether facts given early in a conversation are still used many turns later.");
    const auto ranges = core::unionRanges(acc.turnsA, acc.turnsB);
    DocTable t;
    t.header = {"Turns", sideName(d.a), sideName(d.b)};
    t.columnWeights = {1.2, 2.4, 2.4};
    t.firstColumnBold = true;
    for (const auto& [first, last] : ranges) {
        QStringList row{first == last ? QString::number(first) : QString("%1\u2013%2").arg(first).arg(last)};
        for (const auto* tr : {&acc.turnsA, &acc.turnsB}) {
            const core::TurnCell* c = *tr ? (*tr)->range(first, last) : nullptr;
            row << (c ? ci(c->acc) : QString::fromUtf8(core::kDash));
        }
        t.rows << row;
    }
    out << table(t);
}

// Function-calling suites: the error rate of each run and of each error class, with intervals.
void toolCallsSection(const ReportData& d, QList<DocBlock>& out) {
    const auto& acc = d.accuracy;
    out << heading("Function calling", 2);
    out << para("Share of function-calling items the model got wrong, in all and by error class (BFCL-style grading: "
                "function name, required and unexpected arguments, JSON-schema types, values), with Wilson 95 % "
                "intervals. Lower is better.");
    auto rate = [](const std::optional<core::ToolCallStats>& s, const std::string& cls) -> QString {
        if (!s) return QString::fromUtf8(core::kDash);
        if (cls.empty())
            return fmt("%.1f %%", 100 * s->errorRate) + fmt(" [%.1f", 100 * s->errorCi.lo) + fmt(", %.1f]", 100 * s->errorCi.hi) +
                   QString(" (%1/%2)").arg(s->errors).arg(s->items);
        for (const auto& c : s->byClass)
            if (c.name == cls)
                return fmt("%.1f %%", 100 * c.rate) + fmt(" [%.1f", 100 * c.ci.lo) + fmt(", %.1f]", 100 * c.ci.hi) +
                       QString(" (%1)").arg(c.count);
        return fmt("%.1f %%", 0.0) + " (0)";
    };
    DocTable t;
    t.header = {"Error", sideName(d.a), sideName(d.b)};
    t.columnWeights = {1.4, 2.3, 2.3};
    t.firstColumnBold = true;
    t.rows << QStringList{"any error", rate(acc.toolsA, ""), rate(acc.toolsB, "")};
    std::vector<std::string> classes;
    for (const auto* s : {&acc.toolsA, &acc.toolsB})
        if (*s)
            for (const auto& c : (*s)->byClass)
                if (c.count > 0 && std::find(classes.begin(), classes.end(), c.name) == classes.end()) classes.push_back(c.name);
    for (const std::string& c : classes) t.rows << QStringList{q(c), rate(acc.toolsA, c), rate(acc.toolsB, c)};
    auto recovery = [](const std::optional<core::ToolCallStats>& s) -> QString {
        if (!s || s->retried == 0) return QString::fromUtf8(core::kDash);
        return fmt("%.1f %%", 100 * s->recoveryRate) + fmt(" [%.1f", 100 * s->recoveryCi.lo) + fmt(", %.1f]", 100 * s->recoveryCi.hi) +
               QString(" (%1/%2)").arg(s->recovered).arg(s->retried);
    };
    if ((acc.toolsA && acc.toolsA->retried > 0) || (acc.toolsB && acc.toolsB->retried > 0))
        t.rows << QStringList{"corrected on retry", recovery(acc.toolsA), recovery(acc.toolsB)};
    out << table(t);
}

void accuracySection(const ReportData& d, QList<DocBlock>& out) {
    out << heading(reportSectionTitles()[2], 1);
    const auto& acc = d.accuracy;
    if (acc.refused) {
        out << callout("Accuracy comparison refused: " + q(acc.refusedReason) +
                           ". Run both models on the same suite (verdict run MODEL --suite NAME) and build the report again.",
                       Tone::Warning);
        return;
    }
    out << para(QString("Suite '%1' (#%2, %3 items, content SHA-256 %4). Accuracy counts failed items as wrong and "
                        "leaves unscored items out; intervals are Wilson 95 % score intervals.")
                    .arg(q(acc.suiteName))
                    .arg(acc.suiteId)
                    .arg(acc.suiteItems)
                    .arg(q(acc.suiteHash.substr(0, 16)) + QString::fromUtf8("\u2026")));
    DocTable t;
    t.header = {"Category", sideName(d.a), sideName(d.b)};
    t.columnWeights = {1.4, 2.3, 2.3};
    t.firstColumnBold = true;
    t.rows << QStringList{"overall", ci(acc.a.overall), ci(acc.b.overall)};
    const QStringList cats = accuracyCategories(acc);
    for (int i = 1; i < cats.size(); ++i) {
        const std::string key = cats[i] == QObject::tr("(none)") ? std::string() : cats[i].toStdString();
        auto cell = [&](const core::AccuracySummary& s) {
            auto it = s.byCategory.find(key);
            return it == s.byCategory.end() ? QString::fromUtf8(core::kDash) : ci(it->second);
        };
        t.rows << QStringList{cats[i], cell(acc.a), cell(acc.b)};
    }
    out << table(t);
    const auto bars = accuracyBars(d);
    out << chart([d] { return accuracyChart(d); }, barTable("Category", cats, bars), 0.45);

    if (acc.classificationA || acc.classificationB) classificationSection(d, out);
    if (acc.needleA || acc.needleB) needleSection(d, out);
    if (acc.turnsA || acc.turnsB) turnsSection(d, out);
    if (acc.toolsA || acc.toolsB) toolCallsSection(d, out);

    out << heading("Paired test", 2);
    if (!acc.nothingScored.empty()) {
        out << para(q(acc.nothingScored) + ".", Tone::Warning);
    } else if (acc.paired) {
        const auto& p = *acc.paired;
        DocTable pt;
        pt.header = {"Paired comparison", "Value"};
        pt.columnWeights = {2.5, 3.5};
        pt.firstColumnBold = true;
        pt.rows << QStringList{"Items scored for both", QString::number(p.nPairs)};
        pt.rows << QStringList{"Both right / both wrong", QString("%1 / %2").arg(p.bothRight).arg(p.bothWrong)};
        pt.rows << QStringList{"A right, B wrong (b)", QString::number(p.aOnly)};
        pt.rows << QStringList{"B right, A wrong (c)", QString::number(p.bOnly)};
        pt.rows << QStringList{"Difference A \u2212 B", q(core::formatPoints(p.difference))};
        pt.rows << QStringList{"95 % paired bootstrap interval", QString("%1 to %2 points (%3 resamples, seed %4)")
                                                                      .arg(fmt("%+.1f", p.differenceCi.lo * 100),
                                                                           fmt("%+.1f", p.differenceCi.hi * 100))
                                                                      .arg(p.resamples)
                                                                      .arg(p.seed)};
        pt.rows << QStringList{"McNemar exact p", q(core::formatPValue(p.mcnemarP))};
        pt.rows << QStringList{"Significant at 5 %", acc.significant ? "yes" : "no"};
        if (acc.onlyInA || acc.onlyInB || acc.unscored)
            pt.rows << QStringList{"Left out", QString("%1 only in A, %2 only in B, %3 unscored")
                                                   .arg(acc.onlyInA)
                                                   .arg(acc.onlyInB)
                                                   .arg(acc.unscored)};
        out << table(pt);
    }
    out << heading("Where they disagree", 2);
    if (acc.disagreements.empty()) {
        out << para("No item was answered correctly by one model and wrongly by the other.", Tone::Note);
        return;
    }
    for (const auto& x : acc.disagreements) {
        out << heading(QString("Item %1%2: %3")
                           .arg(q(x.itemId), x.category.empty() ? QString() : " (" + q(x.category) + ")",
                                x.aCorrect ? "A right, B wrong" : "B right, A wrong"),
                       3);
        DocTable it;
        it.header = {"", "Text"};
        it.columnWeights = {1.0, 5.0};
        it.firstColumnBold = true;
        it.maxLinesPerCell = 8;
        it.rows << QStringList{"Prompt", q(x.prompt)};
        it.rows << QStringList{"Reference", q(x.reference)};
        it.rows << QStringList{QString("A (%1)").arg(x.aCorrect ? "right" : "wrong"), q(x.outputA)};
        it.rows << QStringList{QString("B (%1)").arg(x.bCorrect ? "right" : "wrong"), q(x.outputB)};
        it.highlight = {{}, {}, x.aCorrect ? QList<int>{0} : QList<int>{}, x.bCorrect ? QList<int>{0} : QList<int>{}};
        out << table(it);
    }
}

// Section 3's last part: who judged the answers, how they split, where they disagreed.
void preferenceSection(const ReportData& d, QList<DocBlock>& out) {
    const core::ReportPreference& p = d.preference;
    out << heading("Judged preference", 2);
    if (p.judges.empty() || !p.primary) {
        out << para("Not judged: " + q(p.missing) + ". Open questions without reference answers are compared by "
                    "judging the answers item by item: verdict judge A B --judge MODEL|URL (a judge model, both "
                    "orders), or --human NAME (blind).",
                    Tone::Note);
        return;
    }
    out << para(QString("Each item's two answers were judged side by side. A judge model saw them in both orders; a "
                        "verdict that changed with the order counts as a tie (its rate is the position bias). Win rates "
                        "are over the decided items with Wilson 95 % intervals; ties are shown apart. The decision "
                        "table uses %1.")
                    .arg(q(p.judges[*p.primary].label)),
                Tone::Note);
    DocTable t;
    t.header = {"Judge", "Items", "A / B / tie", "Unreadable", "A's win rate [95 %]", "Position bias"};
    t.columnWeights = {2.4, 0.8, 1.4, 1.0, 2.0, 1.2};
    t.firstColumnBold = true;
    for (const core::ReportJudge& j : p.judges) {
        const core::WinRate& w = j.winRate;
        QString split = QString("%1 / %2 / %3").arg(w.winsA).arg(w.winsB).arg(w.ties);
        if (j.bothBad) split += QString(" (%1 both bad)").arg(j.bothBad);
        t.rows << QStringList{q(j.label), QString::number(w.items), split, QString::number(w.errors),
                              w.winRateA ? QString("%1 [%2\u2013%3]")
                                               .arg(q(core::formatPercent(*w.winRateA)), fmt("%.1f", w.winRateACi.lo * 100),
                                                    fmt("%.1f", w.winRateACi.hi * 100))
                                         : QString::fromUtf8(core::kDash),
                              j.positionBias.flipRate ? q(core::formatPercent(*j.positionBias.flipRate))
                                                      : QString::fromUtf8(core::kDash)};
    }
    out << table(t);
    if (!p.agreement.empty()) {
        DocTable a;
        a.header = {"Judges", "Items both judged", "Cohen's kappa [95 %]"};
        a.columnWeights = {3.5, 1.2, 2.0};
        for (const core::ReportJudgeAgreement& g : p.agreement)
            a.rows << QStringList{q(g.label1) + " vs " + q(g.label2), QString::number(g.kappa.n),
                                  g.kappa.kappa ? QString("%1 [%2 to %3]")
                                                      .arg(fmt("%.2f", *g.kappa.kappa), fmt("%.2f", g.kappa.ci.lo),
                                                           fmt("%.2f", g.kappa.ci.hi))
                                                : QString("undefined (one label throughout)")};
        out << table(a);
    }
    if (p.disagreements.empty()) return;
    out << heading("Where the judges disagree", 3);
    for (const core::ReportJudgeDisagreement& x : p.disagreements) {
        DocTable it;
        it.header = {QString("Item %1%2").arg(q(x.itemId), x.category.empty() ? QString() : " (" + q(x.category) + ")"),
                     "Text"};
        it.columnWeights = {1.4, 5.0};
        it.firstColumnBold = true;
        it.maxLinesPerCell = 8;
        it.rows << QStringList{"Prompt", q(x.prompt)};
        it.rows << QStringList{"A", q(x.outputA)};
        it.rows << QStringList{"B", q(x.outputB)};
        QStringList verdicts;
        for (const auto& [label, v] : x.verdicts) verdicts << q(label) + ": " + q(v);
        it.rows << QStringList{"Verdicts", verdicts.join("; ")};
        out << table(it);
    }
}

QString pct(const std::optional<double>& f) { return f ? q(core::formatPercent(*f)) : QString::fromUtf8(core::kDash); }

void performanceSection(const ReportData& d, QList<DocBlock>& out) {
    out << heading(reportSectionTitles()[3], 1);
    const bool haveA = d.perfA.missing.empty(), haveB = d.perfB.missing.empty();
    if (!haveA) out << callout("Performance data missing for A: " + q(d.perfA.missing) + ".", Tone::Warning);
    if (!haveB) out << callout("Performance data missing for B: " + q(d.perfB.missing) + ".", Tone::Warning);
    if (!haveA && !haveB) return;
    out << para("Figures are stored sweep measurements (`verdict sweep`; definitions in docs/metrics.md). The reference "
                "point is the batch-1 point with the smallest prompt both sweeps measured.",
                Tone::Note);
    const core::ReportPerfPoint* ref[2] = {haveA && d.perfA.reference ? &d.perfA.points[*d.perfA.reference] : nullptr,
                                           haveB && d.perfB.reference ? &d.perfB.points[*d.perfB.reference] : nullptr};
    const core::ReportPerf* perf[2] = {&d.perfA, &d.perfB};
    DocTable t;
    t.header = {"Metric", sideName(d.a), sideName(d.b)};
    t.columnWeights = {2.2, 2.0, 2.0};
    t.firstColumnBold = true;
    const QString dash = QString::fromUtf8(core::kDash);
    auto row = [&](const QString& name, auto get) {
        t.rows << QStringList{name, ref[0] ? get(*ref[0], *perf[0]) : dash, ref[1] ? get(*ref[1], *perf[1]) : dash};
    };
    using P = core::ReportPerfPoint;
    using F = core::ReportPerf;
    row("Reference point", [](const P& p, const F&) {
        return QString("prompt %1, gen %2, batch %3").arg(p.promptTokens).arg(p.genTokens).arg(p.batch);
    });
    row("TTFT P50 / P99", [](const P& p, const F&) { return q(core::formatMs(p.ttftP50)) + " / " + q(core::formatMs(p.ttftP99)); });
    row("TPOT P50 / P99", [](const P& p, const F&) { return q(core::formatMs(p.tpotP50)) + " / " + q(core::formatMs(p.tpotP99)); });
    row("ITL P50 / P99", [](const P& p, const F&) { return q(core::formatMs(p.itlP50)) + " / " + q(core::formatMs(p.itlP99)); });
    row("E2E P50 / P99", [](const P& p, const F&) { return q(core::formatMs(p.e2eP50)) + " / " + q(core::formatMs(p.e2eP99)); });
    row("Prefill", [](const P& p, const F&) { return q(core::formatTokPerS(p.prefillTokPerS)); });
    row("Decode", [](const P& p, const F&) { return q(core::formatTokPerS(p.decodeTokPerS)); });
    row("Best output throughput", [](const P&, const F& f) { return q(core::formatTokPerS(f.maxOutputTokPerS)); });
    row("Roofline fraction (decode)", [](const P& p, const F&) { return pct(p.rooflineFraction); });
    row("Memory bandwidth (bound basis)", [](const P&, const F& f) {
        return f.bandwidthGbPerS ? fmt("%.1f GB/s", *f.bandwidthGbPerS) : QString::fromUtf8(core::kDash);
    });
    row("Peak RSS", [](const P& p, const F&) { return q(core::formatBytes(static_cast<uint64_t>(p.peakRssBytes))); });
    row("Cold start: load / first request", [](const P&, const F& f) {
        if (!f.coldStart) return QString::fromUtf8(core::kDash);
        return q(core::formatMs(f.coldStart->loadMs)) + " / " + q(core::formatMs(f.coldStart->firstRequestMs)) +
               fmt(" (%.2f\u00d7 warm)", f.coldStart->firstVsWarm);
    });
    row("Device", [](const P&, const F& f) { return q(f.device); });
    out << table(t);
    for (const auto* f : {&d.perfA, &d.perfB})
        for (const auto& w : f->bandwidthWarnings) out << para("Roofline caveat: " + q(w) + ".", Tone::Warning);
    for (const auto* f : {&d.perfA, &d.perfB})
        for (const auto& n : f->tokenNotes)
            out << para("Tokens: " + q(n) + ".", n.find("ignored") != std::string::npos ? Tone::Warning : Tone::Note);

    auto ttft = ttftLines(d);
    if (!ttft.isEmpty()) out << chart([d] { return ttftChart(d); }, xyTable("Prompt tokens", ttft));
    QList<XYSeries> bounds;
    auto thr = throughputLines(d, &bounds);
    if (!thr.isEmpty()) out << chart([d] { return throughputChart(d); }, xyTable("Batch", thr + bounds));
    auto pb = percentileBars(d);
    if (!pb.isEmpty()) out << chart([d] { return percentilesChart(d); }, barTable("Percentile (ms)", percentileLabels(), pb));
    auto mem = memoryParts(d);
    if (!mem.isEmpty()) {
        DocTable mt;  // rows = parts, columns = models
        mt.header = QStringList{"Part (MiB)"} + memoryLabels(d);
        for (const auto& part : mem) {
            QStringList r{part.name};
            for (double v : part.values) r << fmt("%.4g", v);
            mt.rows << r;
        }
        out << chart([d] { return memoryChart(d); }, mt, 0.4);
    }

    out << heading("All measured points", 2);
    DocTable all;
    all.header = {"Model", "Prompt", "Gen", "Batch", "TTFT P50", "TPOT P50", "E2E P99", "Output tok/s", "Roofline"};
    all.columnWeights = {0.8, 0.9, 0.7, 0.7, 1.2, 1.2, 1.3, 1.4, 1.0};
    for (int k = 0; k < 2; ++k) {
        for (const auto& p : perf[k]->points) {
            const QString side = k == 0 ? "A" : "B";
            if (!p.error.empty()) {
                all.rows << QStringList{side, QString::number(p.promptTokens), QString::number(p.genTokens),
                                        QString::number(p.batch), "failed: " + q(p.error), "", "", "", ""};
                continue;
            }
            all.rows << QStringList{side,
                                    QString::number(p.promptTokens),
                                    QString::number(p.genTokens),
                                    QString::number(p.batch),
                                    q(core::formatMs(p.ttftP50)),
                                    q(core::formatMs(p.tpotP50)),
                                    q(core::formatMs(p.e2eP99)),
                                    q(core::formatTokPerS(p.outputTokPerS)),
                                    pct(p.rooflineFraction)};
        }
    }
    out << table(all);
}

// The hosted-API side: what a provider run's tokens cost at the provider's prices.
void apiCostBlock(const ReportData& d, QList<DocBlock>& out) {
    if (d.apiCostA.is_null() && d.apiCostB.is_null()) return;
    const QString dash = QString::fromUtf8(core::kDash);
    auto usd = [&](const nlohmann::json& c, const char* k) {
        return c.is_object() && c.contains(k) && c[k].is_number() ? q(core::formatUsd(c[k].get<double>())) : dash;
    };
    auto text = [&](const nlohmann::json& c, const char* k) {
        return c.is_object() && c.contains(k) && c[k].is_string() ? q(c[k].get<std::string>()) : dash;
    };
    auto count = [&](const nlohmann::json& c, const char* k) {
        return c.is_object() && c.contains("tokens") && c["tokens"].contains(k) ? QString::number(c["tokens"][k].get<int64_t>()) : dash;
    };
    DocTable t;
    t.header = {"Hosted API", sideName(d.a), sideName(d.b)};
    t.columnWeights = {2.0, 2.2, 2.2};
    t.firstColumnBold = true;
    auto row = [&](const QString& name, auto get) { t.rows << QStringList{name, get(d.apiCostA), get(d.apiCostB)}; };
    row("Provider / model", [&](const nlohmann::json& c) { return c.is_null() ? dash : text(c, "provider") + " / " + text(c, "model"); });
    row("Run cost", [&](const nlohmann::json& c) {
        if (c.is_object() && c.contains("reason")) return "not priced: " + text(c, "reason");
        return usd(c, "usd_total");
    });
    row("Per 1M output tokens", [&](const nlohmann::json& c) { return usd(c, "usd_per_mtok_output"); });
    row("Prompt / cached / output tokens", [&](const nlohmann::json& c) {
        return c.is_null() ? dash : count(c, "prompt") + " / " + count(c, "cached_prompt") + " / " + count(c, "output");
    });
    row("Prices", [&](const nlohmann::json& c) {
        if (!c.is_object() || !c.contains("price_source")) return dash;
        return c["price_source"] == "run" ? QString("as recorded with the run") : QString("the catalog's current prices");
    });
    out << para("Runs made through a hosted provider preset, priced per token (reasoning at the output price; "
                "docs/tco.md): the API side of the cost comparison, beside the hardware TCO below.",
                Tone::Note);
    out << table(t);
}

void costSection(const ReportData& d, QList<DocBlock>& out) {
    out << heading(reportSectionTitles()[4], 1);
    apiCostBlock(d, out);
    const auto& c = d.cost;
    if (!c.missing.empty()) {
        out << callout("No cost analysis given: " + q(c.missing) + ".", Tone::Warning);
        return;
    }
    const bool est = c.a.estimated || c.b.estimated;
    out << para(QString("Costs on %1 (%2), from measured throughput only (docs/tco.md).%3")
                    .arg(q(c.hardwareName), q(c.hardwareId),
                         est ? " Figures marked (est.) are projected from another device with the roofline ratio: "
                               "estimates, not measurements."
                             : ""),
                est ? Tone::Warning : Tone::Note);
    const QString dash = QString::fromUtf8(core::kDash);
    DocTable t;
    t.header = {"Figure", sideName(d.a), sideName(d.b)};
    t.columnWeights = {2.0, 2.2, 2.2};
    t.firstColumnBold = true;
    auto row = [&](const QString& name, auto get) {
        auto cell = [&](const core::ReportCostModel& m) {
            if (!m.missing.empty()) return QString("not costed: ") + q(m.missing);
            QString v = get(m);
            return m.estimated && v != dash ? v + " (est.)" : v;
        };
        t.rows << QStringList{name, cell(c.a), cell(c.b)};
    };
    using M = core::ReportCostModel;
    row("Throughput used", [](const M& m) { return q(core::formatTokPerS(m.throughputTokPerS)) + " (" + q(m.throughputSource) + ")"; });
    row("Cost per device-hour", [](const M& m) { return q(core::formatUsd(m.device.hourlyUsd)); });
    row("$ per 1M output tokens", [](const M& m) { return q(core::formatUsd(m.device.usdPerMtok)); });
    row("Devices for the daily volume", [&](const M& m) { return m.fleet ? QString::number(m.fleet->devices) : dash; });
    row("Capex", [&](const M& m) { return m.fleet ? q(core::formatUsd(m.fleet->capexUsd)) : dash; });
    row("Monthly cost", [&](const M& m) { return m.fleet ? q(core::formatUsd(m.fleet->monthlyUsd)) : dash; });
    row("3-year TCO", [&](const M& m) { return m.fleet ? q(core::formatUsd(m.fleet->tco3yUsd)) : dash; });
    row("Payback vs API", [&](const M& m) {
        if (!m.baseline) return dash;
        return m.baseline->paybackMonths ? fmt("%.1f months", *m.baseline->paybackMonths) : QString("never (costs more than the API)");
    });
    row("NPV vs API", [&](const M& m) {
        return m.baseline ? q(core::formatUsd(m.baseline->npvUsd)) + QString(" over %1 months").arg(m.baseline->horizonMonths) : dash;
    });
    out << table(t);
    for (const auto* m : {&c.a, &c.b})
        if (m->estimated && !m->projectionBasis.empty()) out << para("Projection basis: " + q(m->projectionBasis), Tone::Note);
    auto lines = costLines(d);
    if (!lines.isEmpty()) out << chart([d] { return costChart(d); }, xyTable("Month", lines));
    else out << para("No daily token volume given (--tokens-per-day): no fleet size and no 3-year curve.", Tone::Note);
    out << heading("Assumptions", 2);
    DocTable at;
    at.header = {"Assumption", "Value", "Source"};
    at.columnWeights = {1.6, 2.0, 3.0};
    at.firstColumnBold = true;
    for (const auto& r : c.assumptionRows) {
        QStringList row;
        for (const auto& cell : r) row << q(cell);
        at.rows << row;
    }
    out << table(at);
}

void checklistSection(const ReportData& d, QList<DocBlock>& out) {
    out << heading(reportSectionTitles()[5], 1);
    DocTable t;
    t.header = {"Question", "Answer", "Source"};
    t.columnWeights = {1.8, 4.4, 1.0};
    t.firstColumnBold = true;
    t.maxLinesPerCell = 16;
    for (const auto& c : d.checklist) {
        t.rows << QStringList{q(c.question), q(c.answer), c.fromData ? "data" : "to be checked by a person"};
        t.highlight << (c.fromData ? QList<int>{2} : QList<int>{});
    }
    out << table(t);
    if (d.sla.ttftMs || d.sla.tpotMs)
    {
        QStringList sla;
        if (d.sla.ttftMs) sla << "TTFT P99 \u2264 " + q(core::formatMs(*d.sla.ttftMs));
        if (d.sla.tpotMs) sla << "TPOT P99 \u2264 " + q(core::formatMs(*d.sla.tpotMs));
        out << para("SLA entered: " + sla.join(", ") + " (checked at the reference point).", Tone::Note);
    }
    out << para(q(d.recommendation.gate) + ".", d.recommendation.gateApplied && (!d.recommendation.gatePassA || !d.recommendation.gatePassB)
                                                     ? Tone::Warning
                                                     : Tone::Note);
}

void reproducibilitySection(const ReportData& d, QList<DocBlock>& out) {
    out << heading(reportSectionTitles()[6], 1);
    DocTable t;
    t.header = {"Item", "Value"};
    t.columnWeights = {1.4, 5.0};
    t.firstColumnBold = true;
    t.maxLinesPerCell = 14;
    for (const auto& [k, v] : d.reproducibility.rows) t.rows << QStringList{q(k), q(v)};
    out << table(t);
    out << heading("Commands that re-create this report", 2);
    DocBlock code;
    code.kind = BlockKind::Code;
    for (const auto& c : d.reproducibility.commands) code.items << q(c);
    out << code;
}

}  // namespace

QStringList reportSectionTitles() {
    return {"1. Summary", "2. Models", "3. Accuracy", "4. Performance", "5. Cost", "6. Decision checklist",
            "7. Method and reproducibility"};
}

ReportDocument buildReportDocument(const core::ReportData& d) {
    ReportDocument doc;
    doc.title = q(d.title);
    doc.subtitle = "Decision report";
    doc.generatedAt = q(d.generatedAt);
    doc.recommendation = q(d.recommendation.headline);
    doc.titleFacts << "Model A: " + q(d.a.label) + " (" + q(d.a.path) + ")";
    doc.titleFacts << "Model B: " + q(d.b.label) + " (" + q(d.b.path) + ")";
    if (!d.accuracy.refused)
        doc.titleFacts << QString("Suite: %1 (%2 items)").arg(q(d.accuracy.suiteName)).arg(d.accuracy.suiteItems);
    doc.titleFacts << QString("Runs #%1 and #%2").arg(d.a.runId).arg(d.b.runId);
    doc.titleFacts << "Generated " + q(d.generatedAt);
    summarySection(d, doc.blocks);
    modelsSection(d, doc.blocks);
    accuracySection(d, doc.blocks);
    preferenceSection(d, doc.blocks);
    performanceSection(d, doc.blocks);
    report_blocks::quantSection(d, doc.blocks);
    report_blocks::stabilitySection(d, doc.blocks);
    costSection(d, doc.blocks);
    checklistSection(d, doc.blocks);
    reproducibilitySection(d, doc.blocks);
    return doc;
}

}  // namespace verdict::render
