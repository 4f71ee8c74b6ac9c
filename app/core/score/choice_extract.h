// Reading which option a model chose from its generated text, for multiple-choice suites scored
// by letter. Robust to the usual phrasings and to the usual traps:
//
//   "The answer is (B)", "Answer: B", "**B**", "B.", "(B) Paris", "答案：B", "答案是Ｂ", "选B"
//   "A is wrong; the answer is C" -> C (an explicit answer phrase beats a leading letter)
//   "A good choice would be C"    -> C ("A" followed by a lower-case word is the article)
//   "B or C"                      -> none (two different letters and no answer phrase)
//
// Rules, first that applies: last explicit answer phrase (English or Chinese); a letter at the
// very start; the output equal to one choice's text; a single distinct standalone letter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

struct ChoicePick {
    int index = -1;   // 0 = A; -1 = no choice found
    std::string how;  // which rule decided ("answer phrase", "leading letter", ...) or why none
};

ChoicePick extractChoice(std::string_view output, size_t numChoices, const std::vector<std::string>& choiceTexts = {});

}  // namespace verdict::core
