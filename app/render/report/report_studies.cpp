// The decision report's sections of the studies (report_blocks.h): one model in several
// quantized files, and soak tests of A and B.
#include "report/report_blocks.h"

#include "core/models/model_card_json.h"
#include "core/report/report_format.h"
#include "core/store/study_repository.h"

#include <filesystem>

namespace verdict::render::report_blocks {

// One model in several files against a base (`verdict quant-compare`): what each precision costs in
// fidelity and accuracy and buys in speed and size. Under Performance, after the sweeps.
void quantSection(const core::ReportData& d, QList<DocBlock>& out) {
    if (!d.quant.is_object()) return;
    const nlohmann::json& c = d.quant;
    const QString dash = QString::fromUtf8(core::kDash);
    auto get = [](const nlohmann::json& j, std::initializer_list<const char*> path) -> const nlohmann::json* {
        const nlohmann::json& v = core::studyField(j, path);
        return v.is_number() ? &v : nullptr;
    };
    auto number = [&](const nlohmann::json& j, std::initializer_list<const char*> path, const char* f, double scale = 1) {
        const nlohmann::json* v = get(j, path);
        return v ? fmt(f, v->get<double>() * scale) : dash;
    };
    out << heading("Quantization trade-off", 2);
    const QString who = d.quantSide ? QString(" (model %1's file)").arg(QChar(d.quantSide)) : QString();
    out << para(QString("Comparison #%1 '%2'%3 against the base %4, status %5. Mean KLD and same top p: the file's "
                        "next-token distributions against the base's on a text (llama-perplexity's definitions); "
                        "accuracy delta: file minus base on the same items, with the paired bootstrap 95 % interval; "
                        "throughput drop and P99 drift: decode tok/s and ITL P99 of a one-point sweep against the "
                        "base's (file / base \u2212 1).")
                    .arg(c.value("id", int64_t(0)))
                    .arg(q(c.value("name", "")), who, q(std::filesystem::path(c.value("base", "")).filename().string()),
                         q(c.value("status", ""))));
    DocTable t;
    t.header = {"File", "Type", "Size", "Bits/w", "Mean KLD", "Same top", "Accuracy \u0394", "Decode tok/s", "Throughput", "ITL P99"};
    t.columnWeights = {2.0, 1.0, 1.0, 0.8, 1.1, 0.9, 1.6, 1.1, 1.0, 0.9};
    t.firstColumnBold = true;
    QStringList notes;
    for (const auto& row : c.value("rows", nlohmann::json::array())) {
        if (!row.is_object()) continue;
        const nlohmann::json& f = row.value("file", nlohmann::json::object());
        const bool base = !row.contains("vs_base") || row["vs_base"].is_null();
        const QString name = q(std::filesystem::path(f.value("path", "")).filename().string());
        QString accuracy = number(row, {"accuracy", "cell", "accuracy"}, "%.1f %%", 100);
        if (!base && get(row, {"accuracy", "delta"}) && row["accuracy"].contains("delta_ci") && row["accuracy"]["delta_ci"].is_array() &&
            row["accuracy"]["delta_ci"].size() == 2)
            accuracy = number(row, {"accuracy", "delta"}, "%+.1f pts", 100) +
                       fmt(" [%+.1f", row["accuracy"]["delta_ci"][0].get<double>() * 100) +
                       fmt(", %+.1f]", row["accuracy"]["delta_ci"][1].get<double>() * 100);
        t.rows << QStringList{name + (base ? " (base)" : ""),
                              q(f.value("file_type", "")),
                              get(f, {"bytes"}) ? q(core::formatBytes(f["bytes"].get<uint64_t>())) : dash,
                              number(f, {"bits_per_weight"}, "%.2f"),
                              number(row, {"fidelity", "mean_kld"}, "%.5f"),
                              number(row, {"fidelity", "same_top_p"}, "%.1f %%", 100),
                              accuracy,
                              number(row, {"speed", "decode_tok_per_s"}, "%.1f"),
                              base ? QString("base") : number(row, {"vs_base", "decode_change"}, "%+.1f %%", 100),
                              base ? QString("base") : number(row, {"vs_base", "itl_p99_change"}, "%+.1f %%", 100)};
        if (row.contains("errors") && row["errors"].is_object())
            for (const auto& [part, why] : row["errors"].items())
                notes << name + " " + q(part) + ": " + q(why.is_string() ? why.get<std::string>() : why.dump());
    }
    out << table(t);
    if (!notes.isEmpty()) out << bullets(notes);
}

// Soak tests of A and B (`verdict soak`): the drift of each series per hour with its interval, and
// the P99 jitter across bursts. Under Performance, after the quantization trade-off.
void stabilitySection(const core::ReportData& d, QList<DocBlock>& out) {
    if (d.soakA.is_null() && d.soakB.is_null()) return;
    const QString dash = QString::fromUtf8(core::kDash);
    out << heading("Stability under load", 2);
    out << para("Soak tests (`verdict soak`): open-loop load in windows; per series the least-squares slope per hour "
                "over the windows after the warm-up, with its 95 % interval (docs/metrics.md); \u201cdrifting\u201d "
                "when the interval excludes 0 \u2014 a leak, latency creep, throughput loss or error growth.");
    auto setup = [&](const nlohmann::json& s) -> QString {
        if (s.is_null()) return dash;
        const nlohmann::json& w = core::studyField(s, {"settings", "window_s"});
        const nlohmann::json& n = core::studyField(s, {"summary", "windows"});
        const nlohmann::json& rate = core::studyField(s, {"settings", "rate"});
        const nlohmann::json& burst = core::studyField(s, {"settings", "burst_rate"});
        QString t = QString("#%1: %2 \u00d7 %3 s at %4 req/s")
                        .arg(s.value("id", int64_t(0)))
                        .arg(n.is_number() ? n.get<int64_t>() : 0)
                        .arg(w.is_number() ? w.get<double>() : 0)
                        .arg(rate.is_number() ? rate.get<double>() : 0);
        if (burst.is_number()) t += QString(", bursts %1 req/s").arg(burst.get<double>());
        return t;
    };
    auto trend = [&](const nlohmann::json& s, const char* key, const char* unit, double scale) -> QString {
        const nlohmann::json& t = core::studyField(s, {"summary", "drift", key});
        if (!t.is_object() || !t["slope_per_hour"].is_number()) return s.is_null() ? dash : QString("not measured");
        QString out = fmt("%+.3g", t["slope_per_hour"].get<double>() * scale) + " " + unit + "/h";
        if (t["ci"].is_array() && t["ci"].size() == 2)
            out += fmt(" [%+.3g", t["ci"][0].get<double>() * scale) + fmt(", %+.3g]", t["ci"][1].get<double>() * scale) +
                   (t.value("drifting", false) ? " drifting" : "");
        return out;
    };
    auto jitter = [&](const nlohmann::json& s) -> QString {
        const nlohmann::json& b = core::studyField(s, {"summary", "bursts", "high", "e2e_p99_ms"});
        if (!b.is_object()) return dash;
        return fmt("%.1f", b["mean"].get<double>()) + QString::fromUtf8(" \u00b1 ") + fmt("%.1f ms", b["stddev"].get<double>()) +
               fmt(" (CV %.2f", b["cv"].get<double>()) + QString(", %1 bursts)").arg(b["n"].get<int64_t>());
    };
    DocTable t;
    t.header = {"Series", sideName(d.a), sideName(d.b)};
    t.columnWeights = {1.6, 2.4, 2.4};
    t.firstColumnBold = true;
    t.rows << QStringList{"Soak", setup(d.soakA), setup(d.soakB)};
    const struct {
        const char* name;
        const char* key;
        const char* unit;
        double scale;
    } series[] = {{"Memory (RSS)", "rss_bytes", "MiB", 1.0 / (1024 * 1024)},
                  {"TTFT P99", "ttft_p99_ms", "ms", 1},
                  {"E2E P50", "e2e_p50_ms", "ms", 1},
                  {"E2E P99", "e2e_p99_ms", "ms", 1},
                  {"Output tok/s", "output_tok_per_s", "tok/s", 1},
                  {"Error rate", "error_rate", "pts", 100}};
    for (const auto& r : series)
        t.rows << QStringList{r.name, trend(d.soakA, r.key, r.unit, r.scale), trend(d.soakB, r.key, r.unit, r.scale)};
    t.rows << QStringList{"Burst E2E P99 jitter", jitter(d.soakA), jitter(d.soakB)};
    out << table(t);
}

}  // namespace verdict::render::report_blocks
