// Hand-written prompt formats, one per template family: the fallback when the interpreter
// cannot render a model's own chat template. Each one reproduces what the family's reference
// template renders (the template named in its comment, as found in tests/fixtures), for
// system/user/assistant turns, add_generation_prompt and, where noted, tools and tool calls.
// Unlike the originals they never reject a conversation shape (e.g. a system turn for Gemma
// is merged into the first user turn, as Gemma 3 does).
#include "template/chat_template.h"

#include "template/chat_template_builtin.h"
#include "template/jinja_builtins.h"
#include "template/jinja_error.h"
#include "template/jinja_string.h"

#include <ctime>

namespace verdict::tok {

namespace {

using namespace builtin_detail;

// ---- ChatML and the Qwen family ----

// Reference: llama.cpp test template for teknium/OpenHermes-2.5-Mistral-7B.
std::string chatml(const Ctx& c) {
    std::string out;
    for (const auto& m : c.msgs) out += "<|im_start|>" + m.role() + "\n" + m.content() + "<|im_end|>\n";
    if (c.gen()) out += "<|im_start|>assistant\n";
    return out;
}

const char* const kQwenToolsIntro =
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
const char* const kQwenToolsOutro =
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
    "<args-json-object>}\n</tool_call><|im_end|>\n";

std::string qwenToolList(const Ctx& c) {
    std::string out;
    for (const auto& t : c.in.tools) {
        out += '\n';
        out += toJson(t);
    }
    return out;
}

// Tool results: consecutive tool turns share one user turn of <tool_response> blocks.
void qwenToolResponse(const Ctx& c, std::size_t i, std::string& out) {
    if (i == 0 || c.msgs[i - 1].role() != "tool") out += "<|im_start|>user";
    out += "\n<tool_response>\n" + c.msgs[i].content() + "\n</tool_response>";
    if (i + 1 == c.msgs.size() || c.msgs[i + 1].role() != "tool") out += "<|im_end|>\n";
}

void qwenToolCalls(const Msg& m, std::string& out, bool rawArguments, bool newlineBeforeFirst) {
    bool first = true;
    for (const auto& call : m.toolCalls()) {
        if (!first || newlineBeforeFirst) out += "\n";
        first = false;
        out += "<tool_call>\n{\"name\": \"" + callName(call) + "\", \"arguments\": "
               + (rawArguments ? callArgumentsRaw(call) : callArgumentsJson(call)) + "}\n</tool_call>";
    }
}

// Reference: Qwen/Qwen2.5-7B-Instruct (default system prompt, Hermes-style tools). Also QwQ
// (reference Qwen/QwQ-32B): no default system prompt, earlier reasoning dropped, "<think>\n" opener.
std::string qwen25(const Ctx& c, bool qwq) {
    const std::string defaultSystem = qwq ? "" : "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
    std::string out;
    if (c.hasTools()) {
        out += "<|im_start|>system\n" + (c.firstIsSystem() ? c.msgs[0].content() : defaultSystem) + "\n\n"
               + kQwenToolsIntro + qwenToolList(c) + kQwenToolsOutro;
    } else if (c.firstIsSystem()) {
        out += "<|im_start|>system\n" + c.msgs[0].content() + "<|im_end|>\n";
    } else if (!qwq) {
        out += "<|im_start|>system\n" + defaultSystem + "<|im_end|>\n";
    }
    for (std::size_t i = 0; i < c.msgs.size(); ++i) {
        const Msg& m = c.msgs[i];
        const std::string role = m.role();
        const bool last = i + 1 == c.msgs.size();
        std::string content = m.content();
        if (qwq && role == "assistant" && !last) {
            const std::size_t end = content.rfind("</think>");
            if (end != std::string::npos) content = jinja::pyStrip(content.substr(end + 8), std::string("\n"), true, false);
        }
        if (role == "user" || (role == "system" && i != 0) || (role == "assistant" && !m.hasToolCalls())) {
            out += "<|im_start|>" + role + "\n" + content + "<|im_end|>\n";
        } else if (role == "assistant") {
            out += "<|im_start|>assistant";
            if (!m.content().empty()) out += "\n" + content;
            qwenToolCalls(m, out, false, true);
            out += "<|im_end|>\n";
        } else if (role == "tool") {
            qwenToolResponse(c, i, out);
        }
    }
    if (c.gen()) out += qwq ? "<|im_start|>assistant\n<think>\n" : "<|im_start|>assistant\n";
    return out;
}

// Reference: Qwen/Qwen3-0.6B (thinking blocks kept only after the last user query;
// enable_thinking=false in extraVariables adds the empty think block to the generation prompt).
std::string qwen3(const Ctx& c) {
    std::string out;
    if (c.hasTools()) {
        out += "<|im_start|>system\n";
        if (c.firstIsSystem()) out += c.msgs[0].content() + "\n\n";
        out += kQwenToolsIntro + qwenToolList(c) + kQwenToolsOutro;
    } else if (c.firstIsSystem()) {
        out += "<|im_start|>system\n" + c.msgs[0].content() + "<|im_end|>\n";
    }
    // Index of the last real user query (tool responses wrapped as user turns do not count).
    std::size_t lastQuery = c.msgs.empty() ? 0 : c.msgs.size() - 1;
    for (std::size_t k = c.msgs.size(); k-- > 0;) {
        const std::string content = c.msgs[k].content();
        const bool wrapped = content.rfind("<tool_response>", 0) == 0 && content.size() >= 16
                             && content.compare(content.size() - 16, 16, "</tool_response>") == 0;
        if (c.msgs[k].role() == "user" && !wrapped) {
            lastQuery = k;
            break;
        }
    }
    for (std::size_t i = 0; i < c.msgs.size(); ++i) {
        const Msg& m = c.msgs[i];
        const std::string role = m.role();
        if (role == "user" || (role == "system" && i != 0)) {
            out += "<|im_start|>" + role + "\n" + m.content() + "<|im_end|>\n";
        } else if (role == "assistant") {
            std::string content = m.content();
            std::string reasoning;
            if (m.j->contains("reasoning_content") && (*m.j)["reasoning_content"].is_string()) {
                reasoning = (*m.j)["reasoning_content"].get<std::string>();
            } else if (const std::size_t end = content.find("</think>"); end != std::string::npos) {
                std::string before = jinja::pyStrip(content.substr(0, end), std::string("\n"), false, true);
                const std::size_t open = before.rfind("<think>");
                if (open != std::string::npos) before = before.substr(open + 7);
                reasoning = jinja::pyStrip(before, std::string("\n"), true, false);
                content = jinja::pyStrip(content.substr(content.rfind("</think>") + 8), std::string("\n"), true, false);
            }
            const bool last = i + 1 == c.msgs.size();
            if (i > lastQuery && (last || !reasoning.empty())) {
                out += "<|im_start|>assistant\n<think>\n" + jinja::pyStrip(reasoning, std::string("\n"), true, true)
                       + "\n</think>\n\n" + jinja::pyStrip(content, std::string("\n"), true, false);
            } else {
                out += "<|im_start|>assistant\n" + content;
            }
            qwenToolCalls(m, out, true, !content.empty());
            out += "<|im_end|>\n";
        } else if (role == "tool") {
            qwenToolResponse(c, i, out);
        }
    }
    if (c.gen()) {
        out += "<|im_start|>assistant\n";
        if (!c.extraFlag("enable_thinking", true)) out += "<think>\n\n</think>\n\n";
    }
    return out;
}

// ---- Llama ----

// Reference: meta-llama/Llama-2-7b-chat-hf (no generation prompt: the prompt ends with [/INST]).
std::string llama2(const Ctx& c) {
    std::string out;
    const bool sys = c.firstIsSystem();
    for (std::size_t i = sys ? 1 : 0, n = 0; i < c.msgs.size(); ++i, ++n) {
        std::string content = c.msgs[i].content();
        if (n == 0 && sys) content = "<<SYS>>\n" + c.msgs[0].content() + "\n<</SYS>>\n\n" + content;
        const std::string role = c.msgs[i].role();
        if (role == "user") out += c.bos() + "[INST] " + strip(content) + " [/INST]";
        else if (role == "assistant") out += " " + strip(content) + " " + c.eos();
    }
    return out;
}

std::string llama3Header(const std::string& role) { return "<|start_header_id|>" + role + "<|end_header_id|>\n\n"; }

// Reference: Meta-Llama-3-8B-Instruct (llama.cpp's "Llama-3" test template).
std::string llama3(const Ctx& c) {
    std::string out;
    for (std::size_t i = 0; i < c.msgs.size(); ++i) {
        if (i == 0) out += c.bos();
        out += llama3Header(c.msgs[i].role()) + strip(c.msgs[i].content()) + "<|eot_id|>";
    }
    if (c.gen()) out += llama3Header("assistant");
    return out;
}

// Reference: meta-llama/Llama-3.1-8B-Instruct (date "26 Jul 2024") and Llama-3.2-3B-Instruct
// (today's date from the clock). Tools go into the first user turn (tools_in_user_message).
std::string llama31(const Ctx& c, bool todayDate, const std::string& today) {
    std::string date = todayDate ? today : "26 Jul 2024";
    if (c.in.extraVariables.is_object() && c.in.extraVariables.contains("date_string")
        && c.in.extraVariables["date_string"].is_string())
        date = c.in.extraVariables["date_string"].get<std::string>();
    std::size_t i = 0;
    std::string system;
    if (c.firstIsSystem()) {
        system = strip(c.msgs[0].content());
        i = 1;
    }
    std::string out = c.bos() + llama3Header("system");
    if (c.hasTools()) out += "Environment: ipython\n";
    out += "Cutting Knowledge Date: December 2023\nToday Date: " + date + "\n\n" + system + "<|eot_id|>";
    if (c.hasTools()) {
        if (i >= c.msgs.size())
            jinja::fail(jinja::ErrorKind::Template, "Cannot put tools in the first user message when there's no first user message!");
        out += llama3Header("user")
               + "Given the following functions, please respond with a JSON for a function call with its proper "
                 "arguments that best answers the given prompt.\n\nRespond in the format {\"name\": function name, "
                 "\"parameters\": dictionary of argument name and its value}.Do not use variables.\n\n";
        for (const auto& t : c.in.tools) out += toJson(t, std::string(4, ' ')) + "\n\n";
        out += strip(c.msgs[i].content()) + "<|eot_id|>";
        ++i;
    }
    for (; i < c.msgs.size(); ++i) {
        const Msg& m = c.msgs[i];
        const std::string role = m.role();
        const bool isTool = role == "tool" || role == "ipython";
        if (!isTool && !m.j->contains("tool_calls")) {
            out += llama3Header(role) + strip(m.content()) + "<|eot_id|>";
        } else if (m.j->contains("tool_calls")) {
            if (m.toolCalls().size() != 1) jinja::fail(jinja::ErrorKind::Template, "This model only supports single tool-calls at once!");
            const json& call = m.toolCalls()[0];
            out += llama3Header("assistant") + "{\"name\": \"" + callName(call) + "\", \"parameters\": "
                   + callArgumentsJson(call) + "}<|eot_id|>";
        } else {
            // The template tojson's anything iterable, strings included.
            out += llama3Header("ipython") + toJson((*m.j).contains("content") ? (*m.j)["content"] : json()) + "<|eot_id|>";
        }
    }
    if (c.gen()) out += llama3Header("assistant");
    return out;
}

// ---- Mistral ----

// Reference: mistralai/Mixtral-8x7B-Instruct-v0.1 ("v1": spaces around [INST], system text
// prefixed to the first user turn).
std::string mistralV1(const Ctx& c) {
    std::string out = c.bos();
    const bool sys = c.firstIsSystem();
    bool firstUser = true;
    for (std::size_t i = sys ? 1 : 0; i < c.msgs.size(); ++i) {
        const Msg& m = c.msgs[i];
        if (m.role() == "user") {
            out += " [INST] " + ((firstUser && sys) ? c.msgs[0].content() + "\n\n" : "") + m.content() + " [/INST]";
            firstUser = false;
        } else if (m.role() == "assistant") {
            out += " " + m.content() + c.eos();
        }
    }
    return out;
}

// [AVAILABLE_TOOLS] list as Mistral's v3 templates build it: string fields are quoted raw.
std::string mistralToolList(const Ctx& c) {
    std::string out = "[";
    for (std::size_t t = 0; t < c.in.tools.size(); ++t) {
        const json& fn = callFunction(c.in.tools[t]);
        out += "{\"type\": \"function\", \"function\": {";
        bool first = true;
        for (auto it = fn.begin(); it != fn.end(); ++it) {
            if (it.key() == "return") continue;
            if (!first) out += ", ";
            first = false;
            if (it.value().is_string()) out += "\"" + it.key() + "\": \"" + it.value().get<std::string>() + "\"";
            else out += "\"" + it.key() + "\": " + toJson(it.value());
        }
        out += "}}";
        out += t + 1 < c.in.tools.size() ? ", " : "]";
    }
    return out;
}

// References: Mistral-Large-Instruct-2407 ("v3": "[INST] x[/INST] y</s>") and
// Mistral-Nemo-Instruct-2407 ("v3-tekken": no spaces). The system prompt joins the last user
// turn when that turn is the last message; tools are listed before the last user turn.
std::string mistralV3(const Ctx& c, bool tekken) {
    const std::string sp = tekken ? "" : " ";
    const bool sys = c.firstIsSystem();
    std::size_t lastUser = c.msgs.size();
    for (std::size_t i = 0; i < c.msgs.size(); ++i)
        if (c.msgs[i].role() == "user") lastUser = i;
    std::string out = c.bos();
    for (std::size_t i = sys ? 1 : 0; i < c.msgs.size(); ++i) {
        const Msg& m = c.msgs[i];
        const std::string role = m.role();
        if (role == "user") {
            if (c.hasTools() && i == lastUser) out += "[AVAILABLE_TOOLS]" + sp + mistralToolList(c) + "[/AVAILABLE_TOOLS]";
            // The template prepends the system prompt only when this user turn is the last message.
            const std::string prefix = (i + 1 == c.msgs.size() && sys) ? c.msgs[0].content() + "\n\n" : "";
            out += "[INST]" + sp + prefix + m.content() + "[/INST]";
        } else if (role == "assistant" && m.hasToolCalls()) {
            out += "[TOOL_CALLS]" + sp + "[";
            for (std::size_t k = 0; k < m.toolCalls().size(); ++k) {
                const json& call = m.toolCalls()[k];
                std::string fn = toJson(callFunction(call));
                fn.pop_back();  // reopen the object to append the id
                const std::string id = call.contains("id") && call["id"].is_string() ? call["id"].get<std::string>() : "";
                out += fn + ", \"id\": \"" + id + "\"}" + (k + 1 < m.toolCalls().size() ? ", " : "]" + c.eos());
            }
        } else if (role == "assistant") {
            out += tekken ? m.content() + c.eos() : " " + strip(m.content()) + c.eos();
        } else if (role == "tool" || role == "tool_results") {
            const std::string id = m.j->contains("tool_call_id") && (*m.j)["tool_call_id"].is_string()
                                       ? (*m.j)["tool_call_id"].get<std::string>() : "";
            out += "[TOOL_RESULTS]" + sp + "{\"content\": " + m.content() + ", \"call_id\": \"" + id + "\"}[/TOOL_RESULTS]";
        }
    }
    return out;
}

// Reference: mistralai/Mistral-7B-Instruct-v0.2 as shipped in GGUF ("legacy": "[INST] x [/INST]y</s>";
// the original rejects a system turn, here it is prefixed to the first user turn).
std::string mistralLegacy(const Ctx& c) {
    std::string out = c.bos();
    const bool sys = c.firstIsSystem();
    bool firstUser = true;
    for (std::size_t i = sys ? 1 : 0; i < c.msgs.size(); ++i) {
        const Msg& m = c.msgs[i];
        if (m.role() == "user") {
            out += "[INST] " + ((firstUser && sys) ? c.msgs[0].content() + "\n\n" : "") + m.content() + " [/INST]";
            firstUser = false;
        } else if (m.role() == "assistant") {
            out += m.content() + c.eos();
        }
    }
    return out;
}

// Reference: mistralai/Mistral-Large-Instruct-2411 ("v7": [SYSTEM_PROMPT] turns).
std::string mistralV7(const Ctx& c) {
    std::string out = c.bos();
    for (const auto& m : c.msgs) {
        const std::string role = m.role();
        if (role == "user") out += "[INST] " + m.content() + "[/INST]";
        else if (role == "system") out += "[SYSTEM_PROMPT] " + m.content() + "[/SYSTEM_PROMPT]";
        else if (role == "assistant") out += " " + m.content() + c.eos();
    }
    return out;
}

}  // namespace

std::vector<std::string> builtinTemplateFamilies() {
    std::vector<std::string> out = {"chatml",     "qwen2.5",    "qwq",        "qwen3",      "llama2",
                                    "llama3",     "llama3.1",   "llama3.2",   "mistral-v1", "mistral-legacy", "mistral-v3",
                                    "mistral-v3-tekken", "mistral-v7"};
    for (auto& f : otherFamilies()) out.push_back(std::move(f));
    return out;
}

Result<std::string> renderBuiltinTemplate(std::string_view family, const ChatTemplateInputs& in) {
    try {
        if (!in.messages.is_array()) return Error{"TypeError: chat template input 'messages' must be a JSON array"};
        Ctx c{in, {}};
        for (const auto& m : in.messages) {
            if (!m.is_object()) return Error{"TypeError: every chat message must be a JSON object"};
            c.msgs.push_back(Msg{&m});
        }
        if (family == "chatml") return chatml(c);
        if (family == "qwen2.5") return qwen25(c, false);
        if (family == "qwq") return qwen25(c, true);
        if (family == "qwen3") return qwen3(c);
        if (family == "llama2") return llama2(c);
        if (family == "llama3") return llama3(c);
        if (family == "llama3.1" || family == "llama3.2") {
            TemplateTime t;
            if (in.now) {
                t = in.now();
            } else {
                const std::time_t now = std::time(nullptr);
                std::tm tm{};
                localtime_r(&now, &tm);
                t = TemplateTime{tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
            }
            const std::string today = jinja::pyStrftime("%d %b %Y", jinja::DateTime{t.year, t.month, t.day, t.hour, t.minute, t.second});
            return llama31(c, family == "llama3.2", today);
        }
        if (family == "mistral-v1") return mistralV1(c);
        if (family == "mistral-legacy") return mistralLegacy(c);
        if (family == "mistral-v3") return mistralV3(c, false);
        if (family == "mistral-v3-tekken") return mistralV3(c, true);
        if (family == "mistral-v7") return mistralV7(c);
        bool known = false;
        std::string out = renderOtherFamily(family, c, known);
        if (!known) return Error{"unknown template family '" + std::string(family) + "'"};
        return out;
    } catch (const jinja::JinjaError& e) {
        return Error{std::string(jinja::errorKindName(e.kind())) + ": " + e.message()};
    } catch (const std::exception& e) {
        return Error{std::string("TypeError: ") + e.what()};
    }
}

}  // namespace verdict::tok
