// decodeBatch and generateBatch (batch.h): several sessions of one model advanced by one forward
// pass whose rows belong to different sequences (arch::ForwardBatch::caches / positions).
#include "verdict/engine/batch.h"

#include "session/session_impl.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <utility>

namespace verdict {
namespace {

using detail::SessionImpl;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The calling thread's host buffers for batched passes (kMaxBatchRows rows), kept between calls
// so that a decode loop allocates nothing per step; rebuilt when a batch of another model comes
// along. The activations are the model's (ScratchLease).
struct BatchBuffers {
    std::weak_ptr<const Model> model;
    std::vector<float> logits;               // [kMaxBatchRows][nVocab]
    std::vector<int32_t> tokens;             // [kMaxBatchRows]
    std::vector<int64_t> positions;          // [kMaxBatchRows]
    std::vector<session::KvCache*> caches;   // [kMaxBatchRows]
    std::vector<session::KvCache*> tails;    // [kMaxBatchRows] a split forward's CPU caches
    std::vector<float> hidden;               // [kMaxBatchRows][nEmbd] a split forward's hand-over
};

Result<BatchBuffers*> batchBuffers(const SessionImpl& lead) {
    thread_local BatchBuffers t;
    if (!t.logits.empty() && t.model.lock() == lead.model) return &t;
    t.model.reset();
    const detail::ModelImpl& m = *lead.m;
    try {
        t.logits.resize(static_cast<size_t>(kMaxBatchRows * m.cfg.nVocab));
        t.tokens.resize(kMaxBatchRows);
        t.positions.resize(kMaxBatchRows);
        t.caches.resize(kMaxBatchRows);
        t.tails.resize(kMaxBatchRows);
        t.hidden.resize(static_cast<size_t>(kMaxBatchRows * m.cfg.nEmbd));
    } catch (const std::bad_alloc&) {
        return Error{"cannot allocate the logits of a batch of " + std::to_string(kMaxBatchRows) + " sequences"};
    }
    t.model = lead.model;
    return &t;
}

// A batched pass's activations for kMaxBatchRows rows, borrowed from the model for one call (made
// on first use, in the memory of the model's forward backend, or the CPU's for a split's tail) and
// handed back after it.
class ScratchLease {
public:
    static Result<ScratchLease> take(const detail::ModelImpl& m, bool tail = false) {
        ScratchLease lease(m, tail ? m.batchScratchTail : m.batchScratch);
        {
            const std::lock_guard lock(m.batchScratchMutex);
            if (!lease.m_pool.empty()) {
                lease.m_scratch = std::move(lease.m_pool.back());
                lease.m_pool.pop_back();
                return lease;
            }
        }
        // A device's allocations wait for the pass in flight (a GPU backend's pass may be recording
        // a CUDA graph on another thread: no allocation may come in between).
        const auto passes = m.lockPasses();
        auto scratch = m.arch->createScratch(m.cfg, kMaxBatchRows, tail ? *m.cpu : *m.be);
        if (!scratch) return scratch.error();
        lease.m_scratch = std::move(scratch.value());
        return lease;
    }
    ScratchLease(ScratchLease&& o) noexcept : m_model(o.m_model), m_pool(o.m_pool), m_scratch(std::move(o.m_scratch)) {}
    ScratchLease& operator=(ScratchLease&&) = delete;
    ~ScratchLease() {
        if (!m_scratch) return;
        const std::lock_guard lock(m_model.batchScratchMutex);
        m_pool.push_back(std::move(m_scratch));
    }
    arch::ArchScratch& operator*() const { return *m_scratch; }

private:
    ScratchLease(const detail::ModelImpl& m, std::vector<std::unique_ptr<arch::ArchScratch>>& pool)
        : m_model(m), m_pool(pool) {}
    const detail::ModelImpl& m_model;
    std::vector<std::unique_ptr<arch::ArchScratch>>& m_pool;
    std::unique_ptr<arch::ArchScratch> m_scratch;
};

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

// One row of a multi-sequence pass: `token` at `position` of the sequence cached by `d`.
struct PassRow {
    SessionImpl* d = nullptr;
    int32_t token = 0;
    int64_t position = 0;
};

// Called after each pass with the logits ([count][nVocab]) of rows [first, first + count); an
// empty one asks for no logits (the rows only fill the caches).
using PassLogits = std::function<void(size_t first, size_t count, const float* logits)>;

// Runs `rows` (already checked: ids, room, sessions of one model; the rows of one session are
// consecutive positions in order, each cache holding its sequence's positions before its first
// row) in passes of up to kMaxBatchRows rows, every row on its own session's cache. The sessions'
// token lists are the caller's to update. Architectures without multi-sequence rows are not
// handled here (the callers fall back to one session at a time).
Result<void> forwardRows(std::span<const PassRow> rows, const PassLogits& onLogits) {
    const SessionImpl& lead = *rows.front().d;
    const detail::ModelImpl& m = *lead.m;
    auto buffers = batchBuffers(lead);
    if (!buffers) return buffers.error();
    BatchBuffers& buf = **buffers;
    auto scratch = ScratchLease::take(m);
    if (!scratch) return scratch.error();
    std::optional<ScratchLease> tailScratch;
    if (m.splitLayer > 0) {
        auto t = ScratchLease::take(m, true);
        if (!t) return t.error();
        tailScratch.emplace(std::move(t.value()));
    }
    const auto passes = m.lockPasses();
    const arch::ForwardContext ctx = m.forwardContext(*lead.kv, nullptr);
    const auto n = static_cast<int64_t>(rows.size());
    for (int64_t begin = 0; begin < n; begin += kMaxBatchRows) {
        const int64_t count = std::min(kMaxBatchRows, n - begin);
        for (int64_t r = 0; r < count; ++r) {
            const PassRow& row = rows[static_cast<size_t>(begin + r)];
            buf.tokens[static_cast<size_t>(r)] = row.token;
            buf.positions[static_cast<size_t>(r)] = row.position;
            buf.caches[static_cast<size_t>(r)] = row.d->kv.get();
            buf.tails[static_cast<size_t>(r)] = row.d->kvTail.get();
        }
        arch::ForwardBatch b;
        b.tokens = buf.tokens.data();
        b.nTok = count;
        b.allLogits = true;
        b.logits = onLogits ? buf.logits.data() : nullptr;
        b.positions = buf.positions.data();
        b.caches = buf.caches.data();
        if (!tailScratch) {
            m.arch->forward(*m.weights, **scratch, ctx, b);
        } else {  // a split forward: the first blocks on the forward's backend, the rest on the CPU
            arch::ForwardBatch head = b;
            head.logits = nullptr;
            head.layerEnd = m.splitLayer;
            head.hiddenOut = buf.hidden.data();
            m.arch->forward(*m.weights, **scratch, ctx, head);
            arch::ForwardBatch tail = b;
            tail.caches = buf.tails.data();
            tail.hidden = buf.hidden.data();
            tail.firstLayer = m.splitLayer;
            m.arch->forward(*m.weights, **tailScratch, m.tailContext(*lead.kvTail, nullptr), tail);
        }
        if (auto r = m.be->synchronize(); !r) return r.error();  // a failed op of a GPU's backend
        if (onLogits) onLogits(static_cast<size_t>(begin), static_cast<size_t>(count), buf.logits.data());
    }
    return {};
}

// Appends tokens[i] to ds[i] (already checked: ids, room, distinct sessions of one model) and
// leaves each session's logits in its own buffer (row 0).
Result<void> decodeRows(std::span<SessionImpl* const> ds, std::span<const int32_t> tokens) {
    const detail::ModelImpl& m = *ds.front()->m;
    const auto nVocab = static_cast<size_t>(m.cfg.nVocab);
    if (!m.arch->sequenceRows) {
        // An architecture without multi-sequence rows: one pass per session (same results).
        for (size_t i = 0; i < ds.size(); ++i)
            if (auto r = ds[i]->evaluate(tokens.subspan(i, 1), false); !r) return r.error();
        return {};
    }
    std::vector<PassRow> rows(ds.size());
    for (size_t i = 0; i < ds.size(); ++i)
        rows[i] = PassRow{ds[i], tokens[i], static_cast<int64_t>(ds[i]->tokens.size())};
    return forwardRows(rows, [&](size_t first, size_t count, const float* logits) {
        for (size_t r = 0; r < count; ++r) {
            SessionImpl& d = *ds[first + r];
            std::memcpy(d.logits.data(), logits + r * nVocab, sizeof(float) * nVocab);
            d.tokens.push_back(tokens[first + r]);
        }
    });
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

Result<std::vector<LogprobsResult>> logprobsBatch(std::span<Session* const> sessions,
                                                  std::span<const LogprobsRequest> requests) {
    std::vector<SessionImpl*> ds;
    if (auto r = checkSessions(sessions, "logprobsBatch", ds); !r) return r.error();
    if (requests.size() != sessions.size())
        return Error{"logprobsBatch: " + std::to_string(requests.size()) + " requests for "
                     + std::to_string(sessions.size()) + " sessions"};
    const detail::ModelImpl& m = *ds.front()->m;
    const size_t n = ds.size();
    std::vector<std::vector<int32_t>> full(n);
    for (size_t i = 0; i < n; ++i) {
        const std::string what = "request " + std::to_string(i);
        if (requests[i].context.empty())
            return Error{"logprobsBatch: the context of " + what + " is empty (it needs at least a BOS token)"};
        if (requests[i].continuation.empty()) return Error{"logprobsBatch: the continuation of " + what + " is empty"};
        full[i].assign(requests[i].context.begin(), requests[i].context.end());
        full[i].insert(full[i].end(), requests[i].continuation.begin(), requests[i].continuation.end());
        const std::string whole = "context + continuation of " + what;
        if (auto r = detail::checkFits(*ds[i], full[i].size(), whole.c_str()); !r) return r.error();
        if (auto r = checkIds(full[i], m.cfg.nVocab, whole); !r) return r.error();
    }
    std::vector<LogprobsResult> out(n);
    for (LogprobsResult& o : out) o.isGreedy = true;
    if (!m.arch->sequenceRows) {
        // An architecture without multi-sequence rows: one session after the other.
        for (size_t i = 0; i < n; ++i) {
            auto r = sessions[i]->logprobs(requests[i].context, requests[i].continuation);
            if (!r) return r.error();
            out[i] = std::move(*r);
        }
        return out;
    }

    // Each session keeps its cached prefix, but always re-evaluates the context's last position
    // (its logits predict the first continuation token).
    std::vector<int64_t> keep(n), have(n), need(n, 0);
    std::vector<int64_t> nCtxTok(n);
    for (size_t i = 0; i < n; ++i) {
        nCtxTok[i] = static_cast<int64_t>(requests[i].context.size());
        keep[i] = std::min<int64_t>(ds[i]->commonPrefix(full[i]), nCtxTok[i] - 1);
        have[i] = keep[i];
    }
    // Prefix sharing (CPU caches): a context part that another session of the batch holds, or
    // computes in this call, is copied from its cache instead of being computed again — the same
    // values, since the keys and values of a position depend only on the tokens up to it. First
    // from what the sessions hold (a few-shot prefix the previous items left), then from an earlier
    // request of the batch that computes it first (its "leader": the same question for several
    // choices, the prefix of the first items of a suite).
    std::vector<int> leader(n, -1);
    for (size_t i = 0; i < n; ++i) {
        int64_t best = have[i];
        size_t donor = i;
        for (size_t j = 0; j < n; ++j) {
            if (j == i || !ds[j]->kv->sameLayout(*ds[i]->kv)) continue;
            const int64_t d = std::min({ds[j]->commonPrefix(full[i]), keep[j], nCtxTok[i] - 1});
            if (d > best) best = d, donor = j;
        }
        if (donor != i) {
            ds[i]->copyPositions(*ds[donor], have[i], best);
            have[i] = best;
        }
    }
    for (size_t i = 1; i < n; ++i) {
        int64_t best = have[i];
        for (size_t j = 0; j < i; ++j) {
            if (leader[j] >= 0 || !ds[j]->kv->sameLayout(*ds[i]->kv)) continue;
            const auto common = static_cast<int64_t>(
                std::mismatch(full[i].begin(), full[i].end(), full[j].begin(), full[j].end()).first - full[i].begin());
            const int64_t s = std::min({common, nCtxTok[i] - 1, nCtxTok[j] - 1});
            if (s > best) best = s, leader[i] = static_cast<int>(j);
        }
        if (leader[i] >= 0) {
            need[i] = best;
            need[static_cast<size_t>(leader[i])] = std::max(need[static_cast<size_t>(leader[i])], best);
        }
    }
    // The sessions' token lists say what their caches hold; until the passes are done they keep
    // their prefix only, so a failed pass leaves no sequence claiming positions it lacks.
    for (size_t i = 0; i < n; ++i) ds[i]->truncate(keep[i]);

    // The leaders' shared context parts first (no logits), then copied to their followers.
    std::vector<PassRow> rows;
    for (size_t i = 0; i < n; ++i)
        if (leader[i] < 0)
            for (int64_t p = have[i]; p < need[i]; ++p) rows.push_back(PassRow{ds[i], full[i][static_cast<size_t>(p)], p});
    if (!rows.empty())
        if (auto r = forwardRows(rows, {}); !r) return r.error();
    for (size_t i = 0; i < n; ++i)
        if (leader[i] < 0) have[i] = std::max(have[i], need[i]);
    for (size_t i = 0; i < n; ++i)
        if (leader[i] >= 0) {
            ds[i]->copyPositions(*ds[static_cast<size_t>(leader[i])], have[i], need[i]);
            have[i] = need[i];
        }

    // Everything else, scored: row j of session i is position j of full[i]; a row at position
    // p >= context - 1 scores continuation token p - context + 1.
    rows.clear();
    std::vector<size_t> owner;  // rows[r] belongs to session owner[r]
    for (size_t i = 0; i < n; ++i)
        for (auto p = have[i]; p < static_cast<int64_t>(full[i].size()); ++p) {
            rows.push_back(PassRow{ds[i], full[i][static_cast<size_t>(p)], p});
            owner.push_back(i);
        }
    const auto nVocab = static_cast<size_t>(m.cfg.nVocab);
    std::vector<float> last;  // the last row of each session, for its logits buffer
    try {
        last.resize(n * nVocab);
    } catch (const std::bad_alloc&) {
        return Error{"cannot allocate the logits of a batch of " + std::to_string(n) + " sequences"};
    }
    auto r = forwardRows(rows, [&](size_t first, size_t count, const float* logits) {
        for (size_t k = 0; k < count; ++k) {
            const size_t i = owner[first + k];
            const PassRow& row = rows[first + k];
            const std::span<const float> l(logits + k * nVocab, nVocab);
            const int64_t c = row.position - (nCtxTok[i] - 1);  // continuation token this row predicts
            if (c >= 0 && c < static_cast<int64_t>(requests[i].continuation.size()))
                detail::addTokenLogprob(l, requests[i].continuation[static_cast<size_t>(c)], out[i]);
            if (row.position + 1 == static_cast<int64_t>(full[i].size()))
                std::memcpy(last.data() + i * nVocab, l.data(), sizeof(float) * nVocab);
        }
    });
    if (!r) return r.error();
    for (size_t i = 0; i < n; ++i) {
        ds[i]->tokens = std::move(full[i]);
        std::memcpy(ds[i]->logits.data(), last.data() + i * nVocab, sizeof(float) * nVocab);
    }
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
    if (m.arch->sequenceRows) {
        if (auto r = batchBuffers(*ds.front()); !r) return r.error();
        if (auto r = ScratchLease::take(m); !r) return r.error();  // made now, handed back for the passes
    }
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
