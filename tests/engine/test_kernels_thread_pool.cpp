// ThreadPool: every task runs exactly once, thread indices are in range, nested and concurrent
// callers work, and many back-to-back runs stay cheap.
#include "backend/cpu/thread_pool.h"

#include <QtTest/QtTest>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using verdict::cpu::ThreadPool;

class TestKernelsThreadPool : public QObject {
    Q_OBJECT

private slots:
    void sizes() {
        QVERIFY(ThreadPool::physicalCoreCount() >= 1);
        ThreadPool def;
        QCOMPARE(def.size(), ThreadPool::physicalCoreCount());
        ThreadPool three(3);
        QCOMPARE(three.size(), 3);
        ThreadPool one(1);
        QCOMPARE(one.size(), 1);
    }

    void everyTaskOnce_data() {
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("tasks");
        for (int th : {1, 2, 4})
            for (int n : {0, 1, 2, 3, 17, 1000}) QTest::addRow("%d threads, %d tasks", th, n) << th << n;
    }

    void everyTaskOnce() {
        QFETCH(int, threads);
        QFETCH(int, tasks);
        ThreadPool pool(threads);
        for (int rep = 0; rep < 20; ++rep) {
            std::vector<std::atomic<int>> hits(static_cast<size_t>(tasks));
            std::atomic<bool> badThread{false};
            pool.run(tasks, [&](int task, int thread) {
                hits[static_cast<size_t>(task)].fetch_add(1);
                if (thread < 0 || thread >= pool.size()) badThread = true;
            });
            for (auto& h : hits) QCOMPARE(h.load(), 1);
            QVERIFY(!badThread);
        }
    }

    void perThreadScratchIsPrivate() {
        ThreadPool pool(4);
        std::vector<long> scratch(static_cast<size_t>(pool.size()), 0);
        std::atomic<long> total{0};
        pool.run(5000, [&](int task, int thread) {
            // Unsynchronised per-thread slot: only safe if no two concurrent tasks share `thread`.
            scratch[static_cast<size_t>(thread)] += task;
        });
        for (long s : scratch) total += s;
        QCOMPARE(total.load(), 5000L * 4999 / 2);
    }

    void parallelForCoversRange() {
        ThreadPool pool(3);
        for (int64_t n : {0, 1, 5, 64, 1001}) {
            std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
            pool.parallelFor(n, 7, [&](int64_t b, int64_t e, int) {
                QVERIFY(b < e);
                for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
            });
            for (auto& h : hits) QCOMPARE(h.load(), 1);
        }
    }

    void nestedRunIsSerial() {
        ThreadPool pool(2);
        std::atomic<int> inner{0};
        pool.run(4, [&](int, int outerThread) {
            pool.run(3, [&](int, int innerThread) {
                QCOMPARE(innerThread, outerThread);  // runs on the same thread, same index
                inner++;
            });
        });
        QCOMPARE(inner.load(), 12);
    }

    void concurrentCallers() {
        ThreadPool pool(2);
        std::atomic<long> sum{0};
        auto caller = [&] {
            for (int rep = 0; rep < 200; ++rep) pool.run(8, [&](int task, int) { sum += task; });
        };
        std::thread a(caller), b(caller);
        a.join();
        b.join();
        QCOMPARE(sum.load(), 2L * 200 * 28);
    }

    void idleWorkersSleepAndWake() {
        ThreadPool pool(2, /*spinMicros=*/50);
        std::atomic<int> n{0};
        pool.run(2, [&](int, int) { n++; });
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // workers go to sleep
        pool.run(2, [&](int, int) { n++; });
        QCOMPARE(n.load(), 4);
    }

    void manySmallRuns() {
        ThreadPool pool(2);
        std::atomic<int> n{0};
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 20000; ++i) pool.run(2, [&](int, int) { n.fetch_add(1, std::memory_order_relaxed); });
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        QCOMPARE(n.load(), 40000);
        // Reported, not asserted: on a shared machine a descheduled worker costs milliseconds.
        qInfo("fork-join round trip: %.2f us", us / 20000);
    }
};

QTEST_GUILESS_MAIN(TestKernelsThreadPool)
#include "test_kernels_thread_pool.moc"
