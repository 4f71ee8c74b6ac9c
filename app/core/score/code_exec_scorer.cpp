#include "core/score/code_exec.h"
#include "core/score/process_sandbox.h"
#include "core/score/scorer_factories.h"

#include <csignal>
#include <sstream>

namespace verdict::core {

std::string extractCode(std::string_view output) {
    const size_t fence = output.find("```");
    if (fence == std::string_view::npos) return std::string(output);
    const size_t lineEnd = output.find('\n', fence);
    if (lineEnd == std::string_view::npos) return std::string(output);
    const size_t close = output.find("```", lineEnd + 1);
    return std::string(output.substr(lineEnd + 1, close == std::string_view::npos ? std::string_view::npos : close - lineEnd - 1));
}

namespace {
std::string metaText(const SuiteItem& item, const char* key) {
    auto it = item.metadata.find(key);
    return it != item.metadata.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool definesFunction(const std::string& code, const std::string& name) {
    for (size_t at = code.find("def " + name); at != std::string::npos; at = code.find("def " + name, at + 1)) {
        size_t p = at + 4 + name.size();
        while (p < code.size() && code[p] == ' ') ++p;
        if (p < code.size() && code[p] == '(') return true;
    }
    return false;
}
}  // namespace

Result<std::string> buildTestProgram(const SuiteItem& item, const std::string& output) {
    const std::string test = metaText(item, "test");
    const std::string entry = metaText(item, "entry_point");
    if (!test.empty() && !entry.empty()) {  // HumanEval
        const std::string code = extractCode(output);
        std::string program;
        if (definesFunction(code, entry)) program = item.prompt + "\n    pass\n\n" + code;  // keeps the prompt's imports
        else if (code.size() != output.size()) program = item.prompt + code;               // fenced body only
        else program = item.prompt + output;                                                 // a raw completion
        return program + "\n\n" + test + "\n\ncheck(" + entry + ")\n";
    }
    if (auto it = item.metadata.find("test_list"); it != item.metadata.end() && it->is_array()) {  // MBPP
        std::string program;
        if (auto imp = item.metadata.find("test_imports"); imp != item.metadata.end() && imp->is_array())
            for (const auto& line : *imp)
                if (line.is_string()) program += line.get<std::string>() + "\n";
        program += extractCode(output) + "\n\n" + metaText(item, "test_setup_code") + "\n";
        for (const auto& t : *it)
            if (t.is_string()) program += t.get<std::string>() + "\n";
        return program;
    }
    if (!test.empty()) return extractCode(output) + "\n\n" + test + "\n";
    return Error{"item " + item.id + " carries no tests (needs test + entry_point, or test_list)"};
}

double passAtK(int n, int c, int k) {
    if (n <= 0 || k <= 0 || c <= 0) return 0.0;
    if (n - c < k) return 1.0;
    double prod = 1.0;  // C(n-c,k)/C(n,k) = prod_{i=n-c+1..n} (1 - k/i)
    for (int i = n - c + 1; i <= n; ++i) prod *= 1.0 - double(k) / double(i);
    return 1.0 - prod;
}

namespace scorers {
namespace {

std::string lastLine(const std::string& text) {
    size_t end = text.find_last_not_of("\n ");
    if (end == std::string::npos) return "";
    const size_t start = text.rfind('\n', end);
    return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
}

class CodeExecScorer : public Scorer {
public:
    CodeExecScorer(SandboxLimits limits, ScorerOptions options) : m_limits(limits), m_options(std::move(options)) {}
    std::string name() const override { return "code_exec"; }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        if (!m_options.allowCodeExecution) {
            r.detail = "code execution is off (opt-in: enable it to run model code in the sandbox)";
            return r;
        }
        auto program = buildTestProgram(item, output);
        if (!program) {
            r.detail = program.error().message;
            return r;
        }
        r.extracted = extractCode(output);
        auto run = runSandboxed({m_options.python, "-I", "-B", "program.py"}, {{"program.py", *program}}, m_limits);
        if (!run) {
            r.detail = run.error().message;
            return r;
        }
        std::ostringstream os;
        os.precision(3);
        if (run->timedOut) {
            os << "timed out after " << m_limits.wallSeconds << " s";
        } else if (run->signal != 0) {
            os << "killed by signal " << run->signal << (run->signal == SIGXCPU || run->signal == SIGKILL ? " (CPU limit?)" : "");
        } else if (run->exitCode == 0) {
            r.pass = true;
            r.score = 1.0;
            os << "tests passed in " << run->wallSeconds << " s";
        } else {
            const std::string why = lastLine(run->stderrText);
            os << "exit " << run->exitCode << (why.empty() ? "" : ": " + why);
        }
        if (!run->networkIsolated) os << "; network NOT isolated (unshare(CLONE_NEWNET) not permitted here)";
        r.detail = os.str();
        return r;
    }

private:
    SandboxLimits m_limits;
    ScorerOptions m_options;
};

}  // namespace

Made makeCodeExec(const nlohmann::json& params, const ScorerOptions& options) {
    auto lang = stringParam(params, "code_exec", "language", "python");
    if (!lang) return lang.error();
    if (*lang != "python") return Error{"code_exec: only language \"python\" is supported, not \"" + *lang + "\""};
    auto timeout = numberParam(params, "code_exec", "timeout_s", 10.0);
    if (!timeout) return timeout.error();
    auto cpu = numberParam(params, "code_exec", "cpu_s", *timeout);
    if (!cpu) return cpu.error();
    auto mem = numberParam(params, "code_exec", "memory_mb", 1024.0);
    if (!mem) return mem.error();
    if (*timeout <= 0 || *cpu < 1 || *mem < 16) return Error{"code_exec: timeout_s > 0, cpu_s >= 1 and memory_mb >= 16 are required"};
    SandboxLimits lim;
    lim.wallSeconds = *timeout;
    lim.cpuSeconds = int(*cpu + 0.5);
    lim.memoryBytes = uint64_t(*mem) << 20;
    return std::unique_ptr<Scorer>(std::make_unique<CodeExecScorer>(lim, options));
}

}  // namespace scorers
}  // namespace verdict::core
