// decodeBatch and generateBatch (batch.h): several sessions of one model advanced by one forward
// pass whose rows belong to different sequences (arch::ForwardBatch::caches / positions).
#include "verdict/engine/batch.h"

#include "session/session_impl.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <utility>

namespace verdict {
namespace {

using detail::SessionImpl;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The calling thread's buffers for batched passes: activations for kMaxBatchRows rows, sized for
// the largest context seen so far, and the pass's logits. Kept between calls so that a decode loop
// allocates nothing per step; rebuilt when a batch of another model comes along.
struct BatchBuffers {
    std::weak_ptr<const Model> model;
    int64_t nCtx = 0;
    std::unique_ptr<arch::ArchScratch> scratch;
    std::vector<float> logits;               // [kMaxBatchRows][nVocab]
    std::vector<int64_t> positions;          // [kMaxBatchRows]
    std::vector<session::KvCache*> caches;   // [kMaxBatchRows]
};

Result<BatchBuffers*> batchBuffers(const SessionImpl& lead, int64_t nCtx) {
    thread_local BatchBuffers t;
    const bool sameModel = t.scratch && t.model.lock() == lead.model;
    if (sameModel && t.nCtx >= nCtx) return &t;
    if (sameModel) nCtx = std::max(nCtx, t.nCtx);
    t.scratch.reset();  // free the old buffers before allocating the new ones
    t.model.reset();
    const detail::ModelImpl& m = *lead.m;
    auto scratch = m.arch->createScratch(m.cfg, kMaxBatchRows, nCtx, m.pool->size());
    if (!scratch) return scratch.error();
    try {
        t.logits.resize(static_cast<size_t>(kMaxBatchRows * m.cfg.nVocab));
        t.positions.resize(kMaxBatchRows);
        t.caches.resize(kMaxBatchRows);
    } catch (const std::bad_alloc&) {
        return Error{"cannot allocate the logits of a batch of " + std::to_string(kMaxBatchRows) + " sequences"};
    }
    t.scratch = std::move(scratch.value());
    t.model = lead.model;
    t.nCtx = nCtx;
    return &t;
}

// Null entries, duplicates and mixed models; on success `out` holds the sessions' internals.
Result<void> checkSessions(std::span<Session* const> sessions, const char* fn, std::vector<SessionImpl*>& out) {
    if (sessions.empty()) return Error{std::string(fn) + ": no sessions given"};
    out.clear();
    for (size_t i = 0; i < sessions.size(); ++i) {
        if (!sessions[i]) return Error{std::string(fn) + ": session " + std::to_string(i) + " is null"};
        SessionImpl& d = detail::sessionImpl(*sessions[i]);
        if (!out.empty() && d.m != out.front()->m)
            return Error{std::string(fn) + ": session " + std::to_string(i)
                         + " uses another model than session 0 (a batch runs on one model)"};
        out.push_back(&d);
    }
    std::vector<std::pair<const Session*, size_t>> order;
    for (size_t i = 0; i < sessions.size(); ++i) order.emplace_back(sessions[i], i);
    std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
        return std::less<const Session*>()(x.first, y.first) || (x.first == y.first && x.second < y.second);
    });
    for (size_t i = 1; i < order.size(); ++i)
        if (order[i].first == order[i - 1].first)
            return Error{std::string(fn) + ": session " + std::to_string(std::max(order[i].second, order[i - 1].second))
                         + " is the same session as " + std::to_string(std::min(order[i].second, order[i - 1].second))};
    return {};
}

Result<void> checkIds(std::span<const int32_t> ids, int64_t nVocab, const std::string& where) {
    for (size_t j = 0; j < ids.size(); ++j)
        if (ids[j] < 0 || ids[j] >= nVocab)
            return Error{"token id " + std::to_string(ids[j]) + " at index " + std::to_string(j) + " of " + where
                         + " is outside the vocabulary [0, " + std::to_string(nVocab) + ")"};
    return {};
}

int64_t maxContext(std::span<SessionImpl* const> ds) {
    int64_t n = 0;
    for (const SessionImpl* d : ds) n = std::max(n, d->nCtx);
    return n;
}

// decodeRows on a GPU model: one pass per kMaxBatchRows rows, each row on its own device cache;
// with a partial offload the CPU's blocks follow on each row's CPU cache, from the GPU's residual
// stream.
Result<void> decodeRowsGpu(std::span<SessionImpl* const> ds, std::span<const int32_t> tokens) {
    const detail::ModelImpl& m = *ds.front()->m;
    const int64_t nVocab = m.cfg.nVocab;
    const auto n = static_cast<int64_t>(ds.size());
    const bool partial = m.partialOffload();
    BatchBuffers* cpuBuf = nullptr;
    if (partial) {
        auto buffers = batchBuffers(*ds.front(), maxContext(ds));
        if (!buffers) return buffers.error();
        cpuBuf = *buffers;
    }
    std::vector<int64_t> positions;
    std::vector<gpu::GpuKv*> caches;
    std::vector<float> logits, hidden;
    try {
        positions.resize(static_cast<size_t>(std::min(n, kMaxBatchRows)));
        caches.resize(positions.size());
        logits.resize(positions.size() * static_cast<size_t>(nVocab));
        if (partial) hidden.resize(positions.size() * static_cast<size_t>(m.cfg.nEmbd));
    } catch (const std::bad_alloc&) {
        return Error{"cannot allocate the logits of a batch of " + std::to_string(n) + " sequences"};
    }
    for (int64_t begin = 0; begin < n; begin += kMaxBatchRows) {
        const int64_t rows = std::min(kMaxBatchRows, n - begin);
        for (int64_t r = 0; r < rows; ++r) {
            SessionImpl& d = *ds[static_cast<size_t>(begin + r)];
            positions[static_cast<size_t>(r)] = static_cast<int64_t>(d.tokens.size());
            caches[static_cast<size_t>(r)] = d.gpuKv.get();
        }
        gpu::GpuBatch b;
        b.tokens = tokens.data() + begin;
        b.positions = positions.data();
        b.caches = caches.data();
        b.nTok = rows;
        if (partial) {
            b.hidden = hidden.data();
        } else {
            b.logits = logits.data();
        }
        if (auto r = m.gpu->forward(b); !r) return r.error();
        if (partial) {
            for (int64_t r = 0; r < rows; ++r)
                cpuBuf->caches[static_cast<size_t>(r)] = ds[static_cast<size_t>(begin + r)]->kv.get();
            const arch::ForwardContext ctx{m.cfg, *m.pool, *ds.front()->kv, nullptr};
            arch::ForwardBatch fb;
            fb.tokens = tokens.data() + begin;
            fb.nTok = rows;
            fb.allLogits = true;
            fb.logits = logits.data();
            fb.positions = positions.data();
            fb.caches = cpuBuf->caches.data();
            fb.hidden = hidden.data();
            fb.firstLayer = m.gpuLayers;
            m.arch->forward(*m.weights, *cpuBuf->scratch, ctx, fb);
        }
        for (int64_t r = 0; r < rows; ++r) {
            SessionImpl& d = *ds[static_cast<size_t>(begin + r)];
            std::memcpy(d.logits.data(), logits.data() + r * nVocab, sizeof(float) * static_cast<size_t>(nVocab));
            d.tokens.push_back(tokens[static_cast<size_t>(begin + r)]);
        }
    }
    return {};
}

// Appends tokens[i] to ds[i] (already checked: ids, room, distinct sessions of one model) and
// leaves each session's logits in its own buffer (row 0). Passes of up to kMaxBatchRows rows.
Result<void> decodeRows(std::span<SessionImpl* const> ds, std::span<const int32_t> tokens) {
    const detail::ModelImpl& m = *ds.front()->m;
    const int64_t nVocab = m.cfg.nVocab;
    if (m.gpu) return decodeRowsGpu(ds, tokens);
    if (!m.arch->sequenceRows) {
        // An architecture without multi-sequence rows: one pass per session (same results).
        for (size_t i = 0; i < ds.size(); ++i)
            if (auto r = ds[i]->evaluate(tokens.subspan(i, 1), false); !r) return r.error();
        return {};
    }
    auto buffers = batchBuffers(*ds.front(), maxContext(ds));
    if (!buffers) return buffers.error();
    BatchBuffers& buf = **buffers;
    const arch::ForwardContext ctx{m.cfg, *m.pool, *ds.front()->kv, nullptr};
    const auto n = static_cast<int64_t>(ds.size());
    for (int64_t begin = 0; begin < n; begin += kMaxBatchRows) {
        const int64_t rows = std::min(kMaxBatchRows, n - begin);
        for (int64_t r = 0; r < rows; ++r) {
            SessionImpl& d = *ds[static_cast<size_t>(begin + r)];
            buf.positions[static_cast<size_t>(r)] = static_cast<int64_t>(d.tokens.size());
            buf.caches[static_cast<size_t>(r)] = d.kv.get();
        }
        arch::ForwardBatch b;
        b.tokens = tokens.data() + begin;
        b.nTok = rows;
        b.allLogits = true;
        b.logits = buf.logits.data();
        b.positions = buf.positions.data();
        b.caches = buf.caches.data();
        m.arch->forward(*m.weights, *buf.scratch, ctx, b);
        for (int64_t r = 0; r < rows; ++r) {
            SessionImpl& d = *ds[static_cast<size_t>(begin + r)];
            std::memcpy(d.logits.data(), buf.logits.data() + r * nVocab, sizeof(float) * static_cast<size_t>(nVocab));
            d.tokens.push_back(tokens[static_cast<size_t>(begin + r)]);
        }
    }
    return {};
}

bool contextFull(const SessionImpl& d) { return static_cast<int64_t>(d.tokens.size()) >= d.nCtx; }

}  // namespace

Result<std::vector<LogitsView>> decodeBatch(std::span<Session* const> sessions, std::span<const int32_t> tokens) {
    std::vector<SessionImpl*> ds;
    if (auto r = checkSessions(sessions, "decodeBatch", ds); !r) return r.error();
    if (tokens.size() != sessions.size())
        return Error{"decodeBatch: " + std::to_string(tokens.size()) + " tokens for " + std::to_string(sessions.size())
                     + " sessions (one token per session)"};
    const int64_t nVocab = ds.front()->m->cfg.nVocab;
    if (auto r = checkIds(tokens, nVocab, "the batch"); !r) return r.error();
    for (size_t i = 0; i < ds.size(); ++i)
        if (contextFull(*ds[i]))
            return Error{"decodeBatch: context full: session " + std::to_string(i) + " holds "
                         + std::to_string(ds[i]->tokens.size()) + " of " + std::to_string(ds[i]->nCtx) + " tokens"};
    if (auto r = decodeRows(ds, tokens); !r) return r.error();
    std::vector<LogitsView> out;
    out.reserve(ds.size());
    for (const SessionImpl* d : ds) out.push_back(LogitsView{d->logits.data(), 1, nVocab});
    return out;
}

Result<std::vector<GenerateResult>> generateBatch(std::span<Session* const> sessions,
                                                  std::span<const std::vector<int32_t>> prompts,
                                                  const GenerateConfig& cfg, const BatchCallbacks& cb) {
    std::vector<SessionImpl*> ds;
    if (auto r = checkSessions(sessions, "generateBatch", ds); !r) return r.error();
    if (prompts.size() != sessions.size())
        return Error{"generateBatch: " + std::to_string(prompts.size()) + " prompts for "
                     + std::to_string(sessions.size()) + " sessions"};
    const detail::ModelImpl& m = *ds.front()->m;
    for (size_t i = 0; i < ds.size(); ++i) {
        const std::string what = "prompt " + std::to_string(i);
        if (auto r = detail::checkFits(*ds[i], prompts[i].size(), what.c_str()); !r) return r.error();
        if (auto r = checkIds(prompts[i], m.cfg.nVocab, what); !r) return r.error();
    }
    // Allocate the batch buffers now, so that running out of memory fails before any prefill.
    if (m.arch->sequenceRows)
        if (auto r = batchBuffers(*ds.front(), maxContext(ds)); !r) return r.error();
    const auto t0 = Clock::now();
    const size_t n = ds.size();

    std::vector<std::unique_ptr<detail::SequenceGenerator>> gens(n);
    std::vector<int32_t> next(n, 0);
    bool stopAll = false;
    std::vector<std::function<bool(std::string_view)>> onPiece(n);
    for (size_t i = 0; i < n; ++i) {
        if (!cfg.onToken && !cb.onToken) continue;
        onPiece[i] = [&cfg, &cb, &next, &stopAll, i](std::string_view piece) {
            if (cfg.onToken && !cfg.onToken(next[i], piece)) return false;
            if (!cb.onToken) return true;
            const BatchAction a = cb.onToken(i, next[i], piece);
            if (a == BatchAction::StopAll) stopAll = true;
            return a == BatchAction::Continue;
        };
    }
    // After a sampled token: the stop rules, then room for decoding it.
    auto sampleAndAccept = [&](size_t i, std::span<const float> logits, Clock::time_point since) {
        next[i] = gens[i]->sampleNext(logits, since);
        if (gens[i]->accept(next[i], onPiece[i]) && contextFull(*ds[i])) gens[i]->stop(StopReason::ContextFull);
    };
    auto stopRemaining = [&] {
        for (auto& g : gens)
            if (g && !g->done()) g->stop(StopReason::Callback);
    };

    // Prefill one prompt after the other; each samples its first token at once (its TTFT).
    for (size_t i = 0; i < n; ++i) {
        SessionImpl& d = *ds[i];
        const std::span<const int32_t> prompt(prompts[i]);
        gens[i] = std::make_unique<detail::SequenceGenerator>(*d.model, cfg, prompt, cfg.sampling.seed + i);
        if (stopAll) {
            gens[i]->stop(StopReason::Callback);
            continue;
        }
        const auto p0 = Clock::now();
        int64_t keep = std::min<int64_t>(d.commonPrefix(prompt), static_cast<int64_t>(prompt.size()) - 1);
        d.truncate(keep);
        auto first = d.evaluate(prompt.subspan(static_cast<size_t>(keep)), false);
        if (!first) return first.error();
        gens[i]->setPrefill(static_cast<int64_t>(prompt.size()) - keep, msSince(p0));
        if (!gens[i]->done()) sampleAndAccept(i, first->last(), t0);
        if (stopAll) stopRemaining();
    }

    // Decode every running sequence in lockstep.
    std::vector<size_t> live;
    std::vector<SessionImpl*> liveImpl;
    std::vector<int32_t> liveTokens;
    while (!stopAll) {
        live.clear();
        liveImpl.clear();
        liveTokens.clear();
        for (size_t i = 0; i < n; ++i)
            if (!gens[i]->done()) {
                live.push_back(i);
                liveImpl.push_back(ds[i]);
                liveTokens.push_back(next[i]);
            }
        if (live.empty()) break;
        const auto stepStart = Clock::now();
        if (auto r = decodeRows(liveImpl, liveTokens); !r) return r.error();
        const auto nVocab = static_cast<size_t>(m.cfg.nVocab);
        for (size_t i : live) {
            sampleAndAccept(i, std::span<const float>(ds[i]->logits.data(), nVocab), stepStart);
            if (stopAll) break;
        }
        if (stopAll) stopRemaining();
    }

    std::vector<GenerateResult> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        out.push_back(gens[i]->finish());
        ds[i]->timings = out.back().timings;
    }
    return out;
}

}  // namespace verdict
