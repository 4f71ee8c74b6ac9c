// Turning a SuiteItem into the text a model sees: zero- or few-shot, with a per-suite template.
//
// The layout follows lm-evaluation-harness: description + (doc_to_text(shot) + target_delimiter
// + doc_to_target(shot) + fewshot_delimiter) * k + doc_to_text(item). Templates use {{field}}
// placeholders, e.g. "{{question}}\nA. {{A}}\nB. {{B}}\nC. {{C}}\nD. {{D}}\nAnswer:".
//
// Fields: prompt / question (the item's prompt), A..J (choices by letter), choices (all of them
// as "A. ...\n B. ..." lines), answer (the item's target: gold letter for multiple choice, else the
// first reference), reference, category, subject (category with '_' -> ' '), id, tests (MBPP
// test_list, one per line), and any metadata key, with dots for nested ones (vars.city,
// metadata.level). "{{question.strip()}}" trims like lm-eval's Jinja. An unknown field renders
// empty (unknownTemplateFields lists them so a UI can warn).
#pragma once

#include "core/suite/suite_item.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

struct PromptOptions {
    std::string shape;                      // ImportResult::shape; picks the default format ("" = guess from the item)
    std::string templateText;               // doc_to_text template; "" = the shape's default
    std::string description;                // before the examples; "" = the shape's default (MMLU header for mc)
    int numShots = 0;                       // examples to include (see selectShots)
    uint64_t seed = 1234;                   // lm-eval's default few-shot seed
    std::string targetDelimiter = " ";      // between an example's text and its answer
    std::string fewshotDelimiter = "\n\n";  // between examples
    // Multiple choice as a cloze (lm-eval's ARC / HellaSwag layout): "Question: ...\nAnswer:" with
    // the choice TEXT as the target, instead of the MMLU layout listing lettered choices.
    bool clozeChoices = false;
};

// Placeholder substitution alone.
std::string renderTemplate(std::string_view templ, const SuiteItem& item);
std::vector<std::string> unknownTemplateFields(std::string_view templ, const SuiteItem& item);

// One item's question part (doc_to_text) and answer part (doc_to_target, used for examples).
std::string docToText(const SuiteItem& item, const PromptOptions& options);
std::string docToTarget(const SuiteItem& item, const PromptOptions& options);
std::string defaultDescription(const SuiteItem& item, const PromptOptions& options);

// The full prompt for `item` with the given examples (pass selectShots' result, or {} for zero-shot).
// Chat items (messages) render their last user message as the question part; use renderMessages.
std::string renderPrompt(const SuiteItem& item, const PromptOptions& options, const std::vector<SuiteItem>& shots);

// Chat form: plain items become one user turn holding renderPrompt(); chat items keep their turns
// with the examples inserted as user/assistant pairs after any leading system turns.
std::vector<ChatTurn> renderMessages(const SuiteItem& item, const PromptOptions& options,
                                     const std::vector<SuiteItem>& shots);

// k examples from `pool` (a dev split, or the suite itself), never the item itself (same id or
// same prompt), chosen by a fixed-seed shuffle mixed with the item's id: the same item always
// gets the same examples, whatever the run order. With sameCategory, examples come from the
// item's category when it has at least k other items (MMLU's per-subject dev sets).
std::vector<SuiteItem> selectShots(const std::vector<SuiteItem>& pool, const SuiteItem& item, int k, uint64_t seed,
                                   bool sameCategory = true);

}  // namespace verdict::core
