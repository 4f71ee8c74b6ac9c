// Token accounting of an endpoint (issue 20): the server's `usage` is preferred, and when the
// model's tokenizer is known (`--tokenizer FILE.gguf`: the model, or a vocabulary-only GGUF such
// as llama.cpp's ggml-vocab-*.gguf) the client counts too, as AIPerf does, so that a server whose
// counts drift from the model's tokenizer, one that sends no usage, and one that ignored
// max_tokens are seen. Definitions: docs/metrics.md, "Token accounting".
#pragma once

#include "verdict/engine/result.h"
#include "verdict/engine/text_tokenizer.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

class TokenCounter {
public:
    // Errors name the file (not a GGUF, no tokenizer).
    static Result<std::shared_ptr<const TokenCounter>> open(const std::string& path);

    // The prompt as the server tokenizes it. Chat: the user message rendered by the file's chat
    // template (special tokens parsed, BOS unless the rendering starts with it); without a
    // template the bare text (templated() is false: the server's count then includes a template
    // overhead this count lacks). Completions: the text with BOS as the vocabulary says.
    int64_t promptTokens(const std::string& prompt, bool chat) const;
    // Generated text: no BOS, special-token texts not parsed.
    int64_t outputTokens(const std::string& text) const;
    bool templated() const { return m_templated; }
    const std::string& path() const { return m_tok->path(); }

private:
    explicit TokenCounter(std::unique_ptr<TextTokenizer> tok);
    std::unique_ptr<TextTokenizer> m_tok;
    bool m_templated = false;  // the chat template renders (checked once at open)
};

// One request's counts; -1: not known (no usage field, or no tokenizer).
struct RequestTokens {
    int64_t usagePrompt = -1, usageOutput = -1;
    int64_t countedPrompt = -1, countedOutput = -1;
    int64_t chunks = 0;        // streamed pieces that carried text (each one token or more)
    int64_t maxTokens = 0;     // what the request asked for (0: no limit sent)
};

// (usage − counted) / counted × 100; nullopt when either is unknown or counted is 0.
std::optional<double> usageDiffPct(int64_t usage, int64_t counted);

// True when the server gave more tokens than max_tokens: its own usage above the limit, or, with
// no usage, more text-carrying chunks than the limit (each chunk holds at least one token).
bool exceededMaxTokens(const RequestTokens& t);

// Over the completed requests of a run or a load level.
struct TokenAccounting {
    int64_t requests = 0;         // completed requests considered
    int64_t withUsage = 0;        // of those, with usage.completion_tokens
    int64_t counted = 0;          // of those, counted with the tokenizer
    int64_t usagePrompt = 0, usageOutput = 0;      // sums over requests with usage and a count
    int64_t countedPrompt = 0, countedOutput = 0;  // sums over the same requests
    std::optional<double> promptDiffPct, outputDiffPct;  // usageDiffPct of the sums
    std::optional<double> outputDiffPctMaxAbs;           // the largest |per-request output diff %|
    int64_t discrepant = 0;       // requests whose |output diff %| > kDiscrepantPct
    int64_t exceededMaxTokens = 0;
    std::string tokenizer;        // the GGUF counted with ("" : none)
    bool promptTemplated = false; // the prompt count included the chat template
};

// A per-request output difference beyond this is counted as a discrepancy: a re-tokenized text
// can differ from the generated ids by a token or two (merges across piece boundaries), so small
// differences on short outputs are expected; 10 % is our threshold, not a standard.
constexpr double kDiscrepantPct = 10;

TokenAccounting accountTokens(const std::vector<RequestTokens>& requests, const TokenCounter* counter);

// {requests, with_usage, counted, usage: {prompt, output}, client: {prompt, output},
//  prompt_diff_pct, output_diff_pct, output_diff_pct_max_abs, discrepant, exceeded_max_tokens,
//  tokenizer, prompt_templated} (null for an unknown diff).
nlohmann::json toJson(const TokenAccounting& a);
// The inverse of toJson (stored load points); missing fields read as 0 / unknown.
TokenAccounting tokenAccountingFromJson(const nlohmann::json& j);
// One line for the CLI and the window: "usage on 98/100 requests; tokenizer ...: output −0.4 %, …".
std::string describe(const TokenAccounting& a);

}  // namespace verdict::core
