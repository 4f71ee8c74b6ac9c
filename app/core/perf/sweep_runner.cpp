#include "core/perf/sweep_runner.h"

#include "core/perf/bandwidth_probe.h"
#include "core/store/sweep_repository.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <random>

namespace verdict::core {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// `batch` prompts of `len` tokens: ids drawn uniformly from the vocabulary (as llama-bench's
// synthetic prompts), seeded per point and repetition so every run of a spec sends the same.
std::vector<std::vector<int32_t>> randomPrompts(int64_t nVocab, int64_t len, int64_t batch, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(std::max<int64_t>(1, nVocab) - 1));
    std::vector<std::vector<int32_t>> out(static_cast<size_t>(batch));
    for (auto& p : out) {
        p.resize(static_cast<size_t>(len));
        for (auto& t : p) t = id(rng);
    }
    return out;
}

}  // namespace

Result<void> validateSweepSpec(const SweepSpec& s, int maxBatch) {
    auto checkList = [](const std::vector<int64_t>& v, const char* name, int64_t lo, int64_t hi) -> Result<void> {
        if (v.empty()) return Error{std::string(name) + ": at least one value is needed"};
        for (int64_t x : v)
            if (x < lo || x > hi)
                return Error{std::string(name) + ": " + std::to_string(x) + " is outside " + std::to_string(lo) + ".." +
                             std::to_string(hi)};
        return {};
    };
    if (auto r = checkList(s.promptTokens, "prompt tokens", 1, 1 << 20); !r) return r;
    if (auto r = checkList(s.genTokens, "output tokens", 2, 1 << 20); !r)
        return Error{r.error().message + " (TPOT and ITL need at least 2 output tokens)"};
    if (auto r = checkList(s.batches, "batch", 1, maxBatch); !r) return r;
    if (s.reps < 1) return Error{"reps: at least 1 measured repetition is needed"};
    if (s.warmups < 0) return Error{"warm-ups: must not be negative"};
    const size_t points = s.promptTokens.size() * s.genTokens.size() * s.batches.size();
    if (points > 1000) return Error{"the grid has " + std::to_string(points) + " points; at most 1000"};
    return {};
}

nlohmann::json toJson(const SweepSpec& s) {
    return {{"prompt_tokens", s.promptTokens}, {"gen_tokens", s.genTokens}, {"batch", s.batches},
            {"reps", s.reps},                  {"warmups", s.warmups},      {"seed", s.seed}};
}

nlohmann::json pointMetricsJson(const LoadMetrics& m, int64_t batch, int64_t promptTokens, int64_t genTokens,
                                const SweepTargetInfo& info, const TargetMemory& mem, double bandwidthGbPerS) {
    nlohmann::json j = toJson(m);
    // Decode throughput of the whole batch in steady state: batch tokens per mean inter-token gap.
    const double decodeTps = m.itlMs.n > 0 && m.itlMs.mean > 0 ? static_cast<double>(batch) * 1000.0 / m.itlMs.mean : 0;
    // Roofline: a decode step reads every weight once for the batch and each sequence's KV
    // cache up to its position (on average prompt + gen/2 tokens).
    const double avgCtx = static_cast<double>(promptTokens) + static_cast<double>(genTokens) / 2.0;
    const double bytesPerStep = static_cast<double>(info.weightsBytes) +
                                static_cast<double>(batch) * avgCtx * static_cast<double>(info.kvBytesPerToken);
    const double bound = bandwidthGbPerS > 0 && bytesPerStep > 0
                             ? static_cast<double>(batch) * bandwidthGbPerS * 1e9 / bytesPerStep
                             : 0;
    j["decode_tok_per_s"] = decodeTps;
    j["roofline"] = {{"bandwidth_gb_per_s", bandwidthGbPerS},
                     {"bytes_per_step", bytesPerStep},
                     {"decode_tok_per_s_bound", bound},
                     {"fraction", bound > 0 ? decodeTps / bound : 0}};
    j["memory"] = {{"weights_bytes", mem.weightsBytes},
                   {"kv_bytes", mem.kvBytes},
                   {"scratch_bytes", mem.scratchBytes},
                   {"peak_rss_bytes", mem.peakRssBytes},
                   {"device", mem.device},
                   {"vram_weights_bytes", mem.vramWeightsBytes},
                   {"vram_kv_bytes", mem.vramKvBytes},
                   {"vram_scratch_bytes", mem.vramScratchBytes},
                   {"vram_workspace_bytes", mem.vramWorkspaceBytes},
                   {"vram_peak_bytes", mem.vramPeakBytes},
                   {"vram_device_used_bytes", mem.vramDeviceUsedBytes},
                   {"vram_device_total_bytes", mem.vramDeviceTotalBytes}};
    return j;
}

Result<SweepOutcome> runSweep(Database& db, SweepTarget& target, const SweepSpec& spec, const SweepOptions& options) {
    const SweepTargetInfo info = target.info();
    if (auto r = validateSweepSpec(spec, info.maxBatch); !r) return r.error();

    double bandwidth = options.bandwidthGbPerS;
    nlohmann::json probe = nullptr;
    // The probe measures host memory: a model on a GPU reads device memory, whose bandwidth the
    // caller must give (bandwidthGbPerS); without it the roofline of a GPU sweep stays 0 (unknown).
    const bool onGpu = info.device.rfind("cuda", 0) == 0;
    std::vector<std::string> warnings;
    if (bandwidth <= 0 && !onGpu) {
        const BandwidthProbeResult b = measureMemoryBandwidth(info.threads);
        bandwidth = b.gbPerS;
        const auto reference = options.bandwidthReference ? options.bandwidthReference : catalogBandwidthForThisMachine();
        warnings = bandwidthProbeWarnings(b, reference);
        probe = {{"method", "triad"},
                 {"array_bytes", b.arrayBytes},
                 {"threads", b.threads},
                 {"passes", b.passes},
                 {"pass_gb_per_s", b.passGbPerS},
                 {"min_gb_per_s", b.minGbPerS},
                 {"median_gb_per_s", b.medianGbPerS},
                 {"spread", b.spread},
                 {"reference", reference ? nlohmann::json{{"peak_gb_per_s", reference->peakGbPerS},
                                                          {"cores", reference->cores ? nlohmann::json(*reference->cores) : nlohmann::json(nullptr)},
                                                          {"source", reference->source}}
                                         : nlohmann::json(nullptr)},
                 {"warnings", warnings}};
    }

    SweepRecord rec;
    rec.name = options.name.empty() ? std::filesystem::path(info.modelPath).filename().string() : options.name;
    rec.spec = toJson(spec);
    rec.backend = info.backend;
    rec.modelPath = info.modelPath;
    rec.modelSha256 = options.modelSha256;
    rec.modelBytes = options.modelBytes;
    rec.device = info.device;
    rec.engineVersion = options.engineVersion;
    rec.environment = {{"threads", info.threads},
                       {"load_ms", info.loadMs},
                       {"weights_bytes", info.weightsBytes},
                       {"kv_bytes_per_token", info.kvBytesPerToken},
                       {"bandwidth_gb_per_s", bandwidth},
                       {"bandwidth_probe", probe}};
    if (!options.purpose.empty()) rec.environment["purpose"] = options.purpose;
    SweepRepository repo(db);
    auto created = repo.create(rec);
    if (!created) return created.error();

    SweepOutcome out;
    out.sweep = *created;
    out.warnings = std::move(warnings);
    const int count = static_cast<int>(spec.promptTokens.size() * spec.genTokens.size() * spec.batches.size());
    const auto t0 = Clock::now();
    int index = 0;
    bool firstRequest = true;
    auto cancelled = [&] { return options.cancel && options.cancel->load(); };
    auto report = [&](const std::string& phase, int64_t p, int64_t g, int64_t b) {
        if (!options.progress) return;
        SweepProgress pr;
        pr.pointIndex = index;
        pr.pointCount = count;
        pr.promptTokens = p;
        pr.genTokens = g;
        pr.batch = b;
        pr.phase = phase;
        pr.elapsedS = secondsSince(t0);
        if (index > 0) pr.etaS = pr.elapsedS / index * (count - index);
        options.progress(pr);
    };

    for (int64_t p : spec.promptTokens) {
        for (int64_t g : spec.genTokens) {
            for (int64_t b : spec.batches) {
                if (cancelled()) break;
                SweepPointRecord point;
                point.sweepId = out.sweep.id;
                point.promptTokens = p;
                point.genTokens = g;
                point.batch = b;
                const uint64_t pointSeed = spec.seed * 1000003ull + static_cast<uint64_t>(index);
                std::vector<RequestTiming> measured;
                std::optional<double> coldMs;
                std::string error;
                report("warm-up", p, g, b);
                for (int w = 0; w < spec.warmups && error.empty() && !cancelled(); ++w) {
                    auto r = target.runBatch(randomPrompts(info.nVocab, p, b, pointSeed + 7919ull * (w + 1)), g);
                    if (!r) error = r.error().message;
                    else if (firstRequest && !r->empty()) coldMs = r->front().e2eMs;
                    firstRequest = false;
                }
                report("measure", p, g, b);
                double windowMs = 0;
                for (int rep = 0; rep < spec.reps && error.empty() && !cancelled(); ++rep) {
                    const auto r0 = Clock::now();
                    auto r = target.runBatch(randomPrompts(info.nVocab, p, b, pointSeed + 104729ull * (rep + 1)), g);
                    if (!r) {
                        error = r.error().message;
                        break;
                    }
                    if (firstRequest && !r->empty()) coldMs = r->front().e2eMs;
                    firstRequest = false;
                    const double startMs = windowMs;
                    windowMs += std::chrono::duration<double, std::milli>(Clock::now() - r0).count();
                    for (auto& t : *r) {
                        t.startMs += startMs;  // repetitions follow each other in one window
                        measured.push_back(std::move(t));
                    }
                }
                if (cancelled() && error.empty()) break;  // a partial point is not stored

                point.error = error;
                nlohmann::json requests = nlohmann::json::array();
                for (const auto& t : measured) requests.push_back(toJson(t));
                point.requests = std::move(requests);
                const LoadMetrics m = summarizeLoad(measured, windowMs / 1000.0);
                point.metrics = pointMetricsJson(m, b, p, g, info, target.memory(), bandwidth);
                if (coldMs) {
                    point.metrics["cold_start"] = {{"load_ms", info.loadMs},
                                                   {"first_request_ms", *coldMs},
                                                   {"warm_median_ms", m.e2eMs.p50},
                                                   {"first_vs_warm", m.e2eMs.p50 > 0 ? *coldMs / m.e2eMs.p50 : 0}};
                }
                auto stored = repo.appendPoint(std::move(point));
                if (!stored) return stored.error();
                out.points.push_back(std::move(*stored));
                ++index;
                report("stored", p, g, b);
            }
            if (cancelled()) break;
        }
        if (cancelled()) break;
    }
    out.cancelled = cancelled();
    const std::string status = out.cancelled ? "cancelled" : "completed";
    if (auto r = repo.finish(out.sweep.id, status, ""); !r) return r.error();
    out.sweep.status = status;
    return out;
}

}  // namespace verdict::core
