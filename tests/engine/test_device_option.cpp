// ModelOptions::device: the accepted spellings, a clear error for anything else, and a GPU request
// that cannot be served (no CUDA backend, no driver, no such device) failing with the reason
// instead of crashing or silently running on the CPU.
#include "fixtures.h"
#include "verdict/engine/devices.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <QtTest/QtTest>

using namespace verdict;

class TestDeviceOption : public QObject {
    Q_OBJECT
private slots:
    void parse() {
        QCOMPARE(*parseDeviceIndex("cpu"), -1);
        QCOMPARE(*parseDeviceIndex(""), -1);
        QCOMPARE(*parseDeviceIndex("cuda"), 0);
        QCOMPARE(*parseDeviceIndex("cuda:0"), 0);
        QCOMPARE(*parseDeviceIndex("cuda:3"), 3);
        for (const char* bad : {"gpu0", "cuda:", "cuda:-1", "cuda:x", "cuda:1x", "CPU ", "metal", "cuda:99999"}) {
            auto r = parseDeviceIndex(bad);
            QVERIFY2(!r, bad);
            QVERIFY(r.error().message.find(bad) != std::string::npos);
        }
    }

    void cpuByDefault() {
        const auto path = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(path);
        auto m = Model::open(path.string());
        QVERIFY(m.ok());
        QCOMPARE((*m)->device(), std::string("cpu"));
        QVERIFY(!(*m)->deviceName().empty());
        auto s = Session::create(*m);
        QVERIFY(s.ok());
        const MemoryUse u = (*s)->memoryUse();
        QCOMPARE(u.device, std::string("cpu"));
        QCOMPARE(u.vramWeightsBytes + u.vramKvBytes + u.vramScratchBytes + u.vramPeakBytes, uint64_t(0));
    }

    void badDeviceFailsBeforeLoading() {
        ModelOptions o;
        o.device = "tpu";
        auto m = Model::open("/nonexistent/model.gguf", o);  // the device is checked first
        QVERIFY(!m);
        QVERIFY2(m.error().message.find("unknown device \"tpu\"") != std::string::npos, m.error().message.c_str());
    }

    // In CI (nvcc, no GPU) and in CPU-only builds this must be a clean error that says why; on a
    // machine with a GPU it opens the model there.
    void cudaWithoutGpuIsAnError() {
        const auto path = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(path);
        ModelOptions o;
        o.device = "cuda:0";
        auto m = Model::open(path.string(), o);
        const DeviceList list = listDevices();
        if (list.devices.size() > 1) {
            QVERIFY2(m.ok(), m ? "" : m.error().message.c_str());
            QCOMPARE((*m)->device(), std::string("cuda:0"));
            return;
        }
        QVERIFY(!m);
        const std::string& msg = m.error().message;
        QVERIFY2(msg.find(path.string()) != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("CUDA") != std::string::npos, msg.c_str());
        qInfo("%s", msg.c_str());
    }
};

QTEST_GUILESS_MAIN(TestDeviceOption)
#include "test_device_option.moc"
