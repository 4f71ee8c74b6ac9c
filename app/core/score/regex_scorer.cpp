// "regex": a regular expression searched in the model's output. Params: pattern (required),
// ignore_case, group (a capture group number to extract; when set, the extracted text is compared
// with the item's references after normalisation), full (the whole output must match, default
// false = search).
// Matching uses RE2 (Debian libre2-dev): linear time in the input whatever the pattern, bounded
// memory, no recursion, so a hostile pattern or a long output cannot hang or crash a run (the
// backtracking std::regex could do both). The syntax is ECMAScript's for everything promptfoo's
// asserts commonly use (classes, \d \w \s, groups, (?:...), alternation, repetition); RE2 has no
// lookaround and no backreferences, and such a pattern is refused with that reason when the suite
// is run, never silently mis-scored. https://github.com/google/re2/wiki/Syntax
#include "core/score/scorer_factories.h"
#include "core/score/text_normalize.h"

#include <re2/re2.h>

#include <memory>
#include <vector>

namespace verdict::core::scorers {

namespace {
constexpr size_t kMaxRegexInput = size_t{1} << 20;  // RE2 is linear; this only bounds the work per item
constexpr int64_t kMaxRegexMemory = int64_t{16} << 20;

class RegexScorer : public Scorer {
public:
    RegexScorer(std::unique_ptr<RE2> re, std::string pattern, int group, bool full)
        : m_re(std::move(re)), m_pattern(std::move(pattern)), m_group(group), m_full(full) {}
    std::string name() const override { return "regex"; }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        const re2::StringPiece text(output.data(), std::min(output.size(), kMaxRegexInput));
        const int groups = m_group < 0 ? 1 : m_group + 1;
        std::vector<re2::StringPiece> m(static_cast<size_t>(groups));
        const bool matched =
            m_re->Match(text, 0, text.size(), m_full ? RE2::ANCHOR_BOTH : RE2::UNANCHORED, m.data(), groups);
        if (!matched) {
            r.detail = "no match for /" + m_pattern + "/";
            return r;
        }
        if (m_group < 0) {
            r.extracted = std::string(m[0].data(), m[0].size());
            r.pass = true;
            r.score = 1.0;
            r.detail = "matched '" + r.extracted + "'";
            return r;
        }
        const re2::StringPiece& g = m[static_cast<size_t>(m_group)];
        if (g.data() == nullptr) {
            r.detail = "group " + std::to_string(m_group) + " did not take part in the match";
            return r;
        }
        r.extracted = std::string(g.data(), g.size());
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
    std::unique_ptr<RE2> m_re;
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
    RE2::Options o;
    o.set_log_errors(false);
    o.set_case_sensitive(!*ic);
    o.set_max_mem(kMaxRegexMemory);
    auto re = std::make_unique<RE2>(*pattern, o);
    if (!re->ok())
        return Error{"regex: pattern /" + *pattern + "/ does not compile: " + re->error() +
                     " (RE2 syntax: no lookaround or backreferences)"};
    if (*group > double(re->NumberOfCapturingGroups()))
        return Error{"regex: group " + std::to_string(int(*group)) + " does not exist in /" + *pattern + "/"};
    return std::unique_ptr<Scorer>(std::make_unique<RegexScorer>(std::move(re), *pattern, int(*group), *full));
}

}  // namespace verdict::core::scorers
