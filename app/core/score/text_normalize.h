// Text normalisation before comparing a model's answer with a reference.
//
// Steps, in this order, each switchable: full-width -> half-width (Ｂ -> B, １２３ -> 123, the
// ideographic space -> ' '); Chinese punctuation -> ASCII (。，、：；“”‘’《》【】… -> . , , : ; " " ' ' < > [ ] ...);
// punctuation removal (ASCII and CJK); case folding (ASCII, Latin-1/Extended-A, Greek, Cyrillic);
// English articles a/an/the removed (off by default, SQuAD-style); whitespace trimmed and
// collapsed to single spaces.
#pragma once

#include <verdict/engine/result.h>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace verdict::core {

struct NormalizeOptions {
    bool ignoreCase = true;   // "Paris" == "paris"
    bool whitespace = true;   // trim + collapse runs of whitespace
    bool punctuation = true;  // drop punctuation ("Paris." == "Paris")
    bool width = true;        // full-width ASCII variants -> ASCII
    bool zhPunct = true;      // Chinese punctuation -> ASCII counterparts
    bool articles = false;    // drop "a", "an", "the" as words

    static NormalizeOptions none() { return {false, false, false, false, false, false}; }
    // From scorer params: "normalize": false turns everything off; otherwise the keys
    // ignore_case, whitespace, punctuation, width, zh_punct, articles override the defaults.
    static Result<NormalizeOptions> fromParams(const nlohmann::json& params, const char* scorer);
};

std::string normalizeText(std::string_view text, const NormalizeOptions& options);

// Full-width -> half-width and Chinese punctuation -> ASCII only: what the numeric and letter
// extractors apply before looking for "１２３" or "答案：Ｂ".
std::string foldWidthAndPunctuation(std::string_view text);

}  // namespace verdict::core
