// One chat message in OpenAI's shape and back: {"role", "content"} plus "tool_calls"
// ([{"id", "type": "function", "function": {"name", "arguments": text}}]), "tool_call_id" and
// "name" where set. The stored suite items (store/suite_item_json.h) and the importer's chat
// readers (item_mapper.h readMessages) share it.
#pragma once

#include "core/suite/suite_item.h"
#include "verdict/engine/result.h"

#include <nlohmann/json.hpp>

namespace verdict::core {

nlohmann::json chatTurnToJson(const ChatTurn& turn);
// Fails saying what is wrong; an assistant message with tool_calls may have a null content.
Result<ChatTurn> chatTurnFromJson(const nlohmann::json& message);
// The tool fields of `message` (tool_calls, tool_call_id, name) into `turn`; arguments given as an
// object are kept as its JSON text. Fails naming the field.
Result<void> readToolFields(const nlohmann::json& message, ChatTurn& turn);

}  // namespace verdict::core
