// verdict info MODEL.gguf [--ctx N] [--json]: the model card and its memory estimate.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/models/model_card_json.h"

#include <cstdint>
#include <iostream>
#include <limits>

namespace verdict::cli {
namespace {

struct InfoOptions {
    int64_t ctx = 0;  // 0: the card's estimate at the trained context only
};

const OptionTable<InfoOptions>& infoOptions() {
    using S = InfoOptions;
    static const OptionTable<S> table = {
        intOption<S>("ctx", "N", "also estimate memory at this context length (tokens); 0 = none",
                     [](auto& s) -> auto& { return s.ctx; }, 0, std::numeric_limits<int64_t>::max()),
    };
    return table;
}

}  // namespace

int runInfo(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(infoOptions(), InfoOptions{});
    for (OptionSpec spec : {jsonOption("print the card as JSON (shape: docs/cli.md)"), helpOption()}) specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("info", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict info MODEL.gguf [--ctx N] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("info", "expected exactly one model file (see --help)", kExitUsage);
    InfoOptions o;
    if (auto e = applyOptions(infoOptions(), *args, o)) return fail("info", *e, kExitUsage);

    auto card = describeModelFile(args->positionals()[0], o.ctx > 0 ? std::optional<uint64_t>(o.ctx) : std::nullopt);
    if (!card) return fail("info", card.error().message, kExitBadInput);
    if (args->has("json")) std::cout << core::modelCardToJson(*card).dump(2) << "\n";
    else std::cout << core::modelCardToText(*card);
    return kExitOk;
}

}  // namespace verdict::cli
