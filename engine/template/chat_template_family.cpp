// Template family detection by characteristic markers, and the template hash.
#include "template/chat_template.h"
#include "util/sha256.h"

namespace verdict::tok {

std::string detectTemplateFamily(std::string_view source) {
    auto has = [source](std::string_view marker) { return source.find(marker) != std::string_view::npos; };
    if (has("<|im_middle|>")) return "kimi-k2";
    if (has("<｜User｜>") || has("<｜Assistant｜>")) {
        if (has("<｜Assistant｜></think>")) return "deepseek-v3.1";
        if (has("<think>")) return "deepseek-r1";
        return "deepseek-v3";
    }
    if (has("<|START_OF_TURN_TOKEN|>")) return has("<|START_RESPONSE|>") ? "command-r7b" : "command-r";
    if (has("<|start_header_id|>")) {
        if (has("Cutting Knowledge Date")) return has("strftime_now") ? "llama3.2" : "llama3.1";
        return "llama3";
    }
    if (has("<start_of_turn>")) return "gemma";
    if (has("<|im_sep|>")) return "phi4";
    if (has("<|start_of_role|>")) return "granite";
    if (has("[gMASK]")) return has("[gMASK]<sop>") ? "glm4" : "chatglm3";
    if (has("<|end|>") && (has("<|user|>") || has("<|assistant|>"))) return "phi3";
    if (has("<|user|>") && has("<|assistant|>")) return "glmedge";
    if (has("<|im_start|>")) {
        if (has("<think>")) return (has("enable_thinking") || has("reasoning_content")) ? "qwen3" : "qwq";
        if (has("Qwen")) return "qwen2.5";
        return "chatml";
    }
    if (has("[INST]")) {
        if (has("<<SYS>>")) return "llama2";
        if (has("[SYSTEM_PROMPT]")) return "mistral-v7";
        if (has(" [INST] ")) return "mistral-v1";
        if (has("[INST] ") && has(" [/INST]")) return "mistral-legacy";
        if (has("[INST] ")) return "mistral-v3";
        return "mistral-v3-tekken";
    }
    if (has("GPT4 Correct")) return "openchat";
    if (has("<用户>")) return "minicpm";
    if (has("<|role_start|>")) return "megrez";
    if (has("### Instruction:")) return "deepseek-coder";
    if (has("USER: ") && has("ASSISTANT:")) return "vicuna";
    if (has("Human: ") && has("Assistant: ")) return "orion";
    if (has("User: ") && has("Assistant: ")) return "deepseek-v2";
    return "unknown";
}

std::string templateHash(std::string_view source) { return util::sha256Hex(source); }

}  // namespace verdict::tok
