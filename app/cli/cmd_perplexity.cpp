// verdict perplexity MODEL FILE [--ctx N] [--chunks N] [--threads T] [--kld-base BASE] [--device DEV]
//                   [--gpu-layers N] [--json]:
// perplexity of MODEL over the text in FILE as llama-perplexity computes it (chunks of --ctx
// tokens, second half of each chunk scored; see verdict/engine/perplexity.h), and with --kld-base
// the KL-divergence of MODEL's token distributions against BASE's on the same tokens
// (llama-perplexity --kl-divergence statistics). Progress goes to stderr; stdout gets a summary or
// one JSON object (shape: docs/cli.md):
//   {"model", "device", "file", "n_ctx", "text_tokens", "chunks", "tokens_scored", "ppl", "ppl_stderr",
//    "mean_nll", "nll_stderr", "chunk_ppl": [..], "running_ppl": [..], "seconds",
//    "tokens_per_second", "kld": null | {"base_model", "ppl_base", "ppl_base_stderr", "ppl_ratio",
//    "ppl_ratio_stderr", "ln_ppl_ratio", "ln_ppl_ratio_stderr", "mean_kld", "mean_kld_stderr",
//    "kld_quantiles": {..}, "same_top_p", "same_top_p_stderr", "mean_delta_p",
//    "mean_delta_p_stderr", "rms_delta_p", "rms_delta_p_stderr", "delta_p_quantiles": {..},
//    "chunk_kld": [..]}}
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/options.h"
#include "core/run/device_check.h"
#include "verdict/engine/model.h"
#include "verdict/engine/perplexity.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

namespace verdict::cli {
namespace {

constexpr const char* kCmd = "perplexity";

Result<std::string> readText(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return Error{"cannot read " + path + " (missing or not readable)"};
    std::ostringstream ss;
    ss << f.rdbuf();
    std::string text = ss.str();
    if (text.empty()) return Error{path + " is empty: perplexity needs a text"};
    return text;
}

nlohmann::json quantilesJson(const Quantiles& q) {
    return {{"max", q.max},   {"p99_9", q.p99_9}, {"p99", q.p99}, {"p95", q.p95},   {"p90", q.p90}, {"median", q.median},
            {"p10", q.p10},   {"p5", q.p5},       {"p1", q.p1},   {"p0_1", q.p0_1}, {"min", q.min}};
}

void printPerplexity(const PerplexityResult& r, const std::string& file) {
    std::printf("text: %s, %lld tokens; context %lld, %lld chunks, %lld tokens scored\n", file.c_str(),
                static_cast<long long>(r.textTokens), static_cast<long long>(r.nCtx), static_cast<long long>(r.chunks),
                static_cast<long long>(r.tokensScored));
    std::printf("running PPL:");
    for (size_t i = 0; i < r.runningPpl.size(); ++i) std::printf(" [%zu]%.4f", i + 1, r.runningPpl[i]);
    std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.pplStderr);
    std::printf("speed: %.1f tokens/s (%.2f s)\n", r.tokensPerSecond, r.seconds);
}

void printKld(const KlDivergenceResult& k) {
    std::printf("\n====== Perplexity statistics ======\n");
    std::printf("Mean PPL(Q)                   : %10.6f ± %10.6f\n", k.model.ppl, k.model.pplStderr);
    std::printf("Mean PPL(base)                : %10.6f ± %10.6f\n", k.base.ppl, k.base.pplStderr);
    std::printf("Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f\n", k.lnPplRatio, k.lnPplRatioStderr);
    std::printf("Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f\n", k.pplRatio, k.pplRatioStderr);
    std::printf("\n====== KL divergence statistics ======\n");
    std::printf("Mean    KLD: %10.6f ± %10.6f\n", k.meanKld, k.meanKldStderr);
    const Quantiles& q = k.kld;
    const std::pair<const char*, double> rows[] = {{"Maximum", q.max}, {"99.9%  ", q.p99_9}, {"99.0%  ", q.p99},
                                                   {"95.0%  ", q.p95}, {"90.0%  ", q.p90},   {"Median ", q.median},
                                                   {"10.0%  ", q.p10}, {" 5.0%  ", q.p5},    {" 1.0%  ", q.p1},
                                                   {" 0.1%  ", q.p0_1}, {"Minimum", q.min}};
    for (const auto& [label, v] : rows) std::printf("%s KLD: %10.6f\n", label, v);
    std::printf("\n====== Token probability statistics ======\n");
    std::printf("Mean    Δp: %6.3f ± %5.3f %%\n", 100 * k.meanDeltaP, 100 * k.meanDeltaPStderr);
    std::printf("Median  Δp: %6.3f %%\n", 100 * k.deltaP.median);
    std::printf("RMS Δp    : %6.3f ± %5.3f %%\n", 100 * k.rmsDeltaP, 100 * k.rmsDeltaPStderr);
    std::printf("Same top p: %6.3f ± %5.3f %%\n", 100 * k.sameTopP, 100 * k.sameTopPStderr);
}

nlohmann::json perplexityJson(const PerplexityResult& r, const std::string& model, const std::string& device,
                              const std::string& file) {
    return {{"model", model},
            {"device", device},
            {"file", file},
            {"n_ctx", r.nCtx},
            {"text_tokens", r.textTokens},
            {"chunks", r.chunks},
            {"tokens_scored", r.tokensScored},
            {"ppl", r.ppl},
            {"ppl_stderr", r.pplStderr},
            {"mean_nll", r.meanNll},
            {"nll_stderr", r.nllStderr},
            {"chunk_ppl", r.chunkPpl},
            {"running_ppl", r.runningPpl},
            {"seconds", r.seconds},
            {"tokens_per_second", r.tokensPerSecond},
            {"kld", nullptr}};
}

// What `verdict perplexity` is asked: llama-perplexity's chunks of 512 tokens, every chunk, an F32 KV cache.
struct PerplexitySettings {
    int64_t ctx = 512;
    int64_t chunks = 0;  // 0: all
    int threads = 0;
    std::string kldBase;
    std::string kvType = "f32";
};

const OptionTable<PerplexitySettings>& perplexityOptions() {
    using S = PerplexitySettings;
    static const OptionTable<S> table = {
        intOption<S>("ctx", "N", "tokens per chunk; the text needs at least 2*N tokens", [](auto& s) -> auto& { return s.ctx; }, 4,
                     1 << 20, 'c'),
        intOption<S>("chunks", "N", "evaluate at most N chunks; 0 = all", [](auto& s) -> auto& { return s.chunks; }, 0,
                     std::numeric_limits<int32_t>::max()),
        intOption<S>("threads", "N", kThreadsHelp, [](auto& s) -> auto& { return s.threads; }, 0, kMaxThreads, 't'),
        textOption<S>("kld-base", "MODEL", "also compute the KL-divergence of MODEL.gguf against this base model",
                      [](auto& s) -> auto& { return s.kldBase; }),
        kvTypeOption<S>([](auto& s) -> auto& { return s.kvType; }),
    };
    return table;
}

}  // namespace

int runPerplexity(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(perplexityOptions(), PerplexitySettings{});
    for (OptionSpec spec : {deviceOptionSpec(), gpuLayersOptionSpec(), jsonOption(), helpOption()}) specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail(kCmd, args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict perplexity MODEL.gguf TEXT_FILE [--ctx N] [--chunks N] [--kld-base BASE.gguf] [--device DEV] [--gpu-layers N] [--json]",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 2)
        return fail(kCmd, "expected a model file and a text file (see --help)", kExitUsage);
    PerplexitySettings settings;
    if (auto e = applyOptions(perplexityOptions(), *args, settings)) return fail(kCmd, *e, kExitUsage);
    const bool json = args->has("json");
    const std::string modelPath = args->positionals()[0];
    const std::string file = args->positionals()[1];
    std::string device;
    if (int rc = readDeviceOption(kCmd, *args, &device); rc != kExitOk) return rc;
    int gpuLayers = -1;
    if (int rc = readGpuLayersOption(kCmd, *args, device, &gpuLayers); rc != kExitOk) return rc;

    auto text = readText(file);
    if (!text) return fail(kCmd, text.error().message, kExitBadInput);
    // The base model of --kld-base runs on the same device, with the same offload.
    auto model = core::openLocalModel(modelPath, settings.threads, device, gpuLayers, nullptr);
    if (!model) return fail(kCmd, model.error().message, openFailureExitCode(device));
    if (!(*model)->hasTokenizer()) return fail(kCmd, modelPath + " has no usable tokenizer", kExitBadInput);
    auto ids = (*model)->tokenize(*text, true, false);
    if (!ids) return fail(kCmd, file + ": " + ids.error().message, kExitBadInput);
    const auto needed = 2 * settings.ctx;
    if (static_cast<long long>(ids->size()) < needed)
        return fail(kCmd,
                    file + " tokenizes to only " + std::to_string(ids->size()) + " tokens; a context of "
                        + std::to_string(settings.ctx) + " needs at least " + std::to_string(needed)
                        + " tokens (use a longer text or a smaller --ctx)",
                    kExitBadInput);

    std::shared_ptr<const Model> base;
    if (!settings.kldBase.empty()) {
        const std::string& basePath = settings.kldBase;
        auto b = core::openLocalModel(basePath, settings.threads, device, gpuLayers, nullptr);
        if (!b) return fail(kCmd, b.error().message, openFailureExitCode(device));
        base = *b;
        if (base->shape().nVocab != (*model)->shape().nVocab)
            return fail(kCmd,
                        "cannot compare " + modelPath + " with " + basePath + ": vocabularies differ ("
                            + std::to_string((*model)->shape().nVocab) + " vs "
                            + std::to_string(base->shape().nVocab) + " tokens)",
                        kExitBadInput);
        if (!base->hasTokenizer()) return fail(kCmd, basePath + " has no usable tokenizer", kExitBadInput);
        auto baseIds = base->tokenize(*text, true, false);
        if (!baseIds || *baseIds != *ids)
            return fail(kCmd, "cannot compare " + modelPath + " with " + basePath + ": they tokenize " + file
                                  + " differently (the vocabularies must be the same)",
                        kExitBadInput);
    }

    PerplexityOptions po;
    po.nCtx = settings.ctx;
    po.maxChunks = settings.chunks;
    po.kvType = settings.kvType == "f16" ? KvType::F16 : KvType::F32;
    po.progress = [](int64_t done, int64_t total) {
        std::fprintf(stderr, "perplexity: chunk %lld/%lld\n", static_cast<long long>(done),
                     static_cast<long long>(total));
        return true;
    };
    const bool addBos = addsBos(**model);

    if (!base) {
        auto r = computePerplexity(*model, *ids, addBos, po);
        if (!r) return fail(kCmd, r.error().message, kExitRuntime);
        if (json) {
            std::cout << perplexityJson(*r, modelPath, (*model)->device(), file).dump(2) << "\n";
        } else {
            std::printf("model: %s\n", modelPath.c_str());
            printPerplexity(*r, file);
        }
        return kExitOk;
    }

    auto k = computeKlDivergence(*model, base, *ids, addBos, po);
    if (!k) return fail(kCmd, k.error().message, kExitRuntime);
    if (json) {
        nlohmann::json j = perplexityJson(k->model, modelPath, (*model)->device(), file);
        j["seconds"] = k->seconds;
        j["tokens_per_second"] = k->tokensPerSecond;
        j["kld"] = {{"base_model", base->path()},
                    {"ppl_base", k->base.ppl},
                    {"ppl_base_stderr", k->base.pplStderr},
                    {"ppl_ratio", k->pplRatio},
                    {"ppl_ratio_stderr", k->pplRatioStderr},
                    {"ln_ppl_ratio", k->lnPplRatio},
                    {"ln_ppl_ratio_stderr", k->lnPplRatioStderr},
                    {"mean_kld", k->meanKld},
                    {"mean_kld_stderr", k->meanKldStderr},
                    {"kld_quantiles", quantilesJson(k->kld)},
                    {"same_top_p", k->sameTopP},
                    {"same_top_p_stderr", k->sameTopPStderr},
                    {"mean_delta_p", k->meanDeltaP},
                    {"mean_delta_p_stderr", k->meanDeltaPStderr},
                    {"rms_delta_p", k->rmsDeltaP},
                    {"rms_delta_p_stderr", k->rmsDeltaPStderr},
                    {"delta_p_quantiles", quantilesJson(k->deltaP)},
                    {"chunk_kld", k->chunkKld}};
        std::cout << j.dump(2) << "\n";
        return kExitOk;
    }
    std::printf("model: %s\nbase:  %s\n", modelPath.c_str(), base->path().c_str());
    printPerplexity(k->model, file);
    printKld(*k);
    return kExitOk;
}

}  // namespace verdict::cli
