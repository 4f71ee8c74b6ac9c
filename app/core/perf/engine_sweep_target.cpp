#include "core/perf/engine_sweep_target.h"

#include "core/run/device_check.h"
#include "verdict/engine/batch.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <algorithm>
#include <chrono>

namespace verdict::core {

struct EngineSweepTarget::Impl {
    std::shared_ptr<const Model> model;
    EngineSweepTargetOptions options;
    std::vector<std::unique_ptr<Session>> sessions;
    int64_t sessionCtx = 0;  // context of every session in `sessions`
    uint64_t kvBytesPerToken = 0;
    std::string device;

    // Makes sure `n` sessions with at least `ctx` tokens of context exist. Sessions are
    // re-created when the context must grow (a smaller one is reused as is).
    Result<void> ensureSessions(size_t n, int64_t ctx) {
        if (ctx > sessionCtx) {
            sessions.clear();  // free the old caches before allocating the larger ones
            sessionCtx = ctx;
        }
        while (sessions.size() < n) {
            SessionOptions so;
            so.nCtx = sessionCtx;
            auto s = Session::create(model, so);
            if (!s) return Error{"cannot create session " + std::to_string(sessions.size() + 1) + " of " +
                                 std::to_string(n) + " with a " + std::to_string(sessionCtx) +
                                 "-token context: " + s.error().message};
            if (kvBytesPerToken == 0 && sessionCtx > 0)
                kvBytesPerToken = (*s)->memoryUse().kvBytes / static_cast<uint64_t>(sessionCtx);
            sessions.push_back(std::move(*s));
        }
        return {};
    }
};

EngineSweepTarget::EngineSweepTarget(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
EngineSweepTarget::~EngineSweepTarget() = default;

Result<std::unique_ptr<EngineSweepTarget>> EngineSweepTarget::open(const std::string& modelPath,
                                                                   const EngineSweepTargetOptions& options) {
    auto model = openLocalModel(modelPath, options.threads, options.device, options.gpuLayers, options.cancelLoad);
    if (!model) return model.error();
    auto impl = std::make_unique<Impl>();
    impl->model = std::move(*model);
    impl->options = options;
    impl->options.maxBatch = std::max(1, options.maxBatch);
    impl->device = describeDevice(*impl->model);
    // One small session tells the KV bytes per token before any point runs.
    if (auto r = impl->ensureSessions(1, 16); !r) return r.error();
    return std::unique_ptr<EngineSweepTarget>(new EngineSweepTarget(std::move(impl)));
}

SweepTargetInfo EngineSweepTarget::info() const {
    SweepTargetInfo i;
    i.backend = "engine";
    i.modelPath = m_impl->model->path();
    i.device = m_impl->device;
    i.nVocab = m_impl->model->shape().nVocab;
    i.threads = m_impl->model->threads();
    i.loadMs = m_impl->model->loadMs();
    i.weightsBytes = m_impl->model->weightsBytes();
    i.kvBytesPerToken = m_impl->kvBytesPerToken;
    i.maxBatch = m_impl->options.maxBatch;
    return i;
}

Result<std::vector<RequestTiming>> EngineSweepTarget::runBatch(const std::vector<std::vector<int32_t>>& prompts,
                                                               int64_t genTokens) {
    const size_t b = prompts.size();
    if (b == 0) return Error{"a batch needs at least one request"};
    if (static_cast<int>(b) > m_impl->options.maxBatch)
        return Error{"batch " + std::to_string(b) + " exceeds the largest supported (" +
                     std::to_string(m_impl->options.maxBatch) + ")"};
    if (genTokens < 1) return Error{"each request must generate at least one token"};
    int64_t longest = 0;
    for (const auto& p : prompts) longest = std::max<int64_t>(longest, static_cast<int64_t>(p.size()));
    if (auto r = m_impl->ensureSessions(b, longest + genTokens); !r) return r.error();

    std::vector<Session*> batch;
    for (size_t i = 0; i < b; ++i) {
        m_impl->sessions[i]->clear();  // every request prefills from an empty cache
        batch.push_back(m_impl->sessions[i].get());
    }
    GenerateConfig cfg;
    cfg.maxTokens = static_cast<int32_t>(genTokens);
    cfg.sampling = SamplingParams::greedy();
    cfg.stopAtEos = false;  // exactly genTokens tokens, like llama-bench's tg

    // Token times as a client sees them: every token's arrival, from the call's start.
    std::vector<std::vector<double>> arrivals(b);
    for (auto& a : arrivals) a.reserve(static_cast<size_t>(genTokens));
    const auto t0 = std::chrono::steady_clock::now();
    BatchCallbacks cb;
    cb.onToken = [&](size_t seq, int32_t, std::string_view) {
        arrivals[seq].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        return BatchAction::Continue;
    };
    auto results = generateBatch(batch, prompts, cfg, cb);
    if (!results) return results.error();

    std::vector<RequestTiming> out;
    out.reserve(b);
    for (size_t i = 0; i < b; ++i) {
        const GenerateResult& g = (*results)[i];
        const std::vector<double>& at = arrivals[i];
        RequestTiming r;
        r.promptTokens = static_cast<int64_t>(prompts[i].size());
        r.outputTokens = static_cast<int64_t>(g.tokens.size());
        r.startMs = 0;  // all requests of the batch arrive together
        if (!at.empty()) {
            r.ttftMs = at.front();
            r.e2eMs = at.back();
            for (size_t k = 1; k < at.size(); ++k) r.itlMs.push_back(at[k] - at[k - 1]);
        }
        if (r.outputTokens != genTokens || static_cast<int64_t>(at.size()) != genTokens)
            r.error = "generated " + std::to_string(r.outputTokens) + " of " + std::to_string(genTokens) + " tokens";
        out.push_back(std::move(r));
    }
    return out;
}

TargetMemory EngineSweepTarget::memory() const {
    TargetMemory m;
    m.weightsBytes = m_impl->model->weightsBytes();
    for (const auto& s : m_impl->sessions) {
        const MemoryUse u = s->memoryUse();
        m.kvBytes += u.kvBytes;
        m.scratchBytes += u.scratchBytes;
        m.device = u.device;
        m.vramKvBytes += u.vramKvBytes;
        m.vramWeightsBytes = u.vramWeightsBytes;  // the model's: the same from every session
        m.vramScratchBytes = u.vramScratchBytes;
        m.vramWorkspaceBytes = u.vramWorkspaceBytes;
        m.vramPeakBytes = u.vramPeakBytes;
        m.vramDeviceUsedBytes = u.vramDeviceUsedBytes;
        m.vramDeviceTotalBytes = u.vramDeviceTotalBytes;
    }
    m.peakRssBytes = peakRssBytes();
    return m;
}

}  // namespace verdict::core
