#include "core/services/compare.h"

namespace verdict::core {

Prompt comparePrompt(const CompareSettings& s, const std::vector<ChatTurn>& history, const std::string& user) {
    Prompt p;
    p.useChatTemplate = s.useChatTemplate;
    if (!s.system.empty()) p.messages.push_back({"system", s.system});
    p.messages.insert(p.messages.end(), history.begin(), history.end());
    p.messages.push_back({"user", user});
    if (history.empty()) {
        p.text = s.system.empty() ? user : s.system + "\n\n" + user;
        return p;
    }
    if (!s.system.empty()) p.text = s.system + "\n\n";
    for (const ChatTurn& t : history) p.text += (t.role == "assistant" ? "Assistant: " : "User: ") + t.content + "\n";
    p.text += "User: " + user + "\nAssistant:";
    return p;
}

namespace {
nlohmann::json sideSettings(const CompareSettings& s, const nlohmann::json& stats) {
    nlohmann::json j = {{"temperature", s.generation.temperature},
                        {"max_tokens", s.generation.maxTokens},
                        {"seed", s.generation.seed},
                        {"chat_template", s.useChatTemplate}};
    if (stats.is_object()) j.update(stats);
    return j;
}
}  // namespace

nlohmann::json compareVoteSettings(const CompareSettings& a, const CompareSettings& b, const std::string& source,
                                   const nlohmann::json& statsA, const nlohmann::json& statsB) {
    return {{"system", a.system},
            {"temperature", a.generation.temperature},
            {"seed", a.generation.seed},
            {"max_tokens", a.generation.maxTokens},
            {"chat_template", a.useChatTemplate},
            {"ctx", a.backend.nCtx},
            {"source", source},
            {"a", sideSettings(a, statsA)},
            {"b", sideSettings(b, statsB)}};
}

}  // namespace verdict::core
