// Scoring one model output against one SuiteItem. Every scorer implements the same interface and
// is created by name from a ScorerSpec (the item's `scorers` list), so a suite file decides how
// it is graded and the runner needs no per-scorer code:
//
//   auto s = makeScorer({"numeric", {{"tolerance", 0.01}}});
//   if (s) ScoreResult r = (*s)->score(item, output);
//
// Registered names: exact, contains, starts_with, regex, numeric, mc_letter, rouge_l, bleu,
// json_valid, code_exec, label (classification). Any spec may add "negate": true (promptfoo's not-* asserts).
// "mc_loglik" is not a generated-text scorer: it needs per-choice log-likelihoods, see mc_loglik.h.
#pragma once

#include "core/suite/suite_item.h"

#include <verdict/engine/result.h>

#include <memory>
#include <string>
#include <vector>

namespace verdict::core {

struct ScoreResult {
    double score = 0.0;      // in [0, 1]; 1 = fully correct (BLEU/ROUGE are fractions, not 0-100)
    bool pass = false;       // the scorer's verdict (score >= threshold for graded scorers)
    std::string extracted;   // what was read from the output: the number, letter, regex group, code run
    std::string expected;    // what it was compared with, where one value is (label: the gold label)
    std::string detail;      // why, for a person: "expected 42, got 41", "timed out after 10 s", ...
};

class Scorer {
public:
    virtual ~Scorer() = default;
    virtual std::string name() const = 0;
    // Never throws; bad outputs score 0 with the reason in `detail`.
    virtual ScoreResult score(const SuiteItem& item, const std::string& output) const = 0;
};

// What a caller allows scorers to do beyond reading text.
struct ScorerOptions {
    bool allowCodeExecution = false;  // code_exec runs programs only when this is true (opt-in)
    std::string python = "python3";   // interpreter for code_exec; resolved on PATH when not absolute
};

// Fails for an unknown name, for "mc_loglik" (see mc_loglik.h) and for bad params (a regex that
// does not compile, a non-numeric tolerance, ...); the message names the scorer and the param.
Result<std::unique_ptr<Scorer>> makeScorer(const ScorerSpec& spec, const ScorerOptions& options = {});

std::vector<std::string> registeredScorerNames();
// Scorers computed from log-likelihoods instead of generated text (today: "mc_loglik").
bool isLoglikelihoodScorer(const std::string& name);

}  // namespace verdict::core
