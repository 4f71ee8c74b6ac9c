// verdict make-model [shape options] OUT.gguf: a random-weight model for benchmarks and tests.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/models/model_card_json.h"
#include "verdict/engine/model_card.h"
#include "verdict/engine/synthetic_model.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

namespace verdict::cli {

namespace {

// The options bound to SyntheticModelSpec (verdict/engine/synthetic_model.h): the defaults shown
// are the struct's.
const OptionTable<SyntheticModelSpec>& makeModelOptions() {
    using S = SyntheticModelSpec;
    constexpr long long kMax = 1000000000;
    auto dim = [](const char* name, const char* help, auto field) { return intOption<S>(name, "N", help, field, 0, kMax); };
    static const OptionTable<S> table = {
        textOption<S>("arch", "NAME", "llama (with --n-expert: Mixtral-style MoE), qwen2, or deepseek2 "
                                      "(DeepSeek-V3 style: MLA, sigmoid-routed experts + shared expert; needs --n-expert)",
                      [](auto& s) -> auto& { return s.arch; }),
        dim("n-embd", "embedding width", [](auto& s) -> auto& { return s.nEmbd; }),
        dim("n-layer", "layers", [](auto& s) -> auto& { return s.nLayer; }),
        dim("n-head", "attention heads", [](auto& s) -> auto& { return s.nHead; }),
        dim("n-head-kv", "key/value heads, GQA (at most --n-head)", [](auto& s) -> auto& { return s.nHeadKv; }),
        dim("n-ff", "feed-forward width, per expert for MoE", [](auto& s) -> auto& { return s.nFf; }),
        dim("n-vocab", "vocabulary size of the generated tokenizer", [](auto& s) -> auto& { return s.nVocab; }),
        dim("ctx", "trained context length written to metadata", [](auto& s) -> auto& { return s.nCtx; }),
        dim("n-expert", "experts; 0 = dense", [](auto& s) -> auto& { return s.nExpert; }),
        dim("n-expert-used", "experts used per token", [](auto& s) -> auto& { return s.nExpertUsed; }),
        dim("q-lora-rank", "deepseek2: query compression rank; 0 = n-embd/2", [](auto& s) -> auto& { return s.qLoraRank; }),
        dim("kv-lora-rank", "deepseek2: MLA latent width, what the KV cache holds; 0 = n-embd/4",
            [](auto& s) -> auto& { return s.kvLoraRank; }),
        dim("n-ff-exp", "deepseek2: expert FFN width; 0 = n-ff/4 (--n-ff is the dense layers')",
            [](auto& s) -> auto& { return s.nFfExp; }),
        dim("n-expert-shared", "deepseek2: shared experts", [](auto& s) -> auto& { return s.nExpertShared; }),
        dim("n-dense-lead", "deepseek2: leading dense layers", [](auto& s) -> auto& { return s.nLayerDenseLead; }),
        textOption<S>("type", "T", "weight type: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k iq4_nl "
                                   "iq4_xs mxfp4, or llama.cpp's mix q4_k_m / q5_k_m (dense models)",
                      [](auto& s) -> auto& { return s.type; }),
        intOption<S>("seed", "S", "random seed; same seed and shape give the same file", [](auto& s) -> auto& { return s.seed; }, 0,
                     std::numeric_limits<int64_t>::max()),
        textOption<S>("vocab-from", "FILE", "copy the tokenizer from this GGUF instead of generating one",
                      [](auto& s) -> auto& { return s.vocabFrom; }),
        flagOption<S>("tied", "no output.weight (the output projection reuses token_embd)", [](S& s) { s.tiedOutput = true; }),
        textOption<S>("name", "TEXT", "general.name (default: synthetic-ARCH)", [](auto& s) -> auto& { return s.name; }),
    };
    return table;
}

}  // namespace

int runMakeModel(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(makeModelOptions(), SyntheticModelSpec{});
    for (OptionSpec spec : {jsonOption("print the written model's card as JSON (same shape as info --json)"), helpOption()})
        specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("make-model", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict make-model [options] OUT.gguf", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("make-model", "expected exactly one output path (see --help)", kExitUsage);

    SyntheticModelSpec s;
    if (auto e = applyOptions(makeModelOptions(), *args, s)) return fail("make-model", *e, kExitUsage);
    if (!args->has("n-head-kv")) s.nHeadKv = std::min(s.nHeadKv, s.nHead);

    const std::string out = args->positionals()[0];
    const bool json = args->has("json");
    const auto t0 = std::chrono::steady_clock::now();
    auto r = writeSyntheticModel(s, out, [json](size_t done, size_t total) {
        if (!json) std::cerr << "\rwriting tensors " << done << "/" << total << std::flush;
    });
    if (!json) std::cerr << "\n";
    if (!r) return fail("make-model", r.error().message, kExitBadInput);
    auto card = describeModelFile(out);
    if (!card) return fail("make-model", card.error().message, kExitRuntime);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (json) {
        std::cout << core::modelCardToJson(*card).dump(2) << "\n";
    } else {
        std::cout << "wrote " << out << ": " << core::formatCount(card->nParams) << " parameters, "
                  << core::formatBytes(card->fileBytes) << " in " << secs << " s\n";
    }
    return kExitOk;
}

}  // namespace verdict::cli
