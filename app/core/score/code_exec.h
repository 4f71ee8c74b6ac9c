// Code-execution scoring (pass@1) for HumanEval- and MBPP-shaped items: the model's code plus the
// item's tests run as one Python program in the sandbox (process_sandbox.h); exit status 0 = pass.
//
// Opt-in only: the "code_exec" scorer runs nothing unless ScorerOptions::allowCodeExecution is
// set, and then says so in every result's detail. Params: timeout_s (wall, default 10), cpu_s
// (default = timeout), memory_mb (RLIMIT_AS, default 1024).
//
// Program layout (HumanEval's own harness order): prompt + completion, then the test code, then
// check(entry_point). When the output is a whole function (fenced or not) that defines
// entry_point, it is placed after the prompt instead, so the prompt's imports stay in scope.
// MBPP: test_imports + code + test_setup_code + each test_list assert.
#pragma once

#include "core/suite/suite_item.h"

#include <verdict/engine/result.h>

#include <string>
#include <string_view>

namespace verdict::core {

// The code in a model's answer: the first ```python (or plain ```) fenced block, else the text.
std::string extractCode(std::string_view output);

// The program to run for `item` given the model's output. Errors when the item carries no tests.
Result<std::string> buildTestProgram(const SuiteItem& item, const std::string& output);

// Unbiased pass@k estimator (Chen et al. 2021, "Evaluating Large Language Models Trained on
// Code", eq. 1): 1 - C(n-c, k) / C(n, k), for n samples of which c passed.
double passAtK(int n, int c, int k);

}  // namespace verdict::core
