// Parameters of text generation: sampling and stopping.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict {

// Token sampling. temperature <= 0 is greedy (argmax, lowest id wins ties) and ignores the
// rest. Otherwise the chain is llama.cpp's default order: penalties, top-k, top-p, min-p,
// temperature, then a draw from the seeded generator (same seed, same model, same prompt ->
// same tokens).
struct SamplingParams {
    float temperature = 0.8f;     // logits are divided by this; <= 0: greedy
    int32_t topK = 40;            // keep the k most likely tokens; <= 0: all
    float topP = 0.95f;           // keep the smallest set whose probability reaches p; >= 1: off
    float minP = 0.05f;           // drop tokens below minP * p(most likely); <= 0: off
    float repeatPenalty = 1.0f;   // divides positive (multiplies negative) logits of recent tokens; 1: off
    float frequencyPenalty = 0.0f;  // subtracts count(token) * this from recent tokens' logits
    float presencePenalty = 0.0f;   // subtracts this from every recent token's logit
    int32_t penaltyLastN = 64;    // how many recent tokens the penalties look at; -1: all
    uint64_t seed = 0;            // random generator seed

    static SamplingParams greedy() {
        SamplingParams p;
        p.temperature = 0.0f;
        return p;
    }
};

enum class StopReason {
    MaxTokens,   // generated maxTokens tokens
    Eos,         // the model produced an end-of-generation token (and stopAtEos was set)
    StopString,  // the text contains one of the stop strings
    Callback,    // onToken returned false
    ContextFull, // no room left in the session's context
};

struct GenerateConfig {
    int32_t maxTokens = 128;              // upper bound of generated tokens
    SamplingParams sampling;
    bool stopAtEos = true;                // stop at EOS/EOT (the EOG token is kept in `tokens`)
    std::vector<std::string> stopStrings; // stop when the generated text contains one (text is cut before it)
    // Control tokens' texts ("<|channel|>", "[TOOL_CALLS]") are kept in the text, as a tool-call
    // parser needs them; by default they produce no text. An end-of-generation token never does.
    bool renderSpecialTokens = false;
    // Called after every generated token with its text piece; return false to stop.
    std::function<bool(int32_t token, std::string_view piece)> onToken;
};

}  // namespace verdict
