// The record shapes the importer understands, how one is recognised from a record's keys, and
// the scorers each shape gets by default.
#pragma once

#include "core/suite/suite_item.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

// Values are reported as names (shapeName), never stored as numbers.
enum class SuiteShape {
    Unknown,
    Prompt,          // prompt (+ category, reference/answer/expected/target); no reference = generate-only
    InspectAi,       // input (text or chat), target, choices, id, metadata
    OpenAiEvals,     // input (chat messages) + ideal
    MultipleChoice,  // question + choices list (+ answer as letter, index or text)
    Arc,             // question.stem + question.choices[{text,label}] + answerKey (ARC, OpenBookQA)
    Aqua,            // question + options ["A)..."] + correct
    Mmlu,            // question, A, B, C, D(, E), answer columns (MMLU/CMMLU/C-Eval CSV, headerless too)
    Gsm8k,           // question + answer whose final value follows the last "####"
    HumanEval,       // task_id, prompt, canonical_solution, test, entry_point
    Mbpp,            // text (or prompt), code, test_list
    Promptfoo,       // vars + assert list, or CSV with __expected columns
    MtBench,         // turns: the user's turns of a multi-turn conversation (+ question_id, category, reference per turn)
    ToolCalls,       // Verdict's function calling: prompt or messages + tools + expected_calls (+ tool_results, reference)
    Bfcl,            // Berkeley Function Calling Leaderboard: question + function (+ ground_truth, or an answers file)
    Mapped,          // explicit FieldMapping
};

const char* shapeName(SuiteShape s);  // "prompt", "inspect", "openai_evals", "mc", "arc", "aqua", "mmlu", ...
std::optional<SuiteShape> shapeFromName(std::string_view name);

// The shape one record looks like (Unknown when none fits).
SuiteShape classifyRecord(const nlohmann::json& record);
// The shape of a file from its first records: the most common classification (ties go to the
// earlier record), Unknown when no record fits any shape.
SuiteShape detectShape(const std::vector<nlohmann::json>& firstRecords);

// Scorers an item gets when the file names none: mc -> mc_loglik + mc_letter, gsm8k -> numeric,
// code -> code_exec (runs only when execution is enabled), prompt with references -> exact with
// normalisation, inspect/openai evals -> by what the item carries; promptfoo items carry their own.
std::vector<ScorerSpec> defaultScorers(SuiteShape shape, const SuiteItem& item);

}  // namespace verdict::core
