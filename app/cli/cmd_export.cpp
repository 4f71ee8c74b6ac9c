// verdict export RUN --format csv|json [--output FILE]: every stored item of a run with all its
// columns (prompt, output, tokens, timings, scores, error, hash chain), for spreadsheets and
// scripts. CSV follows RFC 4180 (fields quoted when needed, "" for a quote, CRLF line ends);
// the scores and details columns hold JSON text. Shapes: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <fstream>
#include <iostream>
#include <sstream>

namespace verdict::cli {
namespace {

std::string numberText(const std::optional<double>& v) {
    if (!v) return "";
    return nlohmann::json(*v).dump();  // shortest round-trip form
}

std::string compact(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

nlohmann::json itemJson(const core::RunItemRecord& r) {
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    return {{"item_idx", r.itemIdx},   {"item_id", r.itemId},         {"category", r.category},
            {"prompt", r.prompt},      {"output", r.output},          {"correct", r.correct ? nlohmann::json(*r.correct) : nlohmann::json(nullptr)},
            {"scores", r.scores},      {"error", r.error},            {"tokens_in", r.tokensIn},
            {"tokens_out", r.tokensOut}, {"ttft_ms", opt(r.ttftMs)}, {"decode_tps", opt(r.decodeTps)},
            {"duration_ms", opt(r.durationMs)}, {"details", r.details}, {"created_at", r.createdAt},
            {"seq", r.seq},            {"prev_hash", r.prevHash},     {"row_hash", r.rowHash}};
}

struct ExportOptions {
    std::string format;                 // "csv" or "json"; required
    std::optional<std::string> output;  // unset: stdout
};

const OptionTable<ExportOptions>& exportOptions() {
    using S = ExportOptions;
    static const OptionTable<S> table = {
        textOption<S>("format", "F", "csv or json (required)", [](auto& s) -> auto& { return s.format; }, {"csv", "json"}),
        optionalTextOption<S>("output", "FILE", "write to FILE instead of stdout", [](auto& s) -> auto& { return s.output; }, 'o'),
    };
    return table;
}

}  // namespace

int runExport(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(exportOptions(), ExportOptions{});
    for (OptionSpec spec : {dbOption(), helpOption()}) specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("export", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict export RUN --format csv|json [--output FILE]", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("export", "expected one RUN id", kExitUsage);
    const std::string& p = args->positionals()[0];
    int64_t runId = 0;
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), runId);
    if (ec != std::errc() || end != p.data() + p.size() || runId <= 0)
        return fail("export", "'" + p + "' is not a run id", kExitUsage);
    ExportOptions o;
    if (auto e = applyOptions(exportOptions(), *args, o)) return fail("export", *e, kExitUsage);
    if (o.format.empty()) return fail("export", "--format must be csv or json", kExitUsage);
    const std::string& format = o.format;

    auto db = core::openStoreForReading(args->value("db"));
    if (!db) return fail("export", db.error().message, kExitBadInput);
    core::RunRepository runs(*db);
    auto run = runs.find(runId);
    if (!run) return fail("export", run.error().message, kExitRuntime);
    if (!*run) return fail("export", "run " + std::to_string(runId) + " does not exist", kExitBadInput);
    auto items = runs.items(runId);
    if (!items) return fail("export", items.error().message, kExitRuntime);

    std::ostringstream out;
    if (format == "json") {
        const core::RunRecord& r = **run;
        nlohmann::json list = nlohmann::json::array();
        for (const auto& it : *items) list.push_back(itemJson(it));
        nlohmann::json j = {
            {"run", {{"run_id", r.id}, {"status", std::string(core::runStatusName(r.status))}, {"backend", r.backend},
                     {"model_path", r.modelPath}, {"model_sha256", r.modelSha256}, {"model_bytes", r.modelBytes},
                     {"suite_id", r.suiteId}, {"prompting", r.prompting}, {"generation", r.generation},
                     {"chat_template_mode", r.chatTemplateMode}, {"chat_template", r.chatTemplate},
                     {"chat_template_sha256", r.chatTemplateHash}, {"seed", r.seed}, {"n_planned", r.nPlanned},
                     {"item_limit", r.itemLimit ? nlohmann::json(*r.itemLimit) : nlohmann::json(nullptr)},
                     {"engine_version", r.engineVersion}, {"device", r.device}, {"started_at", r.startedAt},
                     {"finished_at", r.finishedAt.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.finishedAt)},
                     {"header_hash", r.headerHash}}},
            {"items", list}};
        out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
        out << "run_id,item_idx,item_id,category,correct,output,prompt,error,tokens_in,tokens_out,ttft_ms,decode_tps,"
               "duration_ms,scores,details,created_at,seq,row_hash\r\n";
        for (const auto& it : *items) {
            out << runId << ',' << it.itemIdx << ',' << csvField(it.itemId) << ',' << csvField(it.category) << ','
                << (it.correct ? (*it.correct ? "1" : "0") : "") << ',' << csvField(it.output) << ','
                << csvField(it.prompt) << ',' << csvField(it.error) << ',' << it.tokensIn << ',' << it.tokensOut << ','
                << numberText(it.ttftMs) << ',' << numberText(it.decodeTps) << ',' << numberText(it.durationMs) << ','
                << csvField(compact(it.scores)) << ',' << csvField(compact(it.details)) << ',' << it.createdAt << ','
                << it.seq << ',' << it.rowHash << "\r\n";
        }
    }
    if (const auto& file = o.output) {
        std::ofstream f(*file, std::ios::binary);
        f << out.str();
        if (!f) return fail("export", *file + ": cannot write", kExitRuntime);
    } else {
        std::cout << out.str();
    }
    return kExitOk;
}

}  // namespace verdict::cli
