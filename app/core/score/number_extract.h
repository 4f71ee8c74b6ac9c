// Finding numbers in model output the way graders of math suites need: "1,234" is 1234, "-3/4"
// is -0.75, "$12.50" is 12.5, "１２" (full-width) is 12, "50%" is 50; and the final answer is the
// first number after the last "####", "答案", "\boxed{", "answer is" or "answer:", else the last
// number in the text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

struct FoundNumber {
    double value = 0.0;
    std::string text;   // as matched, after width folding ("1,234", "-3/4")
    size_t offset = 0;  // byte offset in the folded text
};

// Every number in `text`, in order. Thousands separators count only in groups of exactly three
// digits after a first group of one to three ("1,234,567"); "1, 2" is two numbers. A '-' is a
// sign only when not directly after a letter or digit ("5-3" is 5 and 3). a/b with integer parts
// is one fraction.
std::vector<FoundNumber> findNumbers(std::string_view text);

// `text` as one number (surrounding spaces, '$' and a trailing '%' or '.' allowed), else nullopt.
std::optional<double> parseNumber(std::string_view text);

enum class NumberPick { Auto, Last, First };
// The answer number. Auto: after the last marker (####, 答案, \boxed{, "answer is", "answer:"),
// falling back to the last number. `how` (optional) says which rule picked it.
std::optional<FoundNumber> extractAnswerNumber(std::string_view text, NumberPick pick = NumberPick::Auto,
                                               std::string* how = nullptr);

}  // namespace verdict::core
