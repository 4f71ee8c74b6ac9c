// Record -> SuiteItem for the text shapes (prompt, GSM8K, Inspect AI, OpenAI evals, code,
// explicit mapping) and the dispatch over all shapes.
#include "core/suite/item_mapper.h"

#include "core/suite/chat_turn_json.h"
#include "core/suite/record_fields.h"
#include "core/suite/utf8_text.h"

namespace verdict::core {

namespace {

MapOutcome reject(std::string why) {
    MapOutcome out;
    out.reason = std::move(why);
    return out;
}

std::optional<std::string> textOf(const nlohmann::json& r, std::string_view key) {
    const auto* v = fields::find(r, key);
    return v ? fields::scalarText(*v) : std::nullopt;
}

MapOutcome accept(SuiteItem item, int line) {
    MapOutcome out;
    item.sourceLine = line;
    out.item = std::move(item);
    out.ok = true;
    return out;
}

// The final answer of a GSM8K solution: what follows the last "####", without thousands commas.
std::optional<std::string> gsm8kFinal(const std::string& solution) {
    const size_t at = solution.rfind("####");
    if (at == std::string::npos) return std::nullopt;
    std::string tail(utf8::trim(std::string_view(solution).substr(at + 4)));
    std::string out;
    for (char c : tail)
        if (c != ',') out.push_back(c);
    if (out.empty()) return std::nullopt;
    return out;
}

// A line of a prompt-shaped suite that carries choices is a multiple-choice item of a mixed file:
// imported as a prompt it would silently lose them. Rejected when the shape was detected (from the
// file's first lines); kept with a warning when the user forced --shape prompt. nullopt: no choices.
std::optional<std::string> multipleChoiceInPrompt(const nlohmann::json& r) {
    std::string key;
    const auto* c = fields::findAny(r, {"choices", "options", "endings"}, &key);
    if (!c || !(c->is_array() || c->is_object()) || c->empty()) return std::nullopt;
    std::string what = "'" + key + "'";
    nlohmann::json copy = *c;  // readChoices moves the texts out
    std::vector<std::string> texts, labels;
    std::string why;
    if (readChoices(copy, texts, labels, why)) {
        if (labels.empty()) labels = stripLetterPrefixes(texts);
        what += " with " + std::to_string(texts.size()) + " items";
        std::string aKey;
        if (const auto* a = findAnswer(r, &aKey)) {
            int gold = -1;
            std::string bad;
            if (!resolveGold(*a, texts, labels, gold, bad)) what += "; its " + aKey + " is not among them: " + bad;
        }
    }
    return "looks like a multiple-choice item (" + what + "), but the suite's shape is prompt";
}

MapOutcome mapPrompt(nlohmann::json& r, int line, const MapContext& ctx) {
    std::vector<std::string> used;
    SuiteItem item;
    std::string key;
    std::vector<std::string> warnings;
    if (auto mc = multipleChoiceInPrompt(r)) {
        if (!ctx.options || ctx.options->shape.empty())
            return reject(*mc + " (detected from the file's first lines): its choices would be dropped. Put "
                                "multiple-choice items in a file of their own, or import with --shape prompt to keep "
                                "them as plain prompts");
        warnings.push_back(*mc + " (--shape prompt): its choices are kept as metadata only, not scored");
    }
    auto* p = fields::findAny(r, {"prompt", "question", "input", "instruction", "query"}, &key);
    if (!p) return reject("no prompt (expected a 'prompt' or 'question' field)");
    used.push_back(key);
    if (p->is_array()) {
        std::string why;
        if (!readMessages(*p, item.messages, why)) return reject(why);
    } else {
        auto text = fields::takeText(*p);
        if (!text || fields::isBlank(*text)) return reject("no prompt ('" + key + "' is empty)");
        item.prompt = std::move(*text);
    }
    item.references = readReferences(r, used);
    fillIdAndCategory(item, r, line, ctx, used);
    item.metadata = fields::rest(r, used);
    MapOutcome out = accept(std::move(item), line);
    out.warnings = std::move(warnings);
    return out;
}

// MT-Bench's question.jsonl: {"question_id", "category", "turns": ["first", "second"],
// "reference": ["answer to the first", ...]} (FastChat fastchat/llm_judge/data/mt_bench).
MapOutcome mapMtBench(nlohmann::json& r, int line, const MapContext& ctx) {
    std::vector<std::string> used = {"turns"};
    auto* t = fields::find(r, "turns");
    if (!t || !t->is_array() || t->empty()) return reject("'turns' must be a non-empty list of the user's turns");
    SuiteItem item;
    for (auto& turn : *t) {
        auto text = fields::takeText(turn);
        if (!text || fields::isBlank(*text))
            return reject("turn " + std::to_string(item.turns.size() + 1) + " of 'turns' is not a non-empty text");
        item.turns.push_back(std::move(*text));
    }
    item.prompt = item.turns.front();
    // Multi-turn consistency (Verdict's extension): "turn_references": one entry per turn, null
    // (not scored), an answer, or a list of accepted answers; scored turn by turn by the runner.
    if (const auto* tr = fields::find(r, "turn_references")) {
        if (!tr->is_array() || tr->size() != item.turns.size())
            return reject("'turn_references' must be a list with one entry per turn (" + std::to_string(item.turns.size()) +
                          "): null, an answer, or a list of answers");
        bool any = false;
        for (size_t k = 0; k < tr->size(); ++k) {
            const auto& v = (*tr)[k];
            bool ok = v.is_null() || (v.is_string() && !v.get_ref<const std::string&>().empty());
            if (v.is_array()) {
                ok = !v.empty();
                for (const auto& e : v) ok = ok && e.is_string() && !e.get_ref<const std::string&>().empty();
            }
            if (!ok) return reject("turn_references[" + std::to_string(k) + "] must be null, a non-empty answer or a list of them");
            any = any || !v.is_null();
        }
        if (!any) return reject("'turn_references' has no answer for any turn");
    }
    item.references = readReferences(r, used);
    fillIdAndCategory(item, r, line, ctx, used);
    item.metadata = fields::rest(r, used);
    return accept(std::move(item), line);
}

MapOutcome mapGsm8k(nlohmann::json& r, int line, const MapContext& ctx) {
    std::vector<std::string> used = {"question", "answer"};
    auto* q = fields::find(r, "question");
    const auto* a = fields::find(r, "answer");
    auto question = q ? fields::takeText(*q) : std::nullopt;
    if (!question || fields::isBlank(*question)) return reject("no question text");
    auto solution = a ? fields::scalarText(*a) : std::nullopt;
    if (!solution) return reject("no answer");
    auto final = gsm8kFinal(*solution);
    if (!final) return reject("answer has no final value after '####'");
    SuiteItem item;
    item.prompt = std::move(*question);
    item.references = {*final};
    fillIdAndCategory(item, r, line, ctx, used);
    item.metadata = fields::rest(r, used);
    item.metadata["solution"] = *solution;
    return accept(std::move(item), line);
}

MapOutcome mapInspect(nlohmann::json& r, int line, const MapContext& ctx) {
    std::vector<std::string> used;
    SuiteItem item;
    std::string key;
    const auto* in = fields::findAny(r, {"input", "messages"}, &key);
    if (!in) return reject("no input");
    used.push_back(key);
    if (in->is_array()) {
        std::string why;
        if (!readMessages(*in, item.messages, why)) return reject(why);
    } else {
        auto text = fields::scalarText(*in);
        if (!text || fields::isBlank(*text)) return reject("no prompt ('input' is empty)");
        item.prompt = *text;
    }
    if (const auto* t = fields::find(r, "target")) {
        item.references = fields::textList(*t);
        used.push_back("target");
    }
    if (auto* c = fields::find(r, "choices")) {
        std::vector<std::string> labels;
        std::string why;
        if (!readChoices(*c, item.choices, labels, why)) return reject(why);
        used.push_back("choices");
        if (!item.references.empty()) {  // Inspect's multiple_choice(): target is the letter
            int gold = -1;
            if (!resolveGold(nlohmann::json(item.references.front()), item.choices, labels, gold, why)) return reject(why);
            item.gold = gold;
            item.references = {choiceLetter(gold)};
        }
    }
    fillIdAndCategory(item, r, line, ctx, used);
    nlohmann::json meta = fields::rest(r, used);
    if (auto it = meta.find("metadata"); it != meta.end() && it->is_object()) {  // Inspect keeps extras here
        nlohmann::json inner = *it;
        meta.erase(it);
        for (auto m = inner.begin(); m != inner.end(); ++m) meta[m.key()] = m.value();
    }
    item.metadata = std::move(meta);
    return accept(std::move(item), line);
}

MapOutcome mapOpenAiEvals(nlohmann::json& r, int line, const MapContext& ctx) {
    std::vector<std::string> used = {"input", "ideal"};
    SuiteItem item;
    const auto* in = fields::find(r, "input");
    if (!in) return reject("no input");
    if (in->is_array()) {
        std::string why;
        if (!readMessages(*in, item.messages, why)) return reject(why);
    } else if (auto text = fields::scalarText(*in); text && !fields::isBlank(*text)) {
        item.prompt = *text;
    } else {
        return reject("no prompt ('input' is empty)");
    }
    if (const auto* ideal = fields::find(r, "ideal")) item.references = fields::textList(*ideal);
    fillIdAndCategory(item, r, line, ctx, used);
    item.metadata = fields::rest(r, used);
    return accept(std::move(item), line);
}

MapOutcome mapHumanEval(nlohmann::json& r, int line, const MapContext& ctx) {
    std::vector<std::string> used = {"prompt", "canonical_solution", "test", "entry_point"};
    const auto* p = fields::find(r, "prompt");
    auto prompt = p ? fields::scalarText(*p) : std::nullopt;
    if (!prompt || fields::isBlank(*prompt)) return reject("no prompt");
    auto test = textOf(r, "test");
    auto entry = textOf(r, "entry_point");
    if (!test || fields::isBlank(*test)) return reject("no test code");
    if (!entry || fields::isBlank(*entry)) return reject("no entry_point");
    SuiteItem item;
    item.prompt = *prompt;
    fillIdAndCategory(item, r, line, ctx, used);
    item.metadata = fields::rest(r, used);
    item.metadata["test"] = *test;
    item.metadata["entry_point"] = std::string(utf8::trim(*entry));
    if (const auto* sol = fields::find(r, "canonical_solution"))
        if (auto s = fields::scalarText(*sol)) {
            item.references = {*s};
            item.metadata["canonical_solution"] = *s;
        }
    item.metadata["language"] = "python";
    return accept(std::move(item), line);
}

MapOutcome mapMbpp(nlohmann::json& r, int line, const MapContext& ctx) {
    std::string key;
    const auto* p = fields::findAny(r, {"text", "prompt"}, &key);
    auto prompt = p ? fields::scalarText(*p) : std::nullopt;
    if (!prompt || fields::isBlank(*prompt)) return reject("no task text");
    std::vector<std::string> used = {key, "code", "test_list"};
    const auto* tl = fields::find(r, "test_list");
    if (!tl || !tl->is_array() || tl->empty()) return reject("test_list must be a non-empty list of assert statements");
    auto tests = fields::textList(*tl);
    if (tests.size() != tl->size()) return reject("test_list must hold only strings");
    SuiteItem item;
    item.prompt = *prompt;
    fillIdAndCategory(item, r, line, ctx, used);
    item.metadata = fields::rest(r, used);
    item.metadata["test_list"] = tests;
    if (auto code = textOf(r, "code")) {
        item.references = {*code};
        item.metadata["canonical_solution"] = *code;
    }
    item.metadata["language"] = "python";
    return accept(std::move(item), line);
}

MapOutcome mapWithMapping(nlohmann::json& r, int line, const MapContext& ctx) {
    const FieldMapping& m = *ctx.options->mapping;
    std::vector<std::string> used;
    SuiteItem item;
    auto firstText = [&](const std::string& target) -> std::optional<std::string> {
        for (const auto& src : m.sources(target))
            if (const auto* v = fields::findPath(r, src)) {
                used.push_back(src.substr(0, src.find('.')));
                if (auto t = fields::scalarText(*v)) return t;
            }
        return std::nullopt;
    };
    for (const auto& src : m.sources("input")) {
        if (const auto* v = fields::findPath(r, src)) {
            used.push_back(src.substr(0, src.find('.')));
            std::string why;
            if (v->is_array()) {
                if (!readMessages(*v, item.messages, why)) return reject(why);
            } else if (auto t = fields::scalarText(*v)) {
                item.prompt = *t;
            }
            break;
        }
    }
    if (item.messages.empty() && item.prompt.empty()) {
        auto p = firstText("prompt");
        if (!p || fields::isBlank(*p)) {
            const auto srcs = m.sources("prompt");
            return reject("no prompt (mapped from '" + (srcs.empty() ? std::string("input") : srcs.front()) + "')");
        }
        item.prompt = *p;
    }
    if (auto sys = firstText("system"); sys && !fields::isBlank(*sys)) {
        if (item.messages.empty()) item.messages.push_back({"user", std::move(item.prompt)}), item.prompt.clear();
        item.messages.insert(item.messages.begin(), ChatTurn{"system", *sys});
    }
    for (const auto& src : m.sources("reference"))
        if (const auto* v = fields::findPath(r, src)) {
            used.push_back(src.substr(0, src.find('.')));
            for (auto& t : fields::textList(*v)) item.references.push_back(std::move(t));
        }
    const auto choiceSources = m.sources("choices");
    std::vector<std::string> labels;
    if (choiceSources.size() == 1) {
        if (auto* v = const_cast<nlohmann::json*>(fields::findPath(r, choiceSources[0]))) {  // r is ours
            used.push_back(choiceSources[0].substr(0, choiceSources[0].find('.')));
            std::string why;
            if (!readChoices(*v, item.choices, labels, why)) return reject(why);
            if (labels.empty()) labels = stripLetterPrefixes(item.choices);
        }
    } else {
        for (const auto& src : choiceSources) {  // one column per choice
            const auto* v = fields::findPath(r, src);
            auto t = v ? fields::scalarText(*v) : std::nullopt;
            if (!t) return reject("choice column '" + src + "' is missing");
            used.push_back(src.substr(0, src.find('.')));
            item.choices.push_back(*t);
        }
    }
    const auto answerSources = m.sources("answer");
    if (!answerSources.empty()) {
        const auto* v = fields::findPath(r, answerSources[0]);
        if (v) used.push_back(answerSources[0].substr(0, answerSources[0].find('.')));
        if (!item.choices.empty()) {
            if (!v) return reject("no answer (mapped from '" + answerSources[0] + "')");
            int gold = -1;
            std::string why;
            if (!resolveGold(*v, item.choices, labels, gold, why)) return reject(why);
            item.gold = gold;
            item.references = {choiceLetter(gold)};
        } else if (v) {
            for (auto& t : fields::textList(*v)) item.references.push_back(std::move(t));
        }
    }
    if (auto id = firstText("id"); id && !fields::isBlank(*id)) item.id = *id;
    if (auto cat = firstText("category")) item.category = *cat;
    if (item.id.empty()) item.id = std::to_string(line);
    item.metadata = fields::rest(r, used);
    return accept(std::move(item), line);
}

}  // namespace

std::vector<std::string> readReferences(const nlohmann::json& r, std::vector<std::string>& used) {
    std::vector<std::string> refs;
    for (std::string_view key : {"references", "reference", "answer", "expected", "target", "ideal"}) {
        if (const auto* v = fields::find(r, key)) {
            auto list = fields::textList(*v);
            used.emplace_back(key);
            for (auto& t : list)
                if (!fields::isBlank(t)) refs.push_back(std::move(t));  // an empty CSV cell is no reference
            if (!refs.empty()) break;
        }
    }
    return refs;
}

MapOutcome mapRecordByShape(nlohmann::json& record, int line, const MapContext& ctx);

bool readMessages(const nlohmann::json& v, std::vector<ChatTurn>& out, std::string& why) {
    out.clear();
    if (!v.is_array() || v.empty()) {
        why = "chat input must be a non-empty list of {role, content} messages";
        return false;
    }
    for (size_t i = 0; i < v.size(); ++i) {
        const auto& m = v[i];
        const auto* role = m.is_object() ? fields::find(m, "role") : nullptr;
        const auto* content = m.is_object() ? fields::find(m, "content") : nullptr;
        if (!role || !role->is_string() || role->get_ref<const std::string&>().empty()) {
            why = "message " + std::to_string(i + 1) + " has no role";
            return false;
        }
        ChatTurn turn{role->get<std::string>(), ""};
        if (content && content->is_string()) {
            turn.content = content->get<std::string>();
        } else if (content && content->is_array()) {  // [{"type": "text", "text": "..."}]
            for (const auto& part : *content) {
                const auto* t = part.is_object() ? fields::find(part, "text") : nullptr;
                if (t && t->is_string()) turn.content += t->get<std::string>();
                else if (part.is_string()) turn.content += part.get<std::string>();
            }
        } else if (!content || !content->is_null()) {
            why = "message " + std::to_string(i + 1) + " has no text content";
            return false;
        }
        if (auto r = readToolFields(m, turn); !r) {  // an assistant's tool calls, a tool's result
            why = "message " + std::to_string(i + 1) + ": " + r.error().message;
            return false;
        }
        out.push_back(std::move(turn));
    }
    return true;
}

void fillIdAndCategory(SuiteItem& item, const nlohmann::json& r, int line, const MapContext& ctx,
                       std::vector<std::string>& used) {
    std::string key;
    if (const auto* id = fields::findAny(r, {"id", "task_id", "question_id", "qid", "uid", "sample_id"}, &key)) {
        if (auto t = fields::scalarText(*id); t && !fields::isBlank(*t)) {
            item.id = std::string(utf8::trim(*t));
            used.push_back(key);
        }
    }
    if (item.id.empty()) item.id = std::to_string(line);
    if (const auto* c = fields::findAny(r, {"category", "subject", "topic"}, &key)) {
        if (auto t = fields::scalarText(*c)) {
            item.category = *t;
            used.push_back(key);
        }
    }
    if (item.category.empty() && ctx.shape == SuiteShape::Mmlu) item.category = ctx.fileCategory;
}

// Verdict's own extension for every shape but promptfoo: "scorer": "numeric" or
// "scorers": ["numeric", {"name": "regex", "params": {...}}] on a record sets its scorers.
bool takeExplicitScorers(SuiteItem& item, std::string& why) {
    nlohmann::json spec;
    for (const char* key : {"scorers", "scorer"}) {
        auto it = item.metadata.find(key);
        if (it == item.metadata.end()) continue;
        spec = std::move(*it);
        item.metadata.erase(it);
        break;
    }
    if (spec.is_null()) return true;
    const nlohmann::json list = spec.is_array() ? spec : nlohmann::json::array({spec});
    for (const auto& one : list) {
        if (one.is_string() && !one.get_ref<const std::string&>().empty()) {
            item.scorers.push_back({one.get<std::string>(), nlohmann::json::object()});
        } else if (one.is_object() && one.contains("name") && one["name"].is_string()) {
            nlohmann::json params = one.value("params", nlohmann::json::object());
            if (!params.is_object()) {
                why = "scorer params must be an object";
                return false;
            }
            item.scorers.push_back({one["name"].get<std::string>(), std::move(params)});
        } else {
            why = "bad scorer spec " + one.dump() + " (expected a name or {\"name\": ..., \"params\": {...}})";
            return false;
        }
    }
    return true;
}

MapOutcome mapRecord(nlohmann::json& record, int line, const MapContext& ctx) {
    MapOutcome out = mapRecordByShape(record, line, ctx);
    if (out.ok && ctx.shape != SuiteShape::Promptfoo) {
        std::string why;
        if (!takeExplicitScorers(out.item, why)) return reject(why);
    }
    return out;
}

MapOutcome mapRecordByShape(nlohmann::json& record, int line, const MapContext& ctx) {
    if (ctx.options && ctx.options->mapping) return mapWithMapping(record, line, ctx);
    switch (ctx.shape) {
    case SuiteShape::Prompt: return mapPrompt(record, line, ctx);
    case SuiteShape::Gsm8k: return mapGsm8k(record, line, ctx);
    case SuiteShape::InspectAi: return mapInspect(record, line, ctx);
    case SuiteShape::OpenAiEvals: return mapOpenAiEvals(record, line, ctx);
    case SuiteShape::MultipleChoice: return mapMultipleChoice(record, line, ctx);
    case SuiteShape::Arc: return mapArc(record, line, ctx);
    case SuiteShape::Aqua: return mapAqua(record, line, ctx);
    case SuiteShape::Mmlu: return mapMmlu(record, line, ctx);
    case SuiteShape::HumanEval: return mapHumanEval(record, line, ctx);
    case SuiteShape::Mbpp: return mapMbpp(record, line, ctx);
    case SuiteShape::Promptfoo: return mapPromptfoo(record, line, ctx);
    case SuiteShape::MtBench: return mapMtBench(record, line, ctx);
    case SuiteShape::ToolCalls: return mapToolCalls(record, line, ctx);
    case SuiteShape::Bfcl: return mapBfcl(record, line, ctx);
    case SuiteShape::Mapped:
    case SuiteShape::Unknown: break;
    }
    return reject(std::string("record does not fit the suite's shape (") + shapeName(ctx.shape) + ")");
}

}  // namespace verdict::core
