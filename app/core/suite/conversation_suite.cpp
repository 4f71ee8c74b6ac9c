#include "core/suite/conversation_suite.h"

#include <charconv>
#include <random>
#include <string>

namespace verdict::core {

namespace {

struct Fact {
    std::string told, asked, answer;
};

// Facts with a one-word answer that no task of the conversation gives away.
Fact factOf(std::mt19937_64& r) {
    static const char* kPet[] = {"cat", "dog", "parrot", "rabbit", "tortoise", "hamster"};
    static const char* kName[] = {"Pixel", "Juniper", "Biscuit", "Orion", "Marble", "Pepper", "Quill", "Saffron"};
    static const char* kCity[] = {"Lisbon", "Tampere", "Valparaiso", "Kyoto", "Tbilisi", "Hobart", "Graz", "Cusco"};
    static const char* kColour[] = {"teal", "amber", "maroon", "lilac", "ochre", "cobalt"};
    switch (r() % 4) {
    case 0: {
        const std::string pet = kPet[r() % 6], name = kName[r() % 8];
        return {"My " + pet + " is called " + name + ".", "What is my " + pet + " called?", name};
    }
    case 1: {
        const std::string city = kCity[r() % 8];
        return {"I was born in " + city + ".", "Where was I born?", city};
    }
    case 2: {
        const std::string code = std::to_string(1000 + r() % 9000);
        return {"My locker code is " + code + ".", "What is my locker code?", code};
    }
    default: {
        const std::string colour = kColour[r() % 6];
        return {"My favourite colour is " + colour + ".", "What is my favourite colour?", colour};
    }
    }
}

}  // namespace

Result<std::vector<int64_t>> parseConversationLengths(std::string_view list) {
    std::vector<int64_t> out;
    size_t pos = 0;
    while (pos <= list.size()) {
        const size_t comma = list.find(',', pos);
        const std::string_view part = list.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        int64_t v = 0;
        auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
        if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < 3 || v > 1000)
            return Error{"turns: '" + std::string(part) + "' is not a number of turns between 3 and 1000"};
        out.push_back(v);
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return out;
}

Result<std::vector<SuiteItem>> makeConversationSuite(const ConversationOptions& o) {
    if (o.lengths.empty()) return Error{"conversation suite: no lengths"};
    if (o.conversations < 1 || o.conversations > 1000) return Error{"conversation suite: conversations per length must be 1..1000"};
    std::mt19937_64 r(o.seed);
    std::vector<SuiteItem> items;
    for (int64_t length : o.lengths) {
        if (length < 3 || length > 1000) return Error{"conversation suite: " + std::to_string(length) + " turns is outside 3..1000"};
        for (int k = 0; k < o.conversations; ++k) {
            const Fact fact = factOf(r);
            SuiteItem it;
            it.id = "conv-" + std::to_string(length) + "-" + std::to_string(k + 1);
            it.category = std::to_string(length) + " turns";
            nlohmann::json refs = nlohmann::json::array();
            it.turns.push_back("Remember this: " + fact.told + " Just say OK.");
            refs.push_back(nullptr);
            for (int64_t t = 1; t + 1 < length; ++t) {
                const int a = 2 + static_cast<int>(r() % 98), b = 2 + static_cast<int>(r() % 98);
                it.turns.push_back("What is " + std::to_string(a) + " plus " + std::to_string(b) + "? Answer with the number only.");
                refs.push_back(std::to_string(a + b));
            }
            it.turns.push_back(fact.asked + " Answer in one word.");
            refs.push_back(fact.answer);
            it.prompt = it.turns.front();
            it.scorers = {{"contains", {{"ignore_case", true}}}};
            it.metadata["turn_references"] = std::move(refs);
            it.metadata["conversation"] = {{"turns", length}, {"fact_turn", 1}, {"question_turn", length}};
            items.push_back(std::move(it));
        }
    }
    return items;
}

}  // namespace verdict::core
