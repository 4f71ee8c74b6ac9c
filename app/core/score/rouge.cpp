#include "core/score/rouge.h"

#include "core/score/scorer_factories.h"
#include "core/suite/utf8_text.h"

#include <algorithm>
#include <sstream>

namespace verdict::core {

std::vector<std::string> rougeTokens(std::string_view text) {
    std::vector<std::string> tokens;
    std::string word;
    auto flush = [&] {
        if (!word.empty()) tokens.push_back(std::move(word));
        word.clear();
    };
    for (size_t i = 0; i < text.size();) {
        char32_t cp = utf8::toLower(utf8::toHalfWidth(utf8::decodeNext(text, i)));
        if (utf8::isCjk(cp)) {
            flush();
            std::string one;
            utf8::append(one, cp);
            tokens.push_back(std::move(one));
        } else if (utf8::isLetterOrDigit(cp) && !utf8::isAsciiPunctuation(cp)) {
            utf8::append(word, cp);
        } else {
            flush();
        }
    }
    flush();
    return tokens;
}

size_t lcsLength(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    if (a.empty() || b.empty()) return 0;
    std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
    for (size_t i = 1; i <= a.size(); ++i) {
        for (size_t j = 1; j <= b.size(); ++j)
            cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

RougeScore rougeL(std::string_view hypothesis, std::string_view reference) {
    const auto h = rougeTokens(hypothesis);
    const auto r = rougeTokens(reference);
    RougeScore s;
    if (h.empty() || r.empty()) return s;
    const double lcs = double(lcsLength(h, r));
    s.precision = lcs / double(h.size());
    s.recall = lcs / double(r.size());
    s.f1 = (s.precision + s.recall) > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
    return s;
}

namespace scorers {
namespace {
constexpr size_t kMaxTokens = 4096;  // LCS is O(n*m): longer texts are cut to keep scoring fast

class RougeLScorer : public Scorer {
public:
    RougeLScorer(nlohmann::json params, double threshold) : m_params(std::move(params)), m_threshold(threshold) {}
    std::string name() const override { return "rouge_l"; }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        const auto refs = expectedTexts(m_params, item);
        if (refs.empty()) {
            r.detail = "no reference";
            return r;
        }
        auto hyp = rougeTokens(output);
        if (hyp.size() > kMaxTokens) hyp.resize(kMaxTokens);
        RougeScore best;
        for (const auto& ref : refs) {
            auto rt = rougeTokens(ref);
            if (rt.size() > kMaxTokens) rt.resize(kMaxTokens);
            if (hyp.empty() || rt.empty()) continue;
            const double lcs = double(lcsLength(hyp, rt));
            RougeScore s;
            s.precision = lcs / double(hyp.size());
            s.recall = lcs / double(rt.size());
            s.f1 = lcs > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
            if (s.f1 > best.f1) best = s;
        }
        r.score = best.f1;
        r.pass = best.f1 >= m_threshold;
        std::ostringstream os;
        os.precision(4);
        os << "ROUGE-L f1 " << best.f1 << " (P " << best.precision << ", R " << best.recall << "), threshold " << m_threshold;
        r.detail = os.str();
        return r;
    }

private:
    nlohmann::json m_params;
    double m_threshold;
};
}  // namespace

Made makeRougeL(const nlohmann::json& params, const ScorerOptions&) {
    auto t = numberParam(params, "rouge_l", "threshold", 0.5);
    if (!t) return t.error();
    return std::unique_ptr<Scorer>(std::make_unique<RougeLScorer>(params, *t));
}

}  // namespace scorers
}  // namespace verdict::core
