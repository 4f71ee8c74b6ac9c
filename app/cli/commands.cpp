#include "cli/commands.h"

#include "cli/device_option.h"
#include "core/services/service_result.h"
#include "util/quote.h"

#include <cstdio>
#include <iostream>

namespace verdict::cli {

const std::vector<Command>& commands() {
    static const std::vector<Command> kCommands = {
        {"info", "model card and memory estimate of a GGUF file", runInfo},
        {"generate", "generate text from a prompt with the built-in engine", runGenerate},
        {"logits", "logits of a token sequence at every position (parity checks)", runLogits},
        {"devices", "the CPU and CUDA GPUs the engine can use", runDevices},
        {"tokenize", "token ids and pieces of a text, as the model tokenizes it", runTokenize},
        {"template", "render a chat conversation with the model's chat template", runTemplate},
        {"make-model", "write a random-weight model of a given shape (benchmarks, tests)", runMakeModel},
        {"suite", "import, list and show test suites (suite import FILE, suite list, suite show NAME)", runSuite},
        {"run", "evaluate a model on a stored suite; resumable", runRun},
        {"results", "stored runs with accuracy and confidence intervals", runResults},
        {"delete", "delete stored runs or sweeps", runDelete},
        {"diff", "paired comparison of two runs of one suite (McNemar, bootstrap)", runDiff},
        {"export", "a run's items as CSV or JSON", runExport},
        {"verify", "check the results database's tamper-evident hash chain", runVerify},
        {"bench", "llama-bench's pp/tg speed tests on the built-in engine", runBench},
        {"perplexity", "perplexity over a text file; KL-divergence against a base model", runPerplexity},
        {"quant-compare", "one model in several quantized files vs a base: KLD, accuracy delta, throughput and P99 change, memory", runQuantCompare},
        {"sweep", "latency sweep (TTFT, TPOT, ITL, P50/P99, batch 1-32); sweep list/show/export", runSweep},
        {"serve", "OpenAI-compatible server over the engine with continuous batching", runServe},
        {"demo", "the bundled two-model comparison: suites, runs, sweeps and the decision report", runDemo},
        {"load", "load test an OpenAI-compatible endpoint (TTFT, ITL, P99, goodput)", runLoad},
        {"soak", "stability under hours of load: per-window latency, errors and server memory; drift per hour, burst jitter", runSoak},
        {"tco", "cost per 1M tokens, monthly and 3-year TCO, payback vs an API, from measured throughput", runTco},
        {"hardware", "the hardware catalog with sources (hardware list, hardware show ID)", runHardware},
        {"endpoints", "provider presets for endpoints with prices and sources (endpoints list, endpoints show ID)", runEndpoints},
        {"report", "the decision report of two runs as PDF, HTML or Markdown (accuracy, speed, cost, checklist)", runReport},
        {"discover", "GGUF models already on disk (LM Studio, Ollama, Hugging Face cache, GPT4All) with a fit badge", runDiscover},
        {"compare", "ask two models one prompt side by side; --vote stores which answer won", runCompare},
        {"votes", "stored comparison votes; --a/--b: wins, ties and win rate with a 95% interval", runVotes},
        {"judge", "judge two runs item by item: a judge model (pairwise, rubric) or you, blind; win rate, position bias, kappa", runJudge},
        {"rank", "Bradley-Terry ratings of several runs of one suite from their judgments, with bootstrap intervals", runRank},
    };
    return kCommands;
}

const Command* findCommand(const std::string& name) {
    for (const auto& c : commands())
        if (name == c.name) return &c;
    return nullptr;
}

int fail(const std::string& command, const std::string& message, int exitCode) {
    // One line, control characters escaped and cut at util::kMaxMessageBytes: a message may quote
    // a hostile file (terminal escapes, megabytes of text).
    std::cerr << "verdict " << command << ": " << util::oneLine(message) << "\n";
    return exitCode;
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

void printHelp(const std::string& usage, const std::string& optionsText) {
    std::cout << "usage: " << usage << "\n\noptions:\n" << optionsText;
}

int failService(const std::string& command, const core::ServiceError& e, const std::string& device) {
    switch (e.kind) {
    case core::ServiceFailure::BadInput: return fail(command, e.message, kExitBadInput);
    case core::ServiceFailure::Storage:
    case core::ServiceFailure::Runtime: return fail(command, e.message, kExitRuntime);
    case core::ServiceFailure::Cancelled: return fail(command, e.message, 130);
    case core::ServiceFailure::ModelOpen: break;
    }
    return fail(command, e.message, openFailureExitCode(device));
}

}  // namespace verdict::cli
