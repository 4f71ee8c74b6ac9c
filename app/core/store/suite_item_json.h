// SuiteItem <-> JSON, the form stored in suite_items.item. Keys (stable, stored on disk):
//   {"id", "category", "prompt", "messages": [{"role","content"}], "references": [..],
//    "choices": [..], "gold": int|null, "scorers": [{"name","params"}], "metadata": {..},
//    "source_line": int}
// and, only where set: "turns": [..], "tools": [OpenAI tools], "expected_calls": [{"name",
// "arguments": {arg: [acceptable values]}}], "tool_results": {name: result}; messages carry
// "tool_calls" / "tool_call_id" / "name" where set (OpenAI's message shape).
// nlohmann::json keeps object keys sorted, so dump() of this JSON is canonical: the suite's
// content hash is computed over it.
#pragma once

#include "core/suite/suite_item.h"
#include "verdict/engine/result.h"

#include <nlohmann/json.hpp>

namespace verdict::core {

nlohmann::json suiteItemToJson(const SuiteItem& item);


// Fails naming the key when a field has the wrong type.
Result<SuiteItem> suiteItemFromJson(const nlohmann::json& j);

}  // namespace verdict::core
