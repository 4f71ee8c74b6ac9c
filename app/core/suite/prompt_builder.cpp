#include "core/suite/prompt_builder.h"

#include "core/suite/record_fields.h"
#include "core/suite/utf8_text.h"

#include <algorithm>

namespace verdict::core {

namespace {

enum class Format { Plain, MultipleChoice, Gsm8k, Mbpp };

Format formatFor(const SuiteItem& item, const PromptOptions& o) {
    if (o.shape == "mc" || o.shape == "arc" || o.shape == "aqua" || o.shape == "mmlu") return Format::MultipleChoice;
    if (o.shape == "gsm8k") return Format::Gsm8k;
    if (o.shape == "mbpp") return Format::Mbpp;
    if (!o.shape.empty()) return item.choices.empty() ? Format::Plain : Format::MultipleChoice;
    if (!item.choices.empty()) return Format::MultipleChoice;
    if (item.metadata.contains("solution")) return Format::Gsm8k;
    if (item.metadata.contains("test_list")) return Format::Mbpp;
    return Format::Plain;
}

std::string letter(size_t i) { return i < 26 ? std::string(1, char('A' + i)) : std::to_string(i + 1); }

// "\nB. text" (appending piecewise: `"\n" + std::string` trips GCC 12's false -Wrestrict, bug 105329).
void appendChoiceLine(std::string& out, size_t i, const std::string& text, bool newline) {
    if (newline) out += '\n';
    out += letter(i);
    out += ". ";
    out += text;
}

std::string lastUserMessage(const SuiteItem& item) {
    for (auto it = item.messages.rbegin(); it != item.messages.rend(); ++it)
        if (it->role == "user") return it->content;
    return item.messages.empty() ? std::string() : item.messages.back().content;
}

std::string questionText(const SuiteItem& item) { return item.messages.empty() ? item.prompt : lastUserMessage(item); }

std::string testsText(const SuiteItem& item) {
    std::string out;
    if (auto it = item.metadata.find("test_list"); it != item.metadata.end() && it->is_array())
        for (const auto& t : *it)
            if (t.is_string()) {
                if (!out.empty()) out += '\n';
                out += t.get_ref<const std::string&>();
            }
    return out;
}

// Value of one placeholder; `known` says whether the name means anything for this item.
std::string fieldValue(std::string name, const SuiteItem& item, bool& known) {
    known = true;
    bool strip = false;
    if (name.size() > 8 && name.compare(name.size() - 8, 8, ".strip()") == 0) {
        strip = true;
        name.resize(name.size() - 8);
    }
    std::string v;
    if (name == "prompt" || name == "question" || name == "input" || name == "text") {
        v = questionText(item);
    } else if (name.size() == 1 && name[0] >= 'A' && name[0] <= 'J') {
        const size_t i = size_t(name[0] - 'A');
        if (i < item.choices.size()) v = item.choices[i];
        else known = false;
    } else if (name == "choices") {
        for (size_t i = 0; i < item.choices.size(); ++i) appendChoiceLine(v, i, item.choices[i], i > 0);
    } else if (name == "answer" || name == "target") {
        v = docToTarget(item, PromptOptions{});
    } else if (name == "reference") {
        if (!item.references.empty()) v = item.references.front();
    } else if (name == "category") {
        v = item.category;
    } else if (name == "subject") {
        v = item.category;
        std::replace(v.begin(), v.end(), '_', ' ');
    } else if (name == "id") {
        v = item.id;
    } else if (name == "tests") {
        v = testsText(item);
    } else {
        std::string path = name;
        if (path.rfind("metadata.", 0) == 0) path = path.substr(9);
        const nlohmann::json* found = fields::findPath(item.metadata, path);
        if (!found && item.metadata.contains("vars")) found = fields::findPath(item.metadata["vars"], path);
        if (found) {
            auto t = fields::scalarText(*found);
            v = t ? *t : found->dump();
        } else {
            known = false;
        }
    }
    if (strip) v = std::string(utf8::trim(v));
    return v;
}

template <class OnField>
std::string substitute(std::string_view templ, OnField&& onField) {
    std::string out;
    size_t pos = 0;
    for (;;) {
        const size_t open = templ.find("{{", pos);
        if (open == std::string_view::npos) break;
        const size_t close = templ.find("}}", open + 2);
        if (close == std::string_view::npos) break;
        out.append(templ.substr(pos, open - pos));
        out += onField(std::string(utf8::trim(templ.substr(open + 2, close - open - 2))));
        pos = close + 2;
    }
    out.append(templ.substr(pos));
    return out;
}

uint64_t fnv1a(std::string_view s) {
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

// splitmix64: small, fast and fully specified, so shot choices are the same on every platform
// (std::mt19937 + std::uniform_int_distribution is not portable across standard libraries).
uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

}  // namespace

std::string renderTemplate(std::string_view templ, const SuiteItem& item) {
    return substitute(templ, [&](const std::string& name) {
        bool known = false;
        return fieldValue(name, item, known);
    });
}

std::vector<std::string> unknownTemplateFields(std::string_view templ, const SuiteItem& item) {
    std::vector<std::string> unknown;
    substitute(templ, [&](const std::string& name) {
        bool known = false;
        fieldValue(name, item, known);
        if (!known) unknown.push_back(name);
        return std::string();
    });
    return unknown;
}

std::string docToText(const SuiteItem& item, const PromptOptions& o) {
    if (!o.templateText.empty()) return renderTemplate(o.templateText, item);
    switch (formatFor(item, o)) {
    case Format::MultipleChoice: {  // lm-eval MMLU doc_to_text
        if (o.clozeChoices) return "Question: " + std::string(utf8::trim(questionText(item))) + "\nAnswer:";
        std::string s(utf8::trim(questionText(item)));
        for (size_t i = 0; i < item.choices.size(); ++i) appendChoiceLine(s, i, item.choices[i], true);
        return s + "\nAnswer:";
    }
    case Format::Gsm8k: return "Question: " + questionText(item) + "\nAnswer:";  // lm-eval gsm8k
    case Format::Mbpp:
        return "You are an expert Python programmer, and here is your task: " + questionText(item) +
               " Your code should pass these tests:\n\n" + testsText(item) + "\n";
    case Format::Plain: break;
    }
    return questionText(item);
}

std::string docToTarget(const SuiteItem& item, const PromptOptions& o) {
    if (!item.choices.empty() && item.gold && *item.gold >= 0 && size_t(*item.gold) < item.choices.size())
        return o.clozeChoices ? item.choices[size_t(*item.gold)] : letter(size_t(*item.gold));
    if (formatFor(item, o) == Format::Gsm8k)
        if (auto it = item.metadata.find("solution"); it != item.metadata.end() && it->is_string()) return it->get<std::string>();
    if (auto it = item.metadata.find("canonical_solution"); it != item.metadata.end() && it->is_string())
        return it->get<std::string>();
    return item.references.empty() ? std::string() : item.references.front();
}

std::string defaultDescription(const SuiteItem& item, const PromptOptions& o) {
    if (formatFor(item, o) != Format::MultipleChoice || o.clozeChoices) return "";
    std::string subject = item.category;
    std::replace(subject.begin(), subject.end(), '_', ' ');
    // lm-eval MMLU: "The following are multiple choice questions (with answers) about {{subject}}.\n\n"
    if (subject.empty()) return "The following are multiple choice questions (with answers).\n\n";
    return "The following are multiple choice questions (with answers) about " + subject + ".\n\n";
}

std::string renderPrompt(const SuiteItem& item, const PromptOptions& o, const std::vector<SuiteItem>& shots) {
    std::string out = o.description.empty() ? defaultDescription(item, o) : renderTemplate(o.description, item);
    for (const auto& shot : shots) out += docToText(shot, o) + o.targetDelimiter + docToTarget(shot, o) + o.fewshotDelimiter;
    out += docToText(item, o);
    return out;
}

std::vector<ChatTurn> renderMessages(const SuiteItem& item, const PromptOptions& o, const std::vector<SuiteItem>& shots) {
    if (item.messages.empty()) return {ChatTurn{"user", renderPrompt(item, o, shots)}};
    std::vector<ChatTurn> out;
    size_t i = 0;
    for (; i < item.messages.size() && item.messages[i].role == "system"; ++i) out.push_back(item.messages[i]);
    for (const auto& shot : shots) {
        out.push_back({"user", docToText(shot, o)});
        out.push_back({"assistant", docToTarget(shot, o)});
    }
    for (; i < item.messages.size(); ++i) out.push_back(item.messages[i]);
    return out;
}

std::vector<SuiteItem> selectShots(const std::vector<SuiteItem>& pool, const SuiteItem& item, int k, uint64_t seed,
                                   bool sameCategory) {
    if (k <= 0) return {};
    std::vector<size_t> candidates;
    auto eligible = [&](const SuiteItem& c) {
        return !(c.id == item.id || (!item.prompt.empty() && c.prompt == item.prompt));
    };
    if (sameCategory && !item.category.empty()) {
        for (size_t i = 0; i < pool.size(); ++i)
            if (pool[i].category == item.category && eligible(pool[i])) candidates.push_back(i);
        if (candidates.size() < size_t(k)) candidates.clear();
    }
    if (candidates.empty())
        for (size_t i = 0; i < pool.size(); ++i)
            if (eligible(pool[i])) candidates.push_back(i);
    uint64_t state = seed ^ fnv1a(item.id);
    const size_t take = std::min(candidates.size(), size_t(k));
    for (size_t i = 0; i < take; ++i) {  // partial Fisher-Yates
        const size_t j = i + size_t(splitmix64(state) % (candidates.size() - i));
        std::swap(candidates[i], candidates[j]);
    }
    std::vector<SuiteItem> shots;
    for (size_t i = 0; i < take; ++i) shots.push_back(pool[candidates[i]]);
    return shots;
}

}  // namespace verdict::core
