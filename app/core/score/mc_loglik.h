// Multiple choice by log-likelihood, exactly as lm-evaluation-harness scores output_type
// "multiple_choice" (lm_eval/api/task.py, ConfigurableTask.process_results, v0.4):
//
//   acc      = 1 if argmax_i  sum_logprob_i                 == gold
//   acc_norm = 1 if argmax_i (sum_logprob_i / len(choice_i)) == gold
//
// where sum_logprob_i is the log-probability of the continuation target_delimiter + choice_i
// (" Paris") given the prompt, summed over its tokens, and len(choice_i) is Python's len() of the
// choice string WITHOUT the delimiter, i.e. its number of Unicode characters (code points).
// That equals the UTF-8 byte count for ASCII choices; for CJK choices the two differ, so the unit
// is explicit here and Characters is the lm-eval-compatible default. Ties go to the lowest index
// (numpy.argmax). A zero length is counted as 1 so an empty choice cannot divide by zero.
#pragma once

#include "core/score/scorer.h"

#include <cstddef>
#include <string_view>
#include <vector>

namespace verdict::core {

struct ChoiceLoglik {
    double logprob = 0.0;  // sum of token log-probabilities of the continuation (natural log)
    size_t length = 0;     // choiceLength() of the choice text
};

enum class LengthUnit { Characters, Bytes };

// Length of a choice for acc_norm: code points (lm-eval) or UTF-8 bytes.
size_t choiceLength(std::string_view choiceText, LengthUnit unit = LengthUnit::Characters);

struct McLoglikResult {
    int pred = -1;        // argmax of logprob
    int predNorm = -1;    // argmax of logprob / length
    double acc = 0.0;     // 1 or 0
    double accNorm = 0.0; // 1 or 0
};

// `gold` is the item's gold index; an empty list or a gold out of range gives pred -1 and 0/0.
McLoglikResult scoreMcLoglik(const std::vector<ChoiceLoglik>& choices, int gold);

// The same as a ScoreResult for the store: score/pass from acc (or acc_norm when useNorm),
// extracted = chosen letter, detail = both predictions.
ScoreResult mcLoglikScore(const SuiteItem& item, const std::vector<ChoiceLoglik>& choices, bool useNorm = false);

}  // namespace verdict::core
