// Code execution scoring: program layout, pass/fail on HumanEval/MBPP-shaped items, and the
// sandbox limits actually enforced (wall timeout, memory, CPU, network, temp dir, opt-in).
#include "core/score/code_exec.h"
#include "core/score/process_sandbox.h"
#include "core/score/scorer.h"
#include "core/suite/suite_importer.h"
#include "fixtures.h"

#include <QtTest/QtTest>

#include <csignal>

#include <chrono>
#include <filesystem>

using namespace verdict::core;

namespace {
// Debian's own interpreter when present: a pyenv shim first on PATH costs ~1.5 s per start.
std::string python() { return resolveExecutable("/usr/bin/python3").empty() ? "python3" : "/usr/bin/python3"; }

SuiteItem humanEvalItem() {
    SuiteItem it;
    it.id = "he";
    it.prompt = "def add(a: int, b: int) -> int:\n    \"\"\"Return a + b.\"\"\"\n";
    it.metadata = {{"test", "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"},
                   {"entry_point", "add"}};
    return it;
}

ScoreResult runCode(const SuiteItem& item, const std::string& output, nlohmann::json params = nlohmann::json::object()) {
    ScorerOptions o;
    o.allowCodeExecution = true;
    o.python = python();
    auto s = makeScorer({"code_exec", std::move(params)}, o);
    if (!s.ok()) qFatal("%s", s.error().message.c_str());
    return (*s)->score(item, output);
}

#define NEED_PYTHON()                                                              \
    do {                                                                           \
        if (resolveExecutable("python3").empty()) QSKIP("python3 is not on PATH"); \
    } while (0)
}  // namespace

class TestScoreCodeExec : public QObject {
    Q_OBJECT
private slots:
    void programLayout() {
        const SuiteItem item = humanEvalItem();
        auto p = buildTestProgram(item, "    return a + b\n");
        QVERIFY(p.ok());
        QCOMPARE(*p, item.prompt + "    return a + b\n\n\n" + item.metadata["test"].get<std::string>() + "\n\ncheck(add)\n");
        // A whole fenced function replaces the body; the prompt stays first for its imports.
        auto fenced = buildTestProgram(item, "Sure:\n```python\ndef add(a, b):\n    return a + b\n```\n");
        QVERIFY(fenced.ok());
        QVERIFY(fenced->find("def add(a, b):\n    return a + b") != std::string::npos);
        QVERIFY(fenced->find("Sure:") == std::string::npos);
        QCOMPARE(extractCode("```\nx = 1\n```"), std::string("x = 1\n"));
        SuiteItem noTests;
        noTests.id = "n";
        QVERIFY(!buildTestProgram(noTests, "x").ok());
    }

    void optInOnly() {
        auto s = makeScorer({"code_exec", {}});  // allowCodeExecution defaults to false
        QVERIFY(s.ok());
        const auto r = (*s)->score(humanEvalItem(), "    return a + b\n");
        QVERIFY(!r.pass);
        QVERIFY(r.detail.find("opt-in") != std::string::npos);
        QVERIFY(!makeScorer({"code_exec", {{"language", "rust"}}}).ok());
    }

    void passAndFail() {
        NEED_PYTHON();
        const auto good = runCode(humanEvalItem(), "    return a + b\n");
        QVERIFY2(good.pass, good.detail.c_str());
        const auto wrong = runCode(humanEvalItem(), "    return a - b\n");
        QVERIFY(!wrong.pass);
        QVERIFY2(wrong.detail.find("AssertionError") != std::string::npos, wrong.detail.c_str());
        const auto syntax = runCode(humanEvalItem(), "    return a +\n");
        QVERIFY(!syntax.pass);
        QVERIFY2(syntax.detail.find("SyntaxError") != std::string::npos, syntax.detail.c_str());
    }

    void bundledSampleCanonicalSolutionsPass() {
        NEED_PYTHON();
        for (const char* file : {"suites/humaneval_sample.jsonl", "suites/mbpp_sample.jsonl"}) {
            auto suite = importSuite(verdict::test::testData(file).string());
            QVERIFY(suite.ok());
            for (const auto& item : suite->items) {
                const auto r = runCode(item, item.metadata["canonical_solution"].get<std::string>());
                QVERIFY2(r.pass, (item.id + ": " + r.detail).c_str());
            }
        }
    }

    void wallTimeoutEnforced() {
        NEED_PYTHON();
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = runCode(humanEvalItem(), "    import time\n    time.sleep(30)\n", {{"timeout_s", 1.0}});
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY(!r.pass);
        QVERIFY2(r.detail.find("timed out") != std::string::npos, r.detail.c_str());
        QVERIFY2(took < 10.0, std::to_string(took).c_str());
    }

    void memoryLimitEnforced() {
        NEED_PYTHON();
        const std::string hog = "    block = bytearray(400 * 1024 * 1024)\n    return a + b\n";
        const auto limited = runCode(humanEvalItem(), hog, {{"memory_mb", 128}});
        QVERIFY(!limited.pass);
        QVERIFY2(limited.detail.find("MemoryError") != std::string::npos, limited.detail.c_str());
        const auto roomy = runCode(humanEvalItem(), hog, {{"memory_mb", 2048}});
        QVERIFY2(roomy.pass, roomy.detail.c_str());  // the same code passes when the limit allows it
    }

    void cpuLimitEnforced() {
        NEED_PYTHON();
        SandboxLimits lim;
        lim.cpuSeconds = 1;
        lim.wallSeconds = 60;  // generous: only RLIMIT_CPU can stop it in time
        auto r = runSandboxed({python(), "-c", "while True: pass"}, {}, lim);
        QVERIFY(r.ok());
        QVERIFY(!r->timedOut);
        QVERIFY2(r->signal == SIGXCPU || r->signal == SIGKILL, std::to_string(r->signal).c_str());
    }

    void outputCapturedAndTempDirRemoved() {
        NEED_PYTHON();
        auto r = runSandboxed({python(), "-c", "import os,sys; print(os.getcwd()); print(open('in.txt').read(), file=sys.stderr)"},
                              {{"in.txt", "from a file"}}, SandboxLimits{});
        QVERIFY(r.ok());
        QCOMPARE(r->exitCode, 0);
        const std::string cwd = r->stdoutText.substr(0, r->stdoutText.find('\n'));
        QVERIFY2(cwd.find("verdict-exec-") != std::string::npos, cwd.c_str());
        QVERIFY(!std::filesystem::exists(cwd));  // cleaned up
        QCOMPARE(r->stderrText, std::string("from a file\n"));
        SandboxLimits small;
        small.maxOutputBytes = 100;
        auto big = runSandboxed({python(), "-c", "print('x' * 10000)"}, {}, small);
        QVERIFY(big.ok());
        QCOMPARE(big->stdoutText.size(), size_t(100));
        QVERIFY(big->outputTruncated);
    }

    void networkIsolated() {
        NEED_PYTHON();
        const char* probe =
            "import socket\n"
            "s = socket.socket()\n"
            "s.settimeout(3)\n"
            "try:\n"
            "    s.connect(('1.1.1.1', 80))\n"
            "    print('connected')\n"
            "except OSError as e:\n"
            "    print('blocked', e.errno)\n";
        auto r = runSandboxed({python(), "-c", probe}, {}, SandboxLimits{});
        QVERIFY(r.ok());
        if (!r->networkIsolated) QSKIP("unshare(CLONE_NEWNET) is not permitted here; code_exec reports it per result");
        QVERIFY2(r->stdoutText.rfind("blocked", 0) == 0, r->stdoutText.c_str());
    }

    void missingInterpreter() {
        auto r = runSandboxed({"no-such-python-xyz"}, {}, SandboxLimits{});
        QVERIFY(!r.ok());
        QVERIFY(r.error().message.find("not found") != std::string::npos);
    }

    void passAtKEstimator() {
        QVERIFY(std::fabs(passAtK(10, 3, 1) - 0.3) < 1e-12);
        QVERIFY(std::fabs(passAtK(10, 3, 5) - (1.0 - 21.0 / 252.0)) < 1e-12);  // 1 - C(7,5)/C(10,5)
        QCOMPARE(passAtK(5, 0, 1), 0.0);
        QCOMPARE(passAtK(5, 5, 2), 1.0);
        QCOMPARE(passAtK(5, 4, 2), 1.0);  // n - c < k: any 2 samples include a pass
    }
};

QTEST_GUILESS_MAIN(TestScoreCodeExec)
#include "test_score_code_exec.moc"
