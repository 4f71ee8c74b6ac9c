// Function-calling evaluation: grading tool calls against expected calls (every error class, the
// order-insensitive matching, BFCL value equality), converting tools and expected calls from the
// shapes suites use, and the error-rate summary, against hand-computed values.
#include "core/score/tool_call_scorer.h"
#include "core/stats/tool_call_stats.h"

#include <QtTest/QtTest>

#include <cmath>

using namespace verdict;
using namespace verdict::core;
using nlohmann::json;

namespace {

ToolCall call(const std::string& name, const std::string& args) { return ToolCall{"", name, args}; }

ExpectedCall want(const std::string& name, json args) { return ExpectedCall{name, std::move(args)}; }

// get_weather(city: string, unit: "celsius" | "fahrenheit", days: integer), get_time(tz: string),
// given in BFCL's shape and normalised.
json tools() {
    const json bfcl = json::parse(R"([
        {"name": "get_weather", "description": "Weather forecast",
         "parameters": {"type": "dict", "required": ["city"], "properties": {
             "city": {"type": "string"},
             "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
             "days": {"type": "integer"}}}},
        {"name": "get_time", "parameters": {"type": "dict", "properties": {"tz": {"type": "string"}}}}
    ])");
    auto t = normalizeTools(bfcl);
    return t ? *t : json();
}

const json kParis = {{"city", json::array({"Paris"})}};

bool near(double a, double b) { return std::fabs(a - b) < 1e-4; }

#define VERIFY_OK(r) QVERIFY2((r).ok(), (r).ok() ? "" : (r).error().message.c_str())
#define COMPARE_STR(a, b) QCOMPARE(QString::fromStdString(a), QString::fromStdString(b))

}  // namespace

class TestToolCallScorer : public QObject {
    Q_OBJECT
private slots:
    void errorNames() {
        QCOMPARE(QString(toolCallErrorName(ToolCallError::None)), QString(""));
        QCOMPARE(QString(toolCallErrorName(ToolCallError::WrongValue)), QString("wrong_value"));
        const std::vector<std::string> names = {"no_call",          "unexpected_call", "wrong_count",
                                                "wrong_function",   "invalid_json",    "missing_argument",
                                                "extra_argument",   "wrong_type",      "wrong_value",
                                                "wrong_answer"};
        QCOMPARE(toolCallErrorNames(), names);
    }

    // Each row: the expected calls (stored form), the model's calls as [[name, arguments]] (a
    // string: the arguments text as it is; else the JSON value, written out),
    // the verdict's error class and detail.
    void grading_data() {
        QTest::addColumn<QString>("expected");
        QTest::addColumn<QString>("actual");
        QTest::addColumn<QString>("error");
        QTest::addColumn<QString>("detail");
        const QString paris = R"([{"name": "get_weather", "arguments": {"city": ["Paris"]}}])";
        const QString optionalUnit =
            R"([{"name": "get_weather", "arguments": {"city": ["Paris"], "unit": ["celsius", null]}}])";
        QTest::newRow("match") << paris << R"([["get_weather", {"city": "Paris"}]])" << "" << "the call matches";
        QTest::newRow("nothing due, nothing called") << "[]" << "[]" << "" << "no call, as expected";
        QTest::newRow("no call") << paris << "[]" << "no_call" << "expected 1 call (get_weather), got none";
        QTest::newRow("unexpected call") << "[]" << R"([["get_time", {}]])" << "unexpected_call"
                                         << "no call was due, got 1 call: get_time";
        QTest::newRow("invalid json: does not parse")
            << paris << R"([["get_weather", "city: Paris"]])" << "invalid_json"
            << "get_weather: arguments are not a JSON object: city: Paris";
        QTest::newRow("invalid json: not an object") << paris << R"([["get_weather", ["Paris"]]])" << "invalid_json"
                                                     << R"(get_weather: arguments are not a JSON object: ["Paris"])";
        QTest::newRow("invalid json: empty text") << paris << R"([["get_weather", ""]])" << "invalid_json"
                                                  << "get_weather: arguments are not a JSON object: (empty)";
        QTest::newRow("invalid json: no name") << paris << R"([["", {"city": "Paris"}]])" << "invalid_json"
                                               << "call 1 has no function name";
        QTest::newRow("wrong count")
            << R"([{"name": "get_weather", "arguments": {"city": ["Paris"]}}, {"name": "get_time", "arguments": {}}])"
            << R"([["get_weather", {"city": "Paris"}]])" << "wrong_count" << "expected 2 calls, got 1";
        QTest::newRow("wrong function (offered)") << paris << R"([["get_time", {"city": "Paris"}]])"
                                                  << "wrong_function" << "get_time: expected a call to 'get_weather'";
        QTest::newRow("wrong function (not offered)")
            << paris << R"([["weather", {"city": "Paris"}]])" << "wrong_function"
            << "weather: expected a call to 'get_weather' ('weather' is not among the tools offered)";
        QTest::newRow("missing argument") << paris << R"([["get_weather", {}]])" << "missing_argument"
                                          << "get_weather: missing argument 'city'";
        QTest::newRow("extra argument") << paris << R"([["get_weather", {"city": "Paris", "days": 3}]])"
                                        << "extra_argument" << "get_weather: unexpected argument 'days'";
        QTest::newRow("wrong type: string for an integer")
            << R"([{"name": "get_weather", "arguments": {"city": ["Paris"], "days": [3]}}])"
            << R"([["get_weather", {"city": "Paris", "days": "3"}]])" << "wrong_type"
            << "get_weather: 'days' has the wrong type: expected integer, got string";
        // Outside the schema's enum, but of the right type: a wrong value, as BFCL counts it.
        QTest::newRow("wrong value") << R"([{"name": "get_weather", "arguments": {"city": ["Paris"], "unit": ["celsius"]}}])"
                                     << R"([["get_weather", {"city": "Paris", "unit": "kelvin"}]])"
                                     << "wrong_value" << R"(get_weather: 'unit' is "kelvin", expected one of ["celsius"])";
        QTest::newRow("2 == 2.0") << R"([{"name": "get_weather", "arguments": {"city": ["Paris"], "days": [2]}}])"
                                  << R"([["get_weather", {"city": "Paris", "days": 2.0}]])" << ""
                                  << "the call matches";
        QTest::newRow("2 != 2.5") << R"([{"name": "get_weather", "arguments": {"city": ["Paris"], "days": [2]}}])"
                                  << R"([["get_weather", {"city": "Paris", "days": 2.5}]])" << "wrong_type"
                                  << "get_weather: 'days' has the wrong type: expected integer, got number";
        QTest::newRow("BFCL string standardisation")
            << R"([{"name": "get_weather", "arguments": {"city": ["New York, NY"]}}])"
            << R"([["get_weather", {"city": "new_york-ny."}]])" << "" << "the call matches";
        QTest::newRow("second acceptable value") << R"([{"name": "get_weather", "arguments": {"city": ["Paris", "paris fr"]}}])"
                                                 << R"([["get_weather", {"city": "Paris FR"}]])" << ""
                                                 << "the call matches";
        // calc is not among the tools: no schema, so the value check alone decides.
        QTest::newRow("string is not a number") << R"([{"name": "calc", "arguments": {"x": ["2"]}}])"
                                                << R"([["calc", {"x": 2}]])" << "wrong_value"
                                                << R"(calc: 'x' is 2, expected one of ["2"])";
        QTest::newRow("number is not a string") << R"([{"name": "calc", "arguments": {"x": [2]}}])"
                                                << R"([["calc", {"x": "2"}]])" << "wrong_value"
                                                << R"(calc: 'x' is "2", expected one of [2])";
        QTest::newRow("true is not 1") << R"([{"name": "calc", "arguments": {"x": [1]}}])"
                                       << R"([["calc", {"x": true}]])" << "wrong_value"
                                       << R"(calc: 'x' is true, expected one of [1])";
        QTest::newRow("arrays in order, standardised")
            << R"([{"name": "calc", "arguments": {"x": [["New York", 2]]}}])"
            << R"([["calc", {"x": ["new-york", 2.0]}]])" << "" << "the call matches";
        QTest::newRow("arrays: other order") << R"([{"name": "calc", "arguments": {"x": [[1, 2]]}}])"
                                             << R"([["calc", {"x": [2, 1]}]])" << "wrong_value"
                                             << R"(calc: 'x' is [2,1], expected one of [[1,2]])";
        QTest::newRow("objects key by key") << R"([{"name": "calc", "arguments": {"x": [{"a": "Big Apple", "b": 1}]}}])"
                                            << R"([["calc", {"x": {"b": 1.0, "a": "bigapple"}}]])" << ""
                                            << "the call matches";
        QTest::newRow("objects: other key set") << R"([{"name": "calc", "arguments": {"x": [{"a": 1}]}}])"
                                                << R"([["calc", {"x": {"a": 1, "b": 2}}]])" << "wrong_value"
                                                << R"(calc: 'x' is {"a":1,"b":2}, expected one of [{"a":1}])";
        QTest::newRow("optional omitted") << optionalUnit << R"([["get_weather", {"city": "Paris"}]])" << ""
                                          << "the call matches";
        QTest::newRow("optional given") << optionalUnit << R"([["get_weather", {"city": "Paris", "unit": "Celsius"}]])"
                                        << "" << "the call matches";
        QTest::newRow("optional passed as null") << optionalUnit
                                                 << R"([["get_weather", {"city": "Paris", "unit": null}]])" << ""
                                                 << "the call matches";
        QTest::newRow("optional with a wrong value")
            << optionalUnit << R"([["get_weather", {"city": "Paris", "unit": "fahrenheit"}]])" << "wrong_value"
            << R"(get_weather: 'unit' is "fahrenheit", expected one of ["celsius"])";
        QTest::newRow("required passed as null") << paris << R"([["get_weather", {"city": null}]])" << "wrong_type"
                                                 << "get_weather: 'city' has the wrong type: expected string, got null";
        QTest::newRow("parallel calls, swapped")
            << R"([{"name": "get_weather", "arguments": {"city": ["Paris"]}}, {"name": "get_time", "arguments": {"tz": ["UTC"]}}])"
            << R"([["get_time", {"tz": "utc"}], ["get_weather", {"city": "Paris"}]])" << ""
            << "all 2 calls match";
        // In order: extra 'days' (call 1) and missing 'days' (call 2), worst = missing argument.
        // Swapped: call 1 matches, call 2 has days 4 for 3, worst = wrong value: the better one.
        QTest::newRow("best assignment: least severe worst error")
            << R"([{"name": "get_weather", "arguments": {"city": ["Paris"]}},
                   {"name": "get_weather", "arguments": {"city": ["London"], "days": [3]}}])"
            << R"([["get_weather", {"city": "London", "days": 4}], ["get_weather", {"city": "Paris"}]])"
            << "wrong_value" << "get_weather: 'days' is 4, expected one of [3]";
        // In order: two wrong values; swapped: one. Same worst class; the fewer failing calls win.
        QTest::newRow("best assignment: fewest failing calls")
            << R"([{"name": "get_weather", "arguments": {"city": ["Paris"]}},
                   {"name": "get_weather", "arguments": {"city": ["London"]}}])"
            << R"([["get_weather", {"city": "London"}], ["get_weather", {"city": "Berlin"}]])"
            << "wrong_value" << R"(get_weather: 'city' is "Berlin", expected one of ["Paris"])";
        QTest::newRow("best assignment: not the one of wrong functions")
            << R"([{"name": "get_weather", "arguments": {"city": ["Paris"]}}, {"name": "get_time", "arguments": {"tz": ["UTC"]}}])"
            << R"([["get_weather", {"city": "Paris", "x": 1}], ["get_time", {"tz": "CET"}]])"
            << "extra_argument" << "get_weather: unexpected argument 'x'";
    }
    void grading() {
        QFETCH(QString, expected);
        QFETCH(QString, actual);
        QFETCH(QString, error);
        QFETCH(QString, detail);
        auto exp = expectedCallsFromJson(json::parse(expected.toStdString()));
        VERIFY_OK(exp);
        std::vector<ToolCall> calls;
        // The arguments text: a string as it is, anything else as JSON text.
        for (const auto& c : json::parse(actual.toStdString()))
            calls.push_back(call(c[0].get<std::string>(), c[1].is_string() ? c[1].get<std::string>() : c[1].dump()));
        const ToolCallVerdict v = scoreToolCalls(tools(), *exp, calls);
        QCOMPARE(QString(toolCallErrorName(v.error)), error);
        QCOMPARE(QString::fromStdString(v.detail), detail);
        QCOMPARE(v.pass, error.isEmpty());
        QCOMPARE(v.calls.size(), calls.size());
    }

    void apostropheReadAsQuote() {
        const auto v = scoreToolCalls(tools(), {want("get_time", {{"tz", json::array({"it's"})}})},
                                      {call("get_time", "{\"tz\": \"IT\\\"S\"}")});  // {"tz": "IT\"S"}
        QVERIFY2(v.pass, v.detail.c_str());
    }

    void callsAreParsed() {
        const auto v = scoreToolCalls(tools(), {want("get_weather", kParis)},
                                      {call("get_weather", R"({"city": "Paris"})"), call("get_time", "not json")});
        QCOMPARE(v.error, ToolCallError::InvalidJson);
        const json calls = json::parse(R"([{"name": "get_weather", "arguments": {"city": "Paris"}},
                                            {"name": "get_time", "arguments": "not json"}])");
        COMPARE_STR(v.calls.dump(), calls.dump());
    }

    void noToolsNoTypeCheck() {
        // Without schemas a string for a number is only a value error.
        const auto v = scoreToolCalls(json(), {want("get_weather", {{"days", json::array({3})}})}, {call("get_weather", R"({"days": "3"})")});
        QCOMPARE(v.error, ToolCallError::WrongValue);
        // Without tools, an unknown function is not said to be missing from them.
        const auto w = scoreToolCalls(json::array(), {want("f", json::object())}, {call("g", "{}")});
        QCOMPARE(w.error, ToolCallError::WrongFunction);
        COMPARE_STR(w.detail, "g: expected a call to 'f'");
    }

    void moreThanEightCallsInOrder() {
        std::vector<ExpectedCall> exp;
        std::vector<ToolCall> calls;
        for (int i = 0; i < 9; ++i) {
            exp.push_back(want("get_time", {{"tz", json::array({"tz" + std::to_string(i)})}}));
            calls.push_back(call("get_time", R"({"tz": "tz)" + std::to_string(i) + R"("})"));
        }
        QVERIFY(scoreToolCalls(tools(), exp, calls).pass);
        std::swap(calls[0], calls[1]);
        const auto v = scoreToolCalls(tools(), exp, calls);
        QCOMPARE(v.error, ToolCallError::WrongValue);
        COMPARE_STR(v.detail, R"(get_time: 'tz' is "tz1", expected one of ["tz0"])");
        // Eight calls: any order is tried.
        exp.pop_back();
        calls.pop_back();
        QVERIFY(scoreToolCalls(tools(), exp, calls).pass);
    }

    void bfclEndToEnd() {
        const json function = json::parse(R"({"name": "calculate_area", "parameters": {"type": "dict",
            "properties": {"base": {"type": "integer"}, "height": {"type": "integer"}, "unit": {"type": "string"}},
            "required": ["base", "height"]}})");
        const json truth = json::parse(R"([{"calculate_area": {"base": [10], "height": [5], "unit": ["units", ""]}}])");
        auto t = normalizeTools(function);
        VERIFY_OK(t);
        auto exp = expectedCallsFromBfcl(truth);
        VERIFY_OK(exp);
        QVERIFY(scoreToolCalls(*t, *exp, {call("calculate_area", R"({"base": 10, "height": 5})")}).pass);
        QVERIFY(scoreToolCalls(*t, *exp, {call("calculate_area", R"({"height": 5.0, "base": 10, "unit": "Units"})")}).pass);
        const auto v = scoreToolCalls(*t, *exp, {call("calculate_area", R"({"base": 10.5, "height": 5})")});
        QCOMPARE(v.error, ToolCallError::WrongType);
    }

    void normalizeToolsShapes() {
        const json params = json::parse(R"({"type": "dict", "properties": {"x": {"type": "float"}}})");
        const json normal = json::parse(R"({"type": "object", "properties": {"x": {"type": "number"}}})");
        const json openAi = json::array({{{"type", "function"}, {"function", {{"name", "f"}, {"description", "d"}, {"parameters", params}}}}});
        const json expected = json::array({{{"type", "function"}, {"function", {{"name", "f"}, {"description", "d"}, {"parameters", normal}}}}});
        auto a = normalizeTools(openAi);
        VERIFY_OK(a);
        COMPARE_STR(a->dump(), expected.dump());
        auto b = normalizeTools(json::array({{{"name", "f"}, {"description", "d"}, {"parameters", params}}}));
        VERIFY_OK(b);
        COMPARE_STR(b->dump(), expected.dump());
        auto c = normalizeTools(json{{"name", "f"}, {"description", "d"}, {"parameters", params}});
        VERIFY_OK(c);
        COMPARE_STR(c->dump(), expected.dump());
        auto d = normalizeTools(openAi[0]);
        VERIFY_OK(d);
        COMPARE_STR(d->dump(), expected.dump());
        // No parameters: an empty object schema.
        auto e = normalizeTools(json{{"name", "g"}});
        VERIFY_OK(e);
        COMPARE_STR(e->dump(), json::parse(R"([{"type": "function", "function": {"name": "g",
            "parameters": {"type": "object", "properties": {}}}}])").dump());
        auto n = normalizeTools(json());
        VERIFY_OK(n);
        COMPARE_STR(n->dump(), "[]");
    }

    void normalizeToolsErrors_data() {
        QTest::addColumn<QString>("tools");
        QTest::addColumn<QString>("message");
        QTest::newRow("no name") << R"([{"name": "f"}, {"description": "x"}])" << R"(tools[1]: no "name")";
        QTest::newRow("name not a string") << R"([{"name": 3}])" << R"(tools[0]: "name" must be a non-empty string)";
        QTest::newRow("parameters") << R"([{"name": "f", "parameters": [1]}])" << "tools[0].parameters: expected an object";
        QTest::newRow("OpenAI parameters") << R"([{"type": "function", "function": {"name": "f", "parameters": "x"}}])"
                                           << "tools[0].function.parameters: expected an object";
        QTest::newRow("OpenAI no name") << R"({"type": "function", "function": {"description": "x"}})"
                                        << R"(tools[0].function: no "name")";
        QTest::newRow("OpenAI function not an object") << R"([{"type": "function", "function": 1}])"
                                                       << "tools[0].function: expected an object";
        QTest::newRow("other tool type") << R"([{"type": "retrieval", "function": {"name": "f"}}])"
                                         << R"(tools[0]: type "retrieval" is not supported (only "function"))";
        QTest::newRow("element") << R"([{"name": "f"}, "g"])" << "tools[1]: expected an object";
        QTest::newRow("whole") << "5" << "tools: expected a list of tools or one tool";
    }
    void normalizeToolsErrors() {
        QFETCH(QString, tools);
        QFETCH(QString, message);
        auto r = normalizeTools(json::parse(tools.toStdString()));
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().message), message);
    }

    void normalizeSchemaNested() {
        const json bfcl = json::parse(R"({"type": "dict", "required": ["pts"], "properties": {
            "pts": {"type": "array", "description": "points", "items": {"type": "tuple", "items": {"type": "float"}}},
            "meta": {"type": "dict", "properties": {"v": {"type": "any", "description": "anything"},
                                                    "n": {"type": "integer", "default": 1}},
                     "additionalProperties": {"type": "String"}},
            "u": {"anyOf": [{"type": "str"}, {"type": ["float", "null"]}, {"type": ["any", "int"]}]},
            "w": {"type": "HashMap", "enum": ["a"]}}})");
        const json want = json::parse(R"({"type": "object", "required": ["pts"], "properties": {
            "pts": {"type": "array", "description": "points", "items": {"type": "array", "items": {"type": "number"}}},
            "meta": {"type": "object", "properties": {"v": {"description": "anything"},
                                                      "n": {"type": "integer", "default": 1}},
                     "additionalProperties": {"type": "string"}},
            "u": {"anyOf": [{"type": "string"}, {"type": ["number", "null"]}, {}]},
            "w": {"type": "HashMap", "enum": ["a"]}}})");
        COMPARE_STR(normalizeToolSchema(bfcl).dump(), want.dump());
        COMPARE_STR(normalizeToolSchema(want).dump(), want.dump());  // idempotent
    }

    void expectedFromPlain() {
        const json plain = json::parse(R"([
            {"name": "f", "arguments": {"city": "Paris", "xs": [1, 2]}, "accept": {"unit": ["celsius", null], "city": ["Paris", "paris fr"]}},
            {"name": "g"}])");
        auto r = expectedCallsFromPlain(plain);
        VERIFY_OK(r);
        const json stored = json::parse(R"([
            {"name": "f", "arguments": {"city": ["Paris", "paris fr"], "xs": [[1, 2]], "unit": ["celsius", null]}},
            {"name": "g", "arguments": {}}])");
        COMPARE_STR(expectedCallsToJson(*r).dump(), stored.dump());
        auto back = expectedCallsFromJson(stored);
        VERIFY_OK(back);
        COMPARE_STR(expectedCallsToJson(*back).dump(), stored.dump());
        auto none = expectedCallsFromPlain(json::array());
        VERIFY_OK(none);
        QVERIFY(none->empty());
    }

    void expectedErrors_data() {
        QTest::addColumn<QString>("form");
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("message");
        QTest::newRow("plain: not a list") << "plain" << R"({"name": "f"})" << "expected_calls: expected a list of calls";
        QTest::newRow("plain: not an object") << "plain" << R"([{"name": "f"}, 1])" << "expected_calls[1]: expected an object";
        QTest::newRow("plain: no name") << "plain" << R"([{"name": "f"}, {"arguments": {}}])" << R"(expected_calls[1]: no "name")";
        QTest::newRow("plain: empty name") << "plain" << R"([{"name": ""}])"
                                           << R"(expected_calls[0]: "name" must be a non-empty string)";
        QTest::newRow("plain: arguments") << "plain" << R"([{"name": "f", "arguments": [1]}])"
                                          << "expected_calls[0].arguments: expected an object";
        QTest::newRow("plain: accept") << "plain" << R"([{"name": "f", "accept": []}])"
                                       << "expected_calls[0].accept: expected an object";
        QTest::newRow("plain: accept list") << "plain" << R"([{"name": "f", "accept": {"unit": "celsius"}}])"
                                            << "expected_calls[0].accept.unit: expected a list of acceptable values";
        QTest::newRow("bfcl: not a list") << "bfcl" << R"({"f": {}})" << "ground_truth: expected a list of calls";
        QTest::newRow("bfcl: two keys") << "bfcl" << R"([{"f": {}, "g": {}}])"
                                        << "ground_truth[0]: expected an object with one key, the function's name";
        QTest::newRow("bfcl: arguments") << "bfcl" << R"([{"f": {}}, {"g": []}])"
                                         << "ground_truth[1].g: expected an object of arguments";
        QTest::newRow("bfcl: not a list of values") << "bfcl" << R"([{"f": {"a": "x"}}])"
                                                    << "ground_truth[0].f.a: expected a list of acceptable values";
        QTest::newRow("json: not a list") << "json" << "null" << "expected_calls: expected a list of calls";
        QTest::newRow("json: no name") << "json" << R"([{"arguments": {}}])" << R"(expected_calls[0]: no "name")";
        QTest::newRow("json: arguments") << "json" << R"([{"name": "f", "arguments": "x"}])"
                                         << "expected_calls[0].arguments: expected an object";
        QTest::newRow("json: not a list of values") << "json" << R"([{"name": "f", "arguments": {"a": "x"}}])"
                                                    << "expected_calls[0].arguments.a: expected a list of acceptable values";
    }
    void expectedErrors() {
        QFETCH(QString, form);
        QFETCH(QString, input);
        QFETCH(QString, message);
        const json j = json::parse(input.toStdString());
        auto r = form == "plain" ? expectedCallsFromPlain(j) : form == "bfcl" ? expectedCallsFromBfcl(j) : expectedCallsFromJson(j);
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.error().message), message);
    }

    void expectedFromBfcl() {
        auto r = expectedCallsFromBfcl(json::parse(R"([{"f": {"city": ["Paris", "paris"], "unit": ["celsius", ""]}}, {"g": {}}])"));
        VERIFY_OK(r);
        QCOMPARE(r->size(), size_t(2));
        COMPARE_STR(expectedCallsToJson(*r).dump(),
                    json::parse(R"([{"name": "f", "arguments": {"city": ["Paris", "paris"], "unit": ["celsius", null]}},
                                    {"name": "g", "arguments": {}}])").dump());
        auto back = expectedCallsFromJson(expectedCallsToJson(*r));
        VERIFY_OK(back);
        COMPARE_STR(expectedCallsToJson(*back).dump(), expectedCallsToJson(*r).dump());
    }

    void stats() {
        // 10 items: 7 correct, 2 no_call, 1 "error" (the request failed).
        std::vector<std::string> classes(7, "");
        classes.insert(classes.begin() + 2, "no_call");
        classes.push_back("error");
        classes.push_back("no_call");
        const ToolCallStats s = toolCallStats(classes);
        QCOMPARE(s.items, int64_t(10));
        QCOMPARE(s.errors, int64_t(3));
        QVERIFY(near(s.errorRate, 0.3));
        // Wilson, z = 1.959964, n = 10: z^2/n = 0.384146, centre = (p + 0.192073) / 1.384146,
        // half = z / 1.384146 * sqrt(p(1-p)/10 + 0.009604).
        // p = 0.3: centre 0.355507, half 0.247715 -> [0.107791, 0.603222].
        QVERIFY2(near(s.errorCi.lo, 0.107791) && near(s.errorCi.hi, 0.603222),
                 qPrintable(QString("%1 %2").arg(s.errorCi.lo).arg(s.errorCi.hi)));
        QCOMPARE(s.byClass.size(), size_t(11));
        std::vector<std::string> names = toolCallErrorNames();
        names.push_back("error");
        for (size_t i = 0; i < names.size(); ++i) COMPARE_STR(s.byClass[i].name, names[i]);
        const ToolCallClassRate& noCall = s.byClass[0];
        QCOMPARE(noCall.count, int64_t(2));
        QVERIFY(near(noCall.rate, 0.2));
        // p = 0.2: centre 0.283260, half 0.226578 -> [0.056682, 0.509838].
        QVERIFY(near(noCall.ci.lo, 0.056682) && near(noCall.ci.hi, 0.509838));
        const ToolCallClassRate& other = s.byClass[10];
        QCOMPARE(other.count, int64_t(1));
        QVERIFY(near(other.rate, 0.1));
        // p = 0.1: centre 0.211013, half 0.193137 -> [0.017876, 0.404150].
        QVERIFY(near(other.ci.lo, 0.017876) && near(other.ci.hi, 0.404150));
        const ToolCallClassRate& wrongValue = s.byClass[8];
        COMPARE_STR(wrongValue.name, "wrong_value");
        QCOMPARE(wrongValue.count, int64_t(0));
        QCOMPARE(wrongValue.rate, 0.0);
        // p = 0: centre 0.138766 = half -> [0, 0.277533].
        QVERIFY(near(wrongValue.ci.lo, 0.0) && near(wrongValue.ci.hi, 0.277533));

        const ToolCallStats none = toolCallStats({});
        QCOMPARE(none.items, int64_t(0));
        QCOMPARE(none.errorRate, 0.0);
        QVERIFY(near(none.errorCi.lo, 0.0) && near(none.errorCi.hi, 1.0));
        QCOMPARE(none.byClass.size(), size_t(10));
        QCOMPARE(none.retried, int64_t(0));

        // Retries: of the 3 errors, 2 were retried and 1 recovered.
        std::vector<std::pair<bool, bool>> retries(classes.size(), {false, false});
        retries[2] = {true, true};
        retries[8] = {true, false};
        const ToolCallStats r = toolCallStats(classes, retries);
        QCOMPARE(r.retried, int64_t(2));
        QCOMPARE(r.recovered, int64_t(1));
        QVERIFY(near(r.recoveryRate, 0.5));
        // Wilson of 1/2: centre (0.5 + 0.960365) / 2.920729 = 0.5, half 1.959964 sqrt(0.125 + 0.240091) / 2.920729 = 0.405469.
        QVERIFY(near(r.recoveryCi.lo, 0.094531) && near(r.recoveryCi.hi, 0.905469));
        QVERIFY(near(r.errorRateAfterRetries, 0.2));  // (3 - 1) / 10
        QVERIFY(near(r.errorAfterRetriesCi.lo, 0.056682) && near(r.errorAfterRetriesCi.hi, 0.509838));
    }

    // What a tool layer would answer to a malformed call, from the schema alone.
    void problemsAToolLayerSees() {
        const json t = tools();
        QVERIFY(!toolCallProblem(t, call("get_weather", "{\"city\": \"Paris\", \"days\": 3}")));
        QVERIFY(!toolCallProblem(t, call("get_weather", "{\"city\": \"Rome\", \"unit\": \"celsius\"}")));  // a wrong city is no schema matter
        COMPARE_STR(*toolCallProblem(t, call("get_wether", "{\"city\": \"Paris\"}")),
                    "no function named 'get_wether' (the tools are: get_weather, get_time)");
        COMPARE_STR(*toolCallProblem(t, call("get_weather", "{\"city\": ")), "the arguments are not a JSON object");
        COMPARE_STR(*toolCallProblem(t, call("get_weather", "[1]")), "the arguments are not a JSON object");
        COMPARE_STR(*toolCallProblem(t, call("get_weather", "{\"unit\": \"celsius\"}")), "arguments: missing required property 'city'");
        const auto type = toolCallProblem(t, call("get_weather", "{\"city\": \"Paris\", \"days\": \"3\"}"));
        QVERIFY2(type && type->find("/days") != std::string::npos && type->find("expected integer") != std::string::npos, type->c_str());
        const auto outside = toolCallProblem(t, call("get_weather", "{\"city\": \"Paris\", \"unit\": \"kelvin\"}"));
        QVERIFY2(outside && outside->find("/unit") != std::string::npos, outside->c_str());
        QVERIFY(!toolCallProblem(json(), call("anything", "not json")));  // no tools: nothing to check against
    }
};

QTEST_APPLESS_MAIN(TestToolCallScorer)
#include "test_tool_call_scorer.moc"
