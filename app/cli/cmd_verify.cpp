// verdict verify [--db PATH] [--json]: walks the results database's hash chain (audit_chain.h)
// and names the first broken row. Exit 0 when intact, 2 when anything is broken (or the
// database cannot be opened). JSON shape: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/store/audit_chain.h"
#include "core/store/store.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string_view>
#include <iostream>

namespace verdict::cli {
namespace {

std::string describe(const core::ChainBreak& b) {
    if (b.table == "sqlite") return "the database file is damaged: " + b.reason;
    if (b.table == "runs") return "run " + std::to_string(b.runId) + ": " + b.reason;
    if (b.table == "sweeps") return "sweep " + std::to_string(b.runId) + ": " + b.reason;
    if (b.table == "suites" || b.table == "models") return b.reason;
    if (b.table == "sweep_points")
        return "sweep_points seq " + std::to_string(b.seq) + " (sweep " + std::to_string(b.runId) + "): " + b.reason;
    return "run_items seq " + std::to_string(b.seq) + " (run " + std::to_string(b.runId) + ", item " +
           std::to_string(b.itemIdx) + "): " + b.reason;
}

// The options bound to the walk's own settings (core/store/audit_chain.h VerifyOptions).
const OptionTable<core::VerifyOptions>& verifyOptions() {
    using S = core::VerifyOptions;
    static const OptionTable<S> table = {
        flagOption<S>("models", "also read every stored model file again (same size and mtime) and compare its SHA-256",
                      [](S& s) { s.rehashModels = true; }),
    };
    return table;
}

}  // namespace

int runVerify(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = {dbOption()};
    for (OptionSpec spec : specsOf(verifyOptions(), core::VerifyOptions{})) specs.push_back(std::move(spec));
    for (OptionSpec spec : {jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("verify", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict verify [--db PATH] [--models] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (!args->positionals().empty()) return fail("verify", "unexpected argument '" + args->positionals()[0] + "'", kExitUsage);
    core::VerifyOptions vo;
    if (auto e = applyOptions(verifyOptions(), *args, vo)) return fail("verify", *e, kExitUsage);
    const std::string path = core::resolveDatabasePath(args->value("db"));
    if (!std::filesystem::exists(path)) return fail("verify", "no database at " + path, kExitBadInput);
    // An empty or cut file is reported as such, never opened (opening would make a fresh, empty
    // database of it and answer "ok: 0 runs").
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    if (ec) return fail("verify", path + ": cannot read its size: " + ec.message(), kExitBadInput);
    if (bytes == 0)
        return fail("verify", path + " is empty (0 bytes): it holds no results (lost, or never written)", kExitBadInput);
    if (bytes < 512)
        return fail("verify", path + " is truncated (" + std::to_string(bytes) + " bytes, less than one SQLite page)", kExitBadInput);
    {
        std::ifstream in(path, std::ios::binary);
        char head[16] = {};
        in.read(head, sizeof head);
        if (std::string_view(head, sizeof head) != std::string_view("SQLite format 3\0", 16))
            return fail("verify", path + " is not an SQLite database (its first 16 bytes are not the SQLite header): "
                                      "overwritten or damaged",
                        kExitBadInput);
    }
    auto db = core::openStoreForReading(path);
    if (!db) return fail("verify", db.error().message, kExitBadInput);
    auto report = core::verifyChain(*db, vo);
    if (!report) return fail("verify", report.error().message, kExitRuntime);

    if (args->has("json")) {
        nlohmann::json breaks = nlohmann::json::array();
        for (const auto& b : report->breaks)
            breaks.push_back({{"table", b.table}, {"seq", b.seq}, {"run_id", b.runId},
                              {"item_idx", b.itemIdx < 0 ? nlohmann::json(nullptr) : nlohmann::json(b.itemIdx)},
                              {"reason", b.reason}});
        nlohmann::json j = {{"database", db->path()},       {"ok", report->ok()},
                            {"runs_checked", report->runsChecked}, {"rows_checked", report->rowsChecked},
                            {"sweeps_checked", report->sweepsChecked}, {"points_checked", report->pointsChecked},
                            {"suites_checked", report->suitesChecked}, {"suite_items_checked", report->suiteItemsChecked},
                            {"models_checked", report->modelsChecked}, {"models_rehashed", report->modelsRehashed},
                            {"read_only", db->readOnly()},
                            {"first_broken", report->ok() ? nlohmann::json(nullptr) : breaks.front()},
                            {"breaks", breaks}};
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else if (report->ok()) {
        std::cout << "ok: " << report->runsChecked << " runs, " << report->rowsChecked << " result rows, "
                  << report->sweepsChecked << " sweeps, " << report->pointsChecked
                  << " sweep points; hash chains intact; " << report->suitesChecked << " suites ("
                  << report->suiteItemsChecked << " items) match their content hashes; " << report->modelsChecked
                  << " model hashes consistent"
                  << (vo.rehashModels ? " (" + std::to_string(report->modelsRehashed) + " files re-read)" : std::string())
                  << " (" << db->path() << (db->readOnly() ? ", opened read-only" : "") << ")\n";
    } else {
        std::cout << "BROKEN: first broken row: " << describe(report->breaks.front()) << "\n";
        if (report->breaks.size() > 1)
            std::cout << report->breaks.size() - 1 << " more finding(s)"
                      << (report->breaks.size() >= 100 ? " (listing stops at 100)" : "") << "\n";
    }
    if (!report->ok()) {
        std::cerr << "verdict verify: " << db->path() << ": " << describe(report->breaks.front()) << "\n";
        return kExitBadInput;
    }
    return kExitOk;
}

}  // namespace verdict::cli
