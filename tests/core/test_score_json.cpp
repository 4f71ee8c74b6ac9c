// JSON validity and the JSON Schema subset.
#include "core/score/json_schema.h"
#include "core/score/scorer.h"

#include <QtTest/QtTest>

using namespace verdict::core;
using nlohmann::json;

class TestScoreJson : public QObject {
    Q_OBJECT
private slots:
    void validity() {
        auto s = makeScorer({"json_valid", {}});
        QVERIFY(s.ok());
        const SuiteItem item;
        QVERIFY((*s)->score(item, R"(  {"a": 1} )").pass);
        QVERIFY((*s)->score(item, "[1, 2]").pass);
        auto bad = (*s)->score(item, R"({"a": 1,})");
        QVERIFY(!bad.pass);
        QVERIFY(bad.detail.rfind("not valid JSON", 0) == 0);
        QVERIFY(!(*s)->score(item, "Here you go: {\"a\": 1}").pass);  // whole output must be JSON...
        auto extracting = makeScorer({"json_valid", {{"extract", true}}});
        auto found = (*extracting)->score(item, "Here you go:\n```json\n{\"a\": [1, 2]}\n```\nDone.");
        QVERIFY(found.pass);  // ...unless extraction is asked for
        QCOMPARE(found.extracted, std::string(R"({"a":[1,2]})"));
        QVERIFY((*extracting)->score(item, "The result is {\"ok\": true} as requested").pass);
        QVERIFY(!(*extracting)->score(item, "no json { here").pass);
    }

    void schemaSubset_data() {
        QTest::addColumn<QString>("value");
        QTest::addColumn<int>("errors");
        QTest::addColumn<QString>("firstError");
        QTest::addRow("valid") << R"({"name": "Ada", "age": 36, "tags": ["x"], "role": "admin"})" << 0 << "";
        QTest::addRow("missing required") << R"({"name": "Ada"})" << 1 << "/: missing required property 'age'";
        QTest::addRow("wrong type") << R"({"name": "Ada", "age": "36"})" << 1 << "/age: expected integer, got string";
        QTest::addRow("integer with fraction") << R"({"name": "Ada", "age": 36.5})" << 1 << "/age: expected integer, got number";
        QTest::addRow("integer as float ok") << R"({"name": "Ada", "age": 36.0})" << 0 << "";
        QTest::addRow("minimum") << R"({"name": "Ada", "age": -1})" << 1 << "/age: -1 is less than minimum 0";
        QTest::addRow("maximum") << R"({"name": "Ada", "age": 200})" << 1 << "/age: 200 is greater than maximum 150";
        QTest::addRow("enum") << R"({"name": "Ada", "age": 3, "role": "root"})" << 1 << "/role: \"root\" is not one of [\"admin\",\"user\"]";
        QTest::addRow("items") << R"({"name": "Ada", "age": 3, "tags": ["x", 5]})" << 1 << "/tags/1: expected string, got number";
        QTest::addRow("additional") << R"({"name": "Ada", "age": 3, "extra": 1})" << 1 << "/: property 'extra' is not allowed";
        QTest::addRow("not an object") << R"([1])" << 1 << "/: expected object, got array";
        QTest::addRow("minLength") << R"({"name": "", "age": 3})" << 1 << "/name: string shorter than minLength 1";
        QTest::addRow("two errors") << R"({"age": 3, "extra": true})" << 2 << "/: missing required property 'name'";
    }
    void schemaSubset() {
        QFETCH(QString, value);
        QFETCH(int, errors);
        QFETCH(QString, firstError);
        const json schema = json::parse(R"({
            "type": "object",
            "required": ["name", "age"],
            "additionalProperties": false,
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "tags": {"type": "array", "items": {"type": "string"}},
                "role": {"enum": ["admin", "user"]}
            }
        })");
        const auto got = validateJsonSchema(json::parse(value.toStdString()), schema);
        QCOMPARE(int(got.size()), errors);
        if (errors > 0) QCOMPARE(QString::fromStdString(got.front()), firstError);
    }

    void combinators() {
        const json anyOf = {{"anyOf", {{{"type", "string"}}, {{"type", "number"}}}}};
        QVERIFY(validateJsonSchema(json(3), anyOf).empty());
        QCOMPARE(validateJsonSchema(json(true), anyOf).size(), size_t(1));
        const json oneOf = {{"oneOf", {{{"type", "number"}}, {{"type", "integer"}}}}};
        QCOMPARE(validateJsonSchema(json(3), oneOf).size(), size_t(1));   // matches both
        QVERIFY(validateJsonSchema(json(3.5), oneOf).empty());
        const json pattern = {{"type", "string"}, {"pattern", "^[A-Z]{3}$"}};
        QVERIFY(validateJsonSchema(json("ABC"), pattern).empty());
        QCOMPARE(validateJsonSchema(json("abc"), pattern).size(), size_t(1));
        const json ap = {{"type", "object"}, {"additionalProperties", {{"type", "number"}}}};
        QVERIFY(validateJsonSchema(json::parse(R"({"a": 1, "b": 2})"), ap).empty());
        QCOMPARE(validateJsonSchema(json::parse(R"({"a": "x"})"), ap).size(), size_t(1));
    }

    void scorerWithSchema() {
        const json params = {{"schema", {{"type", "object"}, {"required", {"name", "age"}}}}};
        auto s = makeScorer({"json_valid", params});
        QVERIFY(s.ok());
        const SuiteItem item;
        QVERIFY((*s)->score(item, R"({"name": "Ada", "age": 36})").pass);
        auto r = (*s)->score(item, R"({"name": "Ada"})");
        QVERIFY(!r.pass);
        QVERIFY(r.detail.find("missing required property 'age'") != std::string::npos);
        QVERIFY(!makeScorer({"json_valid", {{"schema", "object"}}}).ok());
    }
};

QTEST_GUILESS_MAIN(TestScoreJson)
#include "test_score_json.moc"
