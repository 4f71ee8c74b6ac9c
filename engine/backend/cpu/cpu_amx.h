// Whether this process may run Intel AMX tile instructions, decided once at start-up.
//
// A CPU that advertises AMX (cpuid leaf 7: AMX-TILE / AMX-INT8 / AMX-BF16) is not enough:
// - the OS must enable the tile state in XCR0 (bits 17 XTILECFG and 18 XTILEDATA);
// - Linux (5.16+) hands the 8 KiB tile state to a process only after it asks:
//   arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) (Documentation/arch/x86/xstate.rst);
// - some VMs advertise and enable it and still fault: llama.cpp's AMX path died with SIGILL on
//   the Sapphire Rapids VM the fixtures were made on (../shared/fixtures/README.md, "Third batch").
// So the last step runs a tiny tile program (ldtilecfg, tilezero, tilerelease) with SIGILL caught,
// and every failure leaves the AVX-512 / AVX2 kernels in charge with the reason recorded.
//
// There is no AMX matmul kernel yet: the machines this project is built and tested on (Zen 4)
// have no AMX, and a kernel that never ran is not shipped. The status is reported by
// `verdict devices` and `verdict bench`, and a future kernel asks amxStatus().usable().
// VERDICT_CPU_AMX=off turns it off; VERDICT_CPU_AMX=deny makes the permission request fail as a
// kernel that refuses it would (to test the fallback end to end).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace verdict::cpu {

enum class AmxState {
    Absent,         // the CPU does not advertise AMX-TILE and AMX-INT8 (or this is not x86-64)
    NotEnabledByOs, // XCR0 lacks the tile state: the kernel or hypervisor does not enable it
    NotPermitted,   // arch_prctl(ARCH_REQ_XCOMP_PERM) failed (old kernel, seccomp, VERDICT_CPU_AMX=deny)
    Faults,         // the probe tile program raised SIGILL
    Off,            // VERDICT_CPU_AMX=off
    Usable,
};

struct AmxStatus {
    AmxState state = AmxState::Absent;
    std::string detail;  // why, in words (errno text, which XCR0 bits are missing, ...)
    bool usable() const { return state == AmxState::Usable; }
};

// The steps of the detection, replaceable so tests can walk every path.
struct AmxProbe {
    bool (*advertised)() = nullptr;         // cpuid says AMX-TILE and AMX-INT8
    uint64_t (*xcr0)() = nullptr;           // xgetbv(0)
    int (*requestPermission)() = nullptr;   // 0, or the errno of a refused request
    bool (*tileProgram)() = nullptr;        // runs the tile program; false if it raised SIGILL
};

// The real steps of this machine.
AmxProbe systemAmxProbe();
// Runs the steps in order and stops at the first that fails; `env` is VERDICT_CPU_AMX's value.
AmxStatus detectAmx(const AmxProbe& probe, std::string_view env = {});
// detectAmx(systemAmxProbe(), getenv("VERDICT_CPU_AMX")), once per process.
const AmxStatus& amxStatus();
std::string_view amxStateName(AmxState state);

// Runs fn() with SIGILL caught for the calling thread: false if fn raised SIGILL (fn is then
// abandoned where it faulted, so it must own nothing that needs cleaning up). A SIGILL of another
// thread meanwhile still ends the process as it would without this.
bool runCatchingSigill(void (*fn)());

}  // namespace verdict::cpu
