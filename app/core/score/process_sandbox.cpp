#include "core/score/process_sandbox.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace verdict::core {

namespace {

struct Fd {
    int fd = -1;
    Fd() = default;
    explicit Fd(int f) : fd(f) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }
    void reset() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

// Removes the directory tree when it goes out of scope.
struct TempDir {
    std::string path;
    ~TempDir() {
        if (!path.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    }
};

bool makePipe(Fd& r, Fd& w) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return false;
    r.fd = p[0];
    w.fd = p[1];
    return true;
}

// After fork, before exec: only async-signal-safe calls. Reports failures through `status`.
[[noreturn]] void childMain(const char* exe, char* const* argv, char* const* envp, const char* dir, int outFd, int errFd,
                            int nullFd, int statusFd, const SandboxLimits& lim) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    char net = '0';
    if (lim.isolateNetwork && ::unshare(CLONE_NEWNET) == 0) net = '1';
    (void)!::write(statusFd, &net, 1);
    ::dup2(nullFd, 0);
    ::dup2(outFd, 1);
    ::dup2(errFd, 2);
    ::dup2(statusFd, 3);
    ::fcntl(3, F_SETFD, FD_CLOEXEC);
    for (int fd = 4; fd < 1024; ++fd) ::close(fd);  // nothing of ours leaks into the program
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = rlim_t(lim.memoryBytes);
    ::setrlimit(RLIMIT_AS, &rl);
    rl.rlim_cur = rlim_t(lim.cpuSeconds);
    rl.rlim_max = rlim_t(lim.cpuSeconds + 1);
    ::setrlimit(RLIMIT_CPU, &rl);
    rl.rlim_cur = rl.rlim_max = rlim_t(lim.maxFileBytes);
    ::setrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = rl.rlim_max = 0;
    ::setrlimit(RLIMIT_CORE, &rl);
    rl.rlim_cur = rl.rlim_max = 64;
    ::setrlimit(RLIMIT_NOFILE, &rl);
    int err = 0;
    if (::chdir(dir) != 0) err = errno;
    else {
        ::execve(exe, argv, envp);
        err = errno;
    }
    (void)!::write(3, &err, sizeof err);
    ::_exit(127);
}

void drain(int fd, std::string& into, size_t cap, bool& truncated, bool& open) {
    char buf[8192];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
        if (n == 0 || (errno != EINTR && errno != EAGAIN)) open = false;
        return;
    }
    const size_t room = into.size() < cap ? cap - into.size() : 0;
    into.append(buf, std::min(size_t(n), room));
    if (size_t(n) > room) truncated = true;
}

}  // namespace

std::string resolveExecutable(const std::string& name) {
    if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : std::string();
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    for (;;) {
        const size_t colon = dirs.find(':', start);
        std::string candidate = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (candidate.empty()) candidate.push_back('.');  // an empty PATH entry means the current directory
        candidate += '/';
        candidate += name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    return "";
}

Result<SandboxResult> runSandboxed(const std::vector<std::string>& argvIn,
                                   const std::vector<std::pair<std::string, std::string>>& files,
                                   const SandboxLimits& limits) {
    if (argvIn.empty()) return Error{"sandbox: no program to run"};
    const std::string exe = resolveExecutable(argvIn[0]);
    if (exe.empty()) return Error{"sandbox: '" + argvIn[0] + "' not found on PATH"};

    TempDir tmp;
    {
        const char* base = std::getenv("TMPDIR");
        std::string templ = std::string(base && *base ? base : "/tmp") + "/verdict-exec-XXXXXX";
        std::vector<char> buf(templ.begin(), templ.end());
        buf.push_back('\0');
        if (!::mkdtemp(buf.data())) return Error{"sandbox: mkdtemp failed: " + std::string(std::strerror(errno))};
        tmp.path = buf.data();
    }
    for (const auto& [name, content] : files) {
        if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
            return Error{"sandbox: bad file name '" + name + "'"};
        std::ofstream f(tmp.path + "/" + name, std::ios::binary);
        f << content;
        if (!f) return Error{"sandbox: cannot write " + name + " in " + tmp.path};
    }

    // Everything the child needs is built before fork: after it, no allocation.
    std::vector<std::string> envStrings = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + tmp.path, "TMPDIR=" + tmp.path,
                                           "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0"};
    std::vector<char*> envp, argv;
    for (auto& s : envStrings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argStrings = argvIn;
    argStrings[0] = exe;
    for (auto& s : argStrings) argv.push_back(s.data());
    argv.push_back(nullptr);

    Fd outR, outW, errR, errW, stR, stW;
    if (!makePipe(outR, outW) || !makePipe(errR, errW) || !makePipe(stR, stW))
        return Error{"sandbox: pipe failed: " + std::string(std::strerror(errno))};
    Fd devNull(::open("/dev/null", O_RDONLY | O_CLOEXEC));

    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid < 0) return Error{"sandbox: fork failed: " + std::string(std::strerror(errno))};
    if (pid == 0)
        childMain(exe.c_str(), argv.data(), envp.data(), tmp.path.c_str(), outW.fd, errW.fd, devNull.fd, stW.fd, limits);
    ::setpgid(pid, pid);  // also from here, so the group exists before we might kill it
    outW.reset();
    errW.reset();
    stW.reset();

    SandboxResult res;
    char net = '0';
    if (::read(stR.fd, &net, 1) == 1) res.networkIsolated = net == '1';
    int execErr = 0;
    const bool execFailed = ::read(stR.fd, &execErr, sizeof execErr) == ssize_t(sizeof execErr);

    const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(limits.wallSeconds));
    bool outOpen = true, errOpen = true;
    int status = 0;
    bool reaped = false;
    while (!reaped) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            res.timedOut = true;
            ::kill(-pid, SIGKILL);
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            reaped = true;
            break;
        }
        const int waitMs = int(std::min<long long>(
            50, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1));
        if (outOpen || errOpen) {
            pollfd pfd[2] = {{outOpen ? outR.fd : -1, POLLIN, 0}, {errOpen ? errR.fd : -1, POLLIN, 0}};
            if (::poll(pfd, 2, waitMs) > 0) {
                if (pfd[0].revents) drain(outR.fd, res.stdoutText, limits.maxOutputBytes, res.outputTruncated, outOpen);
                if (pfd[1].revents) drain(errR.fd, res.stderrText, limits.maxOutputBytes, res.outputTruncated, errOpen);
            }
        } else {
            ::usleep(useconds_t(waitMs) * 1000);
        }
        const pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid) reaped = true;
    }
    // Whatever the program left running in its group goes too; then read what is still buffered.
    ::kill(-pid, SIGKILL);
    for (int i = 0; i < 64 && (outOpen || errOpen); ++i) {
        pollfd pfd[2] = {{outOpen ? outR.fd : -1, POLLIN, 0}, {errOpen ? errR.fd : -1, POLLIN, 0}};
        if (::poll(pfd, 2, 20) <= 0) break;
        if (pfd[0].revents) drain(outR.fd, res.stdoutText, limits.maxOutputBytes, res.outputTruncated, outOpen);
        if (pfd[1].revents) drain(errR.fd, res.stderrText, limits.maxOutputBytes, res.outputTruncated, errOpen);
    }
    res.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (execFailed) return Error{"sandbox: cannot run " + exe + ": " + std::strerror(execErr)};
    if (WIFEXITED(status)) res.exitCode = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
    return res;
}

}  // namespace verdict::core
