// libFuzzer entry: whatever an OpenAI-compatible server sends must be read without a crash, a
// hang or an absurd allocation: the Server-Sent Events framing (net::SseParser) with every event
// mapped as a stream chunk, and the whole body as a non-streamed completion and as the prompt
// logprobs of an echo request (core/net/openai_response.h).
//
// The first byte says how the rest arrives: its bits 0-3 (0-14) plus one is the size of the
// pieces it is fed in (15: all at once), as the network splits a stream anywhere; the whole byte
// times 4 is the context/continuation boundary of the logprobs split.
#include "core/net/http.h"
#include "core/net/openai_response.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const unsigned mode = data[0];
    const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);

    verdict::core::net::SseParser sse;
    std::string text;
    size_t events = 0;
    auto onEvent = [&](const std::string& event) {
        ++events;
        const auto c = verdict::core::net::parseOpenAiStreamChunk(event);
        if (c.done && (c.json || c.hasChoice)) __builtin_trap();  // [DONE] carries nothing else
        if (!c.object && (c.error || c.usage || c.hasChoice)) __builtin_trap();
        text += c.piece;
    };
    const size_t piece = (mode & 15) == 15 ? body.size() : (mode & 15) + 1;
    for (size_t at = 0; at < body.size(); at += piece) sse.feed(body.substr(at, piece), onEvent);
    // Every event ends with a blank line, so there are at most half as many events as bytes.
    if (events > body.size() / 2 + 1) __builtin_trap();

    auto completion = verdict::core::net::parseOpenAiCompletion(body);
    (void)completion;
    auto logprobs = verdict::core::net::parseEchoLogprobs(body, size_t(mode) * 4);
    if (logprobs && logprobs->continuationTokens <= 0) __builtin_trap();
    return 0;
}
