// verdict suite import FILE [--name N] [--map SPEC] [--format F] [--shape S] [--answers FILE] [--json]
// verdict suite list [--json]
// verdict suite show NAME [--limit N] [--json]
// verdict suite make needle --lengths L --depths D [--haystack FILE] [--tokenizer GGUF] [--json]
// Suites live in the results database (--db PATH, else $VERDICT_DB, else the XDG data dir).
// Import reads the file with the suite importer (core/suite/suite_importer.h) and stores the
// accepted items; every rejected record is listed with its line and reason. Shapes: docs/cli.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/store/store.h"
#include "core/store/suite_item_json.h"
#include "core/store/suite_repository.h"
#include "core/services/needle.h"
#include "core/suite/conversation_suite.h"
#include "core/suite/needle_suite.h"
#include "core/suite/suite_importer.h"
#include "util/quote.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <optional>

namespace verdict::cli {
namespace {

std::string dumpJson(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); }

nlohmann::json suiteJson(const core::SuiteRecord& s) {
    return {{"id", s.id},
            {"name", s.name},
            {"shape", s.shape},
            {"n_items", s.nItems},
            {"content_hash", s.contentHash},
            {"source_path", s.sourcePath},
            {"source_sha256", s.sourceSha256},
            {"imported_at", s.importedAt}};
}

nlohmann::json rejectsJson(const std::vector<core::RejectedRecord>& list) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& r : list) a.push_back({{"line", r.line}, {"reason", r.reason}});
    return a;
}

// The options every stored-suite command ends with.
std::vector<OptionSpec> withStoreOptions(std::vector<OptionSpec> specs) {
    for (OptionSpec spec : {dbOption(), jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    return specs;
}

// The options of `verdict suite import`, bound to the importer's own options
// (core/suite/suite_importer.h ImportOptions): the defaults shown are the struct's.
const OptionTable<core::ImportOptions>& importOptions() {
    using S = core::ImportOptions;
    static const OptionTable<S> table = [] {
        constexpr long long kMaxMib = 1LL << 40;
        BoundOption<S> maxMib;  // the field counts bytes, the option MiB
        maxMib.spec = {"max-expanded-mib", true, "N", "a .gz file may inflate to N MiB at most; 0 = no limit"};
        maxMib.apply = [](const Args& args, S& s) -> std::optional<std::string> {
            auto v = args.integer("max-expanded-mib", 0);
            if (!v) return v.error().message;
            if (*v < 0 || *v > kMaxMib) return std::string("--max-expanded-mib must be between 0 and 2^40");
            s.gzip.maxExpandedBytes = static_cast<uint64_t>(*v) << 20;
            return std::nullopt;
        };
        maxMib.shownDefault = [](const S& s) { return std::to_string(s.gzip.maxExpandedBytes >> 20); };
        BoundOption<S> map;  // parsed into a FieldMapping; none by default (the shape is detected)
        map.spec = {"map", true, "SPEC", "explicit fields, e.g. prompt=question,reference=answer,category=type"};
        map.apply = [](const Args& args, S& s) -> std::optional<std::string> {
            auto mapping = core::FieldMapping::parse(args.value("map").value_or(""));
            if (!mapping) return "--map: " + mapping.error().message;
            s.mapping = std::move(*mapping);
            return std::nullopt;
        };
        map.shownDefault = [](const S&) { return std::string(); };
        return OptionTable<S>{
            textOption<S>("name", "N", "suite name (default: the file name without extensions)",
                          [](auto& s) -> auto& { return s.name; }),
            std::move(map),
            textOption<S>("format", "F", "jsonl, json, csv, tsv, csv-header or csv-noheader (default: detect)",
                          [](auto& s) -> auto& { return s.formatHint; }),
            textOption<S>("shape", "S", "force a record shape (mmlu, gsm8k, humaneval, tools, bfcl, ...; default: detect)",
                          [](auto& s) -> auto& { return s.shape; }),
            textOption<S>("answers", "FILE", "BFCL: the possible_answer file with each item's ground truth (joined by id)",
                          [](auto& s) -> auto& { return s.answersPath; }),
            std::move(maxMib),
            intOption<S>("max-expand-ratio", "N",
                         "a .gz file may inflate N times its size at most, judged past 64 MiB; 0 = no limit",
                         [](auto& s) -> auto& { return s.gzip.maxRatio; }, 0, 1'000'000),
        };
    }();
    return table;
}

// `verdict suite show`: how many items to print.
struct ShowOptions {
    std::optional<int64_t> limit;  // unset: all with --json, 5 otherwise; negative: all
};

const OptionTable<ShowOptions>& showOptions() {
    using S = ShowOptions;
    static const OptionTable<S> table = {
        optionalIntOption<S>("limit", "N", "items to show (default: all with --json, 5 otherwise)",
                             [](auto& s) -> auto& { return s.limit; }, std::numeric_limits<long long>::min(),
                             std::numeric_limits<long long>::max()),
    };
    return table;
}

int importCommand(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = withStoreOptions(specsOf(importOptions(), core::ImportOptions{}));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("suite import", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict suite import FILE [--name N] [--map SPEC] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("suite import", "expected exactly one FILE", kExitUsage);
    const std::string file = args->positionals()[0];

    core::ImportOptions opts;
    if (auto e = applyOptions(importOptions(), *args, opts)) return fail("suite import", *e, kExitUsage);
    auto db = core::openStore(args->value("db"));
    if (!db) return fail("suite import", db.error().message, kExitBadInput);
    // Streamed into the database item by item: memory does not grow with the suite.
    auto stored = core::importSuiteToStore(*db, file, opts);
    if (!stored) return fail("suite import", stored.error().message, kExitBadInput);
    const core::ImportSummary* imported = &stored->summary;
    const core::SuiteSaveResult* saved = &stored->saved;

    if (args->has("json")) {
        nlohmann::json j = {{"imported", imported->takenCount},
                            {"rejected", rejectsJson(imported->rejected)},
                            {"rejected_count", imported->rejectedCount},
                            {"warnings", rejectsJson(imported->warnings)},
                            {"already_stored", saved->alreadyStored},
                            {"file", {{"path", file}, {"format", imported->format}, {"gzip", imported->gzip},
                                      {"sha256", imported->contentHash}, {"bytes", imported->fileBytes}}},
                            {"suite", suiteJson(saved->suite)}};
        std::cout << dumpJson(j) << "\n";
        return kExitOk;
    }
    const auto& s = saved->suite;
    if (saved->alreadyStored)
        std::cout << "already stored as suite '" << s.name << "' (id " << s.id << ", " << s.nItems << " items)\n";
    else
        std::cout << "imported " << imported->takenCount << " items into suite '" << s.name << "' (id " << s.id
                  << ", shape " << s.shape << ")\n";
    if (imported->rejectedCount > 0) {
        std::cout << imported->rejectedCount << " record(s) rejected:\n";
        // A reason may quote the file's text: one escaped line each (util::oneLine).
        for (const auto& r : imported->rejected) std::cout << "  line " << r.line << ": " << util::oneLine(r.reason, 400) << "\n";
    }
    for (const auto& w : imported->warnings)
        std::cout << "  warning, line " << w.line << ": " << util::oneLine(w.reason, 400) << "\n";
    return kExitOk;
}

int listCommand(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = withStoreOptions({});  // no options of its own
    auto args = Args::parse(argv, specs);
    if (!args) return fail("suite list", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict suite list [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (!args->positionals().empty()) return fail("suite list", "unexpected argument '" + args->positionals()[0] + "'", kExitUsage);
    auto db = core::openStoreForReading(args->value("db"));
    if (!db) return fail("suite list", db.error().message, kExitBadInput);
    auto suites = core::SuiteRepository(*db).list();
    if (!suites) return fail("suite list", suites.error().message, kExitRuntime);
    if (args->has("json")) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& s : *suites) a.push_back(suiteJson(s));
        std::cout << dumpJson({{"suites", a}}) << "\n";
        return kExitOk;
    }
    if (suites->empty()) {
        std::cout << "no suites yet (verdict suite import FILE)\n";
        return kExitOk;
    }
    std::printf("%5s  %-28s %8s  %-14s %s\n", "id", "name", "items", "shape", "imported");
    for (const auto& s : *suites)
        std::printf("%5lld  %-28s %8lld  %-14s %s\n", static_cast<long long>(s.id), s.name.c_str(),
                    static_cast<long long>(s.nItems), s.shape.c_str(), s.importedAt.c_str());
    return kExitOk;
}

int showCommand(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = withStoreOptions(specsOf(showOptions(), ShowOptions{}));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("suite show", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict suite show NAME [--limit N] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("suite show", "expected exactly one suite NAME (or #ID)", kExitUsage);
    const bool json = args->has("json");
    ShowOptions o;
    if (auto e = applyOptions(showOptions(), *args, o)) return fail("suite show", *e, kExitUsage);
    const int64_t limit = o.limit.value_or(json ? -1 : 5);
    auto db = core::openStoreForReading(args->value("db"));
    if (!db) return fail("suite show", db.error().message, kExitBadInput);
    core::SuiteRepository repo(*db);
    auto found = repo.find(args->positionals()[0]);
    if (!found) return fail("suite show", found.error().message, kExitRuntime);
    if (!*found) return fail("suite show", "no suite named '" + args->positionals()[0] + "'", kExitBadInput);
    auto items = repo.items((*found)->id);
    if (!items) return fail("suite show", items.error().message, kExitRuntime);
    std::map<std::string, int64_t> categories;
    for (const auto& it : *items) ++categories[it.category.empty() ? "(none)" : it.category];
    const size_t shown = limit < 0 ? items->size() : std::min(items->size(), static_cast<size_t>(limit));

    if (json) {
        nlohmann::json list = nlohmann::json::array();
        for (size_t i = 0; i < shown; ++i) list.push_back(core::suiteItemToJson((*items)[i]));
        std::cout << dumpJson({{"suite", suiteJson(**found)}, {"categories", categories}, {"items", list}}) << "\n";
        return kExitOk;
    }
    const auto& s = **found;
    std::cout << "suite '" << s.name << "' (id " << s.id << "): " << s.nItems << " items, shape " << s.shape
              << "\n  source   " << s.sourcePath << "\n  imported " << s.importedAt << "\n  content  " << s.contentHash
              << "\n  categories:";
    for (const auto& [name, n] : categories) std::cout << " " << name << " (" << n << ")";
    std::cout << "\n";
    for (size_t i = 0; i < shown; ++i) {
        const auto& it = (*items)[i];
        std::string prompt = it.prompt.empty() && !it.messages.empty() ? it.messages.back().content : it.prompt;
        if (prompt.size() > 100) prompt = prompt.substr(0, 100) + "...";
        std::cout << "  [" << i << "] " << it.id << ": " << prompt << "\n";
    }
    if (shown < items->size()) std::cout << "  ... " << items->size() - shown << " more (--limit N)\n";
    return kExitOk;
}

// What `suite make` made, as JSON or as a line for a person.
int printMade(const core::NeedleMade& made, const std::string& tokenizerPath, const char* what, bool json) {
    if (json) {
        std::cout << dumpJson({{"suite", suiteJson(made.saved.suite)},
                               {"already_stored", made.saved.alreadyStored},
                               {"n_items", made.nItems},
                               {"lengths", made.lengths},
                               {"depths", made.depths},
                               {"token_count", made.counted ? "tokenizer" : "estimate"},
                               {"prompt_tokens", {{"min", made.minPromptTokens}, {"max", made.maxPromptTokens}}},
                               {"haystack", made.haystack}})
                  << "\n";
        return kExitOk;
    }
    std::cout << (made.saved.alreadyStored ? "already stored as suite '" : "made suite '") << made.saved.suite.name
              << "' (id " << made.saved.suite.id << "): " << made.nItems << " " << what << ", prompts of "
              << made.minPromptTokens << " to " << made.maxPromptTokens << " tokens ("
              << (made.counted ? "counted with " + tokenizerPath
                               : std::string("estimated as bytes / 4: pass --tokenizer GGUF to count"))
              << ")\nrun it with --ctx at least the longest length, e.g. verdict run MODEL --suite "
              << made.saved.suite.name << " --ctx " << *std::max_element(made.lengths.begin(), made.lengths.end()) + 64
              << "\n";
    return kExitOk;
}

// The options of `verdict suite make`, bound to the services' requests (core/services/needle.h):
// the defaults shown are the structs', the ones the Suites screen's dialogs start from. The
// lists' own rules are parseNeedleLengths / parseNeedleDepths / parseConversationLengths'.
const OptionTable<core::ConversationRequest>& conversationOptions() {
    using S = core::ConversationRequest;
    static const OptionTable<S> table = {
        textOption<S>("turns", "LIST", "turns per conversation, 3..1000", [](auto& s) -> auto& { return s.lengths; }),
        intOption<S>("conversations", "N", "conversations per length", [](auto& s) -> auto& { return s.conversations; }, 1, 1000),
        intOption<S>("seed", "S", "facts and tasks", [](auto& s) -> auto& { return s.seed; }, 0, std::numeric_limits<int64_t>::max()),
        textOption<S>("name", "N", "suite name", [](auto& s) -> auto& { return s.name; }),
    };
    return table;
}

// The filler's options, shared by needle and padded suites.
template <class S, class F>
OptionTable<S> fillOptions(F fill, const char* seedHelp) {
    return {
        textOption<S>("lengths", "LIST", "prompt lengths in tokens, e.g. 1k,4k,16k,64k,128k (k = 1024; required)",
                      [fill](auto& s) -> auto& { return fill(s).lengths; }),
        textOption<S>("haystack", "FILE", "filler text (UTF-8, at most 64 MiB; repeated when short; default: built-in sentences)",
                      [fill](auto& s) -> auto& { return fill(s).haystackPath; }),
        textOption<S>("tokenizer", "GGUF", "count tokens with this model's tokenizer (default: estimate bytes / 4)",
                      [fill](auto& s) -> auto& { return fill(s).tokenizerPath; }),
        intOption<S>("seed", "S", seedHelp, [fill](auto& s) -> auto& { return fill(s).seed; }, 0,
                     std::numeric_limits<int64_t>::max()),
    };
}

const OptionTable<core::NeedleRequest>& needleOptions() {
    using S = core::NeedleRequest;
    static const OptionTable<S> table = concatOptions<S>({
        fillOptions<S>([](auto& s) -> auto& { return s; }, "needles and built-in filler"),
        {
            textOption<S>("depths", "LIST", "needle depths in percent", [](auto& s) -> auto& { return s.depths; }),
            intOption<S>("needles", "N", "items per length and depth, each with its own needle",
                         [](auto& s) -> auto& { return s.needlesPerCell; }, 1, 100),
            textOption<S>("name", "N", "suite name", [](auto& s) -> auto& { return s.name; }),
        },
    });
    return table;
}

const OptionTable<core::PaddedRequest>& paddedOptions() {
    using S = core::PaddedRequest;
    static const OptionTable<S> table = concatOptions<S>({
        {
            textOption<S>("suite", "NAME", "the stored suite to pad (name or #ID; required)", [](auto& s) -> auto& { return s.suite; }),
            optionalIntOption<S>("limit", "N", "its first N items only", [](auto& s) -> auto& { return s.limit; }, 1,
                                 std::numeric_limits<int64_t>::max()),
        },
        fillOptions<S>([](auto& s) -> auto& { return s.fill; }, "built-in filler"),
        {textOption<S>("name", "N", "suite name (default SUITE@LENGTHS)", [](auto& s) -> auto& { return s.name; })},
    });
    return table;
}

int failMade(const core::ServiceError& e) {
    return fail("suite make", e.message, e.kind == core::ServiceFailure::Storage ? kExitRuntime : kExitBadInput);
}

// verdict suite make conversation: long conversations, a fact first and asked for last
// (core/suite/conversation_suite.h), stored.
int makeConversationCommand(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = withStoreOptions(specsOf(conversationOptions(), core::ConversationRequest{}));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("suite make", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict suite make conversation [--turns 10,50,120] [--conversations N] [--seed S] [--name N] [--json]",
                  formatOptions(specs));
        return kExitOk;
    }
    if (!args->positionals().empty()) return fail("suite make", "unexpected argument '" + args->positionals()[0] + "'", kExitUsage);
    core::ConversationRequest req;
    if (auto e = applyOptions(conversationOptions(), *args, req)) return fail("suite make", *e, kExitUsage);
    if (auto l = core::parseConversationLengths(req.lengths); !l) return fail("suite make", "--" + l.error().message, kExitUsage);
    auto db = core::openStore(args->value("db"));
    if (!db) return fail("suite make", db.error().message, kExitBadInput);
    auto made = core::makeConversationSuiteInStore(*db, req);
    if (!made) return failMade(made.error());
    if (args->has("json")) {
        std::cout << dumpJson({{"suite", suiteJson(made->saved.suite)},
                               {"already_stored", made->saved.alreadyStored},
                               {"n_items", made->nItems},
                               {"turns", made->lengths}})
                  << "\n";
        return kExitOk;
    }
    std::cout << (made->saved.alreadyStored ? "already stored as suite '" : "made suite '") << made->saved.suite.name << "' (id "
              << made->saved.suite.id << "): " << made->nItems << " conversations; verdict results shows the accuracy by turn\n";
    return kExitOk;
}

// verdict suite make needle: a needle-in-a-haystack suite (core/suite/needle_suite.h), stored.
// verdict suite make padded: a stored suite at several context lengths (makePaddedSuite).
int makeCommand(const std::vector<std::string>& argv) {
    if (!argv.empty() && argv[0] == "conversation")
        return makeConversationCommand(std::vector<std::string>(argv.begin() + 1, argv.end()));
    const bool padded = !argv.empty() && argv[0] == "padded";
    const std::vector<OptionSpec> specs = withStoreOptions(padded ? specsOf(paddedOptions(), core::PaddedRequest{})
                                                                  : specsOf(needleOptions(), core::NeedleRequest{}));
    const std::string usage =
        "verdict suite make needle --lengths LIST [--depths LIST] [--haystack FILE] [--tokenizer GGUF] [--json]\n"
        "       verdict suite make padded --suite NAME --lengths LIST [--limit N] [--haystack FILE] [--tokenizer GGUF] [--json]\n"
        "       verdict suite make conversation [--turns 10,50,120] [--conversations N] [--seed S] [--json]";
    if (argv.empty() || (argv[0] != "needle" && !padded)) {
        if (!argv.empty() && (argv[0] == "--help" || argv[0] == "-h")) {
            printHelp(usage, formatOptions(specs));
            return kExitOk;
        }
        return fail("suite make", "expected a kind: needle, padded or conversation (" + usage + ")", kExitUsage);
    }
    auto args = Args::parse(std::vector<std::string>(argv.begin() + 1, argv.end()), specs);
    if (!args) return fail("suite make", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp(usage, formatOptions(specs));
        return kExitOk;
    }
    if (!args->positionals().empty()) return fail("suite make", "unexpected argument '" + args->positionals()[0] + "'", kExitUsage);
    // The lists are the person's choices (a usage error, exit 1); what the service refuses after
    // that is input it could not use (an unreadable haystack or tokenizer, exit 2).
    auto checkLengths = [](const std::string& lengths) -> std::optional<std::string> {
        if (lengths.empty()) return "--lengths is required (e.g. --lengths 1k,4k,16k)";
        if (auto l = core::parseNeedleLengths(lengths); !l) return l.error().message;
        return std::nullopt;
    };
    if (padded) {
        core::PaddedRequest pr;
        if (auto e = applyOptions(paddedOptions(), *args, pr)) return fail("suite make", *e, kExitUsage);
        if (auto e = checkLengths(pr.fill.lengths)) return fail("suite make", *e, kExitUsage);
        if (pr.suite.empty()) return fail("suite make", "--suite is required: the stored suite to pad", kExitUsage);
        auto db = core::openStore(args->value("db"));
        if (!db) return fail("suite make", db.error().message, kExitBadInput);
        auto made = core::makePaddedSuiteInStore(*db, pr);
        if (!made) return failMade(made.error());
        return printMade(*made, pr.fill.tokenizerPath, "padded items", args->has("json"));
    }
    core::NeedleRequest req;
    if (auto e = applyOptions(needleOptions(), *args, req)) return fail("suite make", *e, kExitUsage);
    if (auto e = checkLengths(req.lengths)) return fail("suite make", *e, kExitUsage);
    if (auto d = core::parseNeedleDepths(req.depths); !d) return fail("suite make", d.error().message, kExitUsage);
    auto db = core::openStore(args->value("db"));
    if (!db) return fail("suite make", db.error().message, kExitBadInput);
    auto made = core::makeNeedleSuiteInStore(*db, req);
    if (!made) return fail("suite make", made.error().message, kExitBadInput);
    return printMade(*made, req.tokenizerPath, "needle items", args->has("json"));
}

}  // namespace

int runSuite(const std::vector<std::string>& argv) {
    const std::string usage = "usage: verdict suite import|list|show|make ... (verdict suite SUBCOMMAND --help)";
    if (argv.empty()) return fail("suite", "missing subcommand; " + usage, kExitUsage);
    const std::string sub = argv[0];
    const std::vector<std::string> rest(argv.begin() + 1, argv.end());
    if (sub == "import") return importCommand(rest);
    if (sub == "list") return listCommand(rest);
    if (sub == "show") return showCommand(rest);
    if (sub == "make") return makeCommand(rest);
    if (sub == "--help" || sub == "-h") {
        std::cout << usage << "\n  import FILE   read a suite file into the database\n"
                  << "  list          the stored suites\n  show NAME     one suite and its first items\n"
                  << "  make needle   a needle-in-a-haystack suite (--lengths 1k,4k,16k --depths 0,50,100)\n";
        return kExitOk;
    }
    return fail("suite", "unknown subcommand '" + sub + "'; " + usage, kExitUsage);
}

}  // namespace verdict::cli
