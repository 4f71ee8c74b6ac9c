// libFuzzer entry: any template text must parse into a ChatTemplate or a clean
// TemplateSyntaxError, and a parsed one must render a small conversation or fail with a clean
// Error (UndefinedError, TypeError, LimitError, ...), never crash, hang or allocate absurdly.
//
// The step bound is lowered to 20,000 so that every input finishes in milliseconds: each of the
// 201 chat templates of the fixtures renders these conversations within 2,000 steps (measured
// 2026-12-02), and with 200,000 the inputs that run to the bound made up most of the time (420
// against 1,220 executions a second, same corpus). The output, string work and loop bounds stay
// the engine's defaults, because those are what protect a real render.
// Odd-length inputs get the tool-calling conversation (tools, tool_calls, a tool answer).
#include "template/chat_template.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

using nlohmann::ordered_json;

verdict::tok::ChatTemplateInputs makeInputs(bool tools) {
    verdict::tok::ChatTemplateInputs in;
    in.messages = ordered_json::array({
        {{"role", "system"}, {"content", "You are a helpful assistant."}},
        {{"role", "user"}, {"content", "What is 2+2?"}},
        {{"role", "assistant"}, {"content", "4"}},
        {{"role", "user"}, {"content", "And in \xE4\xB8\xAD\xE6\x96\x87?"}},
    });
    if (tools) {
        in.tools = ordered_json::parse(R"([{"type": "function", "function": {"name": "get_weather",
            "description": "Weather of a city", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])");
        in.messages.push_back({{"role", "assistant"},
                               {"content", ""},
                               {"tool_calls", ordered_json::parse(R"([{"id": "call_1", "type": "function",
                                   "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}])")}});
        in.messages.push_back({{"role", "tool"}, {"content", "{\"temp\": 21}"}, {"tool_call_id", "call_1"}});
    }
    in.addGenerationPrompt = true;
    in.bosToken = "<s>";
    in.eosToken = "</s>";
    in.now = [] { return verdict::tok::TemplateTime{2026, 1, 15, 12, 0, 0}; };
    in.limits.maxSteps = 20'000;
    return in;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const verdict::tok::ChatTemplateInputs kPlain = makeInputs(false);
    static const verdict::tok::ChatTemplateInputs kTools = makeInputs(true);
    auto tmpl = verdict::tok::ChatTemplate::parse(std::string_view(reinterpret_cast<const char*>(data), size));
    if (!tmpl) return 0;
    auto out = tmpl->render(size % 2 ? kTools : kPlain);
    (void)out;
    return 0;
}
