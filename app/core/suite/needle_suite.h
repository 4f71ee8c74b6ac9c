// Needle-in-a-haystack suites (issue 22, long context): one fact (the needle) hidden at a given
// depth of a filler text cut to a given length in tokens, then a question only the needle
// answers. `verdict suite make needle` stores one; the runs' accuracy per (length, depth) is the
// heat map of core/stats/needle_grid.h. The recipe follows Kamradt's LLMTest_NeedleInAHaystack
// (depth = where in the context the needle sits, 0 % = first sentence, 100 % = last).
#pragma once

#include "core/suite/suite_item.h"

#include <verdict/engine/result.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

struct NeedleOptions {
    std::vector<int64_t> lengths;     // prompt lengths in tokens (each > 64)
    std::vector<double> depths;       // needle positions in percent, 0..100
    std::string haystack;             // filler text, split into sentences; "" = the built-in filler
    std::string haystackName = "built-in";  // recorded in each item's metadata
    int needlesPerCell = 1;           // items per (length, depth), each with its own needle
    uint64_t seed = 1;                // needles and built-in filler are drawn from it
    // Tokens of a text (the model's tokenizer, no BOS). Empty: estimated as bytes / 4, and the
    // items say so (metadata needle.token_count = "estimate").
    std::function<size_t(std::string_view)> countTokens;
};

// "1k" -> 1024, "4096" -> 4096, "128k" -> 131072; error naming the entry otherwise.
Result<std::vector<int64_t>> parseNeedleLengths(std::string_view list);
Result<std::vector<double>> parseNeedleDepths(std::string_view list);

// One item per (length, depth, needle): prompt = filler with the needle at the depth + question,
// at most `length` tokens; reference = the needle's code, scorer "contains"; category
// "LEN tokens @ DEPTH%"; metadata.needle = {context_tokens, depth_pct, prompt_tokens, token_count,
// haystack}. Fails for empty lists, lengths under 65 tokens, depths outside 0..100, or a
// haystack without a sentence.
Result<std::vector<SuiteItem>> makeNeedleSuite(const NeedleOptions& options);

// Any suite at several context lengths (issue 22, long context): each single-turn item again per
// length, its prompt after filler text that pads it to about `length` tokens ("Below is a long
// document unrelated to the task after it ..."), so the task itself sits at the end (depth 100 %).
// Choices, references, scorers and metadata are kept; id "ID@LEN"; category "LEN tokens";
// metadata.needle as for needle items ({context_tokens, depth_pct: 100, prompt_tokens,
// token_count, haystack, haystack_repeated}) so the runs get the same heat map, and
// metadata.padded = {item, category}: the original id and category. The length counts the
// padded prompt text only (a chat template, few-shot examples and choices come on top).
// Multi-turn items (messages) cannot be padded this way: an error names the first one. Uses
// options.lengths, haystack, haystackName, seed and countTokens (depths and needlesPerCell are
// not read). Fails for a length that cannot hold an item's prompt.
Result<std::vector<SuiteItem>> makePaddedSuite(const std::vector<SuiteItem>& items, const NeedleOptions& options);

}  // namespace verdict::core
