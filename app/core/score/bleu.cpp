#include "core/score/bleu.h"

#include "core/score/scorer_factories.h"
#include "core/suite/utf8_text.h"

#include <cmath>
#include <map>
#include <regex>
#include <sstream>

namespace verdict::core {

namespace {

// mteval-v13a's regular expressions as sacreBLEU applies them (tokenizer_13a / TokenizerRegexp),
// in the same order; std::regex_replace scans left to right without overlap like Python's re.sub.
std::string tokenize13a(std::string line) {
    auto replaceAll = [](std::string& s, const std::string& from, const std::string& to) {
        for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    };
    replaceAll(line, "<skipped>", "");
    replaceAll(line, "-\n", "");
    replaceAll(line, "\n", " ");
    if (line.find('&') != std::string::npos) {
        replaceAll(line, "&quot;", "\"");
        replaceAll(line, "&amp;", "&");
        replaceAll(line, "&lt;", "<");
        replaceAll(line, "&gt;", ">");
    }
    line = " " + line + " ";
    static const std::regex kPunct(R"(([{|}~\[\\\]^_` !"#$%&()*+:;<=>?@/]))");
    static const std::regex kPeriodCommaAfterNonDigit(R"(([^0-9])([.,]))");
    static const std::regex kPeriodCommaBeforeNonDigit(R"(([.,])([^0-9]))");
    static const std::regex kDashAfterDigit(R"(([0-9])(-))");
    line = std::regex_replace(line, kPunct, " $1 ");
    line = std::regex_replace(line, kPeriodCommaAfterNonDigit, "$1 $2 ");
    line = std::regex_replace(line, kPeriodCommaBeforeNonDigit, " $1 $2");
    line = std::regex_replace(line, kDashAfterDigit, "$1 $2 ");
    return line;
}

bool splitsAlone(char32_t cp) {
    return utf8::isCjk(cp) || (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFF00 && cp <= 0xFFEF) ||
           (cp >= 0x2E80 && cp <= 0x2FDF);
}

using NgramCounts = std::map<std::vector<std::string>, int>;

NgramCounts countNgrams(const std::vector<std::string>& toks, size_t n) {
    NgramCounts c;
    if (toks.size() < n) return c;
    for (size_t i = 0; i + n <= toks.size(); ++i) ++c[std::vector<std::string>(toks.begin() + long(i), toks.begin() + long(i + n))];
    return c;
}

double myLog(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }  // sacreBLEU's my_log

}  // namespace

std::vector<std::string> bleuTokens(std::string_view text) {
    std::string spaced;
    spaced.reserve(text.size() + 16);
    for (size_t i = 0; i < text.size();) {
        const size_t start = i;
        const char32_t cp = utf8::decodeNext(text, i);
        if (splitsAlone(cp)) {
            spaced += ' ';
            spaced.append(text.substr(start, i - start));
            spaced += ' ';
        } else {
            spaced.append(text.substr(start, i - start));
        }
    }
    const std::string tok = tokenize13a(std::move(spaced));
    std::vector<std::string> out;
    std::istringstream is(tok);
    for (std::string w; is >> w;) out.push_back(w);
    return out;
}

BleuStats& BleuStats::operator+=(const BleuStats& o) {
    for (size_t n = 0; n < 4; ++n) {
        correct[n] += o.correct[n];
        total[n] += o.total[n];
    }
    hypLen += o.hypLen;
    refLen += o.refLen;
    return *this;
}

BleuStats bleuStats(std::string_view hypothesis, const std::vector<std::string>& references) {
    BleuStats s;
    const auto hyp = bleuTokens(hypothesis);
    std::vector<std::vector<std::string>> refs;
    for (const auto& r : references) refs.push_back(bleuTokens(r));
    s.hypLen = double(hyp.size());
    // Closest reference length; ties go to the shorter reference.
    bool first = true;
    for (const auto& r : refs) {
        const double len = double(r.size());
        const double diff = std::fabs(len - s.hypLen);
        const double bestDiff = std::fabs(s.refLen - s.hypLen);
        if (first || diff < bestDiff || (diff == bestDiff && len < s.refLen)) s.refLen = len;
        first = false;
    }
    for (size_t n = 1; n <= 4; ++n) {
        const NgramCounts hc = countNgrams(hyp, n);
        NgramCounts maxRef;
        for (const auto& r : refs)
            for (const auto& [g, c] : countNgrams(r, n)) maxRef[g] = std::max(maxRef[g], c);
        double total = 0, correct = 0;
        for (const auto& [g, c] : hc) {
            total += c;
            auto it = maxRef.find(g);
            if (it != maxRef.end()) correct += std::min(c, it->second);
        }
        s.correct[n - 1] = correct;
        s.total[n - 1] = total;
    }
    return s;
}

double bleuFromStats(const BleuStats& s, bool effectiveOrder) {
    std::array<double, 4> precisions{};
    double smoothMteval = 1.0;
    int effOrder = 4;
    for (int n = 1; n <= 4; ++n) {
        if (s.total[size_t(n - 1)] == 0) break;
        if (effectiveOrder) effOrder = n;
        if (s.correct[size_t(n - 1)] == 0) {
            smoothMteval *= 2;
            precisions[size_t(n - 1)] = 100.0 / (smoothMteval * s.total[size_t(n - 1)]);
        } else {
            precisions[size_t(n - 1)] = 100.0 * s.correct[size_t(n - 1)] / s.total[size_t(n - 1)];
        }
    }
    double bp = 1.0;
    if (s.hypLen < s.refLen) bp = s.hypLen > 0 ? std::exp(1.0 - s.refLen / s.hypLen) : 0.0;
    double sumLog = 0.0;
    for (int n = 0; n < effOrder; ++n) sumLog += myLog(precisions[size_t(n)]);
    return bp * std::exp(sumLog / effOrder);
}

double sentenceBleu(std::string_view hypothesis, const std::vector<std::string>& references) {
    return bleuFromStats(bleuStats(hypothesis, references), true);
}

double corpusBleu(const std::vector<std::string>& hypotheses, const std::vector<std::vector<std::string>>& references) {
    BleuStats total;
    for (size_t i = 0; i < hypotheses.size(); ++i)
        total += bleuStats(hypotheses[i], i < references.size() ? references[i] : std::vector<std::string>{});
    return bleuFromStats(total, false);
}

namespace scorers {
namespace {
class BleuScorer : public Scorer {
public:
    BleuScorer(nlohmann::json params, double threshold) : m_params(std::move(params)), m_threshold(threshold) {}
    std::string name() const override { return "bleu"; }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r;
        const auto refs = expectedTexts(m_params, item);
        if (refs.empty()) {
            r.detail = "no reference";
            return r;
        }
        const double bleu = sentenceBleu(output, refs);
        r.score = bleu / 100.0;
        r.pass = r.score >= m_threshold;
        std::ostringstream os;
        os.precision(4);
        os << "sentence BLEU " << bleu << " (sacreBLEU-style, exp smoothing), threshold " << m_threshold * 100;
        r.detail = os.str();
        return r;
    }

private:
    nlohmann::json m_params;
    double m_threshold;
};
}  // namespace

Made makeBleu(const nlohmann::json& params, const ScorerOptions&) {
    auto t = numberParam(params, "bleu", "threshold", 0.5);
    if (!t) return t.error();
    return std::unique_ptr<Scorer>(std::make_unique<BleuScorer>(params, *t));
}

}  // namespace scorers
}  // namespace verdict::core
