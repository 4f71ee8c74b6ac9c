// BatchScheduler (batch_scheduler.h): continuous batching on a scheduler thread.
#include "verdict/engine/batch_scheduler.h"

#include "verdict/engine/batch.h"
#include "session/session_impl.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace verdict {

namespace {
using Clock = std::chrono::steady_clock;
}

struct BatchScheduler::Impl {
    // One request from submit() to onDone.
    struct Job {
        uint64_t id = 0;
        BatchRequest req;
        Clock::time_point submitted;
        std::unique_ptr<detail::SequenceGenerator> gen;  // refers to req.cfg: Job never moves (unique_ptr)
        std::function<bool(std::string_view)> onPiece;
        int32_t next = 0;   // the sampled token still to be decoded
        int slot = -1;      // session index while running
        bool cancelled = false;
    };

    std::shared_ptr<const Model> model;
    BatchSchedulerOptions options;
    int64_t nCtx = 0;
    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<bool> slotFree;

    mutable std::mutex mu;
    std::condition_variable cv;
    std::deque<std::unique_ptr<Job>> waiting;  // guarded by mu
    std::vector<uint64_t> cancelIds;            // guarded by mu
    bool stopping = false;                      // guarded by mu
    uint64_t nextId = 1;                        // guarded by mu
    BatchSchedulerStats st;                     // guarded by mu
    std::vector<std::unique_ptr<Job>> running;  // scheduler thread only
    std::thread thread;

    void finishJob(std::unique_ptr<Job> job, Result<GenerateResult> r) {
        if (job->slot >= 0) slotFree[static_cast<size_t>(job->slot)] = true;
        {
            std::lock_guard lock(mu);
            if (r) {
                ++st.completed;
                st.generatedTokens += r->tokens.size();
            } else {
                ++st.failed;
            }
        }
        if (job->req.onDone) job->req.onDone(std::move(r));
    }

    // Prefill one admitted job into its session and sample its first token.
    void start(std::unique_ptr<Job> job) {
        Session& s = *sessions[static_cast<size_t>(job->slot)];
        detail::SessionImpl& d = detail::sessionImpl(s);
        const std::vector<int32_t>& prompt = job->req.prompt;
        const auto t0 = Clock::now();
        int64_t keep = std::min<int64_t>(d.commonPrefix(prompt), static_cast<int64_t>(prompt.size()) - 1);
        d.truncate(keep);
        auto first = d.evaluate(std::span<const int32_t>(prompt).subspan(static_cast<size_t>(keep)), false);
        if (!first) {
            Error e = first.error();
            return finishJob(std::move(job), std::move(e));
        }
        {
            std::lock_guard lock(mu);
            st.promptTokens += prompt.size() - static_cast<size_t>(keep);
        }
        job->gen = std::make_unique<detail::SequenceGenerator>(*model, job->req.cfg, prompt, job->req.cfg.sampling.seed);
        job->gen->setPrefill(static_cast<int64_t>(prompt.size()) - keep,
                             std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        Job* raw = job.get();
        if (job->req.cfg.onToken)
            job->onPiece = [raw](std::string_view piece) { return raw->req.cfg.onToken(raw->next, piece); };
        // TTFT from submit(): the time the request waited in the queue counts, as a client sees it.
        job->next = job->gen->sampleNext(first->last(), job->submitted);
        if (job->gen->accept(job->next, job->onPiece) && static_cast<int64_t>(d.tokens.size()) >= d.nCtx)
            job->gen->stop(StopReason::ContextFull);
        if (job->gen->done()) {
            GenerateResult r = job->gen->finish();  // before job is moved from
            return finishJob(std::move(job), std::move(r));
        }
        running.push_back(std::move(job));
    }

    void step() {
        std::vector<Session*> batch;
        std::vector<int32_t> tokens;
        for (const auto& j : running) {
            batch.push_back(sessions[static_cast<size_t>(j->slot)].get());
            tokens.push_back(j->next);
        }
        const auto t0 = Clock::now();
        auto views = decodeBatch(batch, tokens);
        if (!views) {
            for (auto& j : running) finishJob(std::move(j), views.error());
            running.clear();
            return;
        }
        {
            std::lock_guard lock(mu);
            ++st.steps;
        }
        for (size_t i = 0; i < running.size(); ++i) {
            Job& j = *running[i];
            j.next = j.gen->sampleNext((*views)[i].last(), t0);
            const detail::SessionImpl& d = detail::sessionImpl(*batch[i]);
            if (j.gen->accept(j.next, j.onPiece) && static_cast<int64_t>(d.tokens.size()) >= d.nCtx)
                j.gen->stop(StopReason::ContextFull);
        }
        retireDone();
    }

    void retireDone() {
        std::vector<std::unique_ptr<Job>> keep;
        for (auto& j : running) {
            if (j->gen->done()) {
                GenerateResult r = j->gen->finish();  // before j is moved from
                finishJob(std::move(j), std::move(r));
            } else {
                keep.push_back(std::move(j));
            }
        }
        running = std::move(keep);
    }

    void loop() {
        for (;;) {
            std::vector<std::unique_ptr<Job>> admitted;
            std::vector<uint64_t> cancels;
            {
                std::unique_lock lock(mu);
                cv.wait(lock, [&] { return stopping || !waiting.empty() || !running.empty() || !cancelIds.empty(); });
                if (stopping) break;
                cancels.swap(cancelIds);
                // Cancelled before they started: finish them without a prefill.
                for (auto it = waiting.begin(); it != waiting.end();) {
                    if (std::find(cancels.begin(), cancels.end(), (*it)->id) != cancels.end()) {
                        admitted.push_back(std::move(*it));
                        admitted.back()->cancelled = true;
                        it = waiting.erase(it);
                    } else {
                        ++it;
                    }
                }
                for (size_t slot = 0; slot < slotFree.size() && !waiting.empty(); ++slot) {
                    if (!slotFree[slot]) continue;
                    slotFree[slot] = false;
                    waiting.front()->slot = static_cast<int>(slot);
                    admitted.push_back(std::move(waiting.front()));
                    waiting.pop_front();
                }
                st.waiting = static_cast<int>(waiting.size());
            }
            for (auto& j : running)
                if (std::find(cancels.begin(), cancels.end(), j->id) != cancels.end()) j->gen->stop(StopReason::Callback);
            retireDone();
            for (auto& j : admitted) {
                if (j->cancelled) {
                    GenerateResult r;
                    r.stopReason = StopReason::Callback;
                    finishJob(std::move(j), std::move(r));
                } else {
                    start(std::move(j));
                }
            }
            if (!running.empty()) step();
            std::lock_guard lock(mu);
            st.running = static_cast<int>(running.size());
        }
        // Stopping: fail everything still pending.
        std::deque<std::unique_ptr<Job>> left;
        {
            std::lock_guard lock(mu);
            left.swap(waiting);
        }
        for (auto& j : left) finishJob(std::move(j), Error{"the scheduler was stopped"});
        for (auto& j : running) finishJob(std::move(j), Error{"the scheduler was stopped"});
        running.clear();
    }
};

BatchScheduler::BatchScheduler(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

BatchScheduler::~BatchScheduler() {
    {
        std::lock_guard lock(m_impl->mu);
        m_impl->stopping = true;
    }
    m_impl->cv.notify_all();
    if (m_impl->thread.joinable()) m_impl->thread.join();
}

Result<std::unique_ptr<BatchScheduler>> BatchScheduler::create(std::shared_ptr<const Model> model,
                                                               const BatchSchedulerOptions& options) {
    if (!model) return Error{"BatchScheduler: no model"};
    if (options.maxSequences < 1 || options.maxSequences > kMaxBatchRows)
        return Error{"BatchScheduler: maxSequences must be 1.." + std::to_string(kMaxBatchRows) + ", not " +
                     std::to_string(options.maxSequences)};
    auto impl = std::make_unique<Impl>();
    impl->model = model;
    impl->options = options;
    impl->options.maxWaiting = std::max(1, options.maxWaiting);
    for (int i = 0; i < options.maxSequences; ++i) {
        SessionOptions so;
        so.nCtx = options.nCtx;
        auto s = Session::create(model, so);
        if (!s) return Error{"BatchScheduler: session " + std::to_string(i + 1) + " of " +
                             std::to_string(options.maxSequences) + ": " + s.error().message};
        impl->st.kvBytes += (*s)->memoryUse().kvBytes;
        impl->nCtx = (*s)->nCtx();
        impl->sessions.push_back(std::move(*s));
    }
    impl->slotFree.assign(impl->sessions.size(), true);
    Impl* raw = impl.get();
    impl->thread = std::thread([raw] { raw->loop(); });
    return std::unique_ptr<BatchScheduler>(new BatchScheduler(std::move(impl)));
}

Result<uint64_t> BatchScheduler::submit(BatchRequest request) {
    Impl& d = *m_impl;
    if (request.prompt.empty()) return Error{"the prompt is empty"};
    if (static_cast<int64_t>(request.prompt.size()) > d.nCtx)
        return Error{"the prompt of " + std::to_string(request.prompt.size()) + " tokens does not fit in the context of " +
                     std::to_string(d.nCtx) + " tokens"};
    const int64_t nVocab = d.model->shape().nVocab;
    for (size_t i = 0; i < request.prompt.size(); ++i)
        if (request.prompt[i] < 0 || request.prompt[i] >= nVocab)
            return Error{"prompt token " + std::to_string(i) + " (id " + std::to_string(request.prompt[i]) +
                         ") is outside the vocabulary of " + std::to_string(nVocab)};
    auto job = std::make_unique<Impl::Job>();
    job->req = std::move(request);
    job->submitted = Clock::now();
    uint64_t id = 0;
    {
        std::lock_guard lock(d.mu);
        if (d.stopping) return Error{"the scheduler is stopping"};
        if (static_cast<int>(d.waiting.size()) >= d.options.maxWaiting)
            return Error{"too many queued requests (" + std::to_string(d.waiting.size()) + ")"};
        id = d.nextId++;
        job->id = id;
        d.waiting.push_back(std::move(job));
        d.st.waiting = static_cast<int>(d.waiting.size());
    }
    d.cv.notify_all();
    return id;
}

void BatchScheduler::cancel(uint64_t id) {
    {
        std::lock_guard lock(m_impl->mu);
        m_impl->cancelIds.push_back(id);
    }
    m_impl->cv.notify_all();
}

BatchSchedulerStats BatchScheduler::stats() const {
    std::lock_guard lock(m_impl->mu);
    return m_impl->st;
}

int64_t BatchScheduler::nCtx() const { return m_impl->nCtx; }
const Model& BatchScheduler::model() const { return *m_impl->model; }

}  // namespace verdict
