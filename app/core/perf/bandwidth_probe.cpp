#include "core/perf/bandwidth_probe.h"

#include "core/suite/utf8_text.h"
#include "core/tco/hardware_catalog.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <string_view>
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
    const double bytesPerPass = 3.0 * static_cast<double>(res.arrayBytes);
    for (int p = 0; p < res.passes; ++p) {
        const auto t0 = std::chrono::steady_clock::now();
        forSlices([&](size_t lo, size_t hi) {
            double* __restrict pa = a.get();
            const double* __restrict pb = b.get();
            const double* __restrict pc = c.get();
            for (size_t i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
        });
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        res.passGbPerS.push_back(secs > 0 ? bytesPerPass / secs / 1e9 : 0);
    }
    // Keep the stores observable.
    volatile double sink = a[n / 2];
    (void)sink;
    summarizeBandwidthPasses(res);
    return res;
}

void summarizeBandwidthPasses(BandwidthProbeResult& res) {
    if (res.passGbPerS.empty()) return;
    std::vector<double> v = res.passGbPerS;
    std::sort(v.begin(), v.end());
    res.gbPerS = v.back();
    res.minGbPerS = v.front();
    const size_t m = v.size() / 2;
    res.medianGbPerS = v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
    res.spread = res.gbPerS > 0 ? (res.gbPerS - res.minGbPerS) / res.gbPerS : 0;
}

namespace {

std::string lowerWithoutMarks(std::string s) {
    for (const char* mark : {"(r)", "(tm)"})
        for (size_t at; (at = s.find(mark)) != std::string::npos;) s.erase(at, std::string_view(mark).size());
    return s;
}

std::string fixed1(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

}  // namespace

const HardwareEntry* matchCpuEntry(const std::vector<HardwareEntry>& entries, const std::string& cpuModel) {
    // Whole words: "8480+" must not match "8480".
    std::set<std::string> modelWords;
    std::istringstream in(lowerWithoutMarks(utf8::toLowerUtf8(cpuModel)));
    for (std::string w; in >> w;) modelWords.insert(w);
    if (modelWords.empty()) return nullptr;
    for (const HardwareEntry& e : entries) {
        if (e.kind != HardwareKind::Cpu || e.id == kThisMachineId) continue;
        std::istringstream words(utf8::toLowerUtf8(e.name.substr(0, e.name.find('('))));
        bool all = true, any = false;
        for (std::string w; words >> w;) {
            any = true;
            all = all && modelWords.count(w) > 0;
        }
        if (any && all) return &e;
    }
    return nullptr;
}

std::optional<BandwidthReference> catalogBandwidthForThisMachine() {
    auto catalog = loadHardwareCatalog(std::nullopt);
    if (!catalog) return std::nullopt;
    if (const HardwareEntry* self = catalog->find(kThisMachineId); self && self->memoryBandwidthGbs.value)
        return BandwidthReference{*self->memoryBandwidthGbs.value, self->cores, "catalog: this-machine (" + self->memoryBandwidthGbs.source + ")"};
    const MachineInfo info = probeThisMachine();
    if (const HardwareEntry* e = matchCpuEntry(catalog->entries(), info.cpuModel); e && e->memoryBandwidthGbs.value)
        return BandwidthReference{*e->memoryBandwidthGbs.value, e->cores, "catalog: " + e->name};
    return std::nullopt;
}

std::vector<std::string> bandwidthProbeWarnings(const BandwidthProbeResult& r, const std::optional<BandwidthReference>& ref) {
    std::vector<std::string> out;
    const std::string unreliable = "the roofline fractions of this sweep are unreliable: sweep again on a quiet machine, "
                                   "or give the figure with --bandwidth GB/S";
    if (r.passGbPerS.size() >= 2 && r.spread > kBandwidthSpreadWarn)
        out.push_back("memory bandwidth varied between the probe's passes (" + fixed1(r.minGbPerS) + " to " + fixed1(r.gbPerS) +
                      " GB/s, spread " + fixed1(100 * r.spread) + " %): the machine was busy; " + unreliable);
    if (ref && ref->peakGbPerS > 0) {
        const double share =
            ref->cores && *ref->cores > 0 ? std::min(1.0, static_cast<double>(r.threads) / static_cast<double>(*ref->cores)) : 1.0;
        const double expected = ref->peakGbPerS * share;
        if (r.gbPerS < kBandwidthBelowCatalog * expected)
            out.push_back("memory bandwidth measured " + fixed1(r.gbPerS) + " GB/s, far below the " + fixed1(expected) +
                          " GB/s expected (" + ref->source + ": " + fixed1(ref->peakGbPerS) + " GB/s peak" +
                          (share < 1 ? ", the share of " + std::to_string(r.threads) + " of its " + std::to_string(*ref->cores) +
                                           " cores"
                                     : std::string()) +
                          "); " + unreliable);
    }
    return out;
}

}  // namespace verdict::core
