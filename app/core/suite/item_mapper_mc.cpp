// Multiple-choice shapes: question + choices, ARC/OpenBookQA, AQuA, MMLU-style columns.
#include "core/suite/item_mapper.h"
#include "core/suite/record_fields.h"
#include "core/suite/utf8_text.h"

#include <algorithm>

namespace verdict::core {

namespace {
std::string trimmed(std::string_view s) { return std::string(utf8::trim(s)); }

std::string choiceRange(size_t n) {
    if (n == 0) return "none";
    return "A-" + choiceLetter(int(n) - 1);
}

// "B", "(B)", "B.", "B)" -> 'B'; 0 when the text is not a lone letter.
char loneLetter(std::string_view s) {
    s = utf8::trim(s);
    if (s.size() >= 2 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
    if (s.size() == 2 && (s[1] == '.' || s[1] == ')' || s[1] == ':')) s = s.substr(0, 1);
    if (s.size() != 1) return 0;
    char c = s[0];
    if (c >= 'a' && c <= 'z') c = char(c - 32);
    return (c >= 'A' && c <= 'Z') ? c : 0;
}

MapOutcome reject(std::string why) {
    MapOutcome out;
    out.reason = std::move(why);
    return out;
}

// Everything the MC mappers share once the parts are found.
MapOutcome finishMc(const nlohmann::json& r, int line, const MapContext& ctx, std::string question,
                    std::vector<std::string> texts, std::vector<std::string> labels, const nlohmann::json* answer,
                    std::vector<std::string> used) {
    if (fields::isBlank(question)) return reject("no question text");
    if (texts.size() < 2) return reject("fewer than 2 choices");
    for (size_t i = 0; i < texts.size(); ++i)
        if (fields::isBlank(texts[i])) return reject("choice " + choiceLetter(int(i)) + " is empty");
    MapOutcome out;
    SuiteItem& item = out.item;
    item.prompt = std::move(question);
    item.choices = std::move(texts);
    if (answer && !answer->is_null()) {
        int gold = -1;
        std::string why;
        if (!resolveGold(*answer, item.choices, labels, gold, why)) return reject(why);
        item.gold = gold;
        item.references = {choiceLetter(gold)};
    } else {
        return reject("no answer (expected answer/answerKey/label as a letter, index or choice text)");
    }
    fillIdAndCategory(item, r, line, ctx, used);
    item.metadata = fields::rest(r, used);
    if (!labels.empty()) {
        bool lettersInOrder = true;
        for (size_t i = 0; i < labels.size(); ++i) lettersInOrder = lettersInOrder && labels[i] == choiceLetter(int(i));
        if (!lettersInOrder) item.metadata["choice_labels"] = labels;  // e.g. ARC's 1-4
    }
    item.sourceLine = line;
    out.ok = true;
    return out;
}
}  // namespace

const nlohmann::json* findAnswer(const nlohmann::json& r, std::string* which) {
    return fields::findAny(r, {"answer", "answerKey", "answer_key", "label", "gold", "correct", "target",
                               "answer_index", "answer_idx", "correct_answer"},
                           which);
}

std::string choiceLetter(int index) {
    if (index < 26) return std::string(1, char('A' + index));
    return std::to_string(index + 1);
}

bool readChoices(nlohmann::json& v, std::vector<std::string>& texts, std::vector<std::string>& labels,
                 std::string& why) {
    texts.clear();
    labels.clear();
    if (v.is_array()) {
        for (auto& c : v) {
            if (c.is_object()) {
                auto* t = fields::find(c, "text");
                const auto* l = fields::find(c, "label");
                auto tt = t ? fields::takeText(*t) : std::nullopt;
                if (!tt) {
                    why = "a choice object has no text";
                    return false;
                }
                texts.push_back(std::move(*tt));
                if (l)
                    if (auto lt = fields::scalarText(*l)) labels.push_back(trimmed(*lt));
            } else if (auto t = fields::takeText(c)) {
                texts.push_back(std::move(*t));
            } else {
                why = "choices must be texts or {text,label} objects";
                return false;
            }
        }
        if (!labels.empty() && labels.size() != texts.size()) {
            why = "some choices have labels and some do not";
            return false;
        }
        return true;
    }
    if (v.is_object()) {
        const auto* t = fields::find(v, "text");
        const auto* l = fields::find(v, "label");
        if (t && t->is_array()) {  // Hugging Face ARC: {"text": [...], "label": [...]}
            texts = fields::textList(*t);
            if (l && l->is_array()) labels = fields::textList(*l);
            if (!labels.empty() && labels.size() != texts.size()) {
                why = "choices.text and choices.label differ in length";
                return false;
            }
            return true;
        }
        std::vector<std::pair<std::string, std::string>> byKey;  // {"A": "...", "B": "..."}
        for (auto it = v.begin(); it != v.end(); ++it) {
            auto text = fields::scalarText(it.value());
            if (!text) {
                why = "choice '" + it.key() + "' is not text";
                return false;
            }
            byKey.emplace_back(it.key(), *text);
        }
        std::sort(byKey.begin(), byKey.end());
        for (auto& [k, t] : byKey) {
            labels.push_back(k);
            texts.push_back(t);
        }
        return true;
    }
    why = "choices must be a list";
    return false;
}

std::vector<std::string> stripLetterPrefixes(std::vector<std::string>& texts) {
    // Accepts "A)x", "A) x", "(A) x", "A. x", "A: x" — the same form on every choice, A, B, C in order.
    std::vector<size_t> cut(texts.size(), 0);
    for (size_t i = 0; i < texts.size(); ++i) {
        const std::string& t = texts[i];
        const char letter = char('A' + i);
        size_t p = 0;
        while (p < t.size() && t[p] == ' ') ++p;
        const bool paren = p < t.size() && t[p] == '(';
        if (paren) ++p;
        if (p >= t.size() || (t[p] != letter && t[p] != letter + 32)) return {};
        ++p;
        if (p >= t.size()) return {};
        if (paren) {
            if (t[p] != ')') return {};
        } else if (t[p] != ')' && t[p] != '.' && t[p] != ':') {
            return {};
        }
        ++p;
        while (p < t.size() && t[p] == ' ') ++p;
        cut[i] = p;
    }
    std::vector<std::string> labels;
    for (size_t i = 0; i < texts.size(); ++i) {
        texts[i] = texts[i].substr(cut[i]);
        labels.push_back(choiceLetter(int(i)));
    }
    return labels;
}

bool resolveGold(const nlohmann::json& answer, const std::vector<std::string>& texts,
                 const std::vector<std::string>& labels, int& gold, std::string& why) {
    const int n = int(texts.size());
    if (answer.is_number_integer() || answer.is_number_unsigned()) {
        const int64_t idx = answer.get<int64_t>();
        if (idx < 0 || idx >= n) {
            why = "answer index " + std::to_string(idx) + " is out of range for " + std::to_string(n) + " choices";
            return false;
        }
        gold = int(idx);
        return true;
    }
    if (answer.is_array() && answer.size() == 1) return resolveGold(answer[0], texts, labels, gold, why);
    auto text = fields::scalarText(answer);
    if (!text) {
        why = std::string("answer is a JSON ") + answer.type_name() + ", expected a letter, index or choice text";
        return false;
    }
    const std::string a = trimmed(*text);
    if (a.empty()) {
        why = "answer is empty";
        return false;
    }
    for (size_t i = 0; i < labels.size(); ++i)  // labels first: ARC's "1".."4" are labels, not indices
        if (fields::lowerAscii(labels[i]) == fields::lowerAscii(a)) {
            gold = int(i);
            return true;
        }
    if (const char letter = loneLetter(a)) {
        const bool labelsAreLetters = labels.empty() || std::all_of(labels.begin(), labels.end(), [](const std::string& l) {
                                          return l.size() == 1 && l[0] >= 'A' && l[0] <= 'Z';
                                      });
        if (labelsAreLetters) {
            const int idx = letter - 'A';
            if (idx >= n) {
                why = std::string("answer letter '") + letter + "' is not among the " + std::to_string(n) +
                      " choices (" + choiceRange(size_t(n)) + ")";
                return false;
            }
            gold = idx;
            return true;
        }
    }
    for (int i = 0; i < n; ++i)
        if (trimmed(texts[size_t(i)]) == a) {
            gold = i;
            return true;
        }
    if (std::all_of(a.begin(), a.end(), [](char c) { return c >= '0' && c <= '9'; }) && a.size() < 6) {
        const int idx = std::stoi(a);
        if (idx < n) {
            gold = idx;
            return true;
        }
        why = "answer index " + a + " is out of range for " + std::to_string(n) + " choices";
        return false;
    }
    why = "answer '" + a + "' is not a letter, index or the text of any choice";
    return false;
}

MapOutcome mapMultipleChoice(nlohmann::json& r, int line, const MapContext& ctx) {
    std::vector<std::string> used;
    std::string qKey;
    auto* q = fields::findAny(r, {"question", "query", "prompt", "ctx"}, &qKey);
    auto question = q ? fields::takeText(*q) : std::nullopt;
    if (!question) return reject("no question text");
    used.push_back(qKey);
    std::string cKey;
    auto* c = fields::findAny(r, {"choices", "options", "endings"}, &cKey);
    if (!c) return reject("no choices");
    used.push_back(cKey);
    std::vector<std::string> texts, labels;
    std::string why;
    if (!readChoices(*c, texts, labels, why)) return reject(why);
    if (labels.empty()) labels = stripLetterPrefixes(texts);
    std::string aKey;
    const auto* a = findAnswer(r, &aKey);
    if (a) used.push_back(aKey);
    return finishMc(r, line, ctx, std::move(*question), std::move(texts), std::move(labels), a, used);
}

MapOutcome mapArc(nlohmann::json& r, int line, const MapContext& ctx) {
    auto* q = fields::find(r, "question");
    if (!q || !q->is_object()) return reject("no question object");
    auto* stem = fields::find(*q, "stem");
    auto question = stem ? fields::takeText(*stem) : std::nullopt;
    if (!question) return reject("no question.stem");
    auto* c = fields::find(*q, "choices");
    if (!c) return reject("no question.choices");
    std::vector<std::string> texts, labels;
    std::string why;
    if (!readChoices(*c, texts, labels, why)) return reject(why);
    std::string aKey;
    const auto* a = findAnswer(r, &aKey);
    std::vector<std::string> used = {"question"};
    if (a) used.push_back(aKey);
    return finishMc(r, line, ctx, *question, std::move(texts), std::move(labels), a, used);
}

MapOutcome mapAqua(nlohmann::json& r, int line, const MapContext& ctx) {
    const auto* q = fields::find(r, "question");
    auto question = q ? fields::scalarText(*q) : std::nullopt;
    if (!question) return reject("no question text");
    auto* o = fields::find(r, "options");
    if (!o) return reject("no options");
    std::vector<std::string> texts, labels;
    std::string why;
    if (!readChoices(*o, texts, labels, why)) return reject(why);
    if (labels.empty()) labels = stripLetterPrefixes(texts);
    return finishMc(r, line, ctx, *question, std::move(texts), std::move(labels), fields::find(r, "correct"),
                    {"question", "options", "correct"});
}

MapOutcome mapMmlu(nlohmann::json& r, int line, const MapContext& ctx) {
    std::vector<std::string> used;
    std::optional<std::string> question;
    std::vector<std::string> texts;
    const nlohmann::json* answer = nullptr;
    if (fields::find(r, "col6") && !fields::find(r, "question")) {  // headerless: question,A,B,C,D,answer
        if (auto* v = fields::find(r, "col1")) question = fields::takeText(*v);
        for (int i = 2; i <= 5; ++i) {
            auto* v = fields::find(r, "col" + std::to_string(i));
            if (auto t = v ? fields::takeText(*v) : std::nullopt) texts.push_back(std::move(*t));
        }
        answer = fields::find(r, "col6");
        used = {"col1", "col2", "col3", "col4", "col5", "col6"};
    } else {
        std::string qKey;
        auto* q = fields::findAny(r, {"question", "query", "prompt"}, &qKey);
        if (q) question = fields::takeText(*q);
        used.push_back(qKey);
        for (int i = 0; i < 10; ++i) {  // A, B, C, D, E, ... as far as the columns go
            const std::string key(1, char('A' + i));
            auto* v = fields::find(r, key);
            if (!v) break;
            auto t = fields::takeText(*v);
            if (!t) return reject("choice " + key + " is not text");
            texts.push_back(std::move(*t));
            used.push_back(key);
        }
        std::string aKey;
        answer = fields::findAny(r, {"answer", "label", "target", "answerKey"}, &aKey);
        if (answer) used.push_back(aKey);
        // A leading unnamed index column (",Question,A,...") carries nothing.
        if (const auto* idx = fields::find(r, "col1")) {
            (void)idx;
            used.push_back("col1");
        }
    }
    if (!question) return reject("no question text");
    return finishMc(r, line, ctx, *question, std::move(texts), {}, answer, used);
}

}  // namespace verdict::core
