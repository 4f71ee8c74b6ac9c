#include "core/suite/chat_turn_json.h"

namespace verdict::core {

nlohmann::json chatTurnToJson(const ChatTurn& t) {
    nlohmann::json m = {{"role", t.role}, {"content", t.content}};
    if (!t.toolCalls.empty()) {
        nlohmann::json calls = nlohmann::json::array();
        for (const ToolCall& c : t.toolCalls)
            calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
        m["tool_calls"] = std::move(calls);
    }
    if (!t.toolCallId.empty()) m["tool_call_id"] = t.toolCallId;
    if (!t.name.empty()) m["name"] = t.name;
    return m;
}

Result<void> readToolFields(const nlohmann::json& m, ChatTurn& t) {
    if (auto c = m.find("tool_calls"); c != m.end() && !c->is_null()) {
        if (!c->is_array()) return Error{"'tool_calls' must be a list"};
        for (size_t k = 0; k < c->size(); ++k) {
            const nlohmann::json& e = (*c)[k];
            const nlohmann::json f = e.is_object() ? e.value("function", e) : nlohmann::json();
            if (!f.is_object() || !f.value("name", nlohmann::json()).is_string())
                return Error{"tool_calls[" + std::to_string(k) + "] needs a function name"};
            ToolCall call;
            call.name = f["name"].get<std::string>();
            const nlohmann::json args = f.value("arguments", nlohmann::json::object());
            call.arguments = args.is_string() ? args.get<std::string>() : args.dump();
            if (auto id = e.find("id"); id != e.end() && id->is_string()) call.id = id->get<std::string>();
            t.toolCalls.push_back(std::move(call));
        }
    }
    if (auto id = m.find("tool_call_id"); id != m.end() && !id->is_null()) {
        if (!id->is_string()) return Error{"'tool_call_id' must be a string"};
        t.toolCallId = id->get<std::string>();
    }
    if (auto n = m.find("name"); n != m.end() && !n->is_null()) {
        if (!n->is_string()) return Error{"'name' must be a string"};
        t.name = n->get<std::string>();
    }
    return {};
}

Result<ChatTurn> chatTurnFromJson(const nlohmann::json& m) {
    if (!m.is_object() || !m.value("role", nlohmann::json()).is_string())
        return Error{"each message needs a string 'role'"};
    ChatTurn t;
    t.role = m["role"].get<std::string>();
    // An assistant turn that only called tools may have a null content (OpenAI's shape).
    const nlohmann::json content = m.value("content", nlohmann::json());
    if (content.is_string()) t.content = content.get<std::string>();
    else if (!content.is_null() || !m.contains("tool_calls"))
        return Error{"message '" + t.role + "': 'content' must be a string"};
    if (auto r = readToolFields(m, t); !r) return Error{"message '" + t.role + "': " + r.error().message};
    return t;
}

}  // namespace verdict::core
