// What an OpenAI-compatible server sends back, read into plain values: one Server-Sent Events
// chunk of a streamed completion, a whole (non-streamed) completion, and the prompt logprobs of
// an echo request. Pure functions of the bytes, shared by the endpoint backend, the load runner
// and the fuzzer (tests/fuzz/fuzz_sse.cpp).
//
// Nothing here throws, whatever the server sent: a field of the wrong type counts as absent
// (a null "content", a "prompt_tokens" that is a string), never as a crash.
#pragma once

#include "verdict/engine/result.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core::net {

// Token counts of a "usage" object; each is nullopt when missing or not a number.
struct OpenAiUsage {
    std::optional<int64_t> promptTokens;
    std::optional<int64_t> completionTokens;   // includes reasoning tokens (OpenAI, DeepSeek)
    std::optional<int64_t> reasoningTokens;    // completion_tokens_details.reasoning_tokens, else reasoning_tokens
    std::optional<int64_t> cachedPromptTokens; // part of promptTokens served from cache: prompt_tokens_details.cached_tokens,
                                               // else prompt_cache_hit_tokens (DeepSeek), else cached_tokens
};

// A piece of a function call in choices[0].delta.tool_calls (streamed: the name and id come
// first, the arguments text in fragments, all keyed by `index`), or a whole call of a
// non-streamed message.tool_calls.
struct OpenAiToolCallPiece {
    int64_t index = 0;      // which call ("index"; its position in the list when absent)
    std::string id;
    std::string name;
    std::string arguments;  // text (an arguments object is serialised)
};

// One `data:` payload of a streamed /v1/completions or /v1/chat/completions response.
struct OpenAiStreamChunk {
    bool done = false;                // the "[DONE]" sentinel (nothing else is set)
    bool json = false;                // the payload is JSON
    bool object = false;              // ... and a JSON object (everything below needs one)
    std::optional<std::string> error;  // the "error" member, serialised as JSON
    std::optional<OpenAiUsage> usage;  // set when "usage" is an object
    bool hasChoice = false;           // "choices" is a non-empty array
    std::string piece;                // choices[0].delta.content (chat), else choices[0].text
    std::string reasoningPiece;       // choices[0].delta.reasoning_content (DeepSeek, vLLM), else .reasoning (OpenRouter, newer vLLM)
    std::optional<std::string> finishReason;  // choices[0].finish_reason when a string
    std::vector<OpenAiToolCallPiece> toolCalls;  // choices[0].delta.tool_calls
};
OpenAiStreamChunk parseOpenAiStreamChunk(std::string_view data);

// A non-streamed completion: the text of choices[0] (message.content for chat, else text;
// "" when it is null or not a string) and the usage. Error when the body is not JSON or has no
// non-empty "choices" array.
struct OpenAiCompletion {
    std::string text;
    std::string reasoning;            // message.reasoning_content, else message.reasoning
    std::optional<OpenAiUsage> usage;
    std::vector<OpenAiToolCallPiece> toolCalls;  // message.tool_calls
};
Result<OpenAiCompletion> parseOpenAiCompletion(std::string_view body);

// The prompt logprobs of a /v1/completions request with echo, logprobs 1 and max_tokens 1,
// split at byte `boundary` of the prompt (context | continuation) by the tokens' text_offset:
// the sum of the continuation tokens' logprobs, the token counts on each side, and whether each
// continuation token was the most likely one. Errors (messages without the URL) when the body
// holds no such logprobs, a continuation token has no logprob, or none starts in the continuation.
struct EchoLogprobs {
    double logprob = 0;
    int64_t contextTokens = 0;
    int64_t continuationTokens = 0;
    bool greedy = true;
};
Result<EchoLogprobs> parseEchoLogprobs(std::string_view body, size_t boundary);

}  // namespace verdict::core::net
