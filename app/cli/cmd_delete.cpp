// verdict delete run ID... | sweep ID... [--json]: removes stored runs (with their items) or
// sweeps (with their points), each in its own transaction — what the window's History screen
// does. A run being executed by a live process, and a sweep that runs still refer to, are refused.
#include "cli/args.h"
#include "cli/commands.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/sweep_repository.h"

#include <nlohmann/json.hpp>

#include <iostream>

namespace verdict::cli {

int runDelete(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = {
        dbOption(),
        jsonOption("print {deleted: [ids], missing: [ids], kind} (docs/cli.md)"),
        helpOption(),
    };
    auto args = Args::parse(argv, specs);
    if (!args) return fail("delete", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict delete run ID... | sweep ID... [--json]", formatOptions(specs));
        return kExitOk;
    }
    const auto& pos = args->positionals();
    if (pos.size() < 2 || (pos[0] != "run" && pos[0] != "sweep"))
        return fail("delete", "expected `run ID...` or `sweep ID...` (see --help)", kExitUsage);
    std::vector<int64_t> ids;
    for (size_t i = 1; i < pos.size(); ++i) {
        try {
            size_t used = 0;
            const long long v = std::stoll(pos[i], &used);
            if (used != pos[i].size() || v <= 0) throw std::invalid_argument("");
            ids.push_back(v);
        } catch (const std::exception&) {
            return fail("delete", "'" + pos[i] + "' is not a " + pos[0] + " id", kExitUsage);
        }
    }
    auto db = core::openStore(args->value("db"));
    if (!db) return fail("delete", db.error().message, kExitBadInput);
    nlohmann::json deleted = nlohmann::json::array(), missing = nlohmann::json::array();
    for (int64_t id : ids) {
        auto r = pos[0] == "run" ? core::RunRepository(*db).remove(id) : core::SweepRepository(*db).remove(id);
        if (!r) return fail("delete", r.error().message, kExitBadInput);
        (*r ? deleted : missing).push_back(id);
        if (!args->has("json"))
            std::cout << (*r ? "deleted " : "no such ") << pos[0] << " " << id << "\n";
    }
    if (args->has("json")) std::cout << nlohmann::json{{"kind", pos[0]}, {"deleted", deleted}, {"missing", missing}}.dump(2) << "\n";
    return missing.empty() ? kExitOk : kExitBadInput;
}

}  // namespace verdict::cli
