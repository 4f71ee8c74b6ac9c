// STREAM-triad memory-bandwidth probe: a[i] = b[i] + s * c[i] over three double arrays far larger
// than any cache, split across T std::threads (no OpenMP), repeated N times; prints one JSON object:
//   {"kernel": "triad", "threads": T, "array_bytes": B, "reps": N,
//    "best_gbs": x, "mean_gbs": x, "worst_gbs": x, "best_seconds": s}
// Bytes per repetition follow STREAM's convention (McCalpin, https://www.cs.virginia.edu/stream/):
// 3 arrays * 8 bytes * n (two reads, one write; write-allocate traffic not counted). "best" is the
// fastest repetition, as STREAM reports. Used by tests/bench/perf.sh for the decode roofline.
//
//   bench_stream [--threads 2] [--mib 512] [--reps 10]      (--mib: size of EACH array)
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
    int threads = 2;
    long long mib = 512;
    int reps = 10;
};

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) return false;
        const long long v = std::atoll(argv[++i]);
        if (a == "--threads") o.threads = static_cast<int>(v);
        else if (a == "--mib") o.mib = v;
        else if (a == "--reps") o.reps = static_cast<int>(v);
        else return false;
    }
    return o.threads >= 1 && o.threads <= 1024 && o.mib >= 1 && o.mib <= (1 << 20) && o.reps >= 1;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: bench_stream [--threads T] [--mib MIB_PER_ARRAY] [--reps N]\n");
        return 1;
    }
    const size_t n = static_cast<size_t>(o.mib) * 1024 * 1024 / sizeof(double);
    // Uninitialised storage: each thread first-touches its own slice (the pages land near it).
    std::unique_ptr<double[]> a(new (std::nothrow) double[n]), b(new (std::nothrow) double[n]),
        c(new (std::nothrow) double[n]);
    if (!a || !b || !c) {
        std::fprintf(stderr, "bench_stream: cannot allocate 3 x %lld MiB\n", o.mib);
        return 1;
    }
    const double scalar = 3.0;
    const int t = o.threads;
    std::vector<double> seconds(static_cast<size_t>(o.reps));
    std::chrono::steady_clock::time_point start;
    // Phase boundaries: the completion step (run by one thread) stamps the clock.
    int phase = 0;
    auto onPhase = [&]() noexcept {
        const auto now = std::chrono::steady_clock::now();
        // Phases: 0 = init done; then for each rep a start and an end barrier.
        if (phase > 0) {
            const int rep = (phase - 1) / 2;
            if ((phase - 1) % 2 == 1)
                seconds[static_cast<size_t>(rep)] = std::chrono::duration<double>(now - start).count();
        }
        ++phase;
        start = now;
    };
    std::barrier sync(t, onPhase);

    auto worker = [&](int id) {
        const size_t lo = n * static_cast<size_t>(id) / static_cast<size_t>(t);
        const size_t hi = n * static_cast<size_t>(id + 1) / static_cast<size_t>(t);
        double* pa = a.get();
        const double* pb = b.get();
        const double* pc = c.get();
        for (size_t i = lo; i < hi; ++i) {
            a[i] = 0.0;
            b[i] = 1.0;
            c[i] = 2.0;
        }
        sync.arrive_and_wait();
        for (int r = 0; r < o.reps; ++r) {
            sync.arrive_and_wait();  // start stamp
            for (size_t i = lo; i < hi; ++i) pa[i] = pb[i] + scalar * pc[i];
            sync.arrive_and_wait();  // end stamp
        }
    };
    std::vector<std::thread> pool;
    for (int i = 1; i < t; ++i) pool.emplace_back(worker, i);
    worker(0);
    for (auto& th : pool) th.join();

    // The result must be right (and is thereby used, so nothing is optimised away).
    for (size_t i = 0; i < n; i += 4099)
        if (a[i] != 1.0 + scalar * 2.0) {
            std::fprintf(stderr, "bench_stream: wrong result at %zu\n", i);
            return 1;
        }
    const double bytes = 3.0 * sizeof(double) * static_cast<double>(n);
    const double best = *std::min_element(seconds.begin(), seconds.end());
    const double worst = *std::max_element(seconds.begin(), seconds.end());
    double sum = 0;
    for (double s : seconds) sum += s;
    const double mean = sum / static_cast<double>(seconds.size());
    std::printf("{\"kernel\": \"triad\", \"threads\": %d, \"array_bytes\": %zu, \"reps\": %d, \"best_gbs\": %.3f, "
                "\"mean_gbs\": %.3f, \"worst_gbs\": %.3f, \"best_seconds\": %.6f}\n",
                t, n * sizeof(double), o.reps, bytes / best / 1e9, bytes / mean / 1e9, bytes / worst / 1e9, best);
    return 0;
}
