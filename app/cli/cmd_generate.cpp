// verdict generate MODEL -p TEXT -n N [--temp T] [--seed S] [--threads T] [--ctx C] [--ignore-eos]
//                  [--device DEV] [--gpu-layers N] [--json]: tokenizes the prompt (BOS added as the vocabulary asks), generates
// N tokens and prints the text (streamed) or one JSON object (shape: docs/cli.md):
//   {"prompt_tokens": [ids], "tokens": [ids], "text": str, "stop_reason": str,
//    "timings": {"load_ms", "ttft_ms", "prefill_tps", "decode_tps", "prompt_ms", "decode_ms"},
//    "memory": {"weights_bytes", "repacked_bytes", "kv_bytes", "scratch_bytes", "peak_rss_bytes", "device",
//               "vram_weights_bytes", ... (0 on the CPU)}}
// Sampling defaults are `verdict run`'s (greedy); an end-of-generation token stops it unless
// --ignore-eos, which gives exactly N tokens (what parity checks against llama.cpp compare).
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/options.h"
#include "core/run/device_check.h"
#include "core/run/engine_backend.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <limits>

namespace verdict::cli {
namespace {

const char* stopReasonName(StopReason r) {
    switch (r) {
    case StopReason::MaxTokens: return "max_tokens";
    case StopReason::Eos: return "eos";
    case StopReason::StopString: return "stop_string";
    case StopReason::Callback: return "callback";
    case StopReason::ContextFull: return "context_full";
    }
    return "unknown";
}

// What `verdict generate` is asked: the sampling of core's GenerationParams (the defaults of
// `verdict run` and `verdict compare`: greedy), 64 tokens.
struct GenerateSettings {
    std::string prompt;
    core::GenerationParams generation = [] {
        core::GenerationParams g;
        g.maxTokens = 64;
        return g;
    }();
    int threads = 0;
    int64_t ctx = 0;           // 0: min(training context, 4096), at least prompt + N
    std::string kvType = "f32";
    bool ignoreEos = false;    // exactly N tokens (what parity checks against llama.cpp compare)
};

const OptionTable<GenerateSettings>& generateOptions() {
    using S = GenerateSettings;
    const auto generation = [](auto& s) -> auto& { return s.generation; };
    static const OptionTable<S> table = concatOptions<S>({{
        textOption<S>("prompt", "TEXT", "prompt text (required)", [](auto& s) -> auto& { return s.prompt; }, {}, 'p'),
        intOption<S>("n-predict", "N", "tokens to generate", [](auto& s) -> auto& { return s.generation.maxTokens; }, 0,
                     1'000'000, 'n'),
        temperatureOption<S>(generation),
        intOption<S>("seed", "S", "random seed (same seed, same output)", [](auto& s) -> auto& { return s.generation.seed; },
                     0, std::numeric_limits<int64_t>::max()),
    }, samplingOptions<S>(generation), {
        intOption<S>("threads", "N", kThreadsHelp, [](auto& s) -> auto& { return s.threads; }, 0, kMaxThreads, 't'),
        intOption<S>("ctx", "N", "context size in tokens; 0 = min(training context, 4096), at least prompt + N",
                     [](auto& s) -> auto& { return s.ctx; }, 0, std::numeric_limits<int32_t>::max(), 'c'),
        kvTypeOption<S>([](auto& s) -> auto& { return s.kvType; }),
        flagOption<S>("ignore-eos", "go on past end-of-generation tokens: exactly N tokens", [](S& s) { s.ignoreEos = true; }),
    }});
    return table;
}

}  // namespace

int runGenerate(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(generateOptions(), GenerateSettings{});
    for (OptionSpec spec : {deviceOptionSpec(), gpuLayersOptionSpec(), jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("generate", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict generate MODEL.gguf -p TEXT [-n N] [--temp T] [--seed S] [--device DEV] [--gpu-layers N] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("generate", "expected exactly one model file (see --help)", kExitUsage);
    if (!args->has("prompt")) return fail("generate", "missing -p/--prompt TEXT", kExitUsage);
    GenerateSettings settings;
    if (auto e = applyOptions(generateOptions(), *args, settings)) return fail("generate", *e, kExitUsage);
    const core::GenerationParams& gp = settings.generation;
    const bool json = args->has("json");
    std::string device;
    if (int rc = readDeviceOption("generate", *args, &device); rc != kExitOk) return rc;
    int gpuLayers = -1;
    if (int rc = readGpuLayersOption("generate", *args, device, &gpuLayers); rc != kExitOk) return rc;

    auto model = core::openLocalModel(args->positionals()[0], settings.threads, device, gpuLayers, nullptr);
    if (!model) return fail("generate", model.error().message, openFailureExitCode(device));
    auto prompt = (*model)->tokenize(settings.prompt, true, false);
    if (!prompt) return fail("generate", prompt.error().message, kExitBadInput);
    if (prompt->empty()) return fail("generate", "the prompt tokenizes to nothing", kExitBadInput);

    SessionOptions so;
    so.nCtx = settings.ctx;
    so.kvType = settings.kvType == "f16" ? KvType::F16 : KvType::F32;
    if (so.nCtx == 0) {
        // Default context: enough for prompt + generation, at least the usual default.
        so.nCtx = std::min<int64_t>((*model)->shape().nCtxTrain, 4096);
        so.nCtx = std::max<int64_t>(so.nCtx, static_cast<int64_t>(prompt->size()) + gp.maxTokens);
    }
    auto session = Session::create(*model, so);
    if (!session) return fail("generate", session.error().message, kExitRuntime);

    GenerateConfig g = core::toGenerateConfig(gp);
    g.stopAtEos = !settings.ignoreEos;
    if (!json) {
        g.onToken = [](int32_t, std::string_view piece) {
            std::cout << piece << std::flush;
            return true;
        };
    }
    std::vector<int32_t> promptIds = *prompt;
    Result<GenerateResult> out = g.maxTokens > 0 ? (*session)->generate(promptIds, g) : Result<GenerateResult>(GenerateResult{});
    if (!out) return fail("generate", out.error().message, kExitBadInput);
    const Timings& t = out->timings;
    const MemoryUse mem = (*session)->memoryUse();
    if (!json) {
        std::cout << "\n";
        std::cerr << "prompt " << t.promptTokens << " tokens, " << t.prefillTps << " tok/s; ttft " << t.ttftMs
                  << " ms; decode " << t.decodeTokens << " tokens, " << t.decodeTps << " tok/s; load "
                  << (*model)->loadMs() << " ms\n";
        return kExitOk;
    }
    nlohmann::json j;
    j["prompt_tokens"] = promptIds;
    j["tokens"] = out->tokens;
    j["text"] = out->text;  // invalid UTF-8 (a piece can be a lone byte) is written as U+FFFD
    j["stop_reason"] = stopReasonName(out->stopReason);
    j["timings"] = {{"load_ms", (*model)->loadMs()}, {"ttft_ms", t.ttftMs},       {"prefill_tps", t.prefillTps},
                    {"decode_tps", t.decodeTps},     {"prompt_ms", t.promptMs},   {"decode_ms", t.decodeMs},
                    {"prompt_eval_tokens", t.promptTokens}, {"decode_steps", t.decodeTokens}};
    j["memory"] = memoryUseJson(mem, (*model)->gpuLayers());
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
}

}  // namespace verdict::cli
