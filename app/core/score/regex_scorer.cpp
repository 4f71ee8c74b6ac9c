// "regex": ECMAScript regular expression (the dialect of promptfoo's JavaScript asserts).
// Params: pattern (required), ignore_case, group (a capture group number to extract; when set,
// the extracted text is compared with the item's references after normalisation), full (the
// whole output must match, default false = search).
// The output is searched up to its first 16 KiB: libstdc++'s std::regex recurses per character
// and deep recursion on long inputs is a stack overflow.
#include "core/score/scorer_factories.h"
#include "core/score/text_normalize.h"

#include <regex>

namespace verdict::core::scorers {

namespace {
constexpr size_t kMaxRegexInput = 16384;

class RegexScorer : public Scorer {
public:
    RegexScorer(std::regex re, std::string pattern, int group, bool full)
        : m_re(std::move(re)), m_pattern(std::move(pattern)), m_group(group), m_full(full) {}
    std::string name() const override { return "regex"; }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        const std::string text = output.size() > kMaxRegexInput ? output.substr(0, kMaxRegexInput) : output;
        std::smatch m;
        bool matched = false;
        try {
            matched = m_full ? std::regex_match(text, m, m_re) : std::regex_search(text, m, m_re);
        } catch (const std::regex_error& e) {  // error_complexity / error_stack on pathological input
            r.detail = std::string("regex evaluation failed: ") + e.what();
            return r;
        }
        if (!matched) {
            r.detail = "no match for /" + m_pattern + "/";
            return r;
        }
        if (m_group < 0) {
            r.extracted = m.str(0);
            r.pass = true;
            r.score = 1.0;
            r.detail = "matched '" + r.extracted + "'";
            return r;
        }
        if (size_t(m_group) >= m.size() || !m[size_t(m_group)].matched) {
            r.detail = "group " + std::to_string(m_group) + " did not take part in the match";
            return r;
        }
        r.extracted = m.str(size_t(m_group));
        if (item.references.empty()) {  // extraction only: a match is a pass
            r.pass = true;
            r.score = 1.0;
            r.detail = "extracted '" + r.extracted + "'";
            return r;
        }
        const NormalizeOptions norm;
        for (const auto& ref : item.references)
            if (normalizeText(ref, norm) == normalizeText(r.extracted, norm)) {
                r.pass = true;
                r.score = 1.0;
                r.detail = "extracted '" + r.extracted + "' matches the reference";
                return r;
            }
        r.detail = "extracted '" + r.extracted + "', expected '" + item.references.front() + "'";
        return r;
    }

private:
    std::regex m_re;
    std::string m_pattern;
    int m_group;
    bool m_full;
};
}  // namespace

Made makeRegex(const nlohmann::json& params, const ScorerOptions&) {
    auto pattern = stringParam(params, "regex", "pattern", "");
    if (!pattern) return pattern.error();
    if (pattern->empty()) return Error{"regex: param 'pattern' is required"};
    auto ic = boolParam(params, "regex", "ignore_case", false);
    if (!ic) return ic.error();
    auto full = boolParam(params, "regex", "full", false);
    if (!full) return full.error();
    auto group = numberParam(params, "regex", "group", -1);
    if (!group) return group.error();
    auto flags = std::regex::ECMAScript;
    if (*ic) flags |= std::regex::icase;
    try {
        std::regex re(*pattern, flags);
        if (*group > double(re.mark_count())) return Error{"regex: group " + std::to_string(int(*group)) + " does not exist in /" + *pattern + "/"};
        return std::unique_ptr<Scorer>(std::make_unique<RegexScorer>(std::move(re), *pattern, int(*group), *full));
    } catch (const std::regex_error& e) {
        return Error{"regex: pattern /" + *pattern + "/ does not compile: " + e.what()};
    }
}

}  // namespace verdict::core::scorers
