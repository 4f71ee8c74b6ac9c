// Suite import, record level: every shape from a real-looking file, mapped to SuiteItem with its
// default scorers; answer letters/indices/texts; rejections for answers outside the choices.
#include "core/suite/field_mapping.h"
#include "core/suite/suite_importer.h"
#include "core/suite/suite_shape.h"
#include "fixtures.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>
#include <nlohmann/json.hpp>

using namespace verdict::core;

namespace {
std::string suiteFile(const char* name) { return verdict::test::testData(std::string("suites/") + name).string(); }

ImportResult load(const char* name, ImportOptions o = {}) {
    auto r = importSuite(suiteFile(name), o);
    if (!r.ok()) qFatal("import %s failed: %s", name, r.error().message.c_str());
    return std::move(*r);
}

std::vector<std::string> scorerNames(const SuiteItem& item) {
    std::vector<std::string> n;
    for (const auto& s : item.scorers) n.push_back(s.name);
    return n;
}
}  // namespace

class TestSuiteImportShapes : public QObject {
    Q_OBJECT
private slots:
    void mmluHeaderless() {
        const auto r = load("abstract_algebra_test.csv");
        QCOMPARE(r.shape, std::string("mmlu"));
        QCOMPARE(r.items.size(), size_t(5));
        const auto& q3 = r.items[2];  // spans lines 3-4 (quoted newline)
        QCOMPARE(q3.sourceLine, 3);
        QVERIFY(q3.prompt.find("\nStatement 2 | The symmetric group") != std::string::npos);
        QCOMPARE(q3.choices, (std::vector<std::string>{"True, True", "False, False", "True, False", "False, True"}));
        QCOMPARE(q3.gold, std::optional<int>(2));
        QCOMPARE(r.items[3].prompt, std::string("Which of the following is called the \"identity\" of a group under multiplication?"));
        QCOMPARE(r.items[3].sourceLine, 5);
        QCOMPARE(r.items[0].category, std::string("abstract_algebra"));  // from the file name
        QCOMPARE(r.items[0].references, std::vector<std::string>{"B"});
        QCOMPARE(scorerNames(r.items[0]), (std::vector<std::string>{"mc_loglik", "mc_letter"}));
    }

    void cmmluHeadedWithBom() {
        const auto r = load("ancient_chinese.csv");
        QCOMPARE(r.shape, std::string("mmlu"));
        QCOMPARE(r.items.size(), size_t(4));
        QCOMPARE(r.items[0].prompt, std::string("“三人行，必有我师焉”出自哪部典籍？"));
        QCOMPARE(r.items[0].choices[1], std::string("《论语》"));
        QCOMPARE(r.items[0].gold, std::optional<int>(1));
        QCOMPARE(r.items[2].prompt, std::string("“之”在\"送杜少府之任蜀州\"中的意思是？"));
        QCOMPARE(r.items[3].gold, std::optional<int>(2));
        QCOMPARE(r.items[3].category, std::string("ancient_chinese"));
        QVERIFY(!r.items[0].metadata.contains("col1"));  // the unnamed index column carries nothing
    }

    void cevalRejectsLetterOutsideChoices() {
        const auto r = load("computer_network_val.csv");
        QCOMPARE(r.shape, std::string("mmlu"));
        QCOMPARE(r.items.size(), size_t(3));
        QCOMPARE(r.items[0].id, std::string("0"));
        QCOMPARE(r.items[0].category, std::string("computer_network"));
        QCOMPARE(r.items[0].metadata["explanation"].get<std::string>(), std::string("TCP 是传输层协议。"));
        QCOMPARE(r.rejected.size(), size_t(1));
        QCOMPARE(r.rejected[0].line, 5);
        QCOMPARE(r.rejected[0].reason, std::string("answer letter 'E' is not among the 4 choices (A-D)"));
    }

    void gsm8k() {
        const auto r = load("gsm8k_sample.jsonl");
        QCOMPARE(r.shape, std::string("gsm8k"));
        QCOMPARE(r.items.size(), size_t(5));
        QCOMPARE(r.items[0].references, std::vector<std::string>{"3600"});  // "3,600" without the comma
        QCOMPARE(r.items[1].references, std::vector<std::string>{"-7"});
        QCOMPARE(r.items[4].references, std::vector<std::string>{"4198"});
        QVERIFY(r.items[0].metadata["solution"].get<std::string>().find("<<1200*2=2400>>") != std::string::npos);
        QCOMPARE(scorerNames(r.items[0]), std::vector<std::string>{"numeric"});
        QCOMPARE(r.rejected.size(), size_t(2));
        QCOMPARE(r.rejected[0].line, 6);
        QCOMPARE(r.rejected[1].line, 7);
        QCOMPARE(r.rejected[1].reason, std::string("answer has no final value after '####'"));
    }

    void mtBenchTurns() {
        // MT-Bench's question.jsonl shape: the user's turns, asked one after the other in one
        // conversation; references per turn guide a judge (no scorer: open answers are judged).
        const auto r = load("mt_bench_sample.jsonl");
        QCOMPARE(r.shape, std::string("mt_bench"));
        QCOMPARE(r.items.size(), size_t(3));
        QCOMPARE(r.items[0].id, std::string("81"));
        QCOMPARE(r.items[0].category, std::string("writing"));
        QCOMPARE(r.items[0].turns.size(), size_t(2));
        QCOMPARE(r.items[0].prompt, r.items[0].turns[0]);
        QVERIFY(r.items[0].scorers.empty());
        QCOMPARE(r.items[1].references, (std::vector<std::string>{"6", "2.5"}));
        QCOMPARE(r.items[2].turns.size(), size_t(1));  // one turn is a conversation of one
        QCOMPARE(r.rejected.size(), size_t(1));
        QCOMPARE(r.rejected[0].line, 3);
        QCOMPARE(r.rejected[0].reason, std::string("turn 2 of 'turns' is not a non-empty text"));
    }

    void arcNestedWithNumericLabels() {
        const auto r = load("arc_challenge_sample.jsonl");
        QCOMPARE(r.shape, std::string("arc"));
        QCOMPARE(r.items.size(), size_t(3));
        QCOMPARE(r.items[0].id, std::string("Mercury_7175875"));
        QCOMPARE(r.items[0].gold, std::optional<int>(2));
        QCOMPARE(r.items[1].metadata["fact1"].get<std::string>(), std::string("the sun is the source of energy for physical cycles on Earth"));
        QCOMPARE(r.items[2].choices[1], std::string("balance"));
        QCOMPARE(r.items[2].gold, std::optional<int>(1));  // answerKey "2" is the label, not an index
        QCOMPARE(r.items[2].references, std::vector<std::string>{"B"});
        QCOMPARE(r.items[2].metadata["choice_labels"], nlohmann::json({"1", "2", "3", "4"}));
        QCOMPARE(r.rejected.size(), size_t(1));
        QCOMPARE(r.rejected[0].line, 4);
        QCOMPARE(r.rejected[0].reason, std::string("answer letter 'E' is not among the 3 choices (A-C)"));
    }

    void aquaStripsLetterPrefixes() {
        const auto r = load("aqua_rat_sample.json");
        QCOMPARE(r.shape, std::string("aqua"));
        QCOMPARE(r.items[0].choices, (std::vector<std::string>{"40 km/h", "50 km/h", "60 km/h", "80 km/h", "120 km/h"}));
        QCOMPARE(r.items[0].gold, std::optional<int>(2));
        QCOMPARE(r.items[1].metadata["rationale"].get<std::string>(), std::string("3x = 15, so x = 5."));
        QCOMPARE(r.rejected[0].reason, std::string("answer letter 'F' is not among the 5 choices (A-E)"));
    }

    void mcChoicesAnswerForms() {
        const auto r = load("mc_choices_sample.jsonl");
        QCOMPARE(r.shape, std::string("mc"));
        QCOMPARE(r.items.size(), size_t(4));
        QCOMPARE(r.items[0].gold, std::optional<int>(2));  // index
        QCOMPARE(r.items[0].category, std::string("geography"));
        QCOMPARE(r.items[1].gold, std::optional<int>(1));  // letter
        QCOMPARE(r.items[2].gold, std::optional<int>(1));  // choice text "Oxygen"
        QCOMPARE(r.items[3].gold, std::optional<int>(2));  // "(C)" with "A. " prefixes stripped
        QCOMPARE(r.items[3].choices[2], std::string("29"));
        QCOMPARE(r.rejected.size(), size_t(2));
        QCOMPARE(r.rejected[0].line, 3);
        QCOMPARE(r.rejected[0].reason, std::string("answer index 7 is out of range for 4 choices"));
        QCOMPARE(r.rejected[1].line, 5);
        QCOMPARE(r.rejected[1].reason, std::string("no question text"));
    }

    void inspectAi() {
        const auto r = load("inspect_samples.jsonl");
        QCOMPARE(r.shape, std::string("inspect"));
        QCOMPARE(r.items.size(), size_t(3));
        QCOMPARE(r.items[0].id, std::string("capital-fr"));
        QCOMPARE(r.items[0].references, std::vector<std::string>{"Paris"});
        QCOMPARE(r.items[0].metadata["difficulty"].get<std::string>(), std::string("easy"));  // Inspect's metadata, flattened
        QCOMPARE(scorerNames(r.items[0]), std::vector<std::string>{"exact"});
        QCOMPARE(r.items[1].messages.size(), size_t(2));
        QCOMPARE(r.items[1].messages[0].role, std::string("system"));
        QVERIFY(r.items[1].prompt.empty());
        QCOMPARE(r.items[1].references, (std::vector<std::string>{"tac", "TAC"}));
        QCOMPARE(r.items[2].gold, std::optional<int>(1));
        QCOMPARE(scorerNames(r.items[2]), (std::vector<std::string>{"mc_loglik", "mc_letter"}));
        QCOMPARE(r.rejected[0].line, 4);
        QCOMPARE(r.rejected[0].reason, std::string("answer letter 'D' is not among the 2 choices (A-B)"));
    }

    void openAiEvals() {
        const auto r = load("openai_evals_match.jsonl");
        QCOMPARE(r.shape, std::string("openai_evals"));
        QCOMPARE(r.items.size(), size_t(2));
        QCOMPARE(r.items[0].messages[1].content, std::string("What is the chemical symbol for sodium?"));
        QCOMPARE(r.items[1].references, std::vector<std::string>{"Fe"});
        QCOMPARE(scorerNames(r.items[0]), std::vector<std::string>{"starts_with"});
        QCOMPARE(r.rejected[0].line, 3);
        QCOMPARE(r.rejected[0].reason, std::string("message 1 has no text content"));
    }

    void humanEvalAndMbpp() {
        const auto h = load("humaneval_sample.jsonl");
        QCOMPARE(h.shape, std::string("humaneval"));
        QCOMPARE(h.items.size(), size_t(3));
        QCOMPARE(h.items[0].id, std::string("Verdict/0"));
        QCOMPARE(h.items[0].metadata["entry_point"].get<std::string>(), std::string("running_max"));
        QVERIFY(h.items[0].metadata["test"].get<std::string>().rfind("def check(candidate):", 0) == 0);
        QCOMPARE(scorerNames(h.items[0]), std::vector<std::string>{"code_exec"});

        const auto m = load("mbpp_sample.jsonl");
        QCOMPARE(m.shape, std::string("mbpp"));
        QCOMPARE(m.items.size(), size_t(2));
        QCOMPARE(m.items[0].id, std::string("601"));
        QCOMPARE(m.items[0].metadata["test_list"].size(), size_t(3));
        QCOMPARE(m.rejected[0].line, 3);
        QCOMPARE(m.rejected[0].reason, std::string("test_list must be a non-empty list of assert statements"));
    }

    void promptfooConfig() {
        const auto r = load("promptfoo_config.json");
        QCOMPARE(r.shape, std::string("promptfoo"));
        QCOMPARE(r.items.size(), size_t(3));
        QCOMPARE(r.items[0].sourceLine, 5);
        QCOMPARE(r.items[0].prompt, std::string("Answer briefly: What is the capital of France?"));  // the config's prompt
        QCOMPARE(r.items[0].scorers.size(), size_t(2));
        QCOMPARE(r.items[0].scorers[0].name, std::string("contains"));
        QCOMPARE(r.items[0].scorers[0].params["ignore_case"].get<bool>(), true);
        QCOMPARE(r.items[0].scorers[1].params["negate"].get<bool>(), true);
        QCOMPARE(r.items[0].metadata["description"].get<std::string>(), std::string("capital of France"));
        QCOMPARE(r.items[1].scorers.size(), size_t(1));  // llm-rubric is not supported here...
        QCOMPARE(r.items[1].scorers[0].name, std::string("json_valid"));
        QCOMPARE(r.items[1].scorers[0].params["schema"]["required"], nlohmann::json({"name", "age"}));
        QCOMPARE(r.warnings.size(), size_t(1));  // ...and says so
        QCOMPARE(r.warnings[0].line, 13);
        QVERIFY(r.warnings[0].reason.find("llm-rubric") != std::string::npos);
        QCOMPARE(r.items[2].scorers[0].name, std::string("regex"));
        QCOMPARE(r.items[2].scorers[0].params["pattern"].get<std::string>(), std::string("^\\d{5}$"));
        QCOMPARE(r.items[2].references, std::vector<std::string>{"90210"});  // from equals
        QCOMPARE(r.rejected.size(), size_t(1));
        QCOMPARE(r.rejected[0].line, 24);
        QVERIFY(r.rejected[0].reason.find("{{question}}") != std::string::npos);
    }

    void promptfooCsvExpectedColumns() {
        const auto r = load("promptfoo_tests.csv");
        QCOMPARE(r.shape, std::string("promptfoo"));
        QCOMPARE(r.items.size(), size_t(4));
        QCOMPARE(r.items[0].scorers[0].name, std::string("exact"));  // bare value = equals
        QCOMPARE(r.items[0].references, std::vector<std::string>{"4"});
        QCOMPARE(r.items[1].prompt, std::string("Translate to French:\ngood morning"));
        QCOMPARE(r.items[1].sourceLine, 3);
        QCOMPARE(r.items[1].scorers.size(), size_t(2));
        QCOMPARE(r.items[1].scorers[1].params["negate"].get<bool>(), true);
        QCOMPARE(r.items[2].scorers[0].params["values"], nlohmann::json({"red", "blue", "yellow"}));
        QCOMPARE(r.items[3].scorers[0].name, std::string("json_valid"));
        QCOMPARE(r.items[3].scorers[1].params["pattern"].get<std::string>(), std::string("\"ok\"\\s*:"));
    }

    void explicitMapping() {
        auto mapping = FieldMapping::parse("prompt=instruction, reference=output, category=type");
        QVERIFY(mapping.ok());
        ImportOptions o;
        o.mapping = *mapping;
        const auto r = load("alpaca_like.tsv", o);
        QCOMPARE(r.shape, std::string("mapped"));
        QCOMPARE(r.items.size(), size_t(2));
        QCOMPARE(r.items[0].prompt, std::string("Give the opposite of \"hot\"."));
        QCOMPARE(r.items[0].references, std::vector<std::string>{"cold"});
        QCOMPARE(r.items[1].category, std::string("units"));
        QCOMPARE(scorerNames(r.items[0]), std::vector<std::string>{"exact"});
        QCOMPARE(r.rejected[0].line, 4);
        QCOMPARE(r.rejected[0].reason, std::string("no prompt (mapped from 'instruction')"));
    }

    void mappingParseErrors() {
        QVERIFY(!FieldMapping::parse("prompt").ok());
        QVERIFY(!FieldMapping::parse("answr=x,prompt=y").ok());
        QVERIFY(!FieldMapping::parse("reference=out").ok());  // no prompt source
        auto m = FieldMapping::parse("prompt=question.stem,choices=A|B|C|D,answer=label");
        QVERIFY(m.ok());
        QCOMPARE(m->sources("choices").size(), size_t(4));
        QCOMPARE(m->toString(), std::string("prompt=question.stem,choices=A|B|C|D,answer=label"));
    }

    void forcedShape() {
        ImportOptions o;
        o.shape = "prompt";  // read GSM8K as plain prompt/answer pairs
        const auto r = load("gsm8k_sample.jsonl", o);
        QCOMPARE(r.shape, std::string("prompt"));
        QCOMPARE(r.items.size(), size_t(6));  // line 7 has an answer, just no ####
        o.shape = "nonsense";
        QVERIFY(!importSuite(suiteFile("gsm8k_sample.jsonl"), o).ok());
    }

    // Line 8 of a prompt/reference file is multiple choice, with an answer outside its choices:
    // it must not be imported as a plain prompt that silently drops them.
    void mixedShapeLineIsRejected() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("mixed.jsonl").toStdString();
        {
            std::ofstream f(path);
            for (int i = 1; i <= 10; ++i) {
                if (i == 8)
                    f << nlohmann::json{{"question", "Which is a prime?"}, {"choices", {"4", "6", "7"}}, {"answer", "D"}}.dump();
                else
                    f << nlohmann::json{{"prompt", "What is " + std::to_string(i) + " + 1?"}, {"reference", std::to_string(i + 1)}}.dump();
                f << "\n";
            }
        }
        auto r = importSuite(path);
        QVERIFY(r.ok());
        QCOMPARE(r->shape, std::string("prompt"));
        QCOMPARE(r->items.size(), size_t(9));
        QCOMPARE(r->rejected.size(), size_t(1));
        QCOMPARE(r->rejected[0].line, 8);
        QVERIFY2(r->rejected[0].reason.find("looks like a multiple-choice item ('choices' with 3 items; its answer is not "
                                            "among them: answer letter 'D' is not among the 3 choices (A-C))") == 0,
                 r->rejected[0].reason.c_str());
        QVERIFY(r->rejected[0].reason.find("--shape prompt") != std::string::npos);

        // Forced --shape prompt: kept as a prompt, with a warning naming the line.
        ImportOptions o;
        o.shape = "prompt";
        auto forced = importSuite(path, o);
        QVERIFY(forced.ok());
        QCOMPARE(forced->items.size(), size_t(10));
        QCOMPARE(forced->warnings.size(), size_t(1));
        QCOMPARE(forced->warnings[0].line, 8);
        QVERIFY(forced->warnings[0].reason.find("kept as metadata only") != std::string::npos);
    }

    void classifyRecordTable() {
        struct Row {
            const char* json;
            SuiteShape shape;
        };
        const Row rows[] = {
            {"{\"prompt\": \"p\"}", SuiteShape::Prompt},
            {"{\"question\": \"q\", \"answer\": \"x #### 3\"}", SuiteShape::Gsm8k},
            {"{\"question\": \"q\", \"answer\": \"Paris\"}", SuiteShape::Prompt},
            {"{\"question\": \"q\", \"choices\": [\"a\", \"b\"], \"answer\": 0}", SuiteShape::MultipleChoice},
            {"{\"question\": {\"stem\": \"q\", \"choices\": []}, \"answerKey\": \"A\"}", SuiteShape::Arc},
            {"{\"question\": \"q\", \"options\": [\"A)1\"], \"correct\": \"A\"}", SuiteShape::Aqua},
            {"{\"question\": \"q\", \"A\": \"1\", \"B\": \"2\", \"answer\": \"A\"}", SuiteShape::Mmlu},
            {"{\"col1\": \"q\", \"col2\": \"1\", \"col3\": \"2\", \"col4\": \"3\", \"col5\": \"4\", \"col6\": \"D\"}", SuiteShape::Mmlu},
            {"{\"input\": \"x\", \"target\": \"y\"}", SuiteShape::InspectAi},
            {"{\"input\": [{\"role\": \"user\", \"content\": \"x\"}], \"ideal\": \"y\"}", SuiteShape::OpenAiEvals},
            {"{\"task_id\": \"t\", \"prompt\": \"p\", \"test\": \"t\", \"entry_point\": \"f\"}", SuiteShape::HumanEval},
            {"{\"text\": \"t\", \"code\": \"c\", \"test_list\": []}", SuiteShape::Mbpp},
            {"{\"vars\": {\"a\": 1}, \"assert\": []}", SuiteShape::Promptfoo},
            {"{\"question_id\": 1, \"turns\": [\"a\", \"b\"]}", SuiteShape::MtBench},
            {"{\"q\": \"1\", \"__expected\": \"x\"}", SuiteShape::Promptfoo},
            {"{\"instruction\": \"i\", \"input\": \"\", \"output\": \"o\"}", SuiteShape::Unknown},
        };
        for (const auto& row : rows)
            QVERIFY2(classifyRecord(nlohmann::json::parse(row.json)) == row.shape, row.json);
    }

    void categoryFromFileNames() {
        QCOMPARE(categoryFromFileName("/x/abstract_algebra_test.csv"), std::string("abstract_algebra"));
        QCOMPARE(categoryFromFileName("high_school_physics_dev.csv.gz"), std::string("high_school_physics"));
        QCOMPARE(categoryFromFileName("computer_network_val.csv"), std::string("computer_network"));
        QCOMPARE(categoryFromFileName("ancient_chinese.csv"), std::string("ancient_chinese"));
    }
};

QTEST_GUILESS_MAIN(TestSuiteImportShapes)
#include "test_suite_import_shapes.moc"
