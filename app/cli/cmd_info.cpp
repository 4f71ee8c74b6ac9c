// verdict info MODEL.gguf [--ctx N] [--json]: the model card and its memory estimate.
#include "cli/args.h"
#include "cli/commands.h"
#include "core/models/model_card_json.h"

#include <iostream>

namespace verdict::cli {

int runInfo(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = {
        {"ctx", true, "N", "also estimate memory at this context length (tokens)"},
        jsonOption("print the card as JSON (shape: docs/cli.md)"),
        helpOption(),
    };
    auto args = Args::parse(argv, specs);
    if (!args) return fail("info", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict info MODEL.gguf [--ctx N] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("info", "expected exactly one model file (see --help)", kExitUsage);
    auto ctx = args->integer("ctx", 0);
    if (!ctx) return fail("info", ctx.error().message, kExitUsage);
    if (*ctx < 0) return fail("info", "--ctx must be positive", kExitUsage);

    auto card = describeModelFile(args->positionals()[0], *ctx > 0 ? std::optional<uint64_t>(*ctx) : std::nullopt);
    if (!card) return fail("info", card.error().message, kExitBadInput);
    if (args->has("json")) std::cout << core::modelCardToJson(*card).dump(2) << "\n";
    else std::cout << core::modelCardToText(*card);
    return kExitOk;
}

}  // namespace verdict::cli
