// Internal: one factory per scorer file, collected by scorer_registry.cpp.
#pragma once

#include "core/score/scorer.h"

#include <nlohmann/json.hpp>

namespace verdict::core::scorers {

using Made = Result<std::unique_ptr<Scorer>>;

Made makeExact(const nlohmann::json& params, const ScorerOptions& options);
Made makeContains(const nlohmann::json& params, const ScorerOptions& options);
Made makeStartsWith(const nlohmann::json& params, const ScorerOptions& options);
Made makeRegex(const nlohmann::json& params, const ScorerOptions& options);
Made makeNumeric(const nlohmann::json& params, const ScorerOptions& options);
Made makeMcLetter(const nlohmann::json& params, const ScorerOptions& options);
Made makeRougeL(const nlohmann::json& params, const ScorerOptions& options);
Made makeBleu(const nlohmann::json& params, const ScorerOptions& options);
Made makeJsonValid(const nlohmann::json& params, const ScorerOptions& options);
Made makeCodeExec(const nlohmann::json& params, const ScorerOptions& options);
Made makeLabel(const nlohmann::json& params, const ScorerOptions& options);

// Param helpers: a wrong type is an Error naming the scorer and the key.
Result<bool> boolParam(const nlohmann::json& params, const char* scorer, const char* key, bool fallback);
Result<double> numberParam(const nlohmann::json& params, const char* scorer, const char* key, double fallback);
Result<std::string> stringParam(const nlohmann::json& params, const char* scorer, const char* key,
                                const std::string& fallback);
// The texts to compare against: params "value"/"values"/"reference", else the item's references.
std::vector<std::string> expectedTexts(const nlohmann::json& params, const SuiteItem& item);

}  // namespace verdict::core::scorers
