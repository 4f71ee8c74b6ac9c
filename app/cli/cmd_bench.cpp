// verdict bench MODEL [-p 512] [-n 128] [-r 5] [--threads T] [--kv-type f16] [--device DEV]
//             [--gpu-layers N] [--json]:
// llama-bench's two tests on the built-in engine (definitions from ggml-org/llama.cpp
// tools/llama-bench/llama-bench.cpp, test_prompt() / test_gen() and the main loop):
//   pp<N>: N random token ids (the first one BOS when the vocabulary adds it) evaluated as one
//          prompt from an empty cache (split into forward passes of n_batch tokens);
//   tg<N>: N tokens decoded one at a time from an empty cache (BOS, then random ids; no sampling).
// Each test gets one untimed warm-up (the whole prompt for pp, one token for tg), then -r timed
// repetitions, each after clearing the cache. t/s of a repetition = tokens / seconds; avg_ts and
// stddev_ts are the mean and sample standard deviation of those (not tokens / avg time).
// -p and -n take comma lists; 0 disables that test.
//
// Output: llama-bench's markdown table, or with --json an array with one object per test using
// llama-bench's field names where they apply, plus Verdict's own fields (shape: docs/cli.md).
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/options.h"
#include "core/run/device_check.h"
#include "verdict/engine/devices.h"
#include "verdict/engine/model.h"
#include "verdict/engine/model_card.h"
#include "verdict/engine/perplexity.h"
#include "verdict/engine/session.h"
#include "core/version.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <random>
#include <thread>

namespace verdict::cli {
namespace {

constexpr const char* kCmd = "bench";

struct BenchTest {
    int64_t nPrompt = 0;
    int64_t nGen = 0;
    std::string testTime;           // RFC 3339, UTC, when the test started
    std::vector<uint64_t> samplesNs;
    MemoryUse memory;               // the test's session after its last repetition
    std::string name() const { return nPrompt > 0 ? "pp" + std::to_string(nPrompt) : "tg" + std::to_string(nGen); }
    std::vector<double> samplesTs() const {
        std::vector<double> ts;
        for (uint64_t ns : samplesNs) ts.push_back(1e9 * static_cast<double>(nPrompt + nGen) / static_cast<double>(ns));
        return ts;
    }
};

template <class T>
double mean(const std::vector<T>& v) {
    double s = 0;
    for (T x : v) s += static_cast<double>(x);
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

// Sample standard deviation (n - 1), as llama-bench's stdev().
template <class T>
double stddev(const std::vector<T>& v) {
    if (v.size() < 2) return 0.0;
    const double m = mean(v);
    double s = 0;
    for (T x : v) s += (static_cast<double>(x) - m) * (static_cast<double>(x) - m);
    return std::sqrt(s / static_cast<double>(v.size() - 1));
}

std::string nowRfc3339() {
    char buf[64];
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// llama.cpp's llama_model_ftype_name() labels for general.file_type (llama.h llama_ftype).
std::string fileTypeName(const ModelCard& card) {
    if (card.fileType) {
        switch (*card.fileType) {
        case 0: return "all F32";
        case 1: return "F16";
        case 2: return "Q4_0";
        case 3: return "Q4_1";
        case 7: return "Q8_0";
        case 8: return "Q5_0";
        case 9: return "Q5_1";
        case 10: return "Q2_K - Medium";
        case 11: return "Q3_K - Small";
        case 12: return "Q3_K - Medium";
        case 13: return "Q3_K - Large";
        case 14: return "Q4_K - Small";
        case 15: return "Q4_K - Medium";
        case 16: return "Q5_K - Small";
        case 17: return "Q5_K - Medium";
        case 18: return "Q6_K";
        case 21: return "Q2_K - Small";
        case 32: return "BF16";
        default: return "ftype " + std::to_string(*card.fileType);
        }
    }
    // No general.file_type: name the type holding most bytes (llama.cpp says "(guessed)" too).
    std::string best = "?";
    uint64_t bestBytes = 0;
    for (const auto& [type, bytes] : card.tensorTypeBytes)
        if (bytes > bestBytes) {
            bestBytes = bytes;
            best = type;
        }
    return best + " (guessed)";
}

// "llama 853M Q4_0": architecture, parameter count, file type (llama.cpp prints a size class
// such as "7B" or "?B" in the middle; the parameter count says more for synthetic models).
std::string modelType(const ModelCard& card) {
    char size[32];
    const auto p = static_cast<double>(card.nParams);
    if (p >= 1e9) std::snprintf(size, sizeof size, "%.1fB", p / 1e9);
    else if (p >= 1e6) std::snprintf(size, sizeof size, "%.0fM", p / 1e6);
    else std::snprintf(size, sizeof size, "%.0fK", p / 1e3);
    return card.arch + " " + size + " " + fileTypeName(card);
}

class Bench {
public:
    Bench(std::shared_ptr<const Model> model, KvType kv) : m_model(std::move(model)), m_kv(kv), m_rng(1) {
        m_nVocab = static_cast<int32_t>(m_model->shape().nVocab);
        m_bos = addsBos(*m_model) ? m_model->bos() : -1;
    }

    // Runs one test: a session of n_prompt + n_gen tokens, one warm-up, `reps` timed runs.
    Result<BenchTest> run(int64_t nPrompt, int64_t nGen, int reps) {
        BenchTest t;
        t.nPrompt = nPrompt;
        t.nGen = nGen;
        SessionOptions so;
        so.nCtx = nPrompt + nGen;
        so.kvType = m_kv;
        so.nBatch = kBatch;
        auto session = Session::create(m_model, so);
        if (!session) return session.error();
        Session& s = **session;
        t.testTime = nowRfc3339();
        // Warm-up as llama-bench: the whole prompt for pp, a single token for tg.
        if (auto w = nPrompt > 0 ? prompt(s, nPrompt) : generate(s, 1); !w) return w.error();
        for (int i = 0; i < reps; ++i) {
            std::fprintf(stderr, "bench: %s run %d/%d\n", t.name().c_str(), i + 1, reps);
            s.clear();
            const auto t0 = std::chrono::steady_clock::now();
            if (auto r = nPrompt > 0 ? prompt(s, nPrompt) : generate(s, nGen); !r) return r.error();
            const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
            t.samplesNs.push_back(static_cast<uint64_t>(std::max<int64_t>(ns.count(), 1)));
        }
        t.memory = s.memoryUse();
        return t;
    }

    static constexpr int64_t kBatch = 512;  // tokens per forward pass (llama-bench's n_ubatch default)

private:
    int32_t randomToken() { return static_cast<int32_t>(m_rng() % static_cast<uint32_t>(m_nVocab)); }

    Result<void> prompt(Session& s, int64_t n) {
        s.clear();
        std::vector<int32_t> ids(static_cast<size_t>(n));
        for (auto& id : ids) id = randomToken();
        if (m_bos >= 0) ids[0] = m_bos;
        auto r = s.evaluate(ids, false);
        if (!r) return r.error();
        return okResult();
    }

    Result<void> generate(Session& s, int64_t n) {
        s.clear();
        int32_t token = m_bos >= 0 ? m_bos : randomToken();
        for (int64_t i = 0; i < n; ++i) {
            auto r = s.evaluate(std::span<const int32_t>(&token, 1), false);
            if (!r) return r.error();
            token = randomToken();
        }
        return okResult();
    }

    std::shared_ptr<const Model> m_model;
    KvType m_kv;
    std::mt19937 m_rng;
    int32_t m_nVocab = 0;
    int32_t m_bos = -1;
};

std::string formatBytes(uint64_t b) {
    char buf[32];
    const double mib = static_cast<double>(b) / 1024.0 / 1024.0;
    if (mib < 1024) std::snprintf(buf, sizeof buf, "%.2f MiB", mib);
    else std::snprintf(buf, sizeof buf, "%.2f GiB", mib / 1024.0);
    return buf;
}

std::string formatParams(uint64_t n) {
    char buf[32];
    if (n < 1000000000ULL) std::snprintf(buf, sizeof buf, "%.2f M", static_cast<double>(n) / 1e6);
    else std::snprintf(buf, sizeof buf, "%.2f B", static_cast<double>(n) / 1e9);
    return buf;
}

// What `verdict bench` measures, llama-bench's defaults: pp512 and tg128, 5 repetitions, an F16 KV cache.
struct BenchSettings {
    std::vector<int64_t> prompts{512};
    std::vector<int64_t> gens{128};
    int reps = 5;
    int threads = 0;
    std::string kvType = "f16";
};

const OptionTable<BenchSettings>& benchOptions() {
    using S = BenchSettings;
    static const OptionTable<S> table = {
        intListOption<S>("n-prompt", "N[,N..]", "prompt-processing tests of N tokens; 0 = none",
                         [](auto& s) -> auto& { return s.prompts; }, 0, 1 << 20, 'p'),
        intListOption<S>("n-gen", "N[,N..]", "generation tests of N tokens; 0 = none", [](auto& s) -> auto& { return s.gens; }, 0,
                         1 << 20, 'n'),
        intOption<S>("repetitions", "R", "timed repetitions per test", [](auto& s) -> auto& { return s.reps; }, 1, 1000, 'r'),
        intOption<S>("threads", "N", kThreadsHelp, [](auto& s) -> auto& { return s.threads; }, 0, kMaxThreads, 't'),
        kvTypeOption<S>([](auto& s) -> auto& { return s.kvType; }),
    };
    return table;
}

}  // namespace

int runBench(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(benchOptions(), BenchSettings{});
    for (OptionSpec spec : {deviceOptionSpec(), gpuLayersOptionSpec(),
                            jsonOption("print a JSON array, one object per test (shape: docs/cli.md)"), helpOption()})
        specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail(kCmd, args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict bench MODEL.gguf [-p 512] [-n 128] [-r 5] [--threads T] [--device DEV] [--gpu-layers N] [--json]",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail(kCmd, "expected exactly one model file (see --help)", kExitUsage);
    BenchSettings settings;
    if (auto e = applyOptions(benchOptions(), *args, settings)) return fail(kCmd, *e, kExitUsage);
    const std::string& kvName = settings.kvType;
    const bool json = args->has("json");
    const std::string path = args->positionals()[0];
    std::string device;
    if (int rc = readDeviceOption(kCmd, *args, &device); rc != kExitOk) return rc;
    int gpuLayers = -1;
    if (int rc = readGpuLayersOption(kCmd, *args, device, &gpuLayers); rc != kExitOk) return rc;

    auto card = describeModelFile(path);
    if (!card) return fail(kCmd, card.error().message, kExitBadInput);
    auto model = core::openLocalModel(path, settings.threads, device, gpuLayers, nullptr);
    if (!model) return fail(kCmd, model.error().message, openFailureExitCode(device));
    // llama-bench's gpu_info and backends: the GPU's name and "CUDA" when the model runs there.
    const bool onGpu = (*model)->device() != "cpu";
    const std::string gpuInfo = onGpu ? (*model)->deviceName() : std::string();
    const std::string backend = onGpu ? "CUDA" : "CPU";

    const DeviceList devices = listDevices();
    const DeviceInfo cpuDevice = devices.devices.empty() ? DeviceInfo{} : devices.devices.front();
    const std::string cpuName = devices.devices.empty() ? "unknown" : cpuDevice.name;
    const std::string simd = cpuSimdLevel();
    const int physicalCores = physicalCpuCores();
    const auto logicalCpus = static_cast<int>(std::thread::hardware_concurrency());
    const std::string type = modelType(*card);
    const uint64_t modelSize = card->memoryTrained.weightsBytes;  // llama-bench's model_size: tensor data bytes

    Bench bench(*model, kvName == "f16" ? KvType::F16 : KvType::F32);
    std::vector<BenchTest> tests;
    for (int64_t p : settings.prompts) {
        if (p == 0) continue;
        auto t = bench.run(p, 0, settings.reps);
        if (!t) return fail(kCmd, "pp" + std::to_string(p) + ": " + t.error().message, kExitRuntime);
        tests.push_back(std::move(*t));
    }
    for (int64_t g : settings.gens) {
        if (g == 0) continue;
        auto t = bench.run(0, g, settings.reps);
        if (!t) return fail(kCmd, "tg" + std::to_string(g) + ": " + t.error().message, kExitRuntime);
        tests.push_back(std::move(*t));
    }

    if (json) {
        nlohmann::json out = nlohmann::json::array();
        for (const BenchTest& t : tests) {
            const auto ts = t.samplesTs();
            out.push_back({
                {"build_commit", core::buildCommit()},
                {"cpu_info", cpuName},
                {"gpu_info", gpuInfo},
                {"backends", backend},
                {"n_gpu_layers", (*model)->gpuLayers()},  // llama-bench's field: blocks on the GPU (0 on the CPU)
                {"model_filename", path},
                {"model_type", type},
                {"model_size", modelSize},
                {"model_n_params", card->nParams},
                {"n_batch", Bench::kBatch},
                {"n_ubatch", Bench::kBatch},
                {"n_threads", (*model)->threads()},
                {"type_k", kvName},
                {"type_v", kvName},
                {"n_prompt", t.nPrompt},
                {"n_gen", t.nGen},
                {"test_time", t.testTime},
                {"avg_ns", static_cast<uint64_t>(std::llround(mean(t.samplesNs)))},
                {"stddev_ns", static_cast<uint64_t>(std::llround(stddev(t.samplesNs)))},
                {"avg_ts", mean(ts)},
                {"stddev_ts", stddev(ts)},
                {"samples_ns", t.samplesNs},
                {"samples_ts", ts},
                {"test", t.name()},
                {"cpu_physical_cores", physicalCores},
                {"cpu_logical_cores", logicalCpus},
                {"simd", simd},
                {"cpu_features", cpuDevice.cpuFeatures},
                {"amx", cpuDevice.amx},
                {"engine_version", core::versionNumber()},
                {"memory", memoryUseJson(t.memory, (*model)->gpuLayers())},
            });
        }
        std::cout << out.dump(2) << "\n";
        return kExitOk;
    }

    std::printf("| %-30s | %10s | %10s | %-10s | %7s | %15s | %20s |\n", "model", "size", "params", "backend", "threads",
                "test", "t/s");
    std::printf("| %s | %s: | %s: | %s | %s: | %s: | %s: |\n", std::string(30, '-').c_str(), std::string(9, '-').c_str(),
                std::string(9, '-').c_str(), std::string(10, '-').c_str(), std::string(6, '-').c_str(),
                std::string(14, '-').c_str(), std::string(19, '-').c_str());
    for (const BenchTest& t : tests) {
        const auto ts = t.samplesTs();
        char rate[64];
        std::snprintf(rate, sizeof rate, "%.2f ± %.2f", mean(ts), stddev(ts));
        // "±" is two bytes in UTF-8: one more column of padding keeps the table aligned.
        std::printf("| %-30s | %10s | %10s | %-10s | %7d | %15s | %21s |\n", type.c_str(), formatBytes(modelSize).c_str(),
                    formatParams(card->nParams).c_str(), backend.c_str(), (*model)->threads(), t.name().c_str(), rate);
    }
    std::printf("\nbuild: %s (verdict %s, %s, %s, AMX %s)\n", core::buildCommit(), core::versionNumber(),
                std::filesystem::path(path).filename().string().c_str(), simd.c_str(), cpuDevice.amx.c_str());
    return kExitOk;
}

}  // namespace verdict::cli
