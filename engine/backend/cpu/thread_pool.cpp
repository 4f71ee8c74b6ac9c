#include "backend/cpu/thread_pool.h"

#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace verdict::cpu {
namespace {

// The pool thread index while this thread executes tasks, else -1: a nested run() then executes
// serially with the same index.
thread_local int t_thread = -1;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
}

using Clock = std::chrono::steady_clock;

// Spins until pred() holds or `micros` elapsed; returns pred()'s last value.
template <class Pred>
bool spinFor(int micros, Pred pred) {
    if (pred()) return true;
    if (micros <= 0) return false;
    const auto deadline = Clock::now() + std::chrono::microseconds(micros);
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (pred()) return true;
            cpuRelax();
        }
        if (Clock::now() >= deadline) return pred();
    }
}

}  // namespace

ThreadPool::ThreadPool(int nThreads, int spinMicros)
    : m_nThreads(nThreads > 0 ? nThreads : physicalCoreCount()), m_spinMicros(spinMicros) {
    m_workers.reserve(static_cast<size_t>(m_nThreads - 1));
    for (int t = 1; t < m_nThreads; ++t) m_workers.emplace_back([this, t] { workerLoop(t); });
}

ThreadPool::~ThreadPool() {
    m_stop.store(true, std::memory_order_seq_cst);
    m_seq.fetch_add(2, std::memory_order_seq_cst);
    {
        std::lock_guard lock(m_wakeMutex);
        m_wake.notify_all();
    }
    for (auto& w : m_workers) w.join();
}

void ThreadPool::run(int nTasks, const std::function<void(int task, int thread)>& fn) {
    runRaw(nTasks,
           [](void* ctx, int task, int thread) {
               (*static_cast<const std::function<void(int, int)>*>(ctx))(task, thread);
           },
           const_cast<std::function<void(int, int)>*>(&fn));
}

void ThreadPool::runRaw(int nTasks, TaskFn fn, void* ctx) {
    if (nTasks <= 0) return;
    if (t_thread >= 0) {
        // Nested call from inside a task: run serially on this thread, keeping its index.
        for (int t = 0; t < nTasks; ++t) fn(ctx, t, t_thread);
        return;
    }
    std::lock_guard lock(m_runMutex);
    if (m_nThreads == 1 || nTasks == 1) {
        t_thread = 0;
        for (int t = 0; t < nTasks; ++t) fn(ctx, t, 0);
        t_thread = -1;
        return;
    }
    // Publish (seqlock write): odd while the fields change, then the new even value.
    const uint32_t seq = m_seq.load(std::memory_order_relaxed) + 2;
    m_seq.store(seq - 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    m_fn.store(fn, std::memory_order_relaxed);
    m_ctx.store(ctx, std::memory_order_relaxed);
    m_nTasks.store(nTasks, std::memory_order_relaxed);
    m_done.store(0, std::memory_order_relaxed);
    m_claim.store(static_cast<uint64_t>(seq) << 32, std::memory_order_relaxed);
    m_seq.store(seq, std::memory_order_seq_cst);
    // A worker counts itself asleep before it checks m_seq under m_wakeMutex: seeing no sleepers
    // here means every worker will see the new sequence without being woken.
    if (m_sleepers.load(std::memory_order_seq_cst) > 0) {
        std::lock_guard lock(m_wakeMutex);
        m_wake.notify_all();
    }

    work(0, seq, fn, ctx, nTasks);

    auto done = [&] { return m_done.load(std::memory_order_acquire) == nTasks; };
    if (!spinFor(m_spinMicros, done)) {
        // A task is still running on a worker (long task, or the worker was descheduled).
        std::unique_lock lock(m_doneMutex);
        m_callerWaiting.store(true, std::memory_order_seq_cst);
        m_doneCv.wait(lock, [&] { return m_done.load(std::memory_order_seq_cst) == nTasks; });
        m_callerWaiting.store(false, std::memory_order_relaxed);
    }
}

void ThreadPool::work(int thread, uint32_t seq, TaskFn fn, void* ctx, int nTasks) {
    t_thread = thread;
    uint64_t v = m_claim.load(std::memory_order_relaxed);
    for (;;) {
        if (static_cast<uint32_t>(v >> 32) != seq || static_cast<int>(static_cast<uint32_t>(v)) >= nTasks) break;
        if (!m_claim.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) continue;
        fn(ctx, static_cast<int>(static_cast<uint32_t>(v)), thread);
        if (m_done.fetch_add(1, std::memory_order_seq_cst) + 1 == nTasks &&
            m_callerWaiting.load(std::memory_order_seq_cst)) {
            std::lock_guard lock(m_doneMutex);
            m_doneCv.notify_all();
        }
        v = m_claim.load(std::memory_order_relaxed);
    }
    t_thread = -1;
}

void ThreadPool::workerLoop(int thread) {
    uint32_t seen = 0;  // the sequence at construction; run() may publish before we get here
    for (;;) {
        auto changed = [&] { return m_seq.load(std::memory_order_acquire) != seen; };
        if (!spinFor(m_spinMicros, changed)) {
            std::unique_lock lock(m_wakeMutex);
            m_sleepers.fetch_add(1, std::memory_order_seq_cst);
            m_wake.wait(lock, [&] { return m_seq.load(std::memory_order_seq_cst) != seen; });
            m_sleepers.fetch_sub(1, std::memory_order_seq_cst);
        }
        if (m_stop.load(std::memory_order_acquire)) return;
        // Seqlock read of the job; retry if run() is writing (odd) or wrote again meanwhile.
        const uint32_t s1 = m_seq.load(std::memory_order_acquire);
        if (s1 & 1u) {
            cpuRelax();
            continue;
        }
        const TaskFn fn = m_fn.load(std::memory_order_relaxed);
        void* ctx = m_ctx.load(std::memory_order_relaxed);
        const int nTasks = m_nTasks.load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (m_seq.load(std::memory_order_relaxed) != s1) continue;
        seen = s1;
        work(thread, s1, fn, ctx, nTasks);
    }
}

int ThreadPool::physicalCoreCount() {
    const int logical = std::max(1u, std::thread::hardware_concurrency());
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return logical;
    std::set<std::pair<std::string, std::string>> cores;
    int allowed = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &set)) continue;
        ++allowed;
        const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        std::ifstream pkg(base + "physical_package_id"), core(base + "core_id");
        std::string p, c;
        if (!(pkg >> p) || !(core >> c)) return allowed > 0 ? CPU_COUNT(&set) : logical;
        cores.emplace(p, c);
    }
    if (!cores.empty()) return static_cast<int>(cores.size());
    return allowed > 0 ? allowed : logical;
#else
    return logical;
#endif
}

}  // namespace verdict::cpu
