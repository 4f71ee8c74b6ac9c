// The bundled suites in datasets/: each imports with no rejection in the shape it claims, its
// answers are right (arithmetic re-evaluated here, worked solutions re-checked, code run), and
// the files are what tools/make_datasets.py generates.
#include "core/score/code_exec.h"
#include "core/score/process_sandbox.h"
#include "core/score/scorer.h"
#include "core/suite/suite_importer.h"
#include "fixtures.h"

#include <QProcess>
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>

using namespace verdict::core;

namespace {
// VERDICT_TEST_DATA_DIR is <repo>/tests/data.
std::filesystem::path datasetsDir() { return std::filesystem::path(VERDICT_TEST_DATA_DIR).parent_path().parent_path() / "datasets"; }

ImportResult load(const char* name) {
    auto r = importSuite((datasetsDir() / name).string());
    if (!r.ok()) qFatal("%s: %s", name, r.error().message.c_str());
    return std::move(*r);
}

// Tiny evaluator for the arithmetic prompts: + - × ÷ and parentheses over integers (UTF-8 × ÷).
class Expr {
public:
    explicit Expr(std::string s) : m_s(std::move(s)) {}
    bool eval(double& out) {
        out = sum();
        skip();
        return m_ok && m_i == m_s.size();
    }

private:
    void skip() {
        while (m_i < m_s.size() && m_s[m_i] == ' ') ++m_i;
    }
    bool eat(const std::string& t) {
        skip();
        if (m_s.compare(m_i, t.size(), t) == 0) {
            m_i += t.size();
            return true;
        }
        return false;
    }
    double atom() {
        if (eat("-")) return -atom();  // temperatures start below zero
        if (eat("(")) {
            const double v = sum();
            if (!eat(")")) m_ok = false;
            return v;
        }
        skip();
        size_t j = m_i;
        while (j < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[j]))) ++j;
        if (j == m_i) {
            m_ok = false;
            return 0;
        }
        const double v = std::stod(m_s.substr(m_i, j - m_i));
        m_i = j;
        return v;
    }
    double product() {
        double v = atom();
        for (;;) {
            if (eat("×") || eat("*")) v *= atom();
            else if (eat("÷") || eat("/")) v /= atom();
            else return v;
        }
    }
    double sum() {
        double v = product();
        for (;;) {
            if (eat("+")) v += product();
            else if (eat("-")) v -= product();
            else return v;
        }
    }
    std::string m_s;
    size_t m_i = 0;
    bool m_ok = true;
};
}  // namespace

class TestSuiteDatasets : public QObject {
    Q_OBJECT
private slots:
    void shapesAndCounts_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("shape");
        QTest::addColumn<int>("count");
        QTest::addRow("arithmetic") << "arithmetic.jsonl" << "prompt" << 120;
        QTest::addRow("word problems") << "word_problems.jsonl" << "gsm8k" << 100;
        QTest::addRow("chinese reading") << "zh_reading.jsonl" << "mc" << 80;
        QTest::addRow("instruction following") << "instruction_following.jsonl" << "promptfoo" << 60;
        QTest::addRow("multiple choice") << "multiple_choice.jsonl" << "mc" << 120;
        QTest::addRow("code completion") << "code_completion.jsonl" << "humaneval" << 50;
        QTest::addRow("sentiment labels") << "sentiment_labels.jsonl" << "prompt" << 60;
        QTest::addRow("conversation recall") << "conversation_recall.jsonl" << "mt_bench" << 50;
    }
    void shapesAndCounts() {
        QFETCH(QString, file);
        QFETCH(QString, shape);
        QFETCH(int, count);
        const auto r = load(file.toUtf8().constData());
        QCOMPARE(QString::fromStdString(r.shape), shape);
        QCOMPARE(int(r.items.size()), count);
        QCOMPARE(r.rejectedCount, size_t(0));
        QVERIFY(r.warnings.empty());
        for (const auto& item : r.items) {
            // Conversations are scored turn by turn (turn_references), not by item scorers.
            if (item.turns.size() > 1) {
                QVERIFY2(item.metadata.contains("turn_references"), item.id.c_str());
                continue;
            }
            QVERIFY2(!item.scorers.empty(), item.id.c_str());
            for (const auto& spec : item.scorers) {
                if (isLoglikelihoodScorer(spec.name)) continue;
                auto made = makeScorer(spec);  // every bundled scorer spec is valid
                QVERIFY2(made.ok(), (item.id + ": " + (made.ok() ? "" : made.error().message)).c_str());
            }
        }
    }

    void arithmeticAnswersAreRight() {
        const auto r = load("arithmetic.jsonl");
        auto numeric = makeScorer({"numeric", {}});
        for (const auto& item : r.items) {
            QCOMPARE(item.scorers.front().name, std::string("numeric"));
            const std::string expr = item.prompt.substr(8, item.prompt.find(". Reply") - 8);  // "Compute <expr>. Reply..."
            double v = 0;
            QVERIFY2(Expr(expr).eval(v), expr.c_str());
            QVERIFY2((*numeric)->score(item, std::to_string(int64_t(std::llround(v)))).pass, (item.id + ": " + expr).c_str());
        }
    }

    void wordProblemWorkingIsConsistent() {
        const auto r = load("word_problems.jsonl");
        auto numeric = makeScorer({"numeric", {}});
        for (const auto& item : r.items) {
            const std::string sol = item.metadata["solution"].get<std::string>();
            QVERIFY((*numeric)->score(item, sol).pass);  // the solution's "#### n" is the reference
            // Every <<expression=result>> annotation computes.
            for (size_t at = sol.find("<<"); at != std::string::npos; at = sol.find("<<", at + 2)) {
                const size_t eq = sol.find('=', at), end = sol.find(">>", at);
                double v = 0;
                QVERIFY(Expr(sol.substr(at + 2, eq - at - 2)).eval(v));
                QCOMPARE(v, std::stod(sol.substr(eq + 1, end - eq - 1)));
            }
        }
    }

    void chineseReadingIsChinese() {
        const auto r = load("zh_reading.jsonl");
        for (const auto& item : r.items) {
            QVERIFY(item.prompt.find("阅读短文") == 0);
            QCOMPARE(item.choices.size(), size_t(4));
            QVERIFY(item.gold.has_value());
            // Answerable from the passage, and only one way: exactly the gold choice occurs in it.
            const std::string passage = item.prompt.substr(0, item.prompt.find("问题："));
            for (size_t c = 0; c < item.choices.size(); ++c)
                QVERIFY2((passage.find(item.choices[c]) != std::string::npos) == (int(c) == *item.gold), item.id.c_str());
            QCOMPARE(item.category, std::string("中文阅读理解"));
        }
    }

    void codeCompletionCanonicalSolutionsPass() {
        if (resolveExecutable("python3").empty()) QSKIP("python3 is not on PATH");
        const auto r = load("code_completion.jsonl");
        ScorerOptions o;
        o.allowCodeExecution = true;
        if (!resolveExecutable("/usr/bin/python3").empty()) o.python = "/usr/bin/python3";  // not a slow pyenv shim
        auto s = makeScorer({"code_exec", {{"timeout_s", 20}}}, o);
        QVERIFY(s.ok());
        for (const auto& item : r.items) {
            const auto res = (*s)->score(item, item.metadata["canonical_solution"].get<std::string>());
            QVERIFY2(res.pass, (item.id + ": " + res.detail).c_str());
        }
        // And a wrong body fails, so the tests do test something.
        const auto wrong = (*s)->score(r.items.front(), "    return 0\n");
        QVERIFY(!wrong.pass);
    }

    void filesMatchGenerator() {
        std::string python = resolveExecutable("/usr/bin/python3");
        if (python.empty()) python = resolveExecutable("python3");
        if (python.empty()) QSKIP("python3 is not on PATH");
        const auto script = datasetsDir().parent_path() / "tools" / "make_datasets.py";
        QProcess p;
        p.start(QString::fromStdString(python), {QString::fromStdString(script.string()), "--check"});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardOutput().constData());
    }
};

QTEST_GUILESS_MAIN(TestSuiteDatasets)
#include "test_suite_datasets.moc"
