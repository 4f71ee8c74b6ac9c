// Chat templates: render a model's `tokenizer.chat_template` (Jinja text) into a prompt.
//
// The renderer is Verdict's own Jinja-subset interpreter (jinja_*.h) configured exactly like
// Hugging Face transformers' apply_chat_template(tokenize=False): jinja2 sandbox with
// trim_blocks, lstrip_blocks, loopcontrols, default Undefined, transformers' tojson,
// raise_exception and strftime_now. Variables passed: messages, tools, documents,
// add_generation_prompt, bos_token / eos_token (only when set), plus extraVariables.
//
// Failure contract (every function here): nothing throws; errors are verdict::Error values.
//   parse():  "TemplateSyntaxError: <what> (line L, column C)"
//   render(): "TemplateError: <message>"   for raise_exception(message) in the template, verbatim;
//             "<Kind>: <what> (line L, column C)" otherwise, Kind one of UndefinedError,
//             TypeError, ValueError, SecurityError (mutating call in the sandbox),
//             TemplateRuntimeError (a filter or test jinja2 lacks, e.g. from_json) or LimitError
//             (a TemplateLimits bound was hit: huge loops, runaway output, deep recursion).
// Any byte string is accepted as message content (invalid UTF-8 passes through unchanged).
#pragma once

#include "verdict/engine/result.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::tok {

namespace jinja {
struct Program;
}

// One message, for callers that do not build JSON themselves.
struct ChatMessage {
    std::string role;                // "system", "user", "assistant", "tool", ...
    std::string content;
    nlohmann::ordered_json toolCalls;  // null, or [{"id","type":"function","function":{"name","arguments"}}]
    std::string name;                // optional; emitted only when non-empty
    std::string toolCallId;          // optional (role "tool"); emitted only when non-empty
};

// [{"role":..,"content":..}, ...] with tool_calls / name / tool_call_id where set.
nlohmann::ordered_json chatMessagesToJson(const std::vector<ChatMessage>& messages);

// Local wall-clock time as seen by strftime_now().
struct TemplateTime {
    int year = 1970;
    int month = 1;  // 1..12
    int day = 1;
    int hour = 0;
    int minute = 0;
    int second = 0;
};

// Resource bounds of one render; exceeding one fails the render with "LimitError: ...".
struct TemplateLimits {
    std::size_t maxOutputBytes = std::size_t{64} << 20;   // output and any single string
    std::uint64_t maxLoopIterations = 1'000'000;          // all for-loop iterations, range() length
    std::uint64_t maxWorkBytes = std::uint64_t{2} << 30;  // bytes built by string operations
    int maxCallDepth = 200;                               // nested macro calls / recursive loops
    std::uint64_t maxSteps = 20'000'000;                  // statements + expressions evaluated (~1 s)
    std::function<bool()> shouldStop;                     // asked every 4096 steps: true cancels the render
};

struct ChatTemplateInputs {
    // Array of message objects; key order is kept (it shows in tojson output).
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    nlohmann::ordered_json tools;      // null: `tools` is None (defined, but none)
    nlohmann::ordered_json documents;  // null: `documents` is None
    bool addGenerationPrompt = true;
    std::optional<std::string> bosToken;  // nullopt: `bos_token` is undefined in the template
    std::optional<std::string> eosToken;
    // More variables (e.g. {"enable_thinking": false}); they override the ones above.
    nlohmann::ordered_json extraVariables = nlohmann::ordered_json::object();
    // Clock for strftime_now(); empty means the system's local time. Tests freeze it.
    std::function<TemplateTime()> now;
    TemplateLimits limits;
};

class ChatTemplate {
public:
    // Lexes and parses the template. Fails with "TemplateSyntaxError: ... (line L, column C)".
    static Result<ChatTemplate> parse(std::string_view source);

    // Renders the prompt. See the failure contract at the top of this file. Thread-safe: a
    // parsed template can be rendered from several threads at once.
    Result<std::string> render(const ChatTemplateInputs& inputs) const;

    const std::string& source() const { return m_source; }

private:
    ChatTemplate(std::string source, std::shared_ptr<const jinja::Program> program);
    std::string m_source;
    std::shared_ptr<const jinja::Program> m_program;
};

// Family of a template by characteristic markers (special tokens, fixed phrases): "chatml",
// "qwen2.5", "qwq", "qwen3", "llama2", "llama3", "llama3.1", "llama3.2", "mistral-v1",
// "mistral-legacy", "mistral-v3", "mistral-v3-tekken", "mistral-v7", "gemma", "phi3", "phi4",
// "deepseek-v3", "deepseek-v3.1", "deepseek-r1", "deepseek-v2", "deepseek-coder", "kimi-k2",
// "command-r", "command-r7b", "glm4", "chatglm3", "glmedge", "granite", "vicuna", "openchat",
// "minicpm", "megrez", "orion", or "unknown". Every name except "unknown" and "command-r7b"
// has a built-in renderer. Never fails.
std::string detectTemplateFamily(std::string_view source);

// Families renderBuiltinTemplate() implements.
std::vector<std::string> builtinTemplateFamilies();

// A hand-written renderer of `family`'s prompt format (reproducing its reference template),
// used as the fallback when the interpreter cannot render a model's own template; the caller
// records that it fell back. Covers system/user/assistant turns, add_generation_prompt, bos/eos;
// tool definitions and tool calls for qwen2.5, qwq, qwen3, llama3.1/3.2, mistral-v3(-tekken),
// kimi-k2, deepseek-*, granite. It never rejects a conversation shape the way some templates do
// (a Gemma system turn is merged into the first user turn, as Gemma 3 does).
// Fails with "unknown template family 'x'", or "TemplateError: ..." for inputs the format
// cannot hold (llama3.1 tools without a user message), or "TypeError: ..." for malformed input.
Result<std::string> renderBuiltinTemplate(std::string_view family, const ChatTemplateInputs& inputs);

// Lower-case hex SHA-256 of the exact template bytes, for reproducibility records.
std::string templateHash(std::string_view source);

}  // namespace verdict::tok
