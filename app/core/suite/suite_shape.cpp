#include "core/suite/suite_shape.h"

#include "core/suite/record_fields.h"

#include <map>

namespace verdict::core {

namespace {
struct ShapeNameRow {
    SuiteShape shape;
    const char* name;
};
constexpr ShapeNameRow kShapeNames[] = {
    {SuiteShape::Unknown, "unknown"},    {SuiteShape::Prompt, "prompt"},     {SuiteShape::InspectAi, "inspect"},
    {SuiteShape::OpenAiEvals, "openai_evals"}, {SuiteShape::MultipleChoice, "mc"}, {SuiteShape::Arc, "arc"},
    {SuiteShape::Aqua, "aqua"},          {SuiteShape::Mmlu, "mmlu"},         {SuiteShape::Gsm8k, "gsm8k"},
    {SuiteShape::HumanEval, "humaneval"}, {SuiteShape::Mbpp, "mbpp"},        {SuiteShape::Promptfoo, "promptfoo"},
    {SuiteShape::Mapped, "mapped"},      {SuiteShape::MtBench, "mt_bench"},  {SuiteShape::ToolCalls, "tools"},
    {SuiteShape::Bfcl, "bfcl"},
};

bool has(const nlohmann::json& r, std::string_view k) { return fields::find(r, k) != nullptr; }

bool isLetterAnswer(const nlohmann::json* v) {
    if (!v) return false;
    auto t = fields::scalarText(*v);
    if (!t) return false;
    std::string s(fields::lowerAscii(*t));
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
    return s.size() == 1 && s[0] >= 'a' && s[0] <= 'e';
}

bool isChatArray(const nlohmann::json* v) {
    if (!v || !v->is_array() || v->empty()) return false;
    for (const auto& m : *v)
        if (!m.is_object() || !fields::find(m, "role")) return false;
    return true;
}
}  // namespace

const char* shapeName(SuiteShape s) {
    for (const auto& row : kShapeNames)
        if (row.shape == s) return row.name;
    return "unknown";
}

std::optional<SuiteShape> shapeFromName(std::string_view name) {
    const std::string lower = fields::lowerAscii(name);
    for (const auto& row : kShapeNames)
        if (lower == row.name) return row.shape;
    return std::nullopt;
}

SuiteShape classifyRecord(const nlohmann::json& r) {
    if (!r.is_object()) return SuiteShape::Unknown;
    const auto* vars = fields::find(r, "vars");
    if ((vars && vars->is_object()) || has(r, "assert")) return SuiteShape::Promptfoo;
    for (auto it = r.begin(); it != r.end(); ++it)
        if (fields::lowerAscii(it.key()).rfind("__expected", 0) == 0) return SuiteShape::Promptfoo;
    if (has(r, "tools") || has(r, "expected_calls")) return SuiteShape::ToolCalls;
    if (has(r, "question") && has(r, "function")) return SuiteShape::Bfcl;
    if (const auto* t = fields::find(r, "turns"); t && t->is_array() && !t->empty()) return SuiteShape::MtBench;
    if (has(r, "task_id") && has(r, "prompt") && has(r, "test") && has(r, "entry_point")) return SuiteShape::HumanEval;
    if ((has(r, "text") || has(r, "prompt")) && has(r, "code") && has(r, "test_list")) return SuiteShape::Mbpp;
    const auto* q = fields::find(r, "question");
    if (q && q->is_object() && fields::find(*q, "stem")) return SuiteShape::Arc;
    if (q && has(r, "options") && has(r, "correct")) return SuiteShape::Aqua;
    const auto* input = fields::find(r, "input");
    if (input && has(r, "ideal")) return SuiteShape::OpenAiEvals;
    if (input && (has(r, "target") || has(r, "choices"))) return SuiteShape::InspectAi;
    // Headerless MMLU CSV: question, A, B, C, D, answer-letter.
    if (r.size() == 6 && has(r, "col1") && has(r, "col6") && isLetterAnswer(fields::find(r, "col6")))
        return SuiteShape::Mmlu;
    if (q && has(r, "A") && has(r, "B") && (has(r, "answer") || has(r, "label"))) return SuiteShape::Mmlu;
    if (q && (has(r, "choices") || has(r, "options") || has(r, "endings"))) return SuiteShape::MultipleChoice;
    if (q && has(r, "answer")) {
        const auto* a = fields::find(r, "answer");
        if (a->is_string() && a->get_ref<const std::string&>().find("####") != std::string::npos) return SuiteShape::Gsm8k;
        return SuiteShape::Prompt;
    }
    if (has(r, "prompt") || q) return SuiteShape::Prompt;
    // A bare "input" is Inspect only as chat or with Inspect's id/metadata; Alpaca's instruction/
    // input/output is not recognised (it needs a mapping: its "input" is optional context).
    if (input && !has(r, "instruction") && (input->is_array() || has(r, "id") || has(r, "metadata"))) return SuiteShape::InspectAi;
    if (isChatArray(fields::find(r, "messages"))) return SuiteShape::InspectAi;
    return SuiteShape::Unknown;
}

SuiteShape detectShape(const std::vector<nlohmann::json>& firstRecords) {
    std::map<SuiteShape, int> votes;
    std::vector<SuiteShape> order;
    for (const auto& r : firstRecords) {
        const SuiteShape s = classifyRecord(r);
        if (s == SuiteShape::Unknown) continue;
        if (votes[s]++ == 0) order.push_back(s);
    }
    SuiteShape best = SuiteShape::Unknown;
    int bestVotes = 0;
    for (SuiteShape s : order)
        if (votes[s] > bestVotes) {
            best = s;
            bestVotes = votes[s];
        }
    return best;
}

std::vector<ScorerSpec> defaultScorers(SuiteShape shape, const SuiteItem& item) {
    const nlohmann::json normalised = {{"ignore_case", true}, {"whitespace", true}, {"punctuation", true},
                                       {"width", true},       {"zh_punct", true}};
    const bool mc = !item.choices.empty() && item.gold.has_value();
    switch (shape) {
    case SuiteShape::MultipleChoice:
    case SuiteShape::Arc:
    case SuiteShape::Aqua:
    case SuiteShape::Mmlu: return {{"mc_loglik", nlohmann::json::object()}, {"mc_letter", nlohmann::json::object()}};
    case SuiteShape::Gsm8k: return {{"numeric", nlohmann::json::object()}};
    case SuiteShape::HumanEval:
    case SuiteShape::Mbpp: return {{"code_exec", {{"language", "python"}}}};
    case SuiteShape::OpenAiEvals:
        // evals' basic Match: the sampled text starts with one of the ideal answers.
        if (!item.references.empty()) return {{"starts_with", {{"trim", true}}}};
        return {};
    case SuiteShape::ToolCalls:
    case SuiteShape::Bfcl:
        // The calls are graded by the runner (tool_call_scorer.h); a multi-step item's final
        // answer, when it has references, by containment.
        if (!item.references.empty()) return {{"contains", {{"ignore_case", true}}}};
        return {};
    case SuiteShape::Promptfoo:
    case SuiteShape::MtBench: return {};  // open answers: judged (verdict judge), the references guide the judge
    case SuiteShape::InspectAi:
    case SuiteShape::Prompt:
    case SuiteShape::Mapped:
    case SuiteShape::Unknown:
        if (mc) return {{"mc_loglik", nlohmann::json::object()}, {"mc_letter", nlohmann::json::object()}};
        if (!item.references.empty()) return {{"exact", normalised}};
        return {};
    }
    return {};
}

}  // namespace verdict::core
