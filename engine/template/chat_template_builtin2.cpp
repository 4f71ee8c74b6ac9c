// Built-in chat formats, part 2: Gemma, Phi, DeepSeek, Kimi, Command-R, GLM, Granite and a few
// older community formats. Each reproduces its reference template (named in the comment).
#include "template/chat_template_builtin.h"

#include "template/jinja_error.h"

namespace verdict::tok::builtin_detail {

namespace {

// Reference: google/gemma-3 (system text prefixed to the first user turn, "assistant" -> "model").
std::string gemma(const Ctx& c) {
    std::string out = c.bos();
    const bool sys = c.firstIsSystem();
    const std::string prefix = sys ? c.msgs[0].content() + "\n\n" : "";
    for (std::size_t i = sys ? 1 : 0, n = 0; i < c.msgs.size(); ++i, ++n) {
        const std::string role = c.msgs[i].role() == "assistant" ? "model" : c.msgs[i].role();
        out += "<start_of_turn>" + role + "\n" + (n == 0 ? prefix : "");
        const json& content = (*c.msgs[i].j).contains("content") ? (*c.msgs[i].j)["content"] : json();
        if (content.is_array()) {
            // Multimodal parts: an image placeholder per image, trimmed text per text part.
            for (const auto& part : content) {
                const std::string type = part.contains("type") && part["type"].is_string() ? part["type"].get<std::string>() : "";
                if (type == "image") out += "<start_of_image>";
                else if (type == "text" && part.contains("text") && part["text"].is_string()) out += strip(part["text"].get<std::string>());
            }
        } else {
            out += strip(c.msgs[i].content());
        }
        out += "<end_of_turn>\n";
    }
    if (c.gen()) out += "<start_of_turn>model\n";
    return out;
}

// Reference: microsoft/Phi-3.5-mini-instruct (EOS closes a prompt without generation prompt).
std::string phi3(const Ctx& c) {
    std::string out;
    for (const auto& m : c.msgs) {
        const std::string role = m.role();
        if (role == "system" && !m.content().empty()) out += "<|system|>\n" + m.content() + "<|end|>\n";
        else if (role == "user" || role == "assistant") out += "<|" + role + "|>\n" + m.content() + "<|end|>\n";
    }
    out += c.gen() ? "<|assistant|>\n" : c.eos();
    return out;
}

// Reference: microsoft/phi-4 (every user turn is followed by the assistant header).
std::string phi4(const Ctx& c) {
    std::string out;
    for (const auto& m : c.msgs) {
        const std::string role = m.role();
        if (role == "system") out += "<|im_start|>system<|im_sep|>" + m.content() + "<|im_end|>";
        else if (role == "user") out += "<|im_start|>user<|im_sep|>" + m.content() + "<|im_end|><|im_start|>assistant<|im_sep|>";
        else if (role == "assistant") out += m.content() + "<|im_end|>";
    }
    return out;
}

const char* const kDsEnd = "<｜end▁of▁sentence｜>";

// Reference: deepseek-ai/DeepSeek-V3 (systems joined by a blank line) and the
// DeepSeek-R1-Distill templates (last system only, reasoning dropped from earlier answers,
// "<think>\n" opens the generation). Tool calls and outputs follow those templates.
std::string deepseek(const Ctx& c, bool r1) {
    std::string system;
    bool firstSystem = true;
    for (const auto& m : c.msgs) {
        if (m.role() != "system") continue;
        if (r1) system = m.content();
        else system += (firstSystem ? "" : "\n\n") + m.content();
        firstSystem = false;
    }
    std::string out = c.bos() + system;
    bool isTool = false;
    bool isFirstCall = false;
    bool outputFirst = true;
    for (const auto& m : c.msgs) {
        const std::string role = m.role();
        if (role == "user") {
            isTool = false;
            out += "<｜User｜>" + m.content();
        } else if (role == "assistant" && m.contentIsNull()) {
            isTool = false;
            for (const auto& call : m.toolCalls()) {
                const std::string type = call.contains("type") && call["type"].is_string() ? call["type"].get<std::string>() : "function";
                const std::string body = type + "<｜tool▁sep｜>" + callName(call) + "\n```json\n" + callArgumentsRaw(call) + "\n```<｜tool▁call▁end｜>";
                if (!isFirstCall) {
                    out += "<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>" + body;
                    isFirstCall = true;
                } else {
                    out += "\n<｜tool▁call▁begin｜>" + body + "<｜tool▁calls▁end｜>" + kDsEnd;
                }
            }
        } else if (role == "assistant") {
            if (isTool) {
                out += "<｜tool▁outputs▁end｜>" + m.content() + kDsEnd;
                isTool = false;
            } else {
                std::string content = m.content();
                if (r1) {
                    const std::size_t end = content.rfind("</think>");
                    if (end != std::string::npos) content = content.substr(end + 8);
                }
                out += "<｜Assistant｜>" + content + kDsEnd;
            }
        } else if (role == "tool") {
            isTool = true;
            out += (outputFirst ? "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>" : "\n<｜tool▁output▁begin｜>") + m.content()
                   + "<｜tool▁output▁end｜>";
            outputFirst = false;
        }
    }
    if (isTool) out += "<｜tool▁outputs▁end｜>";
    if (c.gen() && !isTool) out += r1 ? "<｜Assistant｜><think>\n" : "<｜Assistant｜>";
    return out;
}

// Reference: deepseek-ai/DeepSeek-V3.1 (non-thinking unless extraVariables {"thinking": true}).
std::string deepseekV31(const Ctx& c) {
    const bool thinking = c.extraFlag("thinking", false);
    std::string system;
    bool firstSystem = true;
    for (const auto& m : c.msgs) {
        if (m.role() != "system") continue;
        system += (firstSystem ? "" : "\n\n") + m.content();
        firstSystem = false;
    }
    std::string out = c.bos() + system;
    bool lastUser = false;
    bool isTool = false;
    for (const auto& m : c.msgs) {
        const std::string role = m.role();
        if (role == "user") {
            isTool = false;
            lastUser = true;
            out += "<｜User｜>" + m.content();
        } else if (role == "assistant" && m.j->contains("tool_calls") && !(*m.j)["tool_calls"].is_null()) {
            if (lastUser) out += "<｜Assistant｜></think>";
            lastUser = false;
            isTool = false;
            bool first = true;
            for (const auto& call : m.toolCalls()) {
                const std::string body = callName(call) + "<｜tool▁sep｜>" + callArgumentsRaw(call) + "<｜tool▁call▁end｜>";
                if (first) out += (m.contentIsNull() ? "" : m.content()) + "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>" + body;
                else out += "<｜tool▁call▁begin｜>" + body;
                first = false;
            }
            out += std::string("<｜tool▁calls▁end｜>") + kDsEnd;
        } else if (role == "assistant") {
            if (lastUser) {
                const bool prefix = m.j->contains("prefix") && (*m.j)["prefix"].is_boolean() && (*m.j)["prefix"].get<bool>();
                out += std::string("<｜Assistant｜>") + (prefix && thinking ? "<think>" : "</think>");
            }
            lastUser = false;
            std::string content = m.content();
            if (!isTool) {
                const std::size_t end = content.find("</think>");
                if (end != std::string::npos) content = content.substr(end + 8);
            }
            isTool = false;
            out += content + kDsEnd;
        } else if (role == "tool") {
            lastUser = false;
            isTool = true;
            out += "<｜tool▁output▁begin｜>" + m.content() + "<｜tool▁output▁end｜>";
        }
    }
    if (c.gen() && lastUser && !isTool) out += std::string("<｜Assistant｜>") + (thinking ? "<think>" : "</think>");
    return out;
}

// Reference: moonshotai/Kimi-K2-Instruct (tool declarations, default system prompt).
std::string kimiK2(const Ctx& c) {
    std::string out;
    if (c.hasTools()) out += "<|im_system|>tool_declare<|im_middle|>" + toJson(c.in.tools) + "<|im_end|>";
    for (std::size_t i = 0; i < c.msgs.size(); ++i) {
        const Msg& m = c.msgs[i];
        const std::string role = m.role();
        if (i == 0 && !c.firstIsSystem()) out += "<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|>";
        if (role == "system") out += "<|im_system|>system<|im_middle|>";
        else if (role == "user") out += "<|im_user|>user<|im_middle|>";
        else if (role == "assistant") out += "<|im_assistant|>assistant<|im_middle|>";
        else if (role == "tool") out += "<|im_system|>tool<|im_middle|>";
        if (role == "assistant" && m.hasToolCalls()) {
            out += m.content() + "<|tool_calls_section_begin|>";
            for (std::size_t k = 0; k < m.toolCalls().size(); ++k) {
                const json& call = m.toolCalls()[k];
                out += "<|tool_call_begin|>functions." + callName(call) + ":" + std::to_string(k)
                       + "<|tool_call_argument_begin|>" + callArgumentsJson(call) + "<|tool_call_end|>";
            }
            out += "<|tool_calls_section_end|>";
        } else if (role == "tool") {
            const std::string id = m.j->contains("tool_call_id") && (*m.j)["tool_call_id"].is_string()
                                       ? (*m.j)["tool_call_id"].get<std::string>() : "";
            out += "## Return of " + id + "\\n" + m.content();  // the template prints a literal "\n"
        } else {
            out += m.content();
        }
        out += "<|im_end|>";
    }
    if (c.gen()) out += "<|im_assistant|>assistant<|im_middle|>";
    return out;
}

// Reference: CohereForAI/c4ai-command-r-plus (default, non-tool template).
std::string commandR(const Ctx& c) {
    std::string out = c.bos();
    const bool sys = c.firstIsSystem();
    if (sys) out += "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>" + c.msgs[0].content() + "<|END_OF_TURN_TOKEN|>";
    for (std::size_t i = sys ? 1 : 0; i < c.msgs.size(); ++i) {
        const std::string role = c.msgs[i].role();
        if (role == "user") out += "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>" + strip(c.msgs[i].content()) + "<|END_OF_TURN_TOKEN|>";
        else if (role == "assistant")
            out += "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>" + strip(c.msgs[i].content()) + "<|END_OF_TURN_TOKEN|>";
    }
    if (c.gen()) out += "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>";
    return out;
}

// Reference: THUDM/glm-4-9b-chat (empty turns are skipped; tools are per-message in GLM-4).
std::string glm4(const Ctx& c) {
    std::string out = "[gMASK]<sop>";
    for (const auto& m : c.msgs) {
        if (!m.content().empty()) out += "<|" + m.role() + "|>\n" + m.content();
    }
    if (c.gen()) out += "<|assistant|>";
    return out;
}

// Reference: THUDM/chatglm3-6b (llama.cpp's ChatGLM3 test template; note the space after "\n").
std::string chatglm3(const Ctx& c) {
    std::string out;
    for (std::size_t i = 0; i < c.msgs.size(); ++i) {
        if (i == 0) out += "[gMASK]sop";
        out += "<|" + c.msgs[i].role() + "|>\n " + c.msgs[i].content();
    }
    if (c.gen()) out += "<|assistant|>";
    return out;
}

// Reference: ibm-granite/granite-3.0-8b-instruct.
std::string granite(const Ctx& c) {
    std::string out;
    if (c.hasTools()) {
        out += "<|start_of_role|>available_tools<|end_of_role|>\n";
        for (std::size_t t = 0; t < c.in.tools.size(); ++t) {
            out += toJson(c.in.tools[t], std::string(4, ' '));
            if (t + 1 < c.in.tools.size()) out += "\n\n";
        }
        out += "<|end_of_text|>\n";
    }
    for (std::size_t i = 0; i < c.msgs.size(); ++i) {
        const std::string role = c.msgs[i].role();
        const std::string content = c.msgs[i].content();
        if (role == "system" || role == "user" || role == "assistant" || role == "tool_response")
            out += "<|start_of_role|>" + role + "<|end_of_role|>" + content + "<|end_of_text|>\n";
        else if (role == "assistant_tool_call")
            out += "<|start_of_role|>assistant<|end_of_role|><|tool_call|>" + content + "<|end_of_text|>\n";
        if (i + 1 == c.msgs.size() && c.gen()) out += "<|start_of_role|>assistant<|end_of_role|>";
    }
    return out;
}

// Reference: eachadea/vicuna-13b-1.1 (llama.cpp test template).
std::string vicuna(const Ctx& c) {
    std::string out;
    for (const auto& m : c.msgs) {
        const std::string role = m.role();
        if (role == "system") out += m.content() + "\n\n";
        else if (role == "user") out += "USER: " + m.content() + "\n";
        else out += "ASSISTANT: " + m.content() + "</s>\n";
    }
    if (c.gen()) out += "ASSISTANT:";
    return out;
}

// Reference: openchat/openchat-3.5-0106.
std::string openchat(const Ctx& c) {
    std::string out = c.bos();
    for (const auto& m : c.msgs) out += "GPT4 Correct " + jinja::pyTitle(m.role()) + ": " + m.content() + "<|end_of_turn|>";
    if (c.gen()) out += "GPT4 Correct Assistant:";
    return out;
}

// Reference: MiniCPM-3B-OpenHermes-2.5-v2 (llama.cpp test template; no generation prompt).
std::string minicpm(const Ctx& c) {
    std::string out;
    for (const auto& m : c.msgs) {
        if (m.role() == "user") out += "<用户>" + strip(m.content()) + "<AI>";
        else out += strip(m.content());
    }
    return out;
}

// Reference: Infinigence/Megrez-3B-Instruct (default Chinese system prompt).
std::string megrez(const Ctx& c) {
    std::string out;
    for (std::size_t i = 0; i < c.msgs.size(); ++i) {
        if (i == 0 && !c.firstIsSystem())
            out += "<|role_start|>system<|role_end|>你是Megrez-3B-Instruct，将针对用户的问题给出详细的、积极的回答。<|turn_end|>";
        out += "<|role_start|>" + c.msgs[i].role() + "<|role_end|>" + c.msgs[i].content() + "<|turn_end|>";
    }
    if (c.gen()) out += "<|role_start|>assistant<|role_end|>";
    return out;
}

// Reference: THUDM/glm-edge (llama.cpp's GLMEdge test template).
std::string glmEdge(const Ctx& c) {
    std::string out;
    for (const auto& m : c.msgs) {
        const std::string role = m.role();
        if (role == "system" || role == "user" || role == "assistant") out += "<|" + role + "|>\n" + m.content();
    }
    if (c.gen()) out += "<|assistant|>";
    return out;
}

// Reference: deepseek-ai/deepseek-coder-33b-instruct (default system prompt when none is given).
std::string deepseekCoder(const Ctx& c) {
    bool hasSystem = false;
    for (const auto& m : c.msgs) hasSystem = hasSystem || m.role() == "system";
    std::string out = c.bos();
    if (!hasSystem) {
        out += "You are an AI programming assistant, utilizing the Deepseek Coder model, developed by Deepseek "
               "Company, and you only answer questions related to computer science. For politically sensitive "
               "questions, security and privacy issues, and other non-computer science questions, you will refuse "
               "to answer\n";
    }
    for (const auto& m : c.msgs) {
        const std::string role = m.role();
        if (role == "system") out += m.content();
        else if (role == "user") out += "### Instruction:\n" + m.content() + "\n";
        else out += "### Response:\n" + m.content() + "\n<|EOT|>\n";
    }
    if (c.gen()) out += "### Response:\n";
    return out;
}

// Reference: deepseek-ai/DeepSeek-V2-Lite-Chat (llama.cpp's DeepSeek-V2 test template).
std::string deepseekV2(const Ctx& c) {
    std::string out = c.bos();
    for (const auto& m : c.msgs) {
        const std::string role = m.role();
        if (role == "user") out += "User: " + m.content() + "\n\n";
        else if (role == "assistant") out += "Assistant: " + m.content() + c.eos();
        else if (role == "system") out += m.content() + "\n\n";
    }
    if (c.gen()) out += "Assistant:";
    return out;
}

// Reference: OrionStarAI/Orion-14B-Chat (no generation prompt; the system turn is dropped).
std::string orion(const Ctx& c) {
    std::string out;
    for (std::size_t i = 0; i < c.msgs.size(); ++i) {
        if (i == 0) out += c.bos();
        const std::string role = c.msgs[i].role();
        if (role == "user") out += "Human: " + c.msgs[i].content() + "\n\nAssistant: " + c.eos();
        else if (role == "assistant") out += c.msgs[i].content() + c.eos();
    }
    return out;
}

}  // namespace

std::vector<std::string> otherFamilies() {
    return {"gemma",     "phi3",     "phi4",      "deepseek-v3", "deepseek-v3.1", "deepseek-r1", "kimi-k2",
            "command-r", "glm4",     "chatglm3",  "granite",     "vicuna",        "openchat",    "minicpm",
            "megrez",    "glmedge",  "deepseek-coder", "deepseek-v2", "orion"};
}

std::string renderOtherFamily(std::string_view family, const Ctx& c, bool& known) {
    known = true;
    if (family == "gemma") return gemma(c);
    if (family == "phi3") return phi3(c);
    if (family == "phi4") return phi4(c);
    if (family == "deepseek-v3") return deepseek(c, false);
    if (family == "deepseek-r1") return deepseek(c, true);
    if (family == "deepseek-v3.1") return deepseekV31(c);
    if (family == "kimi-k2") return kimiK2(c);
    if (family == "command-r") return commandR(c);
    if (family == "glm4") return glm4(c);
    if (family == "chatglm3") return chatglm3(c);
    if (family == "granite") return granite(c);
    if (family == "vicuna") return vicuna(c);
    if (family == "openchat") return openchat(c);
    if (family == "minicpm") return minicpm(c);
    if (family == "megrez") return megrez(c);
    if (family == "glmedge") return glmEdge(c);
    if (family == "deepseek-coder") return deepseekCoder(c);
    if (family == "deepseek-v2") return deepseekV2(c);
    if (family == "orion") return orion(c);
    known = false;
    return {};
}

}  // namespace verdict::tok::builtin_detail
