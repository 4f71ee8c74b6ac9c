// ROUGE-L (Lin 2004): longest common subsequence of tokens. precision = LCS / |hypothesis|,
// recall = LCS / |reference|, f1 = 2PR / (P + R) — the "fmeasure" Google's rouge_score reports.
//
// Tokens: like rouge_score's default tokenizer (lower-case, split on anything that is not a
// letter or digit, punctuation dropped) but Unicode-aware, and every CJK character (Han, kana,
// Hangul) is a token of its own, so Chinese text is compared character by character (rouge_score
// would drop it entirely). No stemming.
//
// The "rouge_l" scorer: score = best f1 over the references, pass = score >= threshold (param,
// default 0.5); references from params value/values/reference, else the item's references.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

std::vector<std::string> rougeTokens(std::string_view text);

struct RougeScore {
    double precision = 0.0;
    double recall = 0.0;
    double f1 = 0.0;
};

RougeScore rougeL(std::string_view hypothesis, std::string_view reference);
size_t lcsLength(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace verdict::core
