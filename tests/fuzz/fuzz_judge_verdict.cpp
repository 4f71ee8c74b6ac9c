// libFuzzer entry: whatever a judge model writes must be read without a crash, a hang or a
// guess (core/judge/judge_verdict.h). The input is the judge's output; it is read as a pairwise
// verdict and as a rubric score on the 1-10 scale.
//
// Promises checked: a verdict is one of the three choices; a score lies inside the scale; every
// error is one line without raw control bytes; a verdict found in the answer part is found again
// when the answer part alone is parsed (skipping reasoning is idempotent).
#include "core/judge/judge_verdict.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {
void checkErrorLine(const std::string& message) {
    for (unsigned char c : message)
        if (c < 0x20 || c == 0x7f) __builtin_trap();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    using namespace verdict::core;

    auto choice = parsePairwiseVerdict(text);
    if (choice) {
        const int v = static_cast<int>(*choice);
        if (v < 0 || v > 2) __builtin_trap();
    } else {
        checkErrorLine(choice.error().message);
    }

    auto score = parseRubricScore(text, 1, 10);
    if (score) {
        if (!(*score >= 1 && *score <= 10)) __builtin_trap();
    } else {
        checkErrorLine(score.error().message);
    }

    auto answer = judgeAnswerPart(text);
    if (answer) {
        // The answer part has no "</think>" left, so reading it again must agree.
        if (answer->find("</think>") == std::string_view::npos &&
            answer->find("<|channel|>final<|message|>") == std::string_view::npos) {
            auto again = parsePairwiseVerdict(*answer);
            if (choice.ok() && again.ok() && *again != *choice) __builtin_trap();
            if (choice.ok() != again.ok() && answer->find("<think>") == std::string_view::npos &&
                answer->find("<|channel|>analysis") == std::string_view::npos)
                __builtin_trap();
        }
    } else {
        checkErrorLine(answer.error().message);
        if (choice || score) __builtin_trap();  // unended reasoning is never a verdict
    }
    return 0;
}
