// A small fork-join pool of persistent worker threads for the CPU backend.
//
// run(nTasks, fn) calls fn(task, thread) once for every task in [0, nTasks) and returns when all
// are done. The calling thread takes part as thread 0, workers are threads 1..size()-1, so `thread`
// can index per-thread scratch buffers. Tasks are handed out dynamically (an atomic counter), so
// uneven tasks balance themselves; for a static split use nTasks == size().
//
// Overhead matters: decoding one token makes a few hundred run() calls. Idle workers spin for a
// short while (spinMicros) before sleeping on a futex, so back-to-back calls cost ~1 us, while an
// idle pool uses no CPU.
//
// Thread safety: run() may be called from any thread; concurrent callers are serialised. A run()
// from inside a task (nested) executes serially on the calling thread instead of deadlocking.
// fn must not throw (the engine does not use exceptions across this boundary).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace verdict::cpu {

class ThreadPool {
public:
    // nThreads <= 0: physicalCoreCount(). The pool owns nThreads - 1 workers.
    explicit ThreadPool(int nThreads = 0, int spinMicros = 200);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // Number of threads that run tasks, the caller included (>= 1).
    int size() const { return m_nThreads; }

    // Runs fn(task, thread) for task in [0, nTasks), thread in [0, size()). Blocks until all ran.
    void run(int nTasks, const std::function<void(int task, int thread)>& fn);

    // Same without std::function: a plain function pointer and its context (no allocation).
    using TaskFn = void (*)(void* ctx, int task, int thread);
    void runRaw(int nTasks, TaskFn fn, void* ctx);

    // run() for any callable fn(task, thread), without std::function's possible allocation.
    template <class F>
    void runTasks(int nTasks, F&& fn) {
        using Fn = std::remove_reference_t<F>;
        runRaw(nTasks,
               [](void* ctx, int task, int thread) { (*static_cast<Fn*>(ctx))(task, thread); },
               const_cast<void*>(static_cast<const void*>(&fn)));
    }

    // Splits [0, n) into chunks of at least `grain` items (about 4 per thread for balance) and
    // calls fn(begin, end, thread) for each.
    template <class F>
    void parallelFor(int64_t n, int64_t grain, F&& fn) {
        if (n <= 0) return;
        if (grain < 1) grain = 1;
        int64_t nChunks = (n + grain - 1) / grain;
        const int64_t maxChunks = static_cast<int64_t>(m_nThreads) * 4;
        if (nChunks > maxChunks) nChunks = maxChunks;
        const int64_t chunk = (n + nChunks - 1) / nChunks;
        nChunks = (n + chunk - 1) / chunk;
        struct Ctx {
            F* fn;
            int64_t n, chunk;
        } ctx{&fn, n, chunk};
        runRaw(static_cast<int>(nChunks),
               [](void* p, int task, int thread) {
                   auto* c = static_cast<Ctx*>(p);
                   const int64_t b = task * c->chunk;
                   const int64_t e = b + c->chunk < c->n ? b + c->chunk : c->n;
                   (*c->fn)(b, e, thread);
               },
               &ctx);
    }

    // Physical cores of this machine (SMT siblings counted once); >= 1.
    static int physicalCoreCount();

private:
    void workerLoop(int thread);
    // Claims and runs tasks of job `seq` until none are left (or a newer job replaced it).
    void work(int thread, uint32_t seq, TaskFn fn, void* ctx, int nTasks);

    int m_nThreads = 1;
    int m_spinMicros = 200;
    std::vector<std::thread> m_workers;
    std::mutex m_runMutex;  // serialises concurrent run() callers

    // The current job, published seqlock-style: m_seq is odd while run() writes the fields and
    // even once they are valid, so a worker that wakes late never mixes two jobs' fields.
    // Tasks are claimed from m_claim = (seq << 32) | next index, so a claim can only succeed for
    // the job the worker read. run() returns when m_done reaches nTasks: a descheduled worker
    // does not hold up the caller, the others simply take its share.
    alignas(64) std::atomic<uint32_t> m_seq{0};
    std::atomic<TaskFn> m_fn{nullptr};
    std::atomic<void*> m_ctx{nullptr};
    std::atomic<int> m_nTasks{0};
    alignas(64) std::atomic<uint64_t> m_claim{0};
    alignas(64) std::atomic<int> m_done{0};
    std::atomic<bool> m_callerWaiting{false};
    alignas(64) std::atomic<int> m_sleepers{0};  // workers asleep on m_wake
    std::atomic<bool> m_stop{false};
    // The slow paths sleep on condition variables, not std::atomic::wait: with libstdc++ 12 a
    // worker once slept through the destructor's notify_all and the join hung (test_phi3_longrope,
    // a 300 s timeout). A predicate checked under the mutex cannot miss a change published
    // before the notifier takes the same mutex.
    std::mutex m_wakeMutex;
    std::condition_variable m_wake;      // workers: m_seq changed (a job, or stop)
    std::mutex m_doneMutex;
    std::condition_variable m_doneCv;    // the caller: m_done reached nTasks
};

}  // namespace verdict::cpu
