// Compute-peak probe for tests/bench/perf.sh (issue 25): what the instructions of the CPU prefill
// kernels can do at most on this CPU, as bench_stream's triad is the memory bound of decoding.
// Each row is a register-only loop of one instruction (or the AVX2 int8 triple) over 6-16
// independent accumulators, enough to cover the latency (4-6 cycles) times the issue rate (up to
// 2 per cycle) on current x86 cores, so the loop runs at the instruction's throughput. Every row is
// timed with 1 thread and with T std::threads (no pinning, as bench_stream), best of N repetitions.
//
//   row              instruction                            counted ops per instruction
//   vpdpbusd_zmm     vpdpbusd zmm (AVX512_VNNI)             64 u8 x s8 multiply-adds = 128
//                    (the AVX-512 kernels of the 32-element formats: Q4_0 .. Q8_0, IQ4_NL, MXFP4)
//   int8_dpwssd_zmm  vpmaddubsw + vpdpwssd zmm (VNNI)       64 u8 x s8 products x 2 = 128 per pair
//                    (the super-block kernels: K-quants, IQ4_XS, IQ2/IQ3; vpdpwssd multiplies the
//                    pairs by the sub-block scales, not counted)
//   int8_avx2        vpmaddubsw + vpmaddwd (by 1) + vpaddd  32 u8 x s8 products x 2 = 64 per triple
//                    ymm: the AVX2 kernels' int8 dot product
//   fma_f32_zmm      vfmadd*ps zmm (AVX-512F)               16 lanes x 2 = 32
//   fma_f32_ymm      vfmadd*ps ymm (AVX2 + FMA)             8 lanes x 2 = 16
//   vdpbf16ps_zmm    vdpbf16ps zmm (AVX512_BF16)            16 lanes x 2 products x 2 = 64
//
// GOP/s = threads x iterations x instructions per iteration x ops per instruction / seconds.
// Each loop is compiled with __attribute__((target(...))), so the binary runs anywhere; rows the
// CPU lacks (engine/backend/cpu/cpu_features.h) are skipped and listed as such. Zen 4 executes
// 512-bit operations as two 256-bit halves, so there a zmm row issues at half the ymm rate and
// gives about the same GOP/s per core; Zen 5 (EPYC 9005) and Intel cores with two 512-bit FMA
// units issue zmm at the ymm rate, twice the GOP/s. Run it on a quiet machine: a thread that
// shares its core with another process halves the T-thread rows.
//
//   bench_peak [--threads 2] [--reps 5] [--seconds 0.2] [--json]
// Without --json: a markdown table. With --json: one object,
//   {"bench": "peak", "threads": T, "reps": N, "seconds_per_rep": s, "features": {...},
//    "skipped": [...], "rows": [{"name", "isa", "instr", "threads", "gops", "gops_per_thread",
//    "ops_per_instr", "ginstr_per_s_per_thread", "best_seconds", "iterations"}, ...]}
#include "backend/cpu/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define VERDICT_BENCH_PEAK_X86 1
#endif

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

// GCC 12 reports -W(maybe-)uninitialized inside its own AVX-512 intrinsics (_mm512_undefined_*).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace {

// Every loop's accumulators end here, so the compiler must compute them.
volatile double g_sink = 0;

struct Row {
    const char* name;
    const char* isa;    // the ISA extension the row needs
    const char* instr;  // what one counted "instruction" is
    int opsPerInstr;
    int instrPerIter;
    bool (*available)();
    double (*loop)(int64_t, int);
};

using verdict::cpu::cpuFeatures;

#if VERDICT_BENCH_PEAK_X86
// Accumulators are named variables (c0, c1, ...), not an array: GCC 12 keeps an array of
// vpdpbusd accumulators in registers but copies each one twice per iteration (22 extra moves per
// 12 vpdpbusd, 15-20 % off the measured rate on Zen 5); named ones give a loop of just the
// instructions (the AVX2 triple keeps 6 register moves, which rename eliminates).
#define VERDICT_ACC12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define VERDICT_ACC16(X) VERDICT_ACC12(X) X(12) X(13) X(14) X(15)
#define VERDICT_ACC6(X) X(0) X(1) X(2) X(3) X(4) X(5)
constexpr int kAccZmm = 16;    // VERDICT_ACC16: 32 zmm registers; 2 per cycle x latency 6
                               // (vdpbf16ps on Zen 4/5) needs 12 in flight
constexpr int kAccYmm = 12;    // VERDICT_ACC12: 16 ymm registers (AVX2 only), 12 + 2 inputs
constexpr int kAccAvx2I8 = 6;  // VERDICT_ACC6: only vpaddd (1 cycle) chains an accumulator; the
                               // products need 3 inputs and temporaries of the 16 registers

// The empty asm makes `v` opaque to the optimiser (no instruction is emitted): no constant folding
// across iterations, and in the int8 triple no reuse of one vpmaddubsw for every accumulator.
// Accumulators start from different values, so no two of them can be merged either.
#define VERDICT_OPAQUE(v) asm("" : "+v"(v))

__attribute__((target("avx512f,avx512bw,avx512vnni"))) double loopVpdpbusdZmm(int64_t iters, int seed) {
    __m512i a = _mm512_set1_epi8(static_cast<char>(1 + (seed & 3)));
    __m512i b = _mm512_set1_epi8(static_cast<char>(-2 - (seed & 1)));
#define INIT(k) __m512i c##k = _mm512_set1_epi32(k + seed);
#define STEP(k) c##k = _mm512_dpbusd_epi32(c##k, a, b);
#define SUM(k) s = _mm512_add_epi32(s, c##k);
    VERDICT_ACC16(INIT)
    for (int64_t n = 0; n < iters; ++n) {
        VERDICT_OPAQUE(a);
        VERDICT_OPAQUE(b);
        VERDICT_ACC16(STEP)
    }
    __m512i s = _mm512_setzero_si512();
    VERDICT_ACC16(SUM)
#undef INIT
#undef STEP
#undef SUM
    return static_cast<double>(_mm512_reduce_add_epi32(s));
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) double loopInt8DpwssdZmm(int64_t iters, int seed) {
    const __m512i a = _mm512_set1_epi8(static_cast<char>(1 + (seed & 3)));
    __m512i b = _mm512_set1_epi8(static_cast<char>(-2 - (seed & 1)));
    const __m512i scales = _mm512_set1_epi16(3);
#define INIT(k) __m512i c##k = _mm512_set1_epi32(k + seed);
#define STEP(k)                                                                \
    VERDICT_OPAQUE(b); /* a new product for every accumulator, as in a kernel */ \
    c##k = _mm512_dpwssd_epi32(c##k, _mm512_maddubs_epi16(a, b), scales);
#define SUM(k) s = _mm512_add_epi32(s, c##k);
    VERDICT_ACC16(INIT)
    for (int64_t n = 0; n < iters; ++n) {
        VERDICT_ACC16(STEP)
    }
    __m512i s = _mm512_setzero_si512();
    VERDICT_ACC16(SUM)
#undef INIT
#undef STEP
#undef SUM
    return static_cast<double>(_mm512_reduce_add_epi32(s));
}

__attribute__((target("avx2"))) double loopInt8Avx2(int64_t iters, int seed) {
    const __m256i a = _mm256_set1_epi8(static_cast<char>(1 + (seed & 3)));
    __m256i b = _mm256_set1_epi8(static_cast<char>(-2 - (seed & 1)));
    const __m256i ones = _mm256_set1_epi16(1);
#define INIT(k) __m256i c##k = _mm256_set1_epi32(k + seed);
#define STEP(k)                                                                \
    VERDICT_OPAQUE(b); /* a new product for every accumulator, as in a kernel */ \
    c##k = _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones), c##k);
#define SUM(k) s = _mm256_add_epi32(s, c##k);
    VERDICT_ACC6(INIT)
    for (int64_t n = 0; n < iters; ++n) {
        VERDICT_ACC6(STEP)
    }
    __m256i s = _mm256_setzero_si256();
    VERDICT_ACC6(SUM)
#undef INIT
#undef STEP
#undef SUM
    alignas(32) int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    double r = 0;
    for (int32_t v : lanes) r += v;
    return r;
}

// acc = acc * a + b with a = 0.5 converges to 2b: no overflow, no subnormals, however long it runs.
__attribute__((target("avx512f"))) double loopFmaZmm(int64_t iters, int seed) {
    __m512 a = _mm512_set1_ps(0.5f);
    __m512 b = _mm512_set1_ps(1.0f + static_cast<float>(seed & 7));
#define INIT(k) __m512 c##k = _mm512_set1_ps(static_cast<float>(k));
#define STEP(k) c##k = _mm512_fmadd_ps(c##k, a, b);
#define SUM(k) s = _mm512_add_ps(s, c##k);
    VERDICT_ACC16(INIT)
    for (int64_t n = 0; n < iters; ++n) {
        VERDICT_OPAQUE(a);
        VERDICT_OPAQUE(b);
        VERDICT_ACC16(STEP)
    }
    __m512 s = _mm512_setzero_ps();
    VERDICT_ACC16(SUM)
#undef INIT
#undef STEP
#undef SUM
    return static_cast<double>(_mm512_reduce_add_ps(s));
}

__attribute__((target("avx2,fma"))) double loopFmaYmm(int64_t iters, int seed) {
    __m256 a = _mm256_set1_ps(0.5f);
    __m256 b = _mm256_set1_ps(1.0f + static_cast<float>(seed & 7));
#define INIT(k) __m256 c##k = _mm256_set1_ps(static_cast<float>(k));
#define STEP(k) c##k = _mm256_fmadd_ps(c##k, a, b);
#define SUM(k) s = _mm256_add_ps(s, c##k);
    VERDICT_ACC12(INIT)
    for (int64_t n = 0; n < iters; ++n) {
        VERDICT_OPAQUE(a);
        VERDICT_OPAQUE(b);
        VERDICT_ACC12(STEP)
    }
    __m256 s = _mm256_setzero_ps();
    VERDICT_ACC12(SUM)
#undef INIT
#undef STEP
#undef SUM
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, s);
    double r = 0;
    for (float v : lanes) r += v;
    return r;
}

// acc += a . b with a, b = 2^-10 (exact in bf16): grows by 2^-19 per lane and step, which stays
// far from overflow and subnormals for any sensible run length.
__attribute__((target("avx512f,avx512bf16"))) double loopVdpbf16psZmm(int64_t iters, int seed) {
    const __m512 x = _mm512_set1_ps(1.0f / 1024.0f);
    __m512bh a = _mm512_cvtne2ps_pbh(x, x);
    __m512bh b = a;
#define INIT(k) __m512 c##k = _mm512_set1_ps(static_cast<float>(k + seed));
#define STEP(k) c##k = _mm512_dpbf16_ps(c##k, a, b);
#define SUM(k) s = _mm512_add_ps(s, c##k);
    VERDICT_ACC16(INIT)
    for (int64_t n = 0; n < iters; ++n) {
        VERDICT_OPAQUE(a);
        VERDICT_OPAQUE(b);
        VERDICT_ACC16(STEP)
    }
    __m512 s = _mm512_setzero_ps();
    VERDICT_ACC16(SUM)
#undef INIT
#undef STEP
#undef SUM
    return static_cast<double>(_mm512_reduce_add_ps(s));
}

const std::vector<Row> kRows = {
    {"vpdpbusd_zmm", "avx512_vnni", "vpdpbusd zmm", 128, kAccZmm,
     [] { return cpuFeatures().avx512f && cpuFeatures().avx512bw && cpuFeatures().avx512vnni; }, loopVpdpbusdZmm},
    {"int8_dpwssd_zmm", "avx512_vnni", "vpmaddubsw+vpdpwssd zmm", 128, kAccZmm,
     [] { return cpuFeatures().avx512f && cpuFeatures().avx512bw && cpuFeatures().avx512vnni; }, loopInt8DpwssdZmm},
    {"int8_avx2", "avx2", "vpmaddubsw+vpmaddwd+vpaddd ymm", 64, kAccAvx2I8, [] { return cpuFeatures().avx2; },
     loopInt8Avx2},
    {"fma_f32_zmm", "avx512f", "vfmadd*ps zmm", 32, kAccZmm, [] { return cpuFeatures().avx512f; }, loopFmaZmm},
    {"fma_f32_ymm", "avx2_fma", "vfmadd*ps ymm", 16, kAccYmm,
     [] { return cpuFeatures().avx2 && cpuFeatures().fma; }, loopFmaYmm},
    {"vdpbf16ps_zmm", "avx512_bf16", "vdpbf16ps zmm", 64, kAccZmm,
     [] { return cpuFeatures().avx512f && cpuFeatures().avx512bf16; }, loopVdpbf16psZmm},
};
#else
const std::vector<Row> kRows;  // no x86 vector unit: nothing to measure
#endif

struct Options {
    int threads = 2;
    int reps = 5;
    double seconds = 0.2;  // target length of one repetition
    bool json = false;
};

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json") {
            o.json = true;
            continue;
        }
        if (i + 1 >= argc) return false;
        const char* v = argv[++i];
        if (a == "--threads") o.threads = std::atoi(v);
        else if (a == "--reps") o.reps = std::atoi(v);
        else if (a == "--seconds") o.seconds = std::atof(v);
        else return false;
    }
    return o.threads >= 1 && o.threads <= 1024 && o.reps >= 1 && o.seconds > 0 && o.seconds <= 60;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Best (shortest) wall time over `reps` repetitions of `iters` iterations on each of `threads`
// threads started together: from the first thread's start to the last thread's end.
double timeRow(const Row& row, int threads, int64_t iters, int reps) {
    std::vector<double> start(static_cast<size_t>(threads)), end(static_cast<size_t>(threads));
    std::barrier sync(threads);
    double best = 1e300;
    auto worker = [&](int id) {
        for (int r = 0; r < reps; ++r) {
            sync.arrive_and_wait();
            start[static_cast<size_t>(id)] = now();
            g_sink = g_sink + row.loop(iters, id + r);
            end[static_cast<size_t>(id)] = now();
            sync.arrive_and_wait();
            if (id == 0)
                best = std::min(best, *std::max_element(end.begin(), end.end()) -
                                          *std::min_element(start.begin(), start.end()));
        }
    };
    std::vector<std::thread> pool;
    for (int i = 1; i < threads; ++i) pool.emplace_back(worker, i);
    worker(0);
    for (auto& t : pool) t.join();
    return best;
}

// Iterations for one repetition of about `seconds` on one thread (also warms the unit up: some
// CPUs run wide vectors slower for the first microseconds).
int64_t calibrate(const Row& row, double seconds) {
    int64_t iters = 1 << 14;
    for (;;) {
        const double t0 = now();
        g_sink = g_sink + row.loop(iters, 0);
        const double dt = now() - t0;
        if (dt >= 0.02 || iters >= (int64_t{1} << 40))
            return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(iters) * seconds / std::max(dt, 1e-9)));
        iters *= 8;
    }
}

struct Result {
    const Row* row;
    int threads;
    int64_t iters;
    double bestSeconds;
    double gops;
};

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: bench_peak [--threads T] [--reps N] [--seconds PER_REP] [--json]\n");
        return 1;
    }
    std::vector<Result> results;
    std::vector<const char*> skipped;
    std::vector<int> threadCounts{1};
    if (o.threads != 1) threadCounts.push_back(o.threads);
    for (const Row& row : kRows) {
        if (!row.available()) {
            skipped.push_back(row.name);
            continue;
        }
        const int64_t iters = calibrate(row, o.seconds);
        for (int t : threadCounts) {
            const double s = timeRow(row, t, iters, o.reps);
            const double ops = static_cast<double>(t) * static_cast<double>(iters) * row.instrPerIter * row.opsPerInstr;
            results.push_back({&row, t, iters, s, ops / s / 1e9});
        }
    }

    const auto& f = cpuFeatures();
    if (o.json) {
        std::printf("{\"bench\": \"peak\", \"threads\": %d, \"reps\": %d, \"seconds_per_rep\": %.3f, "
                    "\"features\": {\"avx2\": %s, \"fma\": %s, \"avx512f\": %s, \"avx512bw\": %s, \"avx512vl\": %s, "
                    "\"avx512vnni\": %s, \"avx512bf16\": %s}, \"skipped\": [",
                    o.threads, o.reps, o.seconds, f.avx2 ? "true" : "false", f.fma ? "true" : "false",
                    f.avx512f ? "true" : "false", f.avx512bw ? "true" : "false", f.avx512vl ? "true" : "false",
                    f.avx512vnni ? "true" : "false", f.avx512bf16 ? "true" : "false");
        for (size_t i = 0; i < skipped.size(); ++i) std::printf("%s\"%s\"", i ? ", " : "", skipped[i]);
        std::printf("], \"rows\": [");
        for (size_t i = 0; i < results.size(); ++i) {
            const Result& r = results[i];
            std::printf("%s\n  {\"name\": \"%s\", \"isa\": \"%s\", \"instr\": \"%s\", \"threads\": %d, \"gops\": %.2f, "
                        "\"gops_per_thread\": %.2f, \"ops_per_instr\": %d, \"ginstr_per_s_per_thread\": %.3f, "
                        "\"best_seconds\": %.6f, \"iterations\": %lld}",
                        i ? "," : "", r.row->name, r.row->isa, r.row->instr, r.threads, r.gops, r.gops / r.threads,
                        r.row->opsPerInstr, r.gops / r.threads / r.row->opsPerInstr, r.bestSeconds,
                        static_cast<long long>(r.iters));
        }
        std::printf("\n]}\n");
        return 0;
    }
    std::printf("| row | instruction | isa | threads | GOP/s | GOP/s per thread | ops / instr | G instr/s per thread |\n");
    std::printf("|---|---|---|---:|---:|---:|---:|---:|\n");
    for (const Result& r : results)
        std::printf("| %s | %s | %s | %d | %.1f | %.1f | %d | %.2f |\n", r.row->name, r.row->instr, r.row->isa, r.threads,
                    r.gops, r.gops / r.threads, r.row->opsPerInstr, r.gops / r.threads / r.row->opsPerInstr);
    for (const char* s : skipped) std::printf("(skipped %s: not supported by this CPU)\n", s);
    return 0;
}
