// verdict tokenize MODEL TEXT [--raw] [--json]: the model's own tokenization of a text.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "verdict/engine/text_tokenizer.h"

#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace verdict::cli {
namespace {

std::string toHex(const std::string& bytes) {
    static const char* kDigits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += kDigits[c >> 4];
        out += kDigits[c & 15];
    }
    return out;
}

// How the text is encoded (TextTokenizer::encode's addSpecial and parseSpecial).
struct TokenizeOptions {
    bool special = true;  // add BOS/EOS as the metadata says and parse special tokens in the text
};

const OptionTable<TokenizeOptions>& tokenizeOptions() {
    using S = TokenizeOptions;
    static const OptionTable<S> table = {
        flagOption<S>("raw", "add no BOS/EOS and parse no special tokens (how llama.cpp's tokenizer vectors are made)",
                      [](S& s) { s.special = false; }),
    };
    return table;
}

}  // namespace

int runTokenize(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(tokenizeOptions(), TokenizeOptions{});
    for (OptionSpec spec : {jsonOption("print {\"ids\": [...], \"pieces\": [...], \"pieces_hex\": [...]}"), helpOption()})
        specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("tokenize", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict tokenize MODEL.gguf TEXT|- [--raw] [--json]\n"
                  "By default BOS/EOS are added as the model's metadata says and special tokens in TEXT are parsed.",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 2) return fail("tokenize", "expected MODEL and TEXT (use - to read stdin)", kExitUsage);
    TokenizeOptions o;
    if (auto e = applyOptions(tokenizeOptions(), *args, o)) return fail("tokenize", *e, kExitUsage);
    std::string text = args->positionals()[1];
    if (text == "-") text.assign(std::istreambuf_iterator<char>(std::cin), {});

    auto tok = TextTokenizer::open(args->positionals()[0]);
    if (!tok) return fail("tokenize", tok.error().message, kExitBadInput);
    const std::vector<int32_t> ids = (*tok)->encode(text, o.special, o.special);

    if (args->has("json")) {
        nlohmann::ordered_json j;
        j["ids"] = ids;
        j["pieces"] = nlohmann::ordered_json::array();
        j["pieces_hex"] = nlohmann::ordered_json::array();
        for (int32_t id : ids) {
            const std::string piece = (*tok)->tokenToPiece(id, true);
            j["pieces"].push_back(piece);
            j["pieces_hex"].push_back(toHex(piece));
        }
        // Pieces can be lone bytes of a split character: shown as U+FFFD, exact in pieces_hex.
        std::cout << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        return kExitOk;
    }
    for (int32_t id : ids) std::cout << id << "\t'" << (*tok)->tokenToPiece(id, true) << "'\n";
    std::cout << ids.size() << " tokens\n";
    return kExitOk;
}

}  // namespace verdict::cli
