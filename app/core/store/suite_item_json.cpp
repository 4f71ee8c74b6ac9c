#include "core/store/suite_item_json.h"

#include "core/score/tool_call_scorer.h"
#include "core/suite/chat_turn_json.h"

namespace verdict::core {

nlohmann::json suiteItemToJson(const SuiteItem& item) {
    nlohmann::json messages = nlohmann::json::array();
    for (const ChatTurn& t : item.messages) messages.push_back(chatTurnToJson(t));
    nlohmann::json scorers = nlohmann::json::array();
    for (const ScorerSpec& s : item.scorers) scorers.push_back({{"name", s.name}, {"params", s.params}});
    nlohmann::json j = {{"id", item.id},
                        {"category", item.category},
                        {"prompt", item.prompt},
                        {"messages", std::move(messages)},
                        {"references", item.references},
                        {"choices", item.choices},
                        {"gold", item.gold ? nlohmann::json(*item.gold) : nlohmann::json(nullptr)},
                        {"scorers", std::move(scorers)},
                        {"metadata", item.metadata},
                        {"source_line", item.sourceLine}};
    // Only multi-turn items carry the key, so every other item's JSON (and each suite's content
    // hash, computed over it) is what it was before multi-turn suites existed.
    if (!item.turns.empty()) j["turns"] = item.turns;
    // Likewise function-calling items alone carry these.
    if (!item.tools.is_null()) j["tools"] = item.tools;
    if (item.expectedCalls) j["expected_calls"] = expectedCallsToJson(*item.expectedCalls);
    if (!item.toolResults.is_null()) j["tool_results"] = item.toolResults;
    return j;
}

Result<SuiteItem> suiteItemFromJson(const nlohmann::json& j) {
    if (!j.is_object()) return Error{"suite item: expected a JSON object"};
    SuiteItem item;
    auto str = [&](const char* key, std::string& out) -> bool {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) return true;
        if (!it->is_string()) return false;
        out = it->get<std::string>();
        return true;
    };
    auto strList = [&](const char* key, std::vector<std::string>& out) -> bool {
        auto it = j.find(key);
        if (it == j.end() || it->is_null()) return true;
        if (!it->is_array()) return false;
        for (const auto& e : *it) {
            if (!e.is_string()) return false;
            out.push_back(e.get<std::string>());
        }
        return true;
    };
    for (const char* key : {"id", "category", "prompt"}) {
        std::string& dst = key[0] == 'i' ? item.id : key[0] == 'c' ? item.category : item.prompt;
        if (!str(key, dst)) return Error{std::string("suite item: '") + key + "' must be a string"};
    }
    if (!strList("references", item.references)) return Error{"suite item: 'references' must be a list of strings"};
    if (!strList("choices", item.choices)) return Error{"suite item: 'choices' must be a list of strings"};
    if (!strList("turns", item.turns)) return Error{"suite item: 'turns' must be a list of strings"};
    if (auto it = j.find("messages"); it != j.end() && !it->is_null()) {
        if (!it->is_array()) return Error{"suite item: 'messages' must be a list"};
        for (const auto& m : *it) {
            auto turn = chatTurnFromJson(m);
            if (!turn) return Error{"suite item: " + turn.error().message};
            item.messages.push_back(std::move(*turn));
        }
    }
    if (auto it = j.find("tools"); it != j.end() && !it->is_null()) {
        if (!it->is_array()) return Error{"suite item: 'tools' must be a list"};
        item.tools = *it;
    }
    if (auto it = j.find("expected_calls"); it != j.end() && !it->is_null()) {
        auto calls = expectedCallsFromJson(*it);
        if (!calls) return Error{"suite item: 'expected_calls': " + calls.error().message};
        item.expectedCalls = std::move(*calls);
    }
    if (auto it = j.find("tool_results"); it != j.end() && !it->is_null()) {
        if (!it->is_object()) return Error{"suite item: 'tool_results' must be an object"};
        item.toolResults = *it;
    }
    if (auto it = j.find("gold"); it != j.end() && !it->is_null()) {
        if (!it->is_number_integer()) return Error{"suite item: 'gold' must be an integer"};
        item.gold = it->get<int>();
    }
    if (auto it = j.find("scorers"); it != j.end() && !it->is_null()) {
        if (!it->is_array()) return Error{"suite item: 'scorers' must be a list"};
        for (const auto& s : *it) {
            if (!s.is_object() || !s.value("name", nlohmann::json()).is_string())
                return Error{"suite item: each scorer needs a string 'name'"};
            ScorerSpec spec;
            spec.name = s["name"].get<std::string>();
            if (auto p = s.find("params"); p != s.end() && !p->is_null()) spec.params = *p;
            item.scorers.push_back(std::move(spec));
        }
    }
    if (auto it = j.find("metadata"); it != j.end() && !it->is_null()) item.metadata = *it;
    if (auto it = j.find("source_line"); it != j.end() && it->is_number_integer()) item.sourceLine = it->get<int>();
    return item;
}

}  // namespace verdict::core
