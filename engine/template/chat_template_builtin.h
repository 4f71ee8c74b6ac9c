// Shared pieces of the built-in chat formats (chat_template_builtin*.cpp). Internal.
#pragma once

#include "template/chat_template.h"
#include "template/jinja_json.h"
#include "template/jinja_string.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::tok::builtin_detail {

using json = nlohmann::ordered_json;

inline std::string strip(std::string_view s) { return jinja::pyStrip(s, std::nullopt, true, true); }

inline std::string toJson(const json& j, std::optional<std::string> indent = std::nullopt) {
    jinja::JsonDumpOptions o;
    o.indent = std::move(indent);
    return jinja::dumpJson(jinja::valueFromJson(j), o);
}

// One message of the input with the accessors the formats need.
struct Msg {
    const json* j;

    std::string role() const { return j->contains("role") && (*j)["role"].is_string() ? (*j)["role"].get<std::string>() : ""; }
    // String content; a list of parts contributes its "text" parts; null/missing is "".
    std::string content() const {
        if (!j->contains("content")) return {};
        const json& c = (*j)["content"];
        if (c.is_string()) return c.get<std::string>();
        std::string out;
        if (c.is_array()) {
            for (const auto& part : c)
                if (part.is_object() && part.contains("text") && part["text"].is_string()) out += part["text"].get<std::string>();
        }
        return out;
    }
    bool contentIsNull() const { return !j->contains("content") || (*j)["content"].is_null(); }
    const json& toolCalls() const {
        static const json kEmpty = json::array();
        if (j->contains("tool_calls") && (*j)["tool_calls"].is_array()) return (*j)["tool_calls"];
        return kEmpty;
    }
    bool hasToolCalls() const { return !toolCalls().empty(); }
};

// A tool call's function object (the call itself when it has no "function" wrapper).
inline const json& callFunction(const json& call) {
    if (call.is_object() && call.contains("function") && call["function"].is_object()) return call["function"];
    return call;
}

inline std::string callName(const json& call) {
    const json& f = callFunction(call);
    return f.contains("name") && f["name"].is_string() ? f["name"].get<std::string>() : "";
}

// Arguments as the templates print them: tojson of the value (a JSON string stays quoted).
inline std::string callArgumentsJson(const json& call) {
    const json& f = callFunction(call);
    return f.contains("arguments") ? toJson(f["arguments"]) : "{}";
}

// Arguments printed raw when they are a string, tojson otherwise (Qwen3, DeepSeek).
inline std::string callArgumentsRaw(const json& call) {
    const json& f = callFunction(call);
    if (!f.contains("arguments")) return "{}";
    return f["arguments"].is_string() ? f["arguments"].get<std::string>() : toJson(f["arguments"]);
}

struct Ctx {
    const ChatTemplateInputs& in;
    std::vector<Msg> msgs;
    std::string bos() const { return in.bosToken.value_or(""); }
    std::string eos() const { return in.eosToken.value_or(""); }
    bool gen() const { return in.addGenerationPrompt; }
    bool hasTools() const { return in.tools.is_array() && !in.tools.empty(); }
    bool firstIsSystem() const { return !msgs.empty() && msgs[0].role() == "system"; }
    bool extraFlag(const char* name, bool fallback) const {
        if (in.extraVariables.is_object() && in.extraVariables.contains(name) && in.extraVariables[name].is_boolean())
            return in.extraVariables[name].get<bool>();
        return fallback;
    }
};

// The families implemented in chat_template_builtin2.cpp; known == false for other names.
std::string renderOtherFamily(std::string_view family, const Ctx& c, bool& known);
std::vector<std::string> otherFamilies();

}  // namespace verdict::tok::builtin_detail
