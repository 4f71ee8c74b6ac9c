#include "backend/cpu/cpu_amx.h"

#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace verdict::cpu {
namespace {

// Facts of the x86 ABI and Linux uapi (asm/prctl.h, xstate numbering in the SDM, vol. 1, 13.1).
constexpr uint64_t kXcr0TileCfg = uint64_t{1} << 17;
constexpr uint64_t kXcr0TileData = uint64_t{1} << 18;
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtileData = 18;

thread_local sigjmp_buf* t_jump = nullptr;
std::mutex g_sigillMutex;

extern "C" void onSigill(int sig) {
    if (t_jump) siglongjmp(*t_jump, 1);
    // Another thread's SIGILL: take the default action, as without runCatchingSigill (the
    // instruction runs again on return and now ends the process).
    std::signal(sig, SIG_DFL);
}

#if defined(__x86_64__)
bool cpuAdvertisesAmx() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool tile = (d >> 24) & 1u, int8 = (d >> 25) & 1u;
    return tile && int8;
}

uint64_t readXcr0() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1u)) return 0;  // no OSXSAVE: no xgetbv
    uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t{hi} << 32) | lo;
}

int requestTilePermission() {
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtileData) == 0) return 0;
    return errno != 0 ? errno : EPERM;
}

// Palette 1 with tile 0 as one row of 4 bytes: the smallest valid configuration (SDM vol. 1,
// 3.2: 64-byte config, palette at byte 0, colsb of tile i at 16 + 2i, rows of tile i at 48 + i).
__attribute__((target("amx-tile"))) void tileProgramBody() {
    alignas(64) unsigned char config[64] = {};
    config[0] = 1;
    config[16] = 4;
    config[48] = 1;
    _tile_loadconfig(config);
    _tile_zero(0);
    _tile_release();
}

bool runTileProgram() { return runCatchingSigill(tileProgramBody); }
#endif

}  // namespace

bool runCatchingSigill(void (*fn)()) {
    std::lock_guard lock(g_sigillMutex);
    struct sigaction handler {}, previous {};
    handler.sa_handler = onSigill;
    sigemptyset(&handler.sa_mask);
    sigaction(SIGILL, &handler, &previous);
    sigjmp_buf jump;
    volatile bool completed = false;
    if (sigsetjmp(jump, 1) == 0) {  // 1: the signal mask comes back with the jump
        t_jump = &jump;
        fn();
        completed = true;
    }
    t_jump = nullptr;
    sigaction(SIGILL, &previous, nullptr);
    return completed;
}

AmxProbe systemAmxProbe() {
    AmxProbe p;
#if defined(__x86_64__)
    p.advertised = cpuAdvertisesAmx;
    p.xcr0 = readXcr0;
    p.requestPermission = requestTilePermission;
    p.tileProgram = runTileProgram;
#endif
    return p;
}

AmxStatus detectAmx(const AmxProbe& probe, std::string_view env) {
    if (env == "off") return {AmxState::Off, "turned off by VERDICT_CPU_AMX=off"};
    if (!probe.advertised || !probe.advertised()) return {AmxState::Absent, "the CPU does not advertise AMX-TILE and AMX-INT8"};
    const uint64_t xcr0 = probe.xcr0 ? probe.xcr0() : 0;
    if ((xcr0 & (kXcr0TileCfg | kXcr0TileData)) != (kXcr0TileCfg | kXcr0TileData)) {
        char hex[32];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(xcr0));
        return {AmxState::NotEnabledByOs,
                std::string("the OS does not enable the tile state (XCR0 = ") + hex + ", bits 17 and 18 needed)"};
    }
    const bool deny = env == "deny";
    const int err = deny ? EPERM : (probe.requestPermission ? probe.requestPermission() : ENOSYS);
    if (err != 0)
        return {AmxState::NotPermitted, std::string("arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) failed: ") + std::strerror(err) +
                                            (deny ? " (forced by VERDICT_CPU_AMX=deny)" : "")};
    if (!probe.tileProgram || !probe.tileProgram())
        return {AmxState::Faults, "a tile instruction raised SIGILL although AMX is advertised, enabled and permitted"};
    return {AmxState::Usable, "AMX-TILE and AMX-INT8 usable"};
}

const AmxStatus& amxStatus() {
    static const AmxStatus status = [] {
        const char* env = std::getenv("VERDICT_CPU_AMX");
        return detectAmx(systemAmxProbe(), env ? std::string_view(env) : std::string_view());
    }();
    return status;
}

std::string_view amxStateName(AmxState state) {
    switch (state) {
        case AmxState::Absent: return "absent";
        case AmxState::NotEnabledByOs: return "not_enabled_by_os";
        case AmxState::NotPermitted: return "not_permitted";
        case AmxState::Faults: return "faults";
        case AmxState::Off: return "off";
        case AmxState::Usable: return "usable";
    }
    return "?";
}

}  // namespace verdict::cpu
