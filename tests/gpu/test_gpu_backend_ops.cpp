// The CUDA backend's ops against the plain reference of tests/engine/backend_op_cases.h: the same
// cases and limits the CPU backend meets (test_backend_ops). Skips without a device.
#include "backend/cuda/cuda_backend.h"
#include "backend_op_cases.h"

#include <QtTest/QtTest>

using namespace verdict;

class TestGpuBackendOps : public QObject {
    Q_OBJECT
private slots:
    void everyOpMatchesTheReference();
};

void TestGpuBackendOps::everyOpMatchesTheReference() {
    auto be = cuda::openCudaBackend(0);
    if (!be) QSKIP(qPrintable("no CUDA device: " + QString::fromStdString(be.error().message)));
    const std::vector<test::OpCheck> checks = test::runBackendOpCases(*be.value());
    qInfo().noquote() << QString::fromStdString(be.value()->name()) << "\n"
                      << QString::fromStdString(test::summarize(checks));
    int failed = 0, skipped = 0;
    for (const auto& c : checks) {
        if (!c.skipped.empty()) {
            ++skipped;
            qInfo().noquote() << "not on this backend:" << QString::fromStdString(c.op + " " + c.params + ": " + c.skipped);
            continue;
        }
        if (c.ok()) continue;
        ++failed;
        qWarning().noquote() << QString::fromStdString(c.op + " " + c.params) << "error" << c.err << "limit" << c.limit
                             << QString::fromStdString(c.failure);
    }
    QCOMPARE(failed, 0);
}

QTEST_GUILESS_MAIN(TestGpuBackendOps)
#include "test_gpu_backend_ops.moc"
