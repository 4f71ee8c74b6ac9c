#include "core/perf/bandwidth_probe.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace verdict::core {

BandwidthProbeResult measureMemoryBandwidth(int threads, size_t arrayBytes, int passes) {
    BandwidthProbeResult res;
    res.threads = std::max(1, threads);
    res.passes = std::max(1, passes);
    const size_t n = std::max<size_t>(arrayBytes / sizeof(double), 1024);
    res.arrayBytes = n * sizeof(double);
    auto a = std::make_unique_for_overwrite<double[]>(n);
    auto b = std::make_unique_for_overwrite<double[]>(n);
    auto c = std::make_unique_for_overwrite<double[]>(n);

    // Each thread owns one slice in every pass (first touch there too, for NUMA machines).
    auto forSlices = [&](auto&& body) {
        std::vector<std::thread> pool;
        const size_t per = (n + static_cast<size_t>(res.threads) - 1) / static_cast<size_t>(res.threads);
        for (int t = 0; t < res.threads; ++t) {
            const size_t lo = std::min(n, per * static_cast<size_t>(t)), hi = std::min(n, lo + per);
            pool.emplace_back([&body, lo, hi] { body(lo, hi); });
        }
        for (auto& th : pool) th.join();
    };
    forSlices([&](size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i) {
            a[i] = 0.0;
            b[i] = 1.0;
            c[i] = 2.0;
        }
    });
    const double s = 3.0;
    double best = 1e30;
    for (int p = 0; p < res.passes; ++p) {
        const auto t0 = std::chrono::steady_clock::now();
        forSlices([&](size_t lo, size_t hi) {
            double* __restrict pa = a.get();
            const double* __restrict pb = b.get();
            const double* __restrict pc = c.get();
            for (size_t i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
        });
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    // Keep the stores observable.
    volatile double sink = a[n / 2];
    (void)sink;
    res.gbPerS = best > 0 ? 3.0 * static_cast<double>(res.arrayBytes) / best / 1e9 : 0;
    return res;
}

}  // namespace verdict::core
