#include "core/judge/judge_verdict.h"

#include "core/suite/utf8_text.h"
#include "util/quote.h"

#include <charconv>
#include <optional>
#include <string>

namespace verdict::core {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kHarmonyFinal = "<|channel|>final<|message|>";
constexpr std::string_view kHarmonyAnalysis = "<|channel|>analysis";
// The longest text between "[[" and "]]" that can be a verdict ("  tie  ", " 10.0 "): longer
// brackets are prose or code, not a marker.
constexpr size_t kMaxMarkerBytes = 16;

// Calls fn(content, text) for each "[[content]]" in `text` whose content is at most
// kMaxMarkerBytes on one line; `text` is the marker with its brackets. Linear in the text.
template <class Fn>
void forEachMarker(std::string_view text, Fn fn) {
    size_t at = 0;
    while ((at = text.find("[[", at)) != std::string_view::npos) {
        size_t start = at + 2;
        // "[[[A]]": the marker starts at the last of a run of '['.
        while (start < text.size() && text[start] == '[') ++start;
        // Only a short window is searched for the closing brackets: linear however many "[[" come.
        const size_t close = text.substr(start, kMaxMarkerBytes + 2).find("]]");
        if (close != std::string_view::npos) {
            const std::string_view content = text.substr(start, close);
            if (content.find_first_of("[\n\r") == std::string_view::npos)
                fn(utf8::trim(content), text.substr(start - 2, close + 4));
        }
        at = start;
    }
}

// The score in a marker's content: digits, optionally '.' and digits; nullopt for anything else.
std::optional<double> scoreOf(std::string_view s) {
    if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
    size_t dots = 0;
    for (char c : s) {
        if (c == '.') ++dots;
        else if (c < '0' || c > '9') return std::nullopt;
    }
    if (dots > 1 || s.back() == '.') return std::nullopt;
    double v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

std::string fmtScore(double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

Error verdictError(const std::string& what) { return Error{util::oneLine("judge verdict: " + what)}; }

}  // namespace

const char* pairwiseChoiceName(PairwiseChoice c) {
    switch (c) {
        case PairwiseChoice::A: return "A";
        case PairwiseChoice::B: return "B";
        case PairwiseChoice::Tie: return "tie";
    }
    return "?";
}

Result<std::string_view> judgeAnswerPart(std::string_view output) {
    if (const size_t close = output.rfind(kThinkClose); close != std::string_view::npos)
        return output.substr(close + kThinkClose.size());
    if (const size_t first = output.find_first_not_of(" \t\r\n");
        first != std::string_view::npos && output.substr(first, kThinkOpen.size()) == kThinkOpen)
        return verdictError("the judge's reasoning never ended (\"<think>\" without \"</think>\"): "
                            "it ran out of tokens; give the judge more max tokens");
    if (const size_t fin = output.rfind(kHarmonyFinal); fin != std::string_view::npos)
        return output.substr(fin + kHarmonyFinal.size());
    if (output.find(kHarmonyAnalysis) != std::string_view::npos)
        return verdictError("the judge's reasoning never reached its final answer (a harmony \"analysis\" "
                            "channel and no \"final\" one): give the judge more max tokens");
    return output;
}

Result<PairwiseChoice> parsePairwiseVerdict(std::string_view output) {
    auto answer = judgeAnswerPart(output);
    if (!answer) return answer.error();
    std::optional<PairwiseChoice> found;
    std::string firstMarker, conflict;
    forEachMarker(*answer, [&](std::string_view content, std::string_view marker) {
        const std::string word = utf8::toLowerUtf8(content);
        std::optional<PairwiseChoice> c;
        if (word == "a") c = PairwiseChoice::A;
        else if (word == "b") c = PairwiseChoice::B;
        else if (word == "c" || word == "tie") c = PairwiseChoice::Tie;
        if (!c) return;
        if (!found) {
            found = c;
            firstMarker = std::string(marker);
        } else if (*found != *c && conflict.empty()) {
            conflict = std::string(marker);
        }
    });
    if (!conflict.empty())
        return verdictError("conflicting verdicts " + util::quoteFileText(firstMarker) + " and " +
                            util::quoteFileText(conflict) + " in the judge's answer: counted as unparseable");
    if (!found)
        return verdictError("no [[A]], [[B]] or [[C]] in the judge's answer " + util::quoteFileText(*answer));
    return *found;
}

Result<double> parseRubricScore(std::string_view output, double minScore, double maxScore) {
    auto answer = judgeAnswerPart(output);
    if (!answer) return answer.error();
    std::optional<double> found;
    std::optional<double> conflict;
    forEachMarker(*answer, [&](std::string_view content, std::string_view) {
        const auto v = scoreOf(content);
        if (!v) return;
        if (!found) found = v;
        else if (*found != *v && !conflict) conflict = v;
    });
    if (conflict)
        return verdictError("conflicting scores [[" + fmtScore(*found) + "]] and [[" + fmtScore(*conflict) +
                            "]] in the judge's answer: counted as unparseable");
    if (!found)
        return verdictError("no score \"[[n]]\" in the judge's answer " + util::quoteFileText(*answer));
    if (*found < minScore || *found > maxScore)
        return verdictError("score " + fmtScore(*found) + " is outside the scale " + fmtScore(minScore) + "-" +
                            fmtScore(maxScore));
    return *found;
}

}  // namespace verdict::core
