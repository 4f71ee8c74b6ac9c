#include "cli/study_command.h"

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/store/store.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace verdict::cli {

int runStudySubcommand(const StudyCommand& c, const std::string& what, const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = {
        dbOption(),
        jsonOption("print JSON (shape: docs/cli.md)"),
        helpOption(),
    };
    auto args = Args::parse(argv, specs);
    if (!args) return fail(c.command, args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict " + c.command + " list [--json]\n       verdict " + c.command + " show ID [--json]", formatOptions(specs));
        return kExitOk;
    }
    auto db = core::openStore(args->value("db"));
    if (!db) return fail(c.command, db.error().message, kExitBadInput);
    if (what == "list") {
        if (!args->positionals().empty()) return fail(c.command, "list takes no arguments", kExitUsage);
        auto list = c.list(*db);
        if (!list) return fail(c.command, list.error().message, kExitRuntime);
        if (args->has("json")) {
            std::cout << list->dump(2) << "\n";
        } else {
            if (list->empty()) std::printf("no %s stored\n", (c.noun + "s").c_str());
            for (const nlohmann::json& e : *list) c.printListEntry(e);
        }
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail(c.command, "show takes one " + c.noun + " ID", kExitUsage);
    const std::string& idText = args->positionals()[0];
    char* end = nullptr;
    const long long id = std::strtoll(idText.c_str(), &end, 10);
    if (idText.empty() || *end != '\0' || id <= 0) return fail(c.command, "'" + idText + "' is not a " + c.noun + " ID", kExitUsage);
    auto s = c.load(*db, id);
    if (!s) return fail(c.command, s.error().message, kExitRuntime);
    if (!*s) return fail(c.command, "no " + c.noun + " " + idText + " (see verdict " + c.command + " list)", kExitBadInput);
    if (args->has("json")) std::cout << (*s)->dump(2) << "\n";
    else c.print(**s);
    return kExitOk;
}

}  // namespace verdict::cli
