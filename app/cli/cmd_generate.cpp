// verdict generate MODEL -p TEXT -n N [--temp T] [--seed S] [--threads T] [--ctx C] [--stop-at-eos]
//                  [--device DEV] [--gpu-layers N] [--json]: tokenizes the prompt (BOS added as the vocabulary asks), generates
// N tokens and prints the text (streamed) or one JSON object (shape: docs/cli.md):
//   {"prompt_tokens": [ids], "tokens": [ids], "text": str, "stop_reason": str,
//    "timings": {"load_ms", "ttft_ms", "prefill_tps", "decode_tps", "prompt_ms", "decode_ms"},
//    "memory": {"weights_bytes", "kv_bytes", "scratch_bytes", "peak_rss_bytes", "device",
//               "vram_weights_bytes", ... (0 on the CPU)}}
// With --temp 0 decoding is greedy and EOS does not stop it unless --stop-at-eos, so exactly N
// tokens come out (what parity checks against llama.cpp compare).
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <nlohmann/json.hpp>

#include <iostream>

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

}  // namespace

int runGenerate(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = {
        {"prompt", true, "TEXT", "prompt text (required)", false, 'p'},
        {"n-predict", true, "N", "tokens to generate (default 64)", false, 'n'},
        {"temp", true, "T", "temperature; 0 = greedy (default 0.8)"},
        {"top-k", true, "K", "top-k (default 40; 0 = off)"},
        {"top-p", true, "P", "top-p (default 0.95; 1 = off)"},
        {"min-p", true, "P", "min-p (default 0.05; 0 = off)"},
        {"repeat-penalty", true, "R", "repetition penalty over the last 64 tokens (default 1 = off)"},
        {"seed", true, "S", "random seed (default 0)"},
        {"threads", true, "N", "compute threads (default: physical cores)", false, 't'},
        {"ctx", true, "N", "context size in tokens (default: min(training context, 4096))", false, 'c'},
        {"kv-type", true, "TYPE", "KV cache element type: f32 (default) or f16"},
        deviceOptionSpec(),
        gpuLayersOptionSpec(),
        {"stop-at-eos", false, "", "stop at an end-of-generation token (always on unless --temp 0)"},
        {"stop", true, "STR", "stop when the text contains STR (repeatable)", true},
        {"json", false, "", "print one JSON object (shape: docs/cli.md)"},
        {"help", false, "", "show this help", false, 'h'},
    };
    auto args = Args::parse(argv, specs);
    if (!args) return fail("generate", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict generate MODEL.gguf -p TEXT [-n N] [--temp T] [--seed S] [--device DEV] [--gpu-layers N] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("generate", "expected exactly one model file (see --help)", kExitUsage);
    if (!args->has("prompt")) return fail("generate", "missing -p/--prompt TEXT", kExitUsage);

    auto n = args->integer("n-predict", 64);
    auto temp = args->number("temp", 0.8);
    auto topK = args->integer("top-k", 40);
    auto topP = args->number("top-p", 0.95);
    auto minP = args->number("min-p", 0.05);
    auto rep = args->number("repeat-penalty", 1.0);
    auto seed = args->integer("seed", 0);
    auto threads = args->integer("threads", 0);
    auto ctx = args->integer("ctx", 0);
    for (const Result<long long>* r : {&n, &topK, &seed, &threads, &ctx})
        if (!*r) return fail("generate", r->error().message, kExitUsage);
    for (const Result<double>* r : {&temp, &topP, &minP, &rep})
        if (!*r) return fail("generate", r->error().message, kExitUsage);
    if (*n < 0 || *n > 1'000'000) return fail("generate", "-n must be between 0 and 1000000", kExitUsage);
    if (*ctx < 0) return fail("generate", "--ctx must be positive", kExitUsage);
    const std::string kvType = args->value("kv-type").value_or("f32");
    if (kvType != "f32" && kvType != "f16") return fail("generate", "--kv-type must be f32 or f16", kExitUsage);
    const bool json = args->has("json");
    std::string device;
    if (int rc = readDeviceOption("generate", *args, &device); rc != kExitOk) return rc;
    int gpuLayers = -1;
    if (int rc = readGpuLayersOption("generate", *args, device, &gpuLayers); rc != kExitOk) return rc;

    ModelOptions mo;
    mo.threads = static_cast<int>(*threads);
    mo.device = device;
    mo.gpuLayers = gpuLayers;
    auto model = Model::open(args->positionals()[0], mo);
    if (!model) return fail("generate", model.error().message, openFailureExitCode(device));
    auto prompt = (*model)->tokenize(*args->value("prompt"), true, false);
    if (!prompt) return fail("generate", prompt.error().message, kExitBadInput);
    if (prompt->empty()) return fail("generate", "the prompt tokenizes to nothing", kExitBadInput);

    SessionOptions so;
    so.nCtx = *ctx;
    so.kvType = kvType == "f16" ? KvType::F16 : KvType::F32;
    if (so.nCtx == 0) {
        // Default context: enough for prompt + generation, at least the usual default.
        so.nCtx = std::min<int64_t>((*model)->shape().nCtxTrain, 4096);
        so.nCtx = std::max<int64_t>(so.nCtx, static_cast<int64_t>(prompt->size()) + *n);
    }
    auto session = Session::create(*model, so);
    if (!session) return fail("generate", session.error().message, kExitRuntime);

    GenerateConfig g;
    g.maxTokens = static_cast<int32_t>(*n);
    g.sampling.temperature = static_cast<float>(*temp);
    g.sampling.topK = static_cast<int32_t>(*topK);
    g.sampling.topP = static_cast<float>(*topP);
    g.sampling.minP = static_cast<float>(*minP);
    g.sampling.repeatPenalty = static_cast<float>(*rep);
    g.sampling.seed = static_cast<uint64_t>(*seed);
    g.stopAtEos = args->has("stop-at-eos") || *temp > 0;
    g.stopStrings = args->values("stop");
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
