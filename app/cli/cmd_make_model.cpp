// verdict make-model [shape options] OUT.gguf: a random-weight model for benchmarks and tests.
#include "cli/args.h"
#include "cli/commands.h"
#include "core/models/model_card_json.h"
#include "verdict/engine/model_card.h"
#include "verdict/engine/synthetic_model.h"

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

namespace verdict::cli {

int runMakeModel(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = {
        {"arch", true, "NAME", "llama (default; with --n-expert: Mixtral-style MoE), qwen2, or deepseek2 "
                               "(DeepSeek-V3 style: MLA, sigmoid-routed experts + shared expert; needs --n-expert)"},
        {"n-embd", true, "N", "embedding width (default 256)"},
        {"n-layer", true, "N", "layers (default 4)"},
        {"n-head", true, "N", "attention heads (default 8)"},
        {"n-head-kv", true, "N", "key/value heads, GQA (default 4)"},
        {"n-ff", true, "N", "feed-forward width, per expert for MoE (default 768)"},
        {"n-vocab", true, "N", "vocabulary size of the generated tokenizer (default 512)"},
        {"ctx", true, "N", "trained context length written to metadata (default 512)"},
        {"n-expert", true, "N", "experts (default 0 = dense)"},
        {"n-expert-used", true, "N", "experts used per token"},
        {"q-lora-rank", true, "N", "deepseek2: query compression rank (default n-embd/2)"},
        {"kv-lora-rank", true, "N", "deepseek2: MLA latent width, what the KV cache holds (default n-embd/4)"},
        {"n-ff-exp", true, "N", "deepseek2: expert FFN width (default n-ff/4; --n-ff is the dense layers')"},
        {"n-expert-shared", true, "N", "deepseek2: shared experts (default 1)"},
        {"n-dense-lead", true, "N", "deepseek2: leading dense layers (default 1)"},
        {"type", true, "T", "weight type: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k (default f16)"},
        {"seed", true, "S", "random seed (default 1); same seed and shape give the same file"},
        {"vocab-from", true, "FILE", "copy the tokenizer from this GGUF instead of generating one"},
        {"tied", false, "", "no output.weight (the output projection reuses token_embd)"},
        {"name", true, "TEXT", "general.name"},
        jsonOption("print the written model's card as JSON (same shape as info --json)"),
        helpOption(),
    };
    auto args = Args::parse(argv, specs);
    if (!args) return fail("make-model", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict make-model [options] OUT.gguf", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("make-model", "expected exactly one output path (see --help)", kExitUsage);

    SyntheticModelSpec s;
    s.arch = args->value("arch").value_or("llama");
    s.name = args->value("name").value_or("");
    s.type = args->value("type").value_or("f16");
    s.vocabFrom = args->value("vocab-from").value_or("");
    s.tiedOutput = args->has("tied");
    struct IntOpt { const char* name; uint32_t* field; };
    for (IntOpt o : {IntOpt{"n-embd", &s.nEmbd}, {"n-layer", &s.nLayer}, {"n-head", &s.nHead}, {"n-head-kv", &s.nHeadKv},
                     {"n-ff", &s.nFf}, {"n-vocab", &s.nVocab}, {"ctx", &s.nCtx}, {"n-expert", &s.nExpert},
                     {"n-expert-used", &s.nExpertUsed}, {"q-lora-rank", &s.qLoraRank}, {"kv-lora-rank", &s.kvLoraRank},
                     {"n-ff-exp", &s.nFfExp}, {"n-expert-shared", &s.nExpertShared}, {"n-dense-lead", &s.nLayerDenseLead}}) {
        auto v = args->integer(o.name, *o.field);
        if (!v) return fail("make-model", v.error().message, kExitUsage);
        if (*v < 0 || *v > 1000000000) return fail("make-model", std::string("--") + o.name + " out of range", kExitUsage);
        *o.field = static_cast<uint32_t>(*v);
    }
    if (!args->has("n-head-kv")) s.nHeadKv = std::min(s.nHeadKv, s.nHead);
    auto seed = args->integer("seed", 1);
    if (!seed) return fail("make-model", seed.error().message, kExitUsage);
    s.seed = static_cast<uint64_t>(*seed);

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
