// Chat-template tests.
//  - every case of shared/fixtures/chat-templates and of its llamacpp-v0.5.0/ folder (cases and
//    extra_cases: tool-call round trips, enable_thinking, reasoning history, reasoning_effort,
//    documents), real templates, transformers' output: byte-for-byte, or the same failure
//    (TemplateError messages compared exactly);
//  - the built-in family renderers and family detection against the same goldens;
//  - goldens in tests/data/chat-templates: interpreter features and tool-calling conversations
//    (expected strings from jinja2, see generate_goldens.py) and a hand-derived ChatML template;
//  - hostile input: syntax errors with line/column, unbounded loops, recursion, runaway strings,
//    deep nesting, invalid UTF-8, empty input, 1 MB messages, mutated templates; the hash;
//    concurrent rendering.
#include "fixtures.h"
#include "template/chat_template.h"

#include <nlohmann/json.hpp>

#include <QtTest/QtTest>

#include <chrono>
#include <ctime>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

using namespace verdict;
using namespace verdict::tok;
using json = nlohmann::ordered_json;

namespace {

// CPU seconds this thread has used: the renders below are single-threaded, and their time bounds
// (a hang detector, not a speed target) must not fail because the machine is busy with other work
// (a 20 s wall-clock bound failed under ASan beside two fuzzers).
double threadCpuSeconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The bounds are for a release build. ASan + UBSan (asan_parsers) make the interpreter 3-5x
// slower: the exponential macro recursion below took 20.6 s of CPU under them on an AMD EPYC
// (AVX2) CI machine against a 20 s bound. Sanitized builds get 3x the bound.
#if defined(__SANITIZE_ADDRESS__)
constexpr double kCpuBoundScale = 3.0;
#else
constexpr double kCpuBoundScale = 1.0;
#endif

struct GoldenRow {
    std::string jsonPath;      // the case file (fixture or tests/data)
    std::string templatePath;  // the .jinja it renders
    std::size_t caseIndex = 0;
    bool extra = false;        // an entry of "extra_cases" (llamacpp-v0.5.0/), not of "cases"
};

struct BuiltinRow {
    std::string stem;    // fixture name
    std::string family;  // built-in renderer expected to reproduce it
    std::size_t caseIndex = 0;
};

struct NamedCase {
    std::string file;  // tests/data file
    std::size_t caseIndex = 0;
};

}  // namespace
Q_DECLARE_METATYPE(GoldenRow)
Q_DECLARE_METATYPE(BuiltinRow)
Q_DECLARE_METATYPE(NamedCase)

namespace {

std::string readFile(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

json readJson(const std::filesystem::path& p) { return json::parse(readFile(p)); }

QByteArray qb(const std::string& s) { return QByteArray::fromStdString(s); }

std::filesystem::path fixtureDir() { return test::fixture("chat-templates"); }
// The 61 templates of llama.cpp v0.5.0 (chat-templates/README.md "Added: llama.cpp v0.5.0 templates").
std::filesystem::path v050Dir() { return fixtureDir() / "llamacpp-v0.5.0"; }

TemplateTime frozenClock() { return TemplateTime{2026, 1, 15, 12, 0, 0}; }

// The rendering inputs of one golden case, as the fixture README specifies them.
ChatTemplateInputs inputsFor(const json& meta, const json& c) {
    ChatTemplateInputs in;
    in.messages = c["messages"];
    in.tools = c.contains("tools") ? c["tools"] : json();
    in.addGenerationPrompt = c["add_generation_prompt"].get<bool>();
    if (meta.contains("bos_token") && meta["bos_token"].is_string()) in.bosToken = meta["bos_token"].get<std::string>();
    if (meta.contains("eos_token") && meta["eos_token"].is_string()) in.eosToken = meta["eos_token"].get<std::string>();
    // extra_cases: more variables on top (enable_thinking, reasoning_effort, documents, ...).
    if (c.contains("extra_vars")) in.extraVariables = c["extra_vars"];
    in.now = frozenClock;
    return in;
}

// "TypeError: 'NoneType' ..." -> "TypeError"; Python names this engine reports differently are
// mapped to its kind (ZeroDivisionError is a ValueError here, OverflowError a LimitError).
std::string errorKind(const std::string& message) {
    std::string kind = message.substr(0, message.find(':'));
    if (kind == "ZeroDivisionError") return "ValueError";
    if (kind == "OverflowError") return "LimitError";
    return kind;
}

// Checks one expected/raises case against a render result.
void checkOutcome(const Result<std::string>& r, const json& c) {
    if (c.contains("expected")) {
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(qb(*r), qb(c["expected"].get<std::string>()));
        return;
    }
    const std::string raises = c["raises"].get<std::string>();
    QVERIFY2(!r.ok(), ("expected failure: " + raises).c_str());
    if (raises.rfind("TemplateError: ", 0) == 0) {
        QCOMPARE(qb(r.error().message), qb(raises));  // raise_exception() text, verbatim
    } else {
        QCOMPARE(qb(errorKind(r.error().message)), qb(errorKind(raises)));
    }
}

Result<std::string> renderSource(const std::string& source, ChatTemplateInputs in) {
    auto t = ChatTemplate::parse(source);
    if (!t) return t.error();
    return t->render(in);
}

ChatTemplateInputs userTurn(std::string content) {
    ChatTemplateInputs in;
    in.messages = json::array({{{"role", "user"}, {"content", std::move(content)}}});
    in.now = frozenClock;
    return in;
}

// Fixtures a built-in renderer reproduces, with the cases it does not (and why).
struct BuiltinReference {
    const char* stem;
    const char* family;
    std::vector<std::string> skipCases;
};

const std::vector<BuiltinReference>& builtinReferences() {
    static const std::vector<BuiltinReference> refs = {
        {"llamacpp-test-openhermes-2.5-mistral-7b", "chatml", {}},
        {"Qwen-Qwen2.5-7B-Instruct", "qwen2.5", {}},
        {"qwen-qwq-32b", "qwq", {}},
        {"qwen3-0.6b", "qwen3", {}},
        {"llama-2-chat", "llama2", {}},
        // llama.cpp's Llama-3 test template always adds the assistant header; the built-in honours
        // add_generation_prompt like Meta's template does.
        {"llamacpp-test-llama-3", "llama3", {"multi_turn_system_nogen"}},
        {"meta-llama-Llama-3.1-8B-Instruct", "llama3.1", {}},
        {"meta-llama-Llama-3.3-70B-Instruct", "llama3.1", {}},
        {"meta-llama-Llama-3.2-3B-Instruct", "llama3.2", {}},
        {"mixtral-8x7b-instruct", "mistral-v1", {}},
        {"llamacpp-test-mistral-7b-instruct-v0.2-2", "mistral-v1", {}},
        {"mistral-7b-instruct-legacy", "mistral-legacy", {}},
        {"llamacpp-test-mistral-7b-instruct-v0.2", "mistral-legacy", {}},
        {"llamacpp-test-mistral-large-instruct-2407", "mistral-v3", {}},
        {"mistralai-Mistral-Nemo-Instruct-2407", "mistral-v3-tekken", {}},
        {"llamacpp-test-mistral-nemo-instruct-2407", "mistral-v3-tekken", {}},
        {"llamacpp-test-mistral-large-instruct-2411", "mistral-v7", {}},
        {"gemma-3", "gemma", {}},
        {"gemma-3-early", "gemma", {}},
        {"google-gemma-2-2b-it", "gemma", {}},
        {"llamacpp-test-gemma-7b-it", "gemma", {}},
        {"microsoft-Phi-3.5-mini-instruct", "phi3", {}},
        {"llamacpp-test-phi-3-small", "phi3", {}},
        {"llamacpp-test-phi-3-vision", "phi3", {}},
        {"phi-4", "phi4", {}},
        {"llamacpp-test-phi-4", "phi4", {}},
        {"deepseek-v3", "deepseek-v3", {}},
        {"deepseek-r1", "deepseek-v3", {}},  // the first R1 release opened no <think> block itself
        {"deepseek-v3.1", "deepseek-v3.1", {}},
        {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B", "deepseek-r1", {}},
        {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "deepseek-r1", {}},
        {"kimi-k2-instruct", "kimi-k2", {}},
        {"llamacpp-test-c4ai-command-r-plus", "command-r", {}},
        {"glm-4-9b-chat", "glm4", {}},
        {"llamacpp-test-chatglm4", "glm4", {}},
        {"llamacpp-test-chatglm3", "chatglm3", {}},
        // GLMEdge's test template always adds the assistant opener.
        {"llamacpp-test-glmedge", "glmedge", {"multi_turn_system_nogen"}},
        {"llamacpp-test-granite-3.0-8b-instruct", "granite", {}},
        {"llamacpp-test-vicuna-13b-1.1", "vicuna", {}},
        {"llamacpp-test-openchat-3.5-0106", "openchat", {}},
        {"llamacpp-test-minicpm-3b-openhermes-2.5-v2-gguf", "minicpm", {}},
        {"llamacpp-test-megrez-3b-instruct", "megrez", {}},
        {"llamacpp-test-deepseek-coder-33b-instruct", "deepseek-coder", {}},
        {"llamacpp-test-deepseek-v2", "deepseek-v2", {}},
        {"llamacpp-test-orion-14b-chat", "orion", {}},
    };
    return refs;
}

}  // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT

private slots:
    void fixtureInventory();
    void fixtureGoldens_data();
    void fixtureGoldens();
    void builtinGoldens_data();
    void builtinGoldens();
    void familyDetection();
    void everyBuiltinFamilyRenders();
    void handDerivedChatml_data();
    void handDerivedChatml();
    void interpreterFeatures_data();
    void interpreterFeatures();
    void toolConversations_data();
    void toolConversations();
    void chatMessageHelper();
    void syntaxErrorsCarryLineAndColumn_data();
    void syntaxErrorsCarryLineAndColumn();
    void runtimeErrors();
    void resourceBounds_data();
    void resourceBounds();
    void deepNestingIsRejected();
    void fuzzFindings_data();
    void fuzzFindings();
    void outputLimitIsConfigurable();
    void renderIsCancellable();
    void invalidUtf8PassesThrough();
    void emptyInputs();
    void megabyteMessages();
    void mutatedTemplatesNeverCrash();
    void strftimeUsesInjectedClock();
    void templateHashIsSha256();
    void concurrentRenders();
};

// ---- fixtures: every case, byte for byte ----

void TestChatTemplate::fixtureInventory() {
    VERDICT_NEED_FIXTURE(fixtureDir());
    // README.md states the totals; the golden rows below must cover all of them.
    const std::string readme = readFile(fixtureDir() / "README.md");
    std::smatch m;
    QVERIFY(std::regex_search(readme, m, std::regex("`(\\d+)` templates, `(\\d+)` cases")));
    std::size_t templates = 0;
    std::size_t cases = 0;
    for (const auto& e : std::filesystem::directory_iterator(fixtureDir())) {
        if (e.path().extension() != ".json") continue;
        ++templates;
        QVERIFY2(std::filesystem::exists(std::filesystem::path(e.path()).replace_extension(".jinja")),
                 e.path().string().c_str());
        cases += readJson(e.path())["cases"].size();
    }
    QCOMPARE(templates, static_cast<std::size_t>(std::stoul(m[1].str())));
    QCOMPARE(cases, static_cast<std::size_t>(std::stoul(m[2].str())));

    // llamacpp-v0.5.0/README.md: "`61` templates, `297` cases ... `extra_cases`: `161` more cases".
    VERDICT_NEED_FIXTURE(v050Dir());
    const std::string readme050 = readFile(v050Dir() / "README.md");
    std::smatch totals, extras;
    QVERIFY(std::regex_search(readme050, totals, std::regex("`(\\d+)` templates, `(\\d+)` cases")));
    QVERIFY(std::regex_search(readme050, extras, std::regex("`extra_cases`: `(\\d+)` more cases")));
    std::size_t templates050 = 0, cases050 = 0, extra050 = 0;
    for (const auto& e : std::filesystem::directory_iterator(v050Dir())) {
        if (e.path().extension() != ".json") continue;
        ++templates050;
        const json meta = readJson(e.path());
        cases050 += meta["cases"].size();
        extra050 += meta.value("extra_cases", json::array()).size();
    }
    QCOMPARE(templates050, static_cast<std::size_t>(std::stoul(totals[1].str())));
    QCOMPARE(cases050, static_cast<std::size_t>(std::stoul(totals[2].str())));
    QCOMPARE(extra050, static_cast<std::size_t>(std::stoul(extras[1].str())));
}

void TestChatTemplate::fixtureGoldens_data() {
    QTest::addColumn<GoldenRow>("row");
    if (!std::filesystem::exists(fixtureDir())) {
        QTest::addRow("missing") << GoldenRow{};
        return;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& dir : {fixtureDir(), v050Dir()}) {
        if (!std::filesystem::exists(dir)) continue;
        for (const auto& e : std::filesystem::directory_iterator(dir))
            if (e.path().extension() == ".json") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        const json meta = readJson(f);
        const std::string prefix = f.parent_path() == v050Dir() ? "v0.5.0/" : "";
        for (const bool extra : {false, true}) {
            const json& list = meta.value(extra ? "extra_cases" : "cases", json::array());
            for (std::size_t i = 0; i < list.size(); ++i) {
                const std::string name = prefix + f.stem().string() + "/" + list[i]["name"].get<std::string>();
                QTest::addRow("%s", name.c_str())
                    << GoldenRow{f.string(), std::filesystem::path(f).replace_extension(".jinja").string(), i, extra};
            }
        }
    }
}

void TestChatTemplate::fixtureGoldens() {
    QFETCH(GoldenRow, row);
    VERDICT_NEED_FIXTURE(fixtureDir());
    const json meta = readJson(row.jsonPath);
    const json& c = meta[row.extra ? "extra_cases" : "cases"][row.caseIndex];
    auto tmpl = ChatTemplate::parse(readFile(row.templatePath));
    QVERIFY2(tmpl.ok(), tmpl.ok() ? "" : tmpl.error().message.c_str());
    checkOutcome(tmpl->render(inputsFor(meta, c)), c);
}

// ---- built-in renderers against the same goldens ----

void TestChatTemplate::builtinGoldens_data() {
    QTest::addColumn<BuiltinRow>("row");
    if (!std::filesystem::exists(fixtureDir())) {
        QTest::addRow("missing") << BuiltinRow{};
        return;
    }
    for (const auto& ref : builtinReferences()) {
        const json meta = readJson(fixtureDir() / (std::string(ref.stem) + ".json"));
        for (std::size_t i = 0; i < meta["cases"].size(); ++i) {
            const json& c = meta["cases"][i];
            const std::string caseName = c["name"].get<std::string>();
            if (!c.contains("expected")) continue;  // the original rejects it; built-ins do not
            if (std::find(ref.skipCases.begin(), ref.skipCases.end(), caseName) != ref.skipCases.end()) continue;
            const std::string name = std::string(ref.family) + "@" + ref.stem + "/" + caseName;
            QTest::addRow("%s", name.c_str()) << BuiltinRow{ref.stem, ref.family, i};
        }
    }
}

void TestChatTemplate::builtinGoldens() {
    QFETCH(BuiltinRow, row);
    VERDICT_NEED_FIXTURE(fixtureDir());
    const json meta = readJson(fixtureDir() / (row.stem + ".json"));
    const json& c = meta["cases"][row.caseIndex];
    checkOutcome(renderBuiltinTemplate(row.family, inputsFor(meta, c)), c);
}

void TestChatTemplate::familyDetection() {
    VERDICT_NEED_FIXTURE(fixtureDir());
    for (const auto& ref : builtinReferences()) {
        const std::string source = readFile(fixtureDir() / (std::string(ref.stem) + ".jinja"));
        QVERIFY2(detectTemplateFamily(source) == ref.family,
                 (std::string(ref.stem) + " detected as " + detectTemplateFamily(source)).c_str());
    }
    QCOMPARE(qb(detectTemplateFamily(readFile(fixtureDir() / "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja"))),
             qb("command-r7b"));
    // Every family detected among the fixtures has a built-in fallback (except Command R7B).
    const std::vector<std::string> families = builtinTemplateFamilies();
    for (const auto& e : std::filesystem::directory_iterator(fixtureDir())) {
        if (e.path().extension() != ".jinja") continue;
        const std::string family = detectTemplateFamily(readFile(e.path()));
        if (family == "unknown" || family == "command-r7b") continue;
        QVERIFY2(std::find(families.begin(), families.end(), family) != families.end(),
                 (e.path().filename().string() + " -> " + family).c_str());
    }
    QCOMPARE(qb(detectTemplateFamily("{{ messages[0]['content'] }}")), qb("unknown"));
    QCOMPARE(qb(detectTemplateFamily("")), qb("unknown"));
    auto r = renderBuiltinTemplate("no-such-family", userTurn("x"));
    QVERIFY(!r.ok());
    QVERIFY(r.error().message.find("no-such-family") != std::string::npos);
}

void TestChatTemplate::everyBuiltinFamilyRenders() {
    ChatTemplateInputs in;
    in.messages = json::array({{{"role", "system"}, {"content", "S"}},
                               {{"role", "user"}, {"content", "U1"}},
                               {{"role", "assistant"}, {"content", "A1"}},
                               {{"role", "user"}, {"content", "U2"}}});
    in.bosToken = "<s>";
    in.eosToken = "</s>";
    in.now = frozenClock;
    for (const std::string& family : builtinTemplateFamilies()) {
        auto r = renderBuiltinTemplate(family, in);
        QVERIFY2(r.ok(), (family + ": " + (r.ok() ? "" : r.error().message)).c_str());
        QVERIFY2(r->find("U2") != std::string::npos, family.c_str());
        QVERIFY2(r->find("A1") != std::string::npos, family.c_str());
    }
}

// ---- goldens in tests/data ----

void TestChatTemplate::handDerivedChatml_data() {
    QTest::addColumn<NamedCase>("row");
    const json meta = readJson(test::testData("chat-templates/chatml.json"));
    for (std::size_t i = 0; i < meta["cases"].size(); ++i)
        QTest::addRow("%s", meta["cases"][i]["name"].get<std::string>().c_str()) << NamedCase{"chatml.json", i};
}

void TestChatTemplate::handDerivedChatml() {
    QFETCH(NamedCase, row);
    const json meta = readJson(test::testData("chat-templates/chatml.json"));
    const json& c = meta["cases"][row.caseIndex];
    checkOutcome(renderSource(readFile(test::testData("chat-templates/chatml.jinja")), inputsFor(meta, c)), c);
    checkOutcome(renderBuiltinTemplate("chatml", inputsFor(meta, c)), c);
    QCOMPARE(qb(detectTemplateFamily(readFile(test::testData("chat-templates/chatml.jinja")))), qb("chatml"));
}

void TestChatTemplate::interpreterFeatures_data() {
    QTest::addColumn<NamedCase>("row");
    const json data = readJson(test::testData("chat-templates/jinja_features.json"));
    for (std::size_t i = 0; i < data["cases"].size(); ++i)
        QTest::addRow("%s", data["cases"][i]["name"].get<std::string>().c_str()) << NamedCase{"jinja_features.json", i};
}

void TestChatTemplate::interpreterFeatures() {
    QFETCH(NamedCase, row);
    const json data = readJson(test::testData("chat-templates/jinja_features.json"));
    const json& c = data["cases"][row.caseIndex];
    ChatTemplateInputs in;
    in.messages = json::array();
    in.extraVariables = c["vars"];
    in.now = frozenClock;
    checkOutcome(renderSource(c["template"].get<std::string>(), in), c);
}

void TestChatTemplate::toolConversations_data() {
    QTest::addColumn<NamedCase>("row");
    const json data = readJson(test::testData("chat-templates/tool_conversations.json"));
    for (std::size_t i = 0; i < data["cases"].size(); ++i)
        QTest::addRow("%s", data["cases"][i]["name"].get<std::string>().c_str()) << NamedCase{"tool_conversations.json", i};
}

void TestChatTemplate::toolConversations() {
    QFETCH(NamedCase, row);
    VERDICT_NEED_FIXTURE(fixtureDir());
    const json data = readJson(test::testData("chat-templates/tool_conversations.json"));
    const json& c = data["cases"][row.caseIndex];
    const std::string stem = c["template"].get<std::string>();
    const json meta = readJson(fixtureDir() / (stem + ".json"));
    const ChatTemplateInputs in = inputsFor(meta, c);
    checkOutcome(renderSource(readFile(fixtureDir() / (stem + ".jinja")), in), c);
    if (c["builtin"].is_string()) checkOutcome(renderBuiltinTemplate(c["builtin"].get<std::string>(), in), c);
}

void TestChatTemplate::chatMessageHelper() {
    VERDICT_NEED_FIXTURE(fixtureDir());
    // ChatMessage -> JSON must render like the fixture's plain {role, content} objects.
    const json meta = readJson(fixtureDir() / "Qwen-Qwen2.5-7B-Instruct.json");
    const json& c = meta["cases"][1];  // multi_turn_system_gen
    std::vector<ChatMessage> msgs;
    for (const auto& m : c["messages"]) msgs.push_back({m["role"].get<std::string>(), m["content"].get<std::string>(), {}, {}, {}});
    ChatTemplateInputs in = inputsFor(meta, c);
    in.messages = chatMessagesToJson(msgs);
    checkOutcome(renderSource(readFile(fixtureDir() / "Qwen-Qwen2.5-7B-Instruct.jinja"), in), c);
    const json withCall = chatMessagesToJson({{"assistant", "", json::array({{{"id", "c1"}}}), "n", "t1"}});
    QCOMPARE(qb(withCall[0].dump()), qb(R"({"role":"assistant","content":"","tool_calls":[{"id":"c1"}],"name":"n","tool_call_id":"t1"})"));
}

// ---- errors ----

void TestChatTemplate::syntaxErrorsCarryLineAndColumn_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("where");
    QTest::addRow("bad expression") << "line one\n{{ 1 + }}" << "(line 2, column 8)";
    QTest::addRow("unknown tag") << "a\nb\n  {% frobnicate %}" << "(line 3, column 6)";
    QTest::addRow("unclosed if") << "x\n{% if true %}never closed" << "(line 2, column 4)";
    QTest::addRow("unterminated string") << "{{ 'abc }}" << "(line 1, column 4)";
    QTest::addRow("unclosed comment") << "ok\n{# no end" << "(line 2, column 1)";
    QTest::addRow("mismatched bracket") << "{{ (1, 2] }}" << "(line 1, column 9)";
    QTest::addRow("break outside loop") << "{% break %}" << "(line 1, column 4)";
    QTest::addRow("unicode column") << "日本語 {{ ) }}" << "(line 1, column 8)";
    QTest::addRow("crlf lines") << "a\r\nb\r\n{{ * }}" << "(line 3, column 4)";
}

void TestChatTemplate::syntaxErrorsCarryLineAndColumn() {
    QFETCH(QString, source);
    QFETCH(QString, where);
    auto t = ChatTemplate::parse(source.toStdString());
    QVERIFY(!t.ok());
    const std::string msg = t.error().message;
    QVERIFY2(msg.rfind("TemplateSyntaxError: ", 0) == 0, msg.c_str());
    QVERIFY2(msg.find(where.toStdString()) != std::string::npos, msg.c_str());
}

void TestChatTemplate::runtimeErrors() {
    auto r = renderSource("{{ raise_exception('Only user and assistant roles are supported!') }}", userTurn("x"));
    QVERIFY(!r.ok());
    QCOMPARE(qb(r.error().message), qb("TemplateError: Only user and assistant roles are supported!"));

    r = renderSource("line1\n{{ messages[0].content.missing.deeper }}", userTurn("x"));
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.rfind("UndefinedError: 'str object' has no attribute 'missing'", 0) == 0,
             r.error().message.c_str());
    QVERIFY2(r.error().message.find("line 2") != std::string::npos, r.error().message.c_str());

    r = renderSource("{{ messages.append(1) }}", userTurn("x"));
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.rfind("SecurityError: ", 0) == 0, r.error().message.c_str());

    r = renderSource("{% for t in tools %}{% endfor %}", userTurn("x"));  // tools is None by default
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.rfind("TypeError: 'NoneType' object is not iterable", 0) == 0, r.error().message.c_str());

    ChatTemplateInputs bad = userTurn("x");
    bad.messages = json::object();
    r = renderSource("{{ 1 }}", bad);
    QVERIFY(!r.ok());
}

void TestChatTemplate::resourceBounds_data() {
    QTest::addColumn<QString>("source");
    QTest::addRow("huge range") << "{% for i in range(10**12) %}x{% endfor %}";
    QTest::addRow("range over sandbox limit") << "{{ range(200000)|length }}";
    QTest::addRow("nested loops") << "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    QTest::addRow("macro recursion") << "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}";
    QTest::addRow("mutual recursion") << "{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}";
    QTest::addRow("recursive loop") << "{% for i in [1] recursive %}{{ loop([i]) }}{% endfor %}";
    QTest::addRow("string doubling") << "{% set ns = namespace(s='ab') %}{% for i in range(80) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}";
    QTest::addRow("string repeat") << "{{ 'x' * 10**15 }}";
    QTest::addRow("list repeat") << "{{ ([1] * 10**12)|length }}";
    QTest::addRow("integer overflow") << "{{ 2 ** 200 }}";
    QTest::addRow("self-referencing namespace") << "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}";
    // 2^60 calls within the depth limit, no output: it used to run unbounded (a core pinned forever).
    QTest::addRow("exponential macro recursion")
        << "{% macro f(n) %}{% if n > 0 %}{% set a = f(n - 1) %}{% set b = f(n - 1) %}{% endif %}{% endmacro %}{{ f(60) }}";
    QTest::addRow("exponential recursion in one expression")
        << "{% macro f(n) %}{{ (f(n - 1) ~ f(n - 1))[:0] if n > 0 else '' }}{% endmacro %}{{ f(60) }}";
}

void TestChatTemplate::resourceBounds() {
    QFETCH(QString, source);
    const double start = threadCpuSeconds();
    auto r = renderSource(source.toStdString(), userTurn("x"));
    const double seconds = threadCpuSeconds() - start;
    QVERIFY2(!r.ok(), "an unbounded template must fail cleanly");
    QVERIFY2(r.error().message.rfind("LimitError: ", 0) == 0 || r.error().message.rfind("OverflowError", 0) == 0,
             r.error().message.c_str());
    QVERIFY2(seconds < 20.0 * kCpuBoundScale, qPrintable(QString("took %1 s").arg(seconds)));
}

// What fuzz_jinja (tests/fuzz) found, and what reading the code around each finding showed: a
// signed overflow reading a format width, printf handed a double for %s, and results that grow
// without a bound before any limit is asked (list doubling, padding, join/replace/indent/tojson/
// str() of shared items, iterating a long string). Each now renders or fails cleanly, fast.
// `outcome`: the exact output, or with fails=true the start of the error message.
void TestChatTemplate::fuzzFindings_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<bool>("fails");
    QTest::addColumn<QString>("outcome");
    QTest::addRow("%% width overflow") << "{{ '%9999999999999999999999d' % 3 }}" << true << "LimitError: format width";
    QTest::addRow("%% width of 40 million") << "{{ '%040689608d' % 3 }}" << true << "LimitError: format width";
    QTest::addRow("%% width of a million") << "{{ ('%1048576d' % 3)|length }}" << false << "1048576";
    QTest::addRow("%% width past a million") << "{{ '%-1048577s' % 'x' }}" << true << "LimitError: format width";
    QTest::addRow("%%d of a huge float") << "{{ '%d' % 1e300 }}" << true << "LimitError: integer result outside";
    QTest::addRow("%%c out of range") << "{{ '%c' % 1114112 }}" << true << "ValueError: %c arg not in range(0x110000)";
    QTest::addRow("%%.400f of 1e300 is whole") << "{{ ('%.400f' % 1e300)|length }}" << false << "702";
    QTest::addRow("format {:s} of an int") << "{{ '{:s}'.format(1) }}" << true << "ValueError: Unknown format code 's' for object of type 'int'";
    QTest::addRow("format {:d} of a float") << "{{ '{:d}'.format(1.5) }}" << true << "ValueError: Unknown format code 'd'";
    QTest::addRow("format width overflow") << "{{ '{:99999999999999999999999}'.format(1) }}" << true << "LimitError: format width";
    QTest::addRow("format many wide fields") << "{{ ('{:1000000}' * 1000).format(*range(1000))|length }}" << true << "LimitError: ";
    QTest::addRow("list doubling") << "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}"
                                   << true << "LimitError: list concatenation larger than";
    QTest::addRow("list concatenation") << "{{ ([1, 2] + [3])|length }}" << false << "3";
    QTest::addRow("batch padding") << "{{ [1]|batch(10**12, 0)|list|length }}" << true << "LimitError: ";
    QTest::addRow("slice count") << "{{ [1]|slice(10**12)|list|length }}" << true << "LimitError: ";
    QTest::addRow("range at the int64 edge") << "{{ range(2, 9223372036854775807, 9223372036854775806)|list }}" << false << "[2]";
    QTest::addRow("truncate length overflow") << "{{ 'abc'|truncate(9223372036854775807) }}" << false << "abc";
    QTest::addRow("zfill width") << "{{ 'x'.zfill(10**12) }}" << true << "LimitError: ";
    QTest::addRow("center with a long fill") << "{{ 'x'.center(60000000, 'ab') }}" << true << "TypeError: The fill character must be exactly one character long";
    QTest::addRow("center") << "{{ 'abc'.center(7, '*') }}" << false << "**abc**";
    QTest::addRow("replace of the empty string") << "{{ ('ab' * 30000000).replace('', 'xyz')|length }}" << true << "LimitError: replace() result larger than";
    QTest::addRow("join of shared items") << "{{ ([('x' * 50000000)] * 1000)|join|length }}" << true << "LimitError: ";
    QTest::addRow("str of shared items") << "{{ [('x' * 50000000)] * 1000 }}" << true << "LimitError: ";
    QTest::addRow("tojson of shared items") << "{{ ([('x' * 1000000)] * 1000)|tojson|length }}" << true << "LimitError: ";
    QTest::addRow("tojson huge indent") << "{{ [1, [2, [3]]]|tojson(indent=10**12) }}" << true << "LimitError: ";
    QTest::addRow("indent of many lines") << "{{ ('a\n' * 1000000)|indent(1000)|length }}" << true << "LimitError: ";
    QTest::addRow("a long string as a list") << "{{ ('x' * 10000000)|list|length }}" << true << "LimitError: ";
}

void TestChatTemplate::fuzzFindings() {
    QFETCH(QString, source);
    QFETCH(bool, fails);
    QFETCH(QString, outcome);
    const double start = threadCpuSeconds();
    auto r = renderSource(source.toStdString(), userTurn("x"));
    const double seconds = threadCpuSeconds() - start;
    QVERIFY2(seconds < 20.0 * kCpuBoundScale, qPrintable(QString("took %1 s").arg(seconds)));
    if (!fails) {
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(QString::fromStdString(*r), outcome);
        return;
    }
    QVERIFY2(!r.ok(), r.ok() ? r->substr(0, 200).c_str() : "");
    QVERIFY2(r.error().message.rfind(outcome.toStdString(), 0) == 0, r.error().message.c_str());
}

void TestChatTemplate::deepNestingIsRejected() {
    // Deeply nested expressions and blocks are a syntax error (bounded parser depth), not a crash.
    std::string parens = "{{ " + std::string(50000, '(') + "1" + std::string(50000, ')') + " }}";
    auto t = ChatTemplate::parse(parens);
    QVERIFY(!t.ok());
    QVERIFY2(t.error().message.find("nested too deeply") != std::string::npos, t.error().message.c_str());

    std::string ifs;
    for (int i = 0; i < 20000; ++i) ifs += "{% if true %}";
    t = ChatTemplate::parse(ifs);
    QVERIFY(!t.ok());

    std::string nots = "{{ ";
    for (int i = 0; i < 20000; ++i) nots += "not ";
    t = ChatTemplate::parse(nots + "x }}");
    QVERIFY(!t.ok());

    // Moderate nesting is fine.
    auto r = renderSource("{{ " + std::string(100, '(') + "1" + std::string(100, ')') + " }}", userTurn("x"));
    QVERIFY(r.ok());
    QCOMPARE(qb(*r), qb("1"));
}

// A SIGTERM or a client that went away stops a slow template long before its step bound
// (issue 24, finding 5): shouldStop is asked every 4096 steps.
void TestChatTemplate::renderIsCancellable() {
    ChatTemplateInputs in = userTurn("x");
    in.limits.maxSteps = 1'000'000'000;  // so only the cancel can end it
    int asked = 0;
    in.limits.shouldStop = [&] { return ++asked >= 3; };
    auto r = renderSource("{% macro f(n) %}{% if n > 0 %}{% set a = f(n - 1) %}{% set b = f(n - 1) %}{% endif %}"
                          "{% endmacro %}{{ f(60) }}", in);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.find("cancelled") != std::string::npos, r.error().message.c_str());
    QCOMPARE(asked, 3);
    // a render that does not ask to stop is unaffected
    in.limits.shouldStop = [] { return false; };
    r = renderSource("{% for i in range(20000) %}{{ i % 10 }}{% endfor %}", in);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
}

void TestChatTemplate::outputLimitIsConfigurable() {
    ChatTemplateInputs in = userTurn(std::string(1000, 'a'));
    in.limits.maxOutputBytes = 4096;
    auto r = renderSource("{% for i in range(10) %}{{ messages[0].content }}{% endfor %}", in);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.rfind("LimitError: ", 0) == 0, r.error().message.c_str());
    in.limits.maxOutputBytes = 1 << 20;
    r = renderSource("{% for i in range(10) %}{{ messages[0].content }}{% endfor %}", in);
    QVERIFY(r.ok());
    QCOMPARE(r->size(), std::size_t(10000));

    in.limits.maxLoopIterations = 50;
    r = renderSource("{% for i in range(100) %}{% endfor %}", in);
    QVERIFY(!r.ok());
}

void TestChatTemplate::invalidUtf8PassesThrough() {
    VERDICT_NEED_FIXTURE(fixtureDir());
    const std::string bad = "ok \xff\xfe mid \xc3( end \xe2\x82";  // invalid and truncated sequences
    for (const char* stem : {"Qwen-Qwen2.5-7B-Instruct", "gemma-3", "meta-llama-Llama-3.1-8B-Instruct",
                             "mistralai-Mistral-Nemo-Instruct-2407", "qwen3-0.6b", "kimi-k2-instruct"}) {
        const json meta = readJson(fixtureDir() / (std::string(stem) + ".json"));
        ChatTemplateInputs in = inputsFor(meta, meta["cases"][0]);
        in.messages[0]["content"] = bad;  // nlohmann keeps the bytes as given (only dump() would object)
        auto r = renderSource(readFile(fixtureDir() / (std::string(stem) + ".jinja")), in);
        QVERIFY2(r.ok(), (std::string(stem) + ": " + (r.ok() ? "" : r.error().message)).c_str());
        QVERIFY2(r->find(bad) != std::string::npos, stem);
    }
    // String operations treat each invalid byte as one character and never fail.
    auto r = renderSource("{{ s|length }}|{{ s|upper }}|{{ s[::-1]|length }}|{{ s|tojson }}|{{ s.split('\xfe')|length }}",
                          [&] {
                              ChatTemplateInputs in = userTurn("x");
                              in.extraVariables = {{"s", "a\xff" "b"}};
                              return in;
                          }());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(qb(*r), qb("3|A\xff" "B|3|\"a\xff" "b\"|1"));
    // A template that is not valid UTF-8 parses too.
    r = renderSource("\xff{{ 'x\xfe' }}\xc3", userTurn("x"));
    QVERIFY(r.ok());
    QCOMPARE(qb(*r), qb("\xffx\xfe\xc3"));
}

void TestChatTemplate::emptyInputs() {
    auto r = renderSource("", userTurn("x"));
    QVERIFY(r.ok());
    QCOMPARE(qb(*r), qb(""));
    r = renderSource("\n", userTurn("x"));  // keep_trailing_newline=False drops it
    QVERIFY(r.ok());
    QCOMPARE(qb(*r), qb(""));

    ChatTemplateInputs none = userTurn("");
    none.messages = json::array();
    r = renderSource(readFile(test::testData("chat-templates/chatml.jinja")), none);
    QVERIFY(r.ok());
    QCOMPARE(qb(*r), qb("<|im_start|>assistant\n"));
    // A template indexing messages[0] on an empty conversation fails cleanly.
    r = renderSource("{{ messages[0]['role'] }}", none);
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.rfind("UndefinedError: ", 0) == 0, r.error().message.c_str());
    for (const std::string& family : builtinTemplateFamilies()) {
        auto b = renderBuiltinTemplate(family, none);
        QVERIFY2(b.ok(), family.c_str());
    }

    r = renderSource(readFile(test::testData("chat-templates/chatml.jinja")), userTurn(""));
    QVERIFY(r.ok());
    QCOMPARE(qb(*r), qb("<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n"));
}

void TestChatTemplate::megabyteMessages() {
    VERDICT_NEED_FIXTURE(fixtureDir());
    std::string big;
    big.reserve(1 << 20);
    while (big.size() < (1u << 20)) big += "Lorem ipsum 日本語 dolor sit amet. ";
    for (const char* stem : {"qwen3-0.6b", "meta-llama-Llama-3.1-8B-Instruct", "gemma-3", "mistralai-Mistral-Nemo-Instruct-2407",
                             "CohereForAI-c4ai-command-r7b-12-2024-tool_use", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B"}) {
        const json meta = readJson(fixtureDir() / (std::string(stem) + ".json"));
        ChatTemplateInputs in = inputsFor(meta, meta["cases"][1]);  // multi-turn with system
        for (auto& m : in.messages) m["content"] = m["content"].get<std::string>() + big;
        const double start = threadCpuSeconds();
        auto r = renderSource(readFile(fixtureDir() / (std::string(stem) + ".jinja")), in);
        const double seconds = threadCpuSeconds() - start;
        QVERIFY2(r.ok(), (std::string(stem) + ": " + (r.ok() ? "" : r.error().message)).c_str());
        QVERIFY2(r->size() > 4 * big.size(), stem);
        QVERIFY2(seconds < 10.0 * kCpuBoundScale, qPrintable(QString("%1 took %2 s").arg(stem).arg(seconds)));
    }
}

void TestChatTemplate::mutatedTemplatesNeverCrash() {
    VERDICT_NEED_FIXTURE(fixtureDir());
    // Random byte edits of real templates must parse-or-fail and render-or-fail, never crash.
    std::mt19937 rng(20260115);
    std::vector<std::string> sources;
    for (const auto& e : std::filesystem::directory_iterator(fixtureDir()))
        if (e.path().extension() == ".jinja") sources.push_back(readFile(e.path()));
    std::sort(sources.begin(), sources.end());
    const std::string alphabet = "{}%#-+()[]|.,:'\"~*/ \n\\abcdefghijklmnopqrstuvwxyz0123456789\xff";
    ChatTemplateInputs in = userTurn("hello");
    in.limits.maxLoopIterations = 10000;
    int parsed = 0;
    for (int iter = 0; iter < 400; ++iter) {
        std::string s = sources[rng() % sources.size()];
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < edits && !s.empty(); ++k) {
            const std::size_t pos = rng() % s.size();
            switch (rng() % 3) {
            case 0: s[pos] = alphabet[rng() % alphabet.size()]; break;
            case 1: s.erase(pos, 1 + rng() % 8); break;
            default: s.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
            }
        }
        auto t = ChatTemplate::parse(s);
        if (!t) continue;
        ++parsed;
        (void)t->render(in);
    }
    QVERIFY(parsed > 0);
}

void TestChatTemplate::strftimeUsesInjectedClock() {
    ChatTemplateInputs in = userTurn("x");
    in.now = [] { return TemplateTime{2024, 2, 29, 23, 5, 9}; };
    auto r = renderSource("{{ strftime_now('%d %b %Y|%A|%H:%M:%S|%j|%-m/%-d') }}", in);
    QVERIFY(r.ok());
    QCOMPARE(qb(*r), qb("29 Feb 2024|Thursday|23:05:09|060|2/29"));
    in.now = nullptr;  // the system clock: just a well-formed date
    r = renderSource("{{ strftime_now('%Y-%m-%d') }}", in);
    QVERIFY(r.ok());
    QVERIFY(std::regex_match(*r, std::regex("\\d{4}-\\d{2}-\\d{2}")));
}

void TestChatTemplate::templateHashIsSha256() {
    // FIPS 180-4 example vectors.
    QCOMPARE(qb(templateHash("")), qb("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    QCOMPARE(qb(templateHash("abc")), qb("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    QCOMPARE(qb(templateHash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
             qb("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    QCOMPARE(qb(templateHash(std::string(1000000, 'a'))),
             qb("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

void TestChatTemplate::concurrentRenders() {
    VERDICT_NEED_FIXTURE(fixtureDir());
    const json meta = readJson(fixtureDir() / "qwen3-0.6b.json");
    auto tmpl = ChatTemplate::parse(readFile(fixtureDir() / "qwen3-0.6b.jinja"));
    QVERIFY(tmpl.ok());
    const ChatTemplate& t = *tmpl;
    std::vector<std::string> results(8);
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < results.size(); ++k) {
        threads.emplace_back([&, k] {
            const json& c = meta["cases"][k % meta["cases"].size()];
            for (int i = 0; i < 50; ++i) {
                auto r = t.render(inputsFor(meta, c));
                results[k] = r.ok() && *r == c["expected"].get<std::string>() ? "ok" : "mismatch";
                if (results[k] != "ok") return;
            }
        });
    }
    for (auto& th : threads) th.join();
    for (const auto& r : results) QCOMPARE(qb(r), qb("ok"));
}

QTEST_GUILESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
