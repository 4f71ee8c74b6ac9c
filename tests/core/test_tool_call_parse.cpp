// Tool calls in raw model output (core/run/tool_call_parse.h): every chat-template format with one
// and two calls, cut-off endings, unreadable bodies, double-encoded arguments, reasoning blocks,
// prose that is not a call, the content left after the markup is removed, and linear work.
#include "core/run/tool_call_parse.h"

#include <QtTest/QtTest>

#include <string>

using namespace verdict::core;

namespace {

// One line per call: "id|name|arguments".
QString calls(const ParsedToolCalls& r) {
    QStringList lines;
    for (const ToolCall& c : r.calls) lines << QString::fromStdString(c.id + "|" + c.name + "|" + c.arguments);
    return lines.join("\n");
}

QString str(const std::string& s) {
    return QString::fromStdString(s);
}

bool startsWith(const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
}

}  // namespace

class TestToolCallParse : public QObject {
    Q_OBJECT
private slots:
    // ---- hermes ----
    void hermesOne() {
        const auto r = parseToolCalls(
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n"
            "</tool_call>");
        QCOMPARE(str(r.format), QString("hermes"));
        QCOMPARE(calls(r), QString("|get_weather|{\"city\":\"Paris\",\"unit\":\"celsius\"}"));
        QCOMPARE(str(r.content), QString(""));
        QVERIFY(r.problems.empty());
    }
    void hermesTwoWithProse() {
        const auto r = parseToolCalls(
            "Let me check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
            "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"parameters\": {\"tz\": \"CET\"}}\n</tool_call>\n");
        QCOMPARE(str(r.format), QString("hermes"));
        QCOMPARE(calls(r), QString("|get_weather|{\"city\":\"Paris\"}\n|get_time|{\"tz\":\"CET\"}"));
        QCOMPARE(str(r.content), QString("Let me check both."));
        QVERIFY(r.problems.empty());
    }
    void hermesProseBetween() {
        const auto r = parseToolCalls(
            "First.<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call> Then. "
            "<tool_call>{\"name\": \"b\", \"arguments\": {\"n\": 2}}</tool_call> Done.");
        QCOMPARE(calls(r), QString("|a|{}\n|b|{\"n\":2}"));
        QCOMPARE(str(r.content), QString("First. Then.  Done."));
    }
    void hermesUnclosedAtEnd() {
        const auto r = parseToolCalls("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}");
        QCOMPARE(str(r.format), QString("hermes"));
        QCOMPARE(calls(r), QString("|f|{\"x\":1}"));
        QCOMPARE(str(r.content), QString(""));
        QVERIFY(r.problems.empty());
    }
    void hermesSecondUnclosed() {
        const auto r = parseToolCalls(
            "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": "
            "{\"q\": \"x\"}}\n");
        QCOMPARE(calls(r), QString("|a|{}\n|b|{\"q\":\"x\"}"));
        QCOMPARE(str(r.content), QString(""));
    }
    void hermesInvalidJsonKeepsRaw() {
        const auto r = parseToolCalls(
            "<tool_call>{\"name\": \"ok\", \"arguments\": {}}</tool_call>\n"
            "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1,}}\n</tool_call>");
        QCOMPARE(str(r.format), QString("hermes"));
        QCOMPARE(calls(r), QString("|ok|{}\n|f|{\"x\": 1,}"));  // the name read anyway, the arguments as written
        QCOMPARE(r.problems.size(), size_t(1));
        QVERIFY2(startsWith(r.problems[0], "call 2 (hermes): body is not JSON: "), r.problems[0].c_str());
        QVERIFY2(r.problems[0].find("parse error") != std::string::npos, r.problems[0].c_str());
    }
    void hermesNoNameAtAll() {
        const auto r = parseToolCalls("<tool_call>\n{\"arguments\": {\"x\": 1}\n</tool_call>");
        QCOMPARE(calls(r), QString("||{\"arguments\": {\"x\": 1}"));
        QCOMPARE(r.problems.size(), size_t(1));
        QVERIFY2(startsWith(r.problems[0], "call 1 (hermes): body is not JSON: "), r.problems[0].c_str());
        const auto noName = parseToolCalls("<tool_call>{\"arguments\": {}}</tool_call>");
        QCOMPARE(calls(noName), QString("||{\"arguments\": {}}"));
        QCOMPARE(noName.problems, std::vector<std::string>{"call 1 (hermes): no function name"});
    }
    void hermesArgumentsAsJsonString() {
        const auto r = parseToolCalls(
            "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1, \\\"y\\\": [true]}\"}</tool_call>");
        QCOMPARE(calls(r), QString("|f|{\"x\":1,\"y\":[true]}"));
        QVERIFY(r.problems.empty());
        const auto bad = parseToolCalls("<tool_call>{\"name\": \"f\", \"arguments\": \"x=1\"}</tool_call>");
        QCOMPARE(calls(bad), QString("|f|x=1"));
        QCOMPARE(bad.problems, std::vector<std::string>{"call 1 (hermes): arguments are not JSON"});
    }
    void hermesNoArguments() {
        const auto r = parseToolCalls("<tool_call>{\"name\": \"list_files\"}</tool_call>");
        QCOMPARE(calls(r), QString("|list_files|{}"));
    }

    // ---- glm4 ----
    void glmOne() {
        const auto r = parseToolCalls(
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n"
            "<arg_value>3</arg_value>\n</tool_call>");
        QCOMPARE(str(r.format), QString("glm4"));
        QCOMPARE(calls(r), QString("|get_weather|{\"city\":\"Paris\",\"days\":3}"));
        QCOMPARE(str(r.content), QString(""));
        QVERIFY(r.problems.empty());
    }
    void glmTwo() {
        const auto r = parseToolCalls(
            "I will do both.\n<tool_call>list_files\n</tool_call>\n<tool_call>set_prefs\n<arg_key>opts</arg_key>\n"
            "<arg_value>{\"a\": [1, 2]}</arg_value>\n<arg_key>on</arg_key>\n<arg_value>true</arg_value>\n"
            "<arg_key>label</arg_key>\n<arg_value>\"quoted\"</arg_value>\n</tool_call>");
        QCOMPARE(str(r.format), QString("glm4"));
        QCOMPARE(calls(r),
                 QString("|list_files|{}\n|set_prefs|{\"label\":\"quoted\",\"on\":true,\"opts\":{\"a\":[1,2]}}"));
        QCOMPARE(str(r.content), QString("I will do both."));
    }
    void glmUnclosed() {
        const auto r = parseToolCalls("<tool_call>get_time\n<arg_key>tz</arg_key>\n<arg_value>Europe/Paris");
        QCOMPARE(calls(r), QString("|get_time|{\"tz\":\"Europe/Paris\"}"));
        QVERIFY(r.problems.empty());
    }
    void glmBrokenMarkup() {
        const auto r = parseToolCalls("<tool_call>f\n<arg_key>a</arg_key>oops</tool_call>");
        QCOMPARE(calls(r), QString("|f|<arg_key>a</arg_key>oops"));
        QCOMPARE(r.problems, std::vector<std::string>{"call 1 (glm4): unreadable <arg_key>/<arg_value> markup"});
        const auto noName = parseToolCalls("<tool_call>not a name\n</tool_call>");
        QCOMPARE(calls(noName), QString("||not a name"));
        QCOMPARE(noName.problems, std::vector<std::string>{"call 1 (glm4): no function name"});
    }

    // ---- mistral ----
    void mistralArrayOne() {
        const auto r =
            parseToolCalls("[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]");
        QCOMPARE(str(r.format), QString("mistral"));
        QCOMPARE(calls(r), QString("|get_weather|{\"city\":\"Paris\"}"));
        QCOMPARE(str(r.content), QString(""));
    }
    void mistralArrayTwo() {
        const auto r = parseToolCalls(
            "Sure.[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"n\": 2}, "
            "\"id\": \"k9\"}]");
        QCOMPARE(calls(r), QString("|a|{}\nk9|b|{\"n\":2}"));
        QCOMPARE(str(r.content), QString("Sure."));
    }
    void mistralNamed() {
        const auto r = parseToolCalls(
            "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]get_time[CALL_ID]abc123XYZ[ARGS]{\"tz\": "
            "\"CET\"}");
        QCOMPARE(str(r.format), QString("mistral"));
        QCOMPARE(calls(r), QString("|get_weather|{\"city\":\"Paris\"}\nabc123XYZ|get_time|{\"tz\":\"CET\"}"));
        QCOMPARE(str(r.content), QString(""));
        const auto one = parseToolCalls("Checking.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Oslo\"} trailing");
        QCOMPARE(calls(one), QString("|get_weather|{\"city\":\"Oslo\"}"));
        QCOMPARE(str(one.content), QString("Checking. trailing"));
    }
    void mistralUnclosedAndInvalid() {
        const auto r = parseToolCalls("[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"x\": 1}");
        QCOMPARE(calls(r), QString("|f|{\"x\": 1}"));
        QCOMPARE(r.problems.size(), size_t(1));
        QVERIFY2(startsWith(r.problems[0], "call 1 (mistral): body is not JSON: "), r.problems[0].c_str());
        const auto bad = parseToolCalls("[TOOL_CALLS]f[ARGS]{\"x\": }");
        QCOMPARE(calls(bad), QString("|f|{\"x\": }"));
        QCOMPARE(bad.problems.size(), size_t(1));
        QVERIFY2(startsWith(bad.problems[0], "call 1 (mistral): arguments are not JSON: "), bad.problems[0].c_str());
        const auto cut = parseToolCalls("[TOOL_CALLS]f[ARGS]{\"x\": \"ab");
        QCOMPARE(calls(cut), QString("|f|{\"x\": \"ab"));
        QCOMPARE(cut.problems.size(), size_t(1));
    }

    // ---- deepseek ----
    void deepseekV3() {
        const auto r = parseToolCalls(
            "I'll look.\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
            "{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n"
            "```json\n{\"tz\": \"CET\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>");
        QCOMPARE(str(r.format), QString("deepseek-v3"));
        QCOMPARE(calls(r), QString("|get_weather|{\"city\":\"Paris\"}\n|get_time|{\"tz\":\"CET\"}"));
        QCOMPARE(str(r.content), QString("I'll look."));
        QVERIFY(r.problems.empty());
    }
    void deepseekV3Unclosed() {
        const auto r = parseToolCalls(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": "
            "\"Rome\"}\n```");
        QCOMPARE(str(r.format), QString("deepseek-v3"));
        QCOMPARE(calls(r), QString("|get_weather|{\"city\":\"Rome\"}"));
        QCOMPARE(str(r.content), QString(""));
    }
    void deepseekV31() {
        const auto one = parseToolCalls(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": "
            "\"Paris\"}<｜tool▁call▁end｜>"
            "<｜tool▁calls▁end｜>");
        QCOMPARE(str(one.format), QString("deepseek-v3.1"));
        QCOMPARE(calls(one), QString("|get_weather|{\"city\":\"Paris\"}"));
        const auto two = parseToolCalls(
            "Both.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁call▁begin｜>b"
            "<｜tool▁sep｜>{\"n\": [1]}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>");
        QCOMPARE(calls(two), QString("|a|{}\n|b|{\"n\":[1]}"));
        QCOMPARE(str(two.content), QString("Both.<｜end▁of▁sentence｜>"));
    }
    void deepseekV31CutOff() {
        const auto r =
            parseToolCalls("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Par");
        QCOMPARE(calls(r), QString("|get_weather|{\"city\": \"Par"));
        QCOMPARE(r.problems.size(), size_t(1));
        QVERIFY2(startsWith(r.problems[0], "call 1 (deepseek-v3.1): arguments are not JSON: "), r.problems[0].c_str());
    }

    // ---- kimi-k2 ----
    void kimi() {
        const auto two = parseToolCalls(
            "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
            "<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1"
            "<|tool_call_argument_begin|>{\"tz\": \"CET\"}<|tool_call_end|><|tool_calls_section_end|>");
        QCOMPARE(str(two.format), QString("kimi-k2"));
        QCOMPARE(calls(two), QString("functions.get_weather:0|get_weather|{\"city\":\"Paris\"}\n"
                                     "functions.get_time:1|get_time|{\"tz\":\"CET\"}"));
        QCOMPARE(str(two.content), QString("Checking."));
        const auto one = parseToolCalls(
            "<|tool_calls_section_begin|><|tool_call_begin|>get_weather:0<|tool_call_argument_begin|>"
            "\"{\\\"city\\\": \\\"Oslo\\\"}\"");  // no prefix, arguments double-encoded, cut off
        QCOMPARE(calls(one), QString("get_weather:0|get_weather|{\"city\":\"Oslo\"}"));
        QVERIFY(one.problems.empty());
        QCOMPARE(str(one.content), QString(""));
    }

    // ---- harmony ----
    void harmonyAfterAnalysis() {
        const auto r = parseToolCalls(
            "<|channel|>analysis<|message|>User wants weather.<|end|><|start|>assistant<|channel|>commentary "
            "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>");
        QCOMPARE(str(r.format), QString("harmony"));
        QCOMPARE(calls(r), QString("|get_weather|{\"city\":\"Paris\"}"));
        QCOMPARE(str(r.content), QString("<|channel|>analysis<|message|>User wants weather.<|end|>"));
    }
    void harmonyRecipientFirstNoCallToken() {
        const auto r = parseToolCalls(
            "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{\"tz\": \"CET\"}");
        QCOMPARE(calls(r), QString("|get_time|{\"tz\":\"CET\"}"));
        QCOMPARE(str(r.content), QString(""));
    }
    void harmonyTwoAndFinal() {
        const auto r = parseToolCalls(
            "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{}<|call|><|start|>assistant"
            "<|channel|>commentary to=functions.b <|constrain|>json<|message|>{\"n\": 1}<|call|>"
            "<|start|>assistant<|channel|>final<|message|>Done.<|return|>");
        QCOMPARE(calls(r), QString("|a|{}\n|b|{\"n\":1}"));
        QCOMPARE(str(r.content), QString("Done."));
    }
    void harmonyInvalid() {
        const auto r =
            parseToolCalls("<|channel|>commentary to=functions.f <|constrain|>json<|message|>{city: Paris}<|call|>");
        QCOMPARE(calls(r), QString("|f|{city: Paris}"));
        QCOMPARE(r.problems.size(), size_t(1));
        QVERIFY2(startsWith(r.problems[0], "call 1 (harmony): arguments are not JSON: "), r.problems[0].c_str());
    }

    // ---- llama3 ----
    void llamaPlain() {
        const auto r = parseToolCalls(" {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n");
        QCOMPARE(str(r.format), QString("llama3"));
        QCOMPARE(calls(r), QString("|get_weather|{\"city\":\"Paris\"}"));
        QCOMPARE(str(r.content), QString(""));
        const auto two =
            parseToolCalls("{\"name\": \"a\", \"parameters\": {}}\n{\"name\": \"b\", \"arguments\": {\"n\": 1}}");
        QCOMPARE(str(two.format), QString("llama3"));
        QCOMPARE(calls(two), QString("|a|{}\n|b|{\"n\":1}"));
    }
    void llamaPythonTag() {
        const auto r = parseToolCalls(
            "Let me see. <|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": "
            "{\"n\": 1}}"
            "<|eom_id|>");
        QCOMPARE(str(r.format), QString("llama3"));
        QCOMPARE(calls(r), QString("|a|{}\n|b|{\"n\":1}"));
        QCOMPARE(str(r.content), QString("Let me see. <|eom_id|>"));
        const auto builtin = parseToolCalls("<|python_tag|>brave_search.call(query=\"weather\")<|eom_id|>");
        QCOMPARE(calls(builtin), QString("||brave_search.call(query=\"weather\")"));
        QCOMPARE(builtin.problems.size(), size_t(1));
        QVERIFY2(startsWith(builtin.problems[0], "call 1 (llama3): body is not JSON: "), builtin.problems[0].c_str());
        QCOMPARE(str(builtin.content), QString("<|eom_id|>"));
    }
    void jsonObjectInProseIsNoCall() {
        const std::string text = "Here is the record: {\"name\": \"Bob\", \"parameters\": {}} as requested.";
        const auto r = parseToolCalls(text);
        QVERIFY(r.calls.empty());
        QCOMPARE(str(r.format), QString(""));
        QCOMPARE(str(r.content), str(text));
        QVERIFY(r.problems.empty());
        const auto answer = parseToolCalls("{\"answer\": 42}");  // JSON, but not a call
        QVERIFY(answer.calls.empty());
        QCOMPARE(str(answer.content), QString("{\"answer\": 42}"));
        const auto half = parseToolCalls("{\"name\": \"a\", \"parameters\": {}} and more");
        QVERIFY(half.calls.empty());
    }

    // ---- granite ----
    void granite() {
        const auto one =
            parseToolCalls("<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]");
        QCOMPARE(str(one.format), QString("granite"));
        QCOMPARE(calls(one), QString("|get_weather|{\"city\":\"Paris\"}"));
        QCOMPARE(str(one.content), QString(""));
        const auto two = parseToolCalls(
            "Okay.<|tool_call|>[{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": \"{\\\"n\\\": "
            "2}\"}]");
        QCOMPARE(calls(two), QString("|a|{}\n|b|{\"n\":2}"));
        QCOMPARE(str(two.content), QString("Okay."));
    }

    // ---- command-r7b ----
    void commandR7b() {
        const auto two = parseToolCalls(
            "<|START_THINKING|>plan<|END_THINKING|><|START_ACTION|>[\n"
            "{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}},\n"
            "{\"tool_call_id\": \"1\", \"tool_name\": \"get_time\", \"parameters\": {\"tz\": "
            "\"CET\"}}\n]<|END_ACTION|>");
        QCOMPARE(str(two.format), QString("command-r7b"));
        QCOMPARE(calls(two), QString("0|get_weather|{\"city\":\"Paris\"}\n1|get_time|{\"tz\":\"CET\"}"));
        QCOMPARE(str(two.content), QString("<|START_THINKING|>plan<|END_THINKING|>"));
        const auto cut =
            parseToolCalls("<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", \"parameters\": {}}]");
        QCOMPARE(calls(cut), QString("0|f|{}"));
        QCOMPARE(str(cut.content), QString(""));
    }

    // ---- json fallback ----
    void jsonFenced() {
        const auto r = parseToolCalls("```json\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}\n```");
        QCOMPARE(str(r.format), QString("json"));
        QCOMPARE(calls(r), QString("|f|{\"x\":1}"));
        QCOMPARE(str(r.content), QString(""));
        const auto two =
            parseToolCalls("```\n[{\"name\": \"a\", \"parameters\": {}}, {\"name\": \"b\", \"arguments\": {}}]\n```");
        QCOMPARE(calls(two), QString("|a|{}\n|b|{}"));
        const auto fencedInProse = parseToolCalls("Call:\n```json\n{\"name\": \"f\", \"arguments\": {}}\n```");
        QVERIFY(fencedInProse.calls.empty());
    }
    void jsonArray() {
        const auto r =
            parseToolCalls("[{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"y\": \"z\"}}]");
        QCOMPARE(str(r.format), QString("json"));
        QCOMPARE(calls(r), QString("|a|{}\n|b|{\"y\":\"z\"}"));
        QVERIFY(parseToolCalls("[{\"name\": \"a\"}, 3]").calls.empty());
    }
    void jsonOpenAiShape() {
        const auto r = parseToolCalls(
            "{\"content\": \"Looking up.\", \"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", "
            "\"function\": "
            "{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}}, {\"name\": \"get_time\", "
            "\"arguments\": {}}]}");
        QCOMPARE(str(r.format), QString("json"));
        QCOMPARE(calls(r), QString("call_1|get_weather|{\"city\":\"Paris\"}\n|get_time|{}"));
        QCOMPARE(str(r.content), QString("Looking up."));
        QVERIFY(r.problems.empty());
    }

    // ---- reasoning ----
    void thinkBlockYieldsNoCall() {
        const std::string text =
            "<think>Maybe <tool_call>{\"name\": \"x\", \"arguments\": {}}</tool_call></think>\nThe answer is 4.";
        const auto r = parseToolCalls(text);
        QVERIFY(r.calls.empty());
        QCOMPARE(str(r.content), str(text));
    }
    void callAfterThinkBlock() {
        const auto r = parseToolCalls(
            "<think>I need the weather. <tool_call>{\"name\": \"no\", \"arguments\": {}}</tool_call></think>\n"
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>");
        QCOMPARE(calls(r), QString("|get_weather|{\"city\":\"Paris\"}"));
        QCOMPARE(
            str(r.content),
            QString("<think>I need the weather. <tool_call>{\"name\": \"no\", \"arguments\": {}}</tool_call></think>"));
        const auto llama = parseToolCalls("<think>hmm</think>\n{\"name\": \"f\", \"parameters\": {}}");
        QCOMPARE(str(llama.format), QString("llama3"));
        QCOMPARE(calls(llama), QString("|f|{}"));
        QCOMPARE(str(llama.content), QString("<think>hmm</think>"));
    }
    void unclosedThink() {
        const std::string text = "<think>I could call <tool_call>{\"name\": \"x\", \"arguments\": {}}</tool_call> but";
        const auto r = parseToolCalls(text);
        QVERIFY(r.calls.empty());
        QCOMPARE(str(r.format), QString(""));
        QCOMPARE(str(r.content), str(text));
    }
    void leadingCloseThink() {  // the template opened <think>: the output starts inside it
        const auto r = parseToolCalls(
            "reasoning <tool_call>{\"name\":\"x\",\"arguments\":{}}</tool_call>\n</think>\n\n<tool_call>\n"
            "{\"name\": \"y\", \"arguments\": {}}\n</tool_call>");
        QCOMPARE(calls(r), QString("|y|{}"));
        QCOMPARE(str(r.content),
                 QString("reasoning <tool_call>{\"name\":\"x\",\"arguments\":{}}</tool_call>\n</think>"));
    }

    // ---- no calls ----
    void prose() {
        const auto r = parseToolCalls("The capital of France is Paris.");
        QVERIFY(r.calls.empty());
        QVERIFY(r.problems.empty());
        QCOMPARE(str(r.format), QString(""));
        QCOMPARE(str(r.content), QString("The capital of France is Paris."));
        QCOMPARE(str(parseToolCalls("  hi there \n").content), QString("hi there"));
        QCOMPARE(str(parseToolCalls("").content), QString(""));
        QVERIFY(parseToolCalls("Use [brackets] and {braces} and <tags>.").calls.empty());
    }
    void argumentsHelper() {
        QCOMPARE(str(toolArgumentsText(nlohmann::json::parse("{\"b\": 1, \"a\": [1, 2]}"))),
                 QString("{\"a\":[1,2],\"b\":1}"));
        bool ok = false;
        QCOMPARE(str(toolArgumentsText(nlohmann::json("{\"x\": null}"), &ok)), QString("{\"x\":null}"));
        QVERIFY(ok);
        QCOMPARE(str(toolArgumentsText(nlohmann::json("{broken"), &ok)), QString("{broken"));
        QVERIFY(!ok);
        QCOMPARE(str(toolArgumentsText(nlohmann::json(nullptr), &ok)), QString("{}"));
        QVERIFY(ok);
    }

    // ---- bounded work ----
    void megabyteTexts() {
        QElapsedTimer timer;
        timer.start();
        std::string many;
        for (int i = 0; i < 10000; ++i)
            many += "<tool_call>\n{\"name\": \"f" + std::to_string(i) + "\", \"arguments\": {\"pad\": \"" +
                    std::string(60, 'x') + "\"}}\n</tool_call>\n";
        QVERIFY(many.size() > 1000000);
        const auto r = parseToolCalls(many);
        QCOMPARE(r.calls.size(), size_t(10000));
        QCOMPARE(str(r.calls[9999].name), QString("f9999"));
        QVERIFY(r.content.empty());

        std::string opens;  // every closing marker missing
        for (int i = 0; i < 20000; ++i) opens += "<tool_call>{\"name\": \"g\", \"arguments\": {}} ";
        QCOMPARE(parseToolCalls(opens).calls.size(), size_t(20000));

        std::string kimi;
        for (int i = 0; i < 20000; ++i)
            kimi += "<|tool_call_begin|>functions.k:" + std::to_string(i) + "<|tool_call_argument_begin|>{} ";
        QCOMPARE(parseToolCalls(kimi).calls.size(), size_t(20000));

        std::string harmony;
        for (int i = 0; i < 20000; ++i)
            harmony += "<|channel|>commentary to=functions.h <|constrain|>json<|message|>{} <|x|>";
        QCOMPARE(parseToolCalls(harmony).calls.size(), size_t(20000));

        const std::string braces(1 << 20, '{');
        QVERIFY(parseToolCalls(braces).calls.empty());
        std::string prose;
        while (prose.size() < (1u << 20)) prose += "word [x] {y} <z> ";
        QVERIFY(parseToolCalls(prose).calls.empty());
        std::string thinks;
        while (thinks.size() < (1u << 20)) thinks += "<think>a</think>b ";
        QVERIFY(parseToolCalls(thinks).calls.empty());
        QVERIFY2(timer.elapsed() < 5000, std::to_string(timer.elapsed()).c_str());
    }
};

QTEST_APPLESS_MAIN(TestToolCallParse)
#include "test_tool_call_parse.moc"
