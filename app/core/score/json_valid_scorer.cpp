// The json_valid scorer: the output (or the JSON found in it, with "extract") parses, and
// satisfies the item's schema when one is given (json_schema.h).
#include "core/score/json_schema.h"
#include "core/score/scorer_factories.h"
#include "core/suite/utf8_text.h"

namespace verdict::core {
namespace scorers {
namespace {
// "json_valid": the output is JSON (params extract: find it inside text, default false — the
// whole output, trimmed, must parse) and, with params schema, satisfies the schema.
class JsonValidScorer : public Scorer {
public:
    JsonValidScorer(bool extract, nlohmann::json schema) : m_extract(extract), m_schema(std::move(schema)) {}
    std::string name() const override { return "json_valid"; }
    ScoreResult score(const SuiteItem&, const std::string& output) const override {
        ScoreResult r;
        nlohmann::json value;
        std::string error;
        const bool parsed = m_extract ? extractJson(output, value, error) : parseJsonText(utf8::trim(output), value, &error);
        if (!parsed) {
            r.detail = "not valid JSON: " + error;
            return r;
        }
        r.extracted = value.dump();
        if (!m_schema.is_null()) {
            const auto errors = validateJsonSchema(value, m_schema);
            if (!errors.empty()) {
                r.detail = "schema: " + errors.front() + (errors.size() > 1 ? " (+" + std::to_string(errors.size() - 1) + " more)" : "");
                return r;
            }
        }
        r.pass = true;
        r.score = 1.0;
        r.detail = m_schema.is_null() ? "valid JSON" : "valid JSON, schema satisfied";
        return r;
    }

private:
    bool m_extract;
    nlohmann::json m_schema;
};
}  // namespace

Made makeJsonValid(const nlohmann::json& params, const ScorerOptions&) {
    auto extract = boolParam(params, "json_valid", "extract", false);
    if (!extract) return extract.error();
    nlohmann::json schema;
    if (auto it = params.find("schema"); it != params.end() && !it->is_null()) {
        if (!it->is_object() && !it->is_boolean()) return Error{"json_valid: param 'schema' must be a JSON Schema object"};
        schema = *it;
    }
    return std::unique_ptr<Scorer>(std::make_unique<JsonValidScorer>(*extract, std::move(schema)));
}

}  // namespace scorers
}  // namespace verdict::core
