// Kernel benchmark: matrix-vector (decode) bandwidth and matrix-matrix (prefill) throughput of
// the CPU matmul kernels, per weight type and SIMD level, on the shapes of the project's
// reference model (llama-like, n_embd 2048, n_ff 5632, 16 layers, vocab 32000).
//
// Prints one JSON object. Not a pass/fail test: compare runs on the same machine, as ratios
// (the "stream_read_gbs" baseline is measured in the same run; "matmul_gflops_per_core" divides
// by process CPU time, which other load on a shared machine disturbs less than wall time).
// model_decode_tok_s / model_prefill_tok_s time only the model's matrix products (no attention,
// norms or sampling): an upper bound for the engine's tokens per second.
//
// --decode-steps N: fixed work instead of fixed time, for timing the whole process from outside
// (two levels' runs as a ratio): only the model's decode, exactly N steps per type and level,
// after one warm-up step; no bandwidth baseline, matvec / matmul or prefill figures.
//
// A kernel that packs weights at load (MatmulKernel::pack) is measured twice: on the rows as on
// disk (level "avx512") and on the packed copy the model reads (level "avx512+packed"). A level
// with two kernels for a type names the second by its variant (BF16: "avx512-bf16dot", vdpbf16ps).
//
// Types Verdict cannot quantize (i-quants, MXFP4, TQ1_0 / TQ2_0) get random blocks with a sane
// super-block scale (the kernels' speed does not depend on the values, but a zero block would
// hit one grid entry only).
//
//   bench_kernels [--threads N] [--types q4_0,q8_0,f16] [--levels best|all|avx512,avx2,scalar]
//                 [--seconds S] [--prefill-tokens N] [--no-model] [--decode-steps N]
//   e.g. --types iq2_xxs,iq3_xxs,iq3_s --levels all
#include "backend/cpu/matmul_kernel.h"
#include "backend/cpu/thread_pool.h"
#include "tensor/half.h"
#include "tensor/quantize.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace verdict;
using namespace verdict::cpu;
using tensor::TensorType;

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
    int threads = 0;
    std::vector<std::string> types = {"q4_0", "q8_0", "f16"};
    std::vector<std::string> levels = {"best"};
    double seconds = 1.5;
    int prefillTokens = 512;
    bool model = true;
    int decodeSteps = 0;  // > 0: fixed-work decode only
};

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

struct Shape {
    const char* name;
    int64_t rows, K;
    int perLayer;  // how many of this matrix a layer has
};

// The reference model's matrices (ggml orientation: rows = outputs, K = inputs).
constexpr Shape kShapes[] = {
    {"attn_q", 2048, 2048, 1}, {"attn_k", 512, 2048, 1},   {"attn_v", 512, 2048, 1},
    {"attn_o", 2048, 2048, 1}, {"ffn_gate_up", 5632, 2048, 2}, {"ffn_down", 2048, 5632, 1},
};
constexpr int kLayers = 16;
constexpr Shape kOutput{"output", 32000, 2048, 1};

// Weights of one matrix: a quantized random block of rows repeated (speed does not depend on
// the values, and quantizing 10^9 weights with the reference quantizers would take minutes).
std::vector<uint8_t> makeWeights(TensorType t, int64_t rows, int64_t K, uint32_t seed) {
    const uint64_t rb = *tensor::rowBytes(t, static_cast<uint64_t>(K));
    const int64_t seedRows = std::min<int64_t>(rows, 16);
    std::vector<float> wf(static_cast<size_t>(seedRows * K));
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 0.02f);
    for (auto& v : wf) v = nd(rng);
    std::vector<uint8_t> w(rb * static_cast<uint64_t>(rows));
    if (tensor::canQuantize(t)) {
        (void)tensor::quantizeRows(t, wf.data(), w.data(), seedRows, K);
    } else {
        // Random bytes; the f16 scale (d 0.01-0.05) where the format keeps it: last for TQ1_0 /
        // TQ2_0, none for IQ1_M (it spreads it over scale nibbles; random is fine), MXFP4 an
        // exponent byte, first otherwise.
        std::uniform_int_distribution<int> byte(0, 255);
        std::uniform_real_distribution<float> scale(0.01f, 0.05f);
        const uint64_t bb = tensor::traits(t).blockBytes, bytes = rb * static_cast<uint64_t>(seedRows);
        for (uint64_t i = 0; i < bytes; ++i) w[i] = static_cast<uint8_t>(byte(rng));
        for (uint64_t b = 0; b + bb <= bytes; b += bb) {
            const uint16_t d = tensor::fp32ToFp16(scale(rng));
            if (t == TensorType::MXFP4) w[b] = static_cast<uint8_t>(120 + byte(rng) % 5);
            else if (t == TensorType::TQ1_0 || t == TensorType::TQ2_0) std::memcpy(w.data() + b + bb - 2, &d, 2);
            else if (t != TensorType::IQ1_M) std::memcpy(w.data() + b, &d, 2);
        }
    }
    for (int64_t r = seedRows; r < rows; ++r) std::memcpy(w.data() + r * rb, w.data() + (r % seedRows) * rb, rb);
    return w;
}

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// CPU time of the whole process (all threads): on a shared machine, work per core-second is a
// steadier figure than wall time.
double processCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Single-pass read bandwidth over `bytes` (sum of 64-bit words), all threads.
double streamReadGbs(ThreadPool& pool, double seconds) {
    const size_t n = size_t{512} << 20;  // 512 MiB, far beyond any cache
    std::vector<uint64_t> buf(n / 8, 1);
    std::vector<uint64_t> sums(static_cast<size_t>(pool.size()) * 8, 0);
    double best = 0;
    const auto t0 = Clock::now();
    while (secondsSince(t0) < seconds) {
        const auto t1 = Clock::now();
        pool.parallelFor(static_cast<int64_t>(buf.size()), 1 << 16, [&](int64_t b, int64_t e, int th) {
            uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (int64_t i = b; i + 4 <= e; i += 4) {
                s0 += buf[i];
                s1 += buf[i + 1];
                s2 += buf[i + 2];
                s3 += buf[i + 3];
            }
            sums[static_cast<size_t>(th) * 8] += s0 + s1 + s2 + s3;
        });
        best = std::max(best, static_cast<double>(n) / secondsSince(t1) / 1e9);
    }
    return best;
}

struct BenchResult {
    std::string type, level;
    double matvecGbs = 0, matvecUs = 0;  // one 5632 x 2048 matrix, weights from memory
    double matmulGflops = 0;             // same matrix, prefillTokens tokens
    double matmulGflopsPerCore = 0;      // the same per second of process CPU time
    double decodeTokS = 0;               // all matvecs of the 16-layer model + output
    double prefillTokS = 0;              // all matmuls of the model at prefillTokens tokens
};

// packed: the weights repacked as the model loads them (kernel.pack; level "<level>+packed").
BenchResult bench(TensorType t, const MatmulKernel& k, ThreadPool& pool, const Options& o, bool packed) {
    BenchResult res;
    res.type = std::string(tensor::typeName(t));
    res.level = std::string(simdLevelName(k.level)) + (k.variant ? std::string("-") + k.variant : "");
    if (packed) res.level += "+packed";
    auto weights = [&](int64_t rows, int64_t K, uint32_t seed) {
        std::vector<uint8_t> w = makeWeights(t, rows, K, seed);
        if (!packed) return w;
        std::vector<uint8_t> p(w.size());
        packWithKernel(k, w.data(), rows, K, p.data(), pool);
        return p;
    };
    const int64_t rows = 5632, K = 2048;
    // Several copies so that the matvec streams from memory, not from the L3 cache.
    const uint64_t rb = *tensor::rowBytes(t, K);
    const int copies = static_cast<int>(std::clamp<uint64_t>((256ull << 20) / (rb * rows), 2, 64));
    std::vector<std::vector<uint8_t>> ws;
    if (o.decodeSteps == 0) {
        ws.push_back(weights(rows, K, 1));
        for (int c = 1; c < copies; ++c) ws.push_back(ws[0]);
    }
    const size_t maxTok = o.decodeSteps > 0 ? 1 : static_cast<size_t>(o.prefillTokens);
    std::vector<float> x(maxTok * 5632);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.001f * static_cast<float>(i));
    std::vector<float> y(maxTok * 32000);

    int iters = 0;
    auto t0 = Clock::now();
    if (o.decodeSteps == 0) {
        while (secondsSince(t0) < o.seconds || iters < 3) {
            matmulWithKernel(k, ws[iters % copies].data(), rows, K, x.data(), 1, y.data(), rows, pool, packed);
            ++iters;
        }
        double sec = secondsSince(t0);
        res.matvecUs = sec / iters * 1e6;
        res.matvecGbs = static_cast<double>(rb * rows) * iters / sec / 1e9;

        iters = 0;
        t0 = Clock::now();
        const double cpu0 = processCpuSeconds();
        while (secondsSince(t0) < o.seconds || iters < 2) {
            matmulWithKernel(k, ws[iters % copies].data(), rows, K, x.data(), o.prefillTokens, y.data(), rows, pool, packed);
            ++iters;
        }
        sec = secondsSince(t0);
        const double flops = 2.0 * rows * K * o.prefillTokens * iters;
        res.matmulGflops = flops / sec / 1e9;
        res.matmulGflopsPerCore = flops / (processCpuSeconds() - cpu0) / 1e9;
    }
    ws.clear();

    if (o.model) {
        // The whole model's matrices, each in its own memory: one decode step = every matvec once.
        std::vector<const Shape*> layerShapes;
        for (const Shape& s : kShapes)
            for (int c = 0; c < s.perLayer; ++c) layerShapes.push_back(&s);
        std::vector<std::vector<uint8_t>> w;
        std::vector<const Shape*> order;
        for (int l = 0; l < kLayers; ++l)
            for (size_t i = 0; i < layerShapes.size(); ++i) {
                const Shape& s = *layerShapes[i];
                w.push_back(l == 0 ? weights(s.rows, s.K, static_cast<uint32_t>(2 + i)) : w[i]);
                order.push_back(&s);
            }
        w.push_back(weights(kOutput.rows, kOutput.K, 99));
        order.push_back(&kOutput);
        auto run = [&](size_t i, int nTok) {
            matmulWithKernel(k, w[i].data(), order[i]->rows, order[i]->K, x.data(), nTok, y.data(), order[i]->rows, pool, packed);
        };
        for (size_t i = 0; i < order.size(); ++i) run(i, 1);  // warm up (page faults)
        iters = 0;
        t0 = Clock::now();
        while (o.decodeSteps > 0 ? iters < o.decodeSteps : (secondsSince(t0) < o.seconds || iters < 3)) {
            for (size_t i = 0; i < order.size(); ++i) run(i, 1);
            ++iters;
        }
        res.decodeTokS = iters / secondsSince(t0);
        if (o.decodeSteps > 0) return res;
        // Prefill is compute bound: time one layer's matmuls, times 16, plus the output matrix
        // for the last token only (llama.cpp computes logits only where they are asked for).
        iters = 0;
        t0 = Clock::now();
        while (secondsSince(t0) < o.seconds || iters < 2) {
            for (size_t i = 0; i < layerShapes.size(); ++i) run(i, o.prefillTokens);
            ++iters;
        }
        const double layerSec = secondsSince(t0) / iters;
        t0 = Clock::now();
        run(order.size() - 1, 1);
        res.prefillTokS = o.prefillTokens / (layerSec * kLayers + secondsSince(t0));
    }
    return res;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--threads") o.threads = std::atoi(next().c_str());
        else if (a == "--types") o.types = split(next());
        else if (a == "--levels") o.levels = split(next());
        else if (a == "--seconds") o.seconds = std::atof(next().c_str());
        else if (a == "--prefill-tokens") o.prefillTokens = std::max(1, std::atoi(next().c_str()));
        else if (a == "--no-model") o.model = false;
        else if (a == "--decode-steps") o.decodeSteps = std::max(1, std::atoi(next().c_str()));
        else {
            std::fprintf(stderr, "usage: %s [--threads N] [--types q4_0,q8_0,f16] [--levels best|all|avx512,avx2,scalar] "
                                 "[--seconds S] [--prefill-tokens N] [--no-model] [--decode-steps N]\n", argv[0]);
            return 2;
        }
    }
    if (o.decodeSteps > 0) o.model = true;
    ThreadPool pool(o.threads);
    std::printf("{\n  \"threads\": %d,\n  \"cpu_simd\": \"%s\",\n  \"prefill_tokens\": %d,\n", pool.size(),
                std::string(simdLevelName(maxSimdLevel())).c_str(), o.prefillTokens);
    if (o.decodeSteps > 0) std::printf("  \"decode_steps\": %d,\n  \"results\": [", o.decodeSteps);
    else std::printf("  \"stream_read_gbs\": %.2f,\n  \"results\": [", streamReadGbs(pool, 1.0));
    std::fflush(stdout);
    bool first = true;
    for (const auto& name : o.types) {
        const auto t = tensor::typeFromName(name);
        if (!t || !referenceKernel(*t)) {
            std::fprintf(stderr, "unknown or not computable type: %s\n", name.c_str());
            continue;
        }
        std::vector<const MatmulKernel*> kernels;
        for (const auto& lv : o.levels) {
            if (lv == "all") {
                for (const MatmulKernel* k : availableKernels(*t)) kernels.push_back(k);
                continue;
            }
            const MatmulKernel* k = nullptr;
            if (lv == "best") k = selectKernel(*t, maxSimdLevel());
            else if (lv == "avx512") k = avx512Kernel(*t);
            else if (lv == "avx2") k = avx2Kernel(*t);
            else if (lv == "scalar") k = referenceKernel(*t);
            if (k) kernels.push_back(k);
        }
        for (const MatmulKernel* k : kernels)
          for (bool packed : {false, true}) {
            if (packed && !k->pack) continue;
            const BenchResult r = bench(*t, *k, pool, o, packed);
            std::printf("%s\n    {\"type\": \"%s\", \"level\": \"%s\", \"matvec_5632x2048_us\": %.1f, \"matvec_gbs\": %.2f, "
                        "\"matmul_gflops\": %.1f, \"matmul_gflops_per_core\": %.1f, \"model_decode_tok_s\": %.1f, "
                        "\"model_prefill_tok_s\": %.1f}",
                        first ? "" : ",", r.type.c_str(), r.level.c_str(), r.matvecUs, r.matvecGbs, r.matmulGflops, r.matmulGflopsPerCore,
                        r.decodeTokS, r.prefillTokS);
            std::fflush(stdout);
            first = false;
        }
    }
    std::printf("\n  ]\n}\n");
    return 0;
}
