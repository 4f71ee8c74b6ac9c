// The runner's PromptRenderer and ItemScorer over the suite module: prompts from the prompt
// builder (core/suite/prompt_builder.h: lm-evaluation-harness layout, few-shot selection), scores
// from the scorer registry (core/score/scorer.h). The CLI and the GUI pass these to SuiteRunner;
// tests may pass fakes instead.
#pragma once

#include "core/run/suite_runner.h"
#include "core/score/scorer.h"

namespace verdict::core {

// Renders an item as plain text (renderPrompt) and as chat turns (renderMessages), with
// `options.shots` examples chosen by selectShots from the suite itself, and the system message
// (when set) as a leading system turn / paragraph. For multiple-choice items, each choice's
// continuation is the prompt builder's target for that choice (a letter for MMLU-style layouts,
// the choice text for ARC-style ones) after the target delimiter, as lm-evaluation-harness scores
// them. Never fails.
PromptRenderer makeSuitePromptRenderer();

// Scores an output with each of the item's scorers (makeScorer by spec, created once per
// distinct spec and reused). Log-likelihood scorers are skipped (the runner computes them).
// Fails, naming the scorer, when a spec cannot be made (unknown name, bad parameters).
ItemScorer makeRegistryScorer(const ScorerOptions& options);

}  // namespace verdict::core
