#include "verdict/engine/session.h"

#include "session/session_impl.h"

#include <algorithm>
#include <chrono>
#include <new>
#include <string>
#include <vector>

namespace verdict {

namespace detail {

int64_t SessionImpl::commonPrefix(std::span<const int32_t> seq) const {
    const size_t n = std::min(tokens.size(), seq.size());
    size_t i = 0;
    while (i < n && tokens[i] == seq[i]) ++i;
    return static_cast<int64_t>(i);
}

void SessionImpl::copyPositions(const SessionImpl& src, int64_t from, int64_t to) {
    const auto passes = m->lockPasses();  // a device's copies go on the stream its passes use
    kv->copyPositions(*src.kv, from, to);
    if (kvTail) kvTail->copyPositions(*src.kvTail, from, to);
}

void SessionImpl::truncate(int64_t n) {
    // Positions >= n are simply overwritten by later evaluations; the cache needs no clearing.
    if (n < static_cast<int64_t>(tokens.size())) tokens.resize(static_cast<size_t>(std::max<int64_t>(n, 0)));
}

Result<LogitsView> SessionImpl::evaluate(std::span<const int32_t> input, bool allLogits) {
    const auto n = static_cast<int64_t>(input.size());
    const int64_t nVocab = m->cfg.nVocab;
    if (n == 0) return Error{"evaluate: no tokens given"};
    for (size_t i = 0; i < input.size(); ++i)
        if (input[i] < 0 || input[i] >= nVocab)
            return Error{"token id " + std::to_string(input[i]) + " at index " + std::to_string(i)
                         + " is outside the vocabulary [0, " + std::to_string(nVocab) + ")"};
    const auto nPast = static_cast<int64_t>(tokens.size());
    if (nPast + n > nCtx)
        return Error{"context full: " + std::to_string(nPast) + " cached + " + std::to_string(n)
                     + " new tokens exceed the context of " + std::to_string(nCtx) + " tokens"};
    const int64_t rows = allLogits ? n : 1;
    try {
        if (static_cast<int64_t>(logits.size()) < rows * nVocab) logits.resize(static_cast<size_t>(rows * nVocab));
    } catch (const std::bad_alloc&) {
        return Error{"cannot allocate logits for " + std::to_string(rows) + " positions"};
    }

    const auto passes = m->lockPasses();
    const arch::ForwardContext ctx = m->forwardContext(*kv, debug ? &debug : nullptr);
    for (int64_t begin = 0; begin < n; begin += nBatch) {
        const int64_t count = std::min(nBatch, n - begin);
        const bool lastChunk = begin + count == n;
        arch::ForwardBatch b;
        b.tokens = input.data() + begin;
        b.nTok = count;
        b.pos0 = nPast + begin;
        b.allLogits = allLogits;
        b.logits = allLogits ? logits.data() + begin * nVocab : (lastChunk ? logits.data() : nullptr);
        if (!kvTail) {
            m->arch->forward(*m->weights, *scratch, ctx, b);
            continue;
        }
        // A split forward: the first blocks on the forward's backend, the rest on the CPU.
        arch::ForwardBatch head = b;
        head.logits = nullptr;
        head.layerEnd = m->splitLayer;
        head.hiddenOut = hidden.data();
        m->arch->forward(*m->weights, *scratch, ctx, head);
        arch::ForwardBatch tail = b;
        tail.hidden = hidden.data();
        tail.firstLayer = m->splitLayer;
        m->arch->forward(*m->weights, *scratchTail, m->tailContext(*kvTail, debug ? &debug : nullptr), tail);
    }
    // A backend with ops in flight (a GPU) reports a failure of any of them here.
    if (auto r = m->be->synchronize(); !r) return r.error();
    tokens.insert(tokens.end(), input.begin(), input.end());
    return LogitsView{logits.data(), rows, nVocab};
}

SessionImpl& sessionImpl(Session& session) { return *session.m_impl; }

void setDebugHook(Session& session, arch::DebugHook hook) { sessionImpl(session).debug = std::move(hook); }

}  // namespace detail

Session::Session() : m_impl(std::make_unique<detail::SessionImpl>()) {}
Session::~Session() {
    // The device buffers go back between passes, not in the middle of another session's (a GPU
    // backend's release waits for its stream, and the pass may be recording a CUDA graph on another
    // thread). The model (shared) outlives this: it is released after the lock.
    if (!m_impl || !m_impl->m) return;
    detail::SessionImpl& d = *m_impl;
    const auto passes = d.m->lockPasses();
    d.kv.reset();
    d.scratch.reset();
    d.kvTail.reset();
    d.scratchTail.reset();
}

Result<std::unique_ptr<Session>> Session::create(std::shared_ptr<const Model> model, const SessionOptions& options) {
    if (!model) return Error{"Session::create: no model"};
    std::unique_ptr<Session> s(new Session());
    detail::SessionImpl& d = *s->m_impl;
    d.model = std::move(model);
    d.m = &d.model->impl();
    d.options = options;
    const arch::ArchConfig& c = d.m->cfg;
    d.nCtx = options.nCtx > 0 ? options.nCtx : std::min<int64_t>(c.nCtxTrain, 4096);
    if (d.nCtx > (int64_t{1} << 24)) return Error{"context of " + std::to_string(d.nCtx) + " tokens is too large"};
    d.nBatch = std::clamp<int64_t>(options.nBatch > 0 ? options.nBatch : 512, 1, d.nCtx);

    {
        const auto passes = d.m->lockPasses();  // allocations between passes (~Session)
        const arch::ArchConfig::CacheShape cs = c.cacheShape();  // MLA caches a latent, not per-head K/V
        const bool f16 = options.kvType == KvType::F16;
        const int64_t split = d.m->splitLayer;  // > 0: the first blocks on the forward's backend
        auto kv = session::KvCache::create(*d.m->be, split > 0 ? split : c.nLayer, cs.heads, cs.dimK, cs.dimV, d.nCtx, f16);
        if (!kv) return kv.error();
        d.kv = std::move(kv.value());
        auto scratch = d.m->arch->createScratch(c, d.nBatch, *d.m->be);
        if (!scratch) return scratch.error();
        d.scratch = std::move(scratch.value());
        if (split > 0) {
            auto tail = session::KvCache::create(*d.m->cpu, c.nLayer, cs.heads, cs.dimK, cs.dimV, d.nCtx, f16, split);
            if (!tail) return tail.error();
            d.kvTail = std::move(tail.value());
            auto s2 = d.m->arch->createScratch(c, d.nBatch, *d.m->cpu);
            if (!s2) return s2.error();
            d.scratchTail = std::move(s2.value());
        }
    }
    try {
        d.logits.resize(static_cast<size_t>(c.nVocab));
        if (d.kvTail) d.hidden.resize(static_cast<size_t>(d.nBatch * c.nEmbd));
        d.tokens.reserve(static_cast<size_t>(d.nCtx));
    } catch (const std::bad_alloc&) {
        return Error{"cannot allocate session buffers"};
    }
    d.timings.loadMs = d.m->loadMs;
    return s;
}

const Model& Session::model() const { return *m_impl->model; }
int64_t Session::nCtx() const { return m_impl->nCtx; }
int64_t Session::nPast() const { return static_cast<int64_t>(m_impl->tokens.size()); }
const std::vector<int32_t>& Session::tokens() const { return m_impl->tokens; }
void Session::clear() { m_impl->tokens.clear(); }
void Session::truncate(int64_t n) { m_impl->truncate(n); }

Result<LogitsView> Session::evaluate(std::span<const int32_t> tokens, bool allLogits) {
    return m_impl->evaluate(tokens, allLogits);
}

const Timings& Session::timings() const { return m_impl->timings; }

MemoryUse Session::memoryUse() const {
    MemoryUse u;
    u.weightsBytes = m_impl->m->weightsBytes;
    u.repackedBytes = m_impl->m->packedBytes;
    u.scratchBytes = m_impl->logits.capacity() * sizeof(float);
    u.peakRssBytes = peakRssBytes();
    if (m_impl->m->device) {  // the forward on a GPU's op backend: its own accounting
        const backend::MemoryStats v = m_impl->m->be->memory();
        u.device = m_impl->m->deviceId;
        u.vramWeightsBytes = v.weights;
        u.vramKvBytes = m_impl->kv->bytes();
        u.vramScratchBytes = v.activations;
        u.vramWorkspaceBytes = v.workspace;
        u.vramPeakBytes = v.peak;
        u.vramDeviceUsedBytes = v.deviceUsed;
        u.vramDeviceTotalBytes = v.deviceTotal;
    }
    if (m_impl->kvTail) {  // a split forward's CPU blocks
        u.kvBytes += m_impl->kvTail->bytes();
        u.scratchBytes += m_impl->scratchTail->bytes();
    }
    if (m_impl->kv) {  // the forward's cache and scratch (a split's first blocks; on the GPU when it runs there)
        u.kvBytes += m_impl->kv->bytes();
        u.scratchBytes += m_impl->scratch->bytes() + m_impl->hidden.capacity() * sizeof(float);
    }
    return u;
}

}  // namespace verdict
