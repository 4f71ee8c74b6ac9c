// ChatTemplate: parse once, render many times; converts interpreter errors to verdict::Error.
#include "template/chat_template.h"

#include "template/jinja_error.h"
#include "template/jinja_interpreter.h"
#include "template/jinja_json.h"
#include "template/jinja_lexer.h"
#include "template/jinja_parser.h"

#include <new>

namespace verdict::tok {

namespace {

std::string locate(const std::string& source, std::size_t offset) {
    if (offset == jinja::kNoOffset) return {};
    const jinja::SourcePosition p = jinja::positionOf(source, offset);
    return " (line " + std::to_string(p.line) + ", column " + std::to_string(p.column) + ")";
}

Error toError(const jinja::JinjaError& e, const std::string& normalisedSource) {
    std::string message = std::string(jinja::errorKindName(e.kind())) + ": " + e.message();
    // raise_exception() text is the template author's message: keep it verbatim.
    if (e.kind() != jinja::ErrorKind::Template) message += locate(normalisedSource, e.offset());
    return Error{std::move(message)};
}

}  // namespace

nlohmann::ordered_json chatMessagesToJson(const std::vector<ChatMessage>& messages) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& m : messages) {
        nlohmann::ordered_json j = nlohmann::ordered_json::object();
        j["role"] = m.role;
        j["content"] = m.content;
        if (!m.toolCalls.is_null()) j["tool_calls"] = m.toolCalls;
        if (!m.name.empty()) j["name"] = m.name;
        if (!m.toolCallId.empty()) j["tool_call_id"] = m.toolCallId;
        out.push_back(std::move(j));
    }
    return out;
}

ChatTemplate::ChatTemplate(std::string source, std::shared_ptr<const jinja::Program> program)
    : m_source(std::move(source)), m_program(std::move(program)) {}

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
    try {
        return ChatTemplate(std::string(source), jinja::parseTemplate(source));
    } catch (const jinja::JinjaError& e) {
        // Offsets refer to the newline-normalised text; line numbers are the same as the raw one.
        return toError(e, jinja::normaliseNewlines(source));
    } catch (const std::bad_alloc&) {
        return Error{"TemplateSyntaxError: out of memory while parsing the chat template"};
    }
}

Result<std::string> ChatTemplate::render(const ChatTemplateInputs& inputs) const {
    try {
        if (!inputs.messages.is_array()) return Error{"TypeError: chat template input 'messages' must be a JSON array"};
        std::vector<std::pair<std::string, jinja::Value>> vars;
        vars.emplace_back("messages", jinja::valueFromJson(inputs.messages));
        vars.emplace_back("tools", jinja::valueFromJson(inputs.tools));
        vars.emplace_back("documents", jinja::valueFromJson(inputs.documents));
        vars.emplace_back("add_generation_prompt", jinja::Value::boolean(inputs.addGenerationPrompt));
        if (inputs.bosToken) vars.emplace_back("bos_token", jinja::Value::string(*inputs.bosToken));
        if (inputs.eosToken) vars.emplace_back("eos_token", jinja::Value::string(*inputs.eosToken));
        if (inputs.extraVariables.is_object()) {
            for (auto it = inputs.extraVariables.begin(); it != inputs.extraVariables.end(); ++it)
                vars.emplace_back(it.key(), jinja::valueFromJson(it.value()));
        }

        jinja::RenderLimits limits;
        limits.maxOutputBytes = inputs.limits.maxOutputBytes;
        limits.maxLoopIterations = inputs.limits.maxLoopIterations;
        limits.maxWorkBytes = inputs.limits.maxWorkBytes;
        limits.maxCallDepth = inputs.limits.maxCallDepth;
        limits.maxSteps = inputs.limits.maxSteps;
        limits.shouldStop = inputs.limits.shouldStop;
        jinja::Interpreter::Clock clock;
        if (inputs.now) {
            clock = [now = inputs.now] {
                const TemplateTime t = now();
                return jinja::DateTime{t.year, t.month, t.day, t.hour, t.minute, t.second};
            };
        }
        jinja::Interpreter interp(*m_program, limits, std::move(clock));
        return interp.render(vars);
    } catch (const jinja::JinjaError& e) {
        return toError(e, m_program->source);
    } catch (const std::bad_alloc&) {
        return Error{"LimitError: out of memory while rendering the chat template"};
    } catch (const std::exception& e) {
        return Error{std::string("TypeError: ") + e.what()};
    }
}

}  // namespace verdict::tok
