// AMX detection (backend/cpu/cpu_amx.h): every step's failure leads to a state with a reason and
// never to a crash. The steps are replaced by fakes to walk each path; the SIGILL guard runs a
// real illegal instruction (ud2); the real detection of this machine must answer too.
#include "backend/cpu/cpu_amx.h"

#include <QtTest/QtTest>

#include <cerrno>
#include <csignal>
#include <cstring>

using namespace verdict::cpu;

namespace {

int g_permissionCalls = 0;
int g_tileCalls = 0;
int g_permissionErrno = 0;
bool g_tileWorks = true;
uint64_t g_xcr0 = 0x60207;  // x87, SSE, AVX, opmask/zmm state, and the tile state (bits 17, 18)

bool yes() { return true; }
bool no() { return false; }
uint64_t xcr0() { return g_xcr0; }
int permission() {
    ++g_permissionCalls;
    return g_permissionErrno;
}
bool tileProgram() {
    ++g_tileCalls;
    return g_tileWorks;
}

AmxProbe fake() { return AmxProbe{yes, xcr0, permission, tileProgram}; }

void illegalInstruction() {
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("ud2");
#else
    std::raise(SIGILL);
#endif
}

int g_counter = 0;
void legal() { ++g_counter; }

}  // namespace

class TestCpuAmx : public QObject {
    Q_OBJECT

private slots:
    void init() {
        g_permissionCalls = g_tileCalls = 0;
        g_permissionErrno = 0;
        g_tileWorks = true;
        g_xcr0 = 0x60207;
    }

    void everyStepUsable() {
        const AmxStatus s = detectAmx(fake());
        QCOMPARE(s.state, AmxState::Usable);
        QVERIFY(s.usable());
        QCOMPARE(g_permissionCalls, 1);
        QCOMPARE(g_tileCalls, 1);
    }

    void notAdvertised() {
        AmxProbe p = fake();
        p.advertised = no;
        const AmxStatus s = detectAmx(p);
        QCOMPARE(s.state, AmxState::Absent);
        QVERIFY(!s.usable());
        QCOMPARE(g_permissionCalls + g_tileCalls, 0);
        QCOMPARE(detectAmx(AmxProbe{}).state, AmxState::Absent);  // no steps at all (not x86-64)
    }

    void osLacksTileState() {
        g_xcr0 = 0x207;  // AVX-512 state but no XTILECFG / XTILEDATA
        const AmxStatus s = detectAmx(fake());
        QCOMPARE(s.state, AmxState::NotEnabledByOs);
        QVERIFY2(s.detail.find("0x207") != std::string::npos, s.detail.c_str());
        QCOMPARE(g_permissionCalls + g_tileCalls, 0);
        g_xcr0 = 0x20207;  // only one of the two bits
        QCOMPARE(detectAmx(fake()).state, AmxState::NotEnabledByOs);
    }

    // The kernel refuses the tile state: no tile instruction runs, the reason names the errno.
    void permissionRefused() {
        g_permissionErrno = EPERM;
        const AmxStatus s = detectAmx(fake());
        QCOMPARE(s.state, AmxState::NotPermitted);
        QVERIFY2(s.detail.find("ARCH_REQ_XCOMP_PERM") != std::string::npos, s.detail.c_str());
        QVERIFY2(s.detail.find(std::strerror(EPERM)) != std::string::npos, s.detail.c_str());
        QCOMPARE(g_tileCalls, 0);
        g_permissionErrno = EINVAL;  // a kernel older than 5.16 answers EINVAL
        QCOMPARE(detectAmx(fake()).state, AmxState::NotPermitted);
    }

    // VERDICT_CPU_AMX=deny: the forced "not permitted" path, without asking the kernel.
    void forcedDeny() {
        const AmxStatus s = detectAmx(fake(), "deny");
        QCOMPARE(s.state, AmxState::NotPermitted);
        QVERIFY2(s.detail.find("VERDICT_CPU_AMX=deny") != std::string::npos, s.detail.c_str());
        QCOMPARE(g_permissionCalls, 0);
        QCOMPARE(g_tileCalls, 0);
        QCOMPARE(detectAmx(fake(), "off").state, AmxState::Off);
        QCOMPARE(detectAmx(fake(), "something else").state, AmxState::Usable);  // unknown values are ignored
    }

    void tileProgramFaults() {
        g_tileWorks = false;
        const AmxStatus s = detectAmx(fake());
        QCOMPARE(s.state, AmxState::Faults);
        QVERIFY2(s.detail.find("SIGILL") != std::string::npos, s.detail.c_str());
    }

    // A real SIGILL is caught, the process goes on, and the previous handler is back afterwards.
    void sigillIsCaught() {
        struct sigaction before {};
        sigaction(SIGILL, nullptr, &before);
        QVERIFY(!runCatchingSigill(illegalInstruction));
        QVERIFY(!runCatchingSigill(illegalInstruction));  // the mask was restored: a second one is caught too
        g_counter = 0;
        QVERIFY(runCatchingSigill(legal));
        QCOMPARE(g_counter, 1);
        struct sigaction after {};
        sigaction(SIGILL, nullptr, &after);
        QVERIFY(after.sa_handler == before.sa_handler);
        // The guarded probe, as the detection uses it, with a program that faults.
        AmxProbe p = fake();
        p.tileProgram = [] { return runCatchingSigill(illegalInstruction); };
        QCOMPARE(detectAmx(p).state, AmxState::Faults);
    }

    // This machine's answer: any state, with a reason, and the same answer twice.
    void thisMachine() {
        const AmxStatus& s = amxStatus();
        QVERIFY(!s.detail.empty());
        QVERIFY(&amxStatus() == &s);
        qInfo("AMX on this machine: %s (%s)", std::string(amxStateName(s.state)).c_str(), s.detail.c_str());
        // Where the CPU or the OS does not allow AMX, the real tile program faults (#UD, or SIGILL
        // from the kernel without permission) and the guard turns that into "false". ("off" is a
        // choice, not a fault: there the program may well run.)
        const AmxProbe real = systemAmxProbe();
        if (!s.usable() && s.state != AmxState::Off && real.tileProgram) QVERIFY(!real.tileProgram());
        // The real steps with the forced refusal: never usable, never a crash.
        const AmxStatus denied = detectAmx(systemAmxProbe(), "deny");
        QVERIFY(!denied.usable());
        QVERIFY(denied.state == AmxState::Absent || denied.state == AmxState::NotEnabledByOs ||
                denied.state == AmxState::NotPermitted);
    }
};

QTEST_GUILESS_MAIN(TestCpuAmx)
#include "test_cpu_amx.moc"
