#include "core/score/scorer.h"
#include "core/score/scorer_factories.h"

namespace verdict::core {

namespace {

struct Entry {
    const char* name;
    scorers::Made (*make)(const nlohmann::json&, const ScorerOptions&);
};

constexpr Entry kScorers[] = {
    {"exact", scorers::makeExact},          {"contains", scorers::makeContains},
    {"starts_with", scorers::makeStartsWith}, {"regex", scorers::makeRegex},
    {"numeric", scorers::makeNumeric},      {"mc_letter", scorers::makeMcLetter},
    {"rouge_l", scorers::makeRougeL},       {"bleu", scorers::makeBleu},
    {"json_valid", scorers::makeJsonValid}, {"code_exec", scorers::makeCodeExec},
    {"label", scorers::makeLabel},
};

// promptfoo's not-* asserts: the same check, verdict inverted.
class NegatedScorer : public Scorer {
public:
    explicit NegatedScorer(std::unique_ptr<Scorer> inner) : m_inner(std::move(inner)) {}
    std::string name() const override { return "not " + m_inner->name(); }
    ScoreResult score(const SuiteItem& item, const std::string& output) const override {
        ScoreResult r = m_inner->score(item, output);
        r.pass = !r.pass;
        r.score = 1.0 - r.score;
        r.detail = "negated: " + r.detail;
        return r;
    }

private:
    std::unique_ptr<Scorer> m_inner;
};

}  // namespace

namespace scorers {

Result<bool> boolParam(const nlohmann::json& params, const char* scorer, const char* key, bool fallback) {
    auto it = params.find(key);
    if (it == params.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) return Error{std::string(scorer) + ": param '" + key + "' must be true or false"};
    return it->get<bool>();
}

Result<double> numberParam(const nlohmann::json& params, const char* scorer, const char* key, double fallback) {
    auto it = params.find(key);
    if (it == params.end() || it->is_null()) return fallback;
    if (!it->is_number()) return Error{std::string(scorer) + ": param '" + key + "' must be a number"};
    return it->get<double>();
}

Result<std::string> stringParam(const nlohmann::json& params, const char* scorer, const char* key,
                                const std::string& fallback) {
    auto it = params.find(key);
    if (it == params.end() || it->is_null()) return fallback;
    if (!it->is_string()) return Error{std::string(scorer) + ": param '" + key + "' must be a string"};
    return it->get<std::string>();
}

std::vector<std::string> expectedTexts(const nlohmann::json& params, const SuiteItem& item) {
    std::vector<std::string> out;
    for (const char* key : {"value", "values", "reference"}) {
        auto it = params.find(key);
        if (it == params.end()) continue;
        if (it->is_string()) {
            out.push_back(it->get<std::string>());
        } else if (it->is_number()) {
            out.push_back(it->dump());
        } else if (it->is_array()) {
            for (const auto& v : *it) {
                if (v.is_string()) out.push_back(v.get<std::string>());
                else if (v.is_number()) out.push_back(v.dump());
            }
        }
    }
    if (out.empty()) out = item.references;
    return out;
}

}  // namespace scorers

Result<std::unique_ptr<Scorer>> makeScorer(const ScorerSpec& spec, const ScorerOptions& options) {
    if (isLoglikelihoodScorer(spec.name))
        return Error{spec.name + " scores per-choice log-likelihoods, not generated text: use scoreMcLoglik() (mc_loglik.h)"};
    const nlohmann::json params = spec.params.is_object() ? spec.params : nlohmann::json::object();
    for (const auto& e : kScorers) {
        if (spec.name != e.name) continue;
        auto made = e.make(params, options);
        if (!made) return made.error();
        auto negate = scorers::boolParam(params, e.name, "negate", false);
        if (!negate) return negate.error();
        if (*negate) return std::unique_ptr<Scorer>(std::make_unique<NegatedScorer>(std::move(*made)));
        return made;
    }
    std::string known;
    for (const auto& e : kScorers) known += (known.empty() ? "" : ", ") + std::string(e.name);
    return Error{"unknown scorer '" + spec.name + "' (known: " + known + ", mc_loglik)"};
}

std::vector<std::string> registeredScorerNames() {
    std::vector<std::string> names;
    for (const auto& e : kScorers) names.emplace_back(e.name);
    names.emplace_back("mc_loglik");
    return names;
}

bool isLoglikelihoodScorer(const std::string& name) { return name == "mc_loglik"; }

}  // namespace verdict::core
