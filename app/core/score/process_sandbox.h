// Running an untrusted program (model-written code under test) in a child process with limits.
//
// Each run: fork, then in the child a new process group, PR_SET_PDEATHSIG (dies with us), a new
// empty network namespace (unshare(CLONE_NEWNET): no interfaces but a down loopback, so no
// network; needs CAP_SYS_ADMIN or unprivileged user namespaces — when refused the run goes on
// and SandboxResult::networkIsolated says so), its own fresh temp directory as cwd and HOME,
// rlimits (RLIMIT_AS memory, RLIMIT_CPU seconds, RLIMIT_FSIZE, RLIMIT_NOFILE, no core files),
// stdin from /dev/null, a minimal environment, then execve. The parent captures stdout/stderr
// (capped), enforces a wall-clock timeout by SIGKILL to the whole process group, and removes the
// temp directory afterwards.
//
// Not a security boundary against a determined attacker (no seccomp, no filesystem isolation
// beyond cwd): it keeps honest-but-buggy code from hanging, eating memory or reaching out.
#pragma once

#include <verdict/engine/result.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace verdict::core {

struct SandboxLimits {
    double wallSeconds = 10.0;             // SIGKILL to the process group after this
    int cpuSeconds = 10;                   // RLIMIT_CPU (SIGXCPU, then SIGKILL one second later)
    uint64_t memoryBytes = 1ull << 30;     // RLIMIT_AS (address space)
    uint64_t maxFileBytes = 16ull << 20;   // RLIMIT_FSIZE
    size_t maxOutputBytes = 1 << 20;       // captured per stream; the rest is read and dropped
    bool isolateNetwork = true;            // try unshare(CLONE_NEWNET)
};

struct SandboxResult {
    int exitCode = -1;            // when the child exited normally
    int signal = 0;               // when it was killed (SIGKILL on timeout, SIGXCPU/SIGKILL on CPU limit)
    bool timedOut = false;        // the wall-clock limit was hit
    bool outputTruncated = false;
    std::string stdoutText;
    std::string stderrText;
    double wallSeconds = 0.0;
    bool networkIsolated = false; // unshare(CLONE_NEWNET) succeeded in the child
};

// `files` are (name, content) written into the temp dir before the run; argv[0] is resolved on
// PATH when it has no '/'. Errors: the executable is missing, fork/pipe/mkdtemp failed.
Result<SandboxResult> runSandboxed(const std::vector<std::string>& argv,
                                   const std::vector<std::pair<std::string, std::string>>& files,
                                   const SandboxLimits& limits);

// PATH lookup like execvp's; "" when not found.
std::string resolveExecutable(const std::string& name);

}  // namespace verdict::core
