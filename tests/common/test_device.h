// The device the engine tests open their models on: "cpu" unless VERDICT_TEST_DEVICE says
// otherwise (tests/gpu registers the CPU engine's golden tests again with cuda:0). A test run for a
// GPU skips, with the reason, where there is none: the `gpu` label's contract.
#pragma once

#include "verdict/engine/devices.h"

#include <QtTest/QtTest>

#include <cstdlib>
#include <string>

namespace verdict::test {

inline std::string testDevice() {
    const char* env = std::getenv("VERDICT_TEST_DEVICE");
    return env && *env ? env : "cpu";
}

// Empty when the device is usable, else why not.
inline std::string deviceMissing(const std::string& device) {
    if (device == "cpu") return {};
    const DeviceList list = listDevices();
    for (const DeviceInfo& d : list.devices)
        if (d.id == device || (device == "cuda" && d.kind == "cuda")) return {};
    return "no device " + device + " (" + list.cudaStatus + ")";
}

}  // namespace verdict::test

// Skips the test function when the device is not present.
#define VERDICT_NEED_DEVICE(device_)                                        \
    do {                                                                    \
        const std::string why_ = verdict::test::deviceMissing(device_);     \
        if (!why_.empty()) QSKIP(why_.c_str());                             \
    } while (0)
#define VERDICT_NEED_TEST_DEVICE() VERDICT_NEED_DEVICE(verdict::test::testDevice())
