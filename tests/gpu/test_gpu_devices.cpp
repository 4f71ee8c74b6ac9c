// Device discovery: never fails without a driver; with a GPU, reports sane figures.
#include "verdict/engine/devices.h"

#include <QtTest/QtTest>

class TestGpuDevices : public QObject {
    Q_OBJECT
private slots:
    void cpuAlwaysListed() {
        auto list = verdict::listDevices();
        QVERIFY(!list.devices.empty());
        QCOMPARE(list.devices.front().id, std::string("cpu"));
        QVERIFY(list.devices.front().totalBytes > 0);
        QVERIFY(!list.cudaStatus.empty());
    }
    void cudaDevice() {
        auto list = verdict::listDevices();
        if (list.devices.size() < 2) QSKIP(("no CUDA device: " + list.cudaStatus).c_str());
        const auto& g = list.devices[1];
        QCOMPARE(g.kind, std::string("cuda"));
        QVERIFY(g.computeMajor >= 5);
        QVERIFY(g.totalBytes > 0 && g.freeBytes <= g.totalBytes);
    }
};

QTEST_GUILESS_MAIN(TestGpuDevices)
#include "test_gpu_devices.moc"
