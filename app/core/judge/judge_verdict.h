// What a judge model answered, read into a verdict: the first brick of LLM-as-judge (issue 21).
// Pure functions of the judge's output text, shared by whatever runs a judge and by the fuzzer
// (tests/fuzz/fuzz_judge_verdict.cpp).
//
// The markers are those of MT-Bench's judge prompts (FastChat, fastchat/llm_judge/data/
// judge_prompts.jsonl; Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot
// Arena"): a pairwise judge ends with "[[A]]" if assistant A is better, "[[B]]" if B is, "[[C]]"
// for a tie; a single-answer (rubric) judge with "Rating: [[7]]".
//
// The parser never guesses. An output without a marker, with markers that disagree ("[[A]] ...
// [[B]]", as when a judge restates the format before its verdict), with a score outside the scale
// or a marker inside unfinished reasoning is an Error saying which: the caller counts it as
// unparseable and keeps the full output. FastChat instead takes the first of A, B, C found, which
// turns such outputs into wins for A. Agreeing repeats ("[[B]] ... so: [[B]]") are one verdict.
//
// Reasoning is not the verdict: text up to the last "</think>" (Qwen3, DeepSeek-R1 ...) and, in
// a gpt-oss harmony transcript, everything before the last "<|channel|>final<|message|>" is
// skipped. An output that opens "<think>" and never closes it was cut in its reasoning: an Error.
//
// Errors are one line; the judge's text appears in them only quoted and cut (util::quoteFileText).
#pragma once

#include "verdict/engine/result.h"

#include <string_view>

namespace verdict::core {

// A pairwise judgment. Values are stored on disk: never reuse one.
enum class PairwiseChoice : int { A = 0, B = 1, Tie = 2 };
const char* pairwiseChoiceName(PairwiseChoice c);  // "A", "B", "tie"

// The part of a judge's output that holds its verdict: the output without its reasoning (see
// above). Error when the reasoning never ended.
Result<std::string_view> judgeAnswerPart(std::string_view output);

// The pairwise verdict of `output`: [[A]], [[B]], [[C]] (or [[tie]]); letters in either case,
// spaces inside the brackets ignored. Error: no marker, markers that disagree, unended reasoning.
Result<PairwiseChoice> parsePairwiseVerdict(std::string_view output);

// The score of a rubric judgment: the number in "[[n]]" (digits, optionally one '.' and more
// digits: "7", "8.5"), within [minScore, maxScore]. Error: no score, scores that disagree, a score
// outside the scale, unended reasoning.
Result<double> parseRubricScore(std::string_view output, double minScore = 1, double maxScore = 10);

}  // namespace verdict::core
