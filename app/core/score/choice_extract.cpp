#include "core/score/choice_extract.h"

#include "core/score/text_normalize.h"

#include <regex>
#include <set>

namespace verdict::core {

namespace {

constexpr size_t kMaxScan = 16384;  // std::regex recursion grows with input length; outputs past this are cut

bool isUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool isLower(char c) { return c >= 'a' && c <= 'z'; }
bool isAlpha(char c) { return isUpper(c) || isLower(c); }

// "A" / "I" used as a word: followed by a space and a lower-case word ("A good", "I think").
bool looksLikeWord(const std::string& s, size_t pos) {
    const char c = s[pos];
    if (c != 'A' && c != 'I') return false;
    size_t j = pos + 1;
    if (j < s.size() && s[j] == '\'') return true;  // I'm, I'd
    if (j >= s.size() || s[j] != ' ') return false;
    return j + 1 < s.size() && isLower(s[j + 1]);
}

// A lower-case letter counts as an option only when nothing word-like follows: "answer: b." yes,
// "answer is a bit" no.
bool closesLetter(const std::string& s, size_t j) {
    return j >= s.size() || s[j] == '.' || s[j] == ')' || s[j] == ']' || s[j] == ',' || s[j] == ':' || s[j] == '\n';
}

int letterIndex(char c, size_t n) {
    if (c >= 'a' && c <= 'z') c = char(c - 32);
    const int idx = c - 'A';
    return (idx >= 0 && size_t(idx) < n) ? idx : -1;
}

}  // namespace

ChoicePick extractChoice(std::string_view output, size_t numChoices, const std::vector<std::string>& choiceTexts) {
    ChoicePick pick;
    if (numChoices == 0) {
        pick.how = "item has no choices";
        return pick;
    }
    std::string text = foldWidthAndPunctuation(output.substr(0, kMaxScan));
    // Markdown emphasis and code ticks carry no meaning here: "**B**" is "B".
    std::string s;
    s.reserve(text.size());
    for (char c : text)
        if (c != '*' && c != '`' && c != '_') s.push_back(c);

    // 1. Explicit answer phrases; the last one wins (models restate after reasoning).
    static const std::regex kPhrases[] = {
        std::regex(R"((?:答案|正确答案|正確答案)\s*(?:应该是|應該是|应为|應為|是|为|為)?\s*[:]?\s*(?:选项|選項)?\s*\(?\[?([A-Za-z])\]?\)?)"),
        std::regex(R"((?:选择|选|選擇|選)\s*(?:选项|選項)?\s*\(?([A-Z])\)?)"),
        std::regex(R"(answer\s*(?:is|would be|should be|will be|=)?\s*(?:option|choice)?\s*[:]?\s*\(?\[?([A-Za-z])\]?\)?(?![A-Za-z]))",
                   std::regex::icase),
        std::regex(R"((?:option|choice)\s*\(?([A-Z])\)?\s*(?:is|would be)\s*(?:the\s*)?(?:correct|right|best))",
                   std::regex::icase),
        std::regex(R"((?:correct|right|best)\s*(?:option|choice|answer)?\s*(?:is|would be|:)\s*(?:option|choice)?\s*\(?([A-Z])\)?(?![A-Za-z]))",
                   std::regex::icase),
    };
    for (const auto& re : kPhrases) {
        int found = -1;
        for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it) {
            const auto& m = *it;
            const size_t pos = size_t(m.position(1));
            if (looksLikeWord(s, pos)) continue;  // "the answer is A good one"
            if (isLower(s[pos]) && !closesLetter(s, pos + 1)) continue;  // "the answer is a bit unclear"
            const int idx = letterIndex(s[pos], numChoices);
            if (idx >= 0) found = idx;
        }
        if (found >= 0) {
            pick.index = found;
            pick.how = "answer phrase";
            return pick;
        }
    }

    // Standalone capital letters in range (not the article "A" or the pronoun "I").
    std::set<int> seen;
    for (size_t i = 0; i < s.size(); ++i) {
        if (!isUpper(s[i])) continue;
        if (i > 0 && isAlpha(s[i - 1])) continue;
        if (i + 1 < s.size() && isAlpha(s[i + 1])) continue;
        if (looksLikeWord(s, i)) continue;
        const int idx = letterIndex(s[i], numChoices);
        if (idx >= 0) seen.insert(idx);
    }

    // 2. A letter at the very start: "B", "B.", "(B)", "B) Paris", "B: because ...". Followed by
    // a space it counts only when no other option letter appears ("B or C" is not an answer).
    {
        size_t i = 0;
        while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '"')) ++i;
        const bool paren = i < s.size() && (s[i] == '(' || s[i] == '[');
        if (paren) ++i;
        if (i < s.size() && isUpper(s[i]) && !looksLikeWord(s, i)) {
            const size_t after = i + 1;
            const bool delimited = after >= s.size() || s[after] == '.' || s[after] == ')' || s[after] == ']' ||
                                   s[after] == ':' || s[after] == ',' || s[after] == '\n';
            const bool spaced = after < s.size() && s[after] == ' ';
            const int idx = letterIndex(s[i], numChoices);
            if (idx >= 0 && (delimited || (spaced && seen.size() == 1))) {
                pick.index = idx;
                pick.how = "leading letter";
                return pick;
            }
        }
    }

    // 3. The output is one choice's text.
    if (!choiceTexts.empty()) {
        const NormalizeOptions norm;
        const std::string out = normalizeText(output, norm);
        for (size_t i = 0; i < choiceTexts.size() && i < numChoices; ++i)
            if (!out.empty() && normalizeText(choiceTexts[i], norm) == out) {
                pick.index = int(i);
                pick.how = "choice text";
                return pick;
            }
    }

    // 4. The standalone letters, only if they all agree.
    if (seen.size() == 1) {
        pick.index = *seen.begin();
        pick.how = "single letter";
        return pick;
    }
    pick.how = seen.empty() ? "no option letter found" : "ambiguous: several option letters and no answer phrase";
    return pick;
}

}  // namespace verdict::core
