#include "core/run/suite_bindings.h"

#include "core/suite/prompt_builder.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

namespace verdict::core {

PromptRenderer makeSuitePromptRenderer() {
    return [](const SuiteItem& item, size_t, const std::vector<SuiteItem>& suite,
              const PromptingOptions& o) -> Result<ItemPrompt> {
        PromptOptions b;
        b.shape = o.shape;
        b.templateText = o.templateText;
        b.description = o.description;
        b.numShots = o.shots;
        b.seed = o.shotSeed;
        std::vector<SuiteItem> shots;
        if (o.shots > 0) shots = selectShots(suite, item, o.shots, o.shotSeed);

        ItemPrompt p;
        p.prompt.useChatTemplate = o.useChatTemplate;
        p.prompt.tools = item.tools;
        p.prompt.messages = renderMessages(item, b, shots);
        // A conversation under way (a multi-turn item's later turn: the model's own answers are
        // in it) is sent to a model without a chat template as its turns in order, as the engine
        // does for chat-only prompts; renderPrompt would keep only the last question.
        const bool conversation = std::any_of(item.messages.begin(), item.messages.end(),
                                              [](const ChatTurn& t) { return t.role == "assistant"; });
        if (conversation) {
            for (const ChatTurn& t : p.prompt.messages) {
                if (t.role == "system") continue;
                std::string said = t.content;
                for (const ToolCall& c : t.toolCalls)  // a call, as the raw prompt asks for one (tool_prompt.h)
                    said += (said.empty() ? "" : "\n") + nlohmann::json{{"name", c.name}, {"arguments", c.arguments}}.dump();
                p.prompt.text += (p.prompt.text.empty() ? "" : "\n\n") + said;
            }
        } else {
            p.prompt.text = renderPrompt(item, b, shots);
        }
        if (!o.system.empty()) {
            p.prompt.text = o.system + "\n\n" + p.prompt.text;
            if (p.prompt.messages.empty() || p.prompt.messages.front().role != "system")
                p.prompt.messages.insert(p.prompt.messages.begin(), ChatTurn{"system", o.system});
        }
        if (!item.choices.empty() && item.gold) {
            SuiteItem asIf = item;
            for (size_t k = 0; k < item.choices.size(); ++k) {
                asIf.gold = static_cast<int>(k);
                p.continuations.push_back(b.targetDelimiter + docToTarget(asIf, b));
            }
        }
        return p;
    };
}

ItemScorer makeRegistryScorer(const ScorerOptions& options) {
    // Keyed by name + parameters: a suite usually repeats a handful of specs over many items.
    // Items score on several threads at once in a parallel run: the cache is locked, the scoring
    // (a scorer's score() is const) is not.
    struct Cache {
        std::mutex mu;
        std::map<std::string, std::shared_ptr<const Scorer>> scorers;
    };
    auto cache = std::make_shared<Cache>();
    return [cache, options](const SuiteItem& item, const std::string& output) -> Result<std::vector<ItemScore>> {
        std::vector<ItemScore> out;
        for (const ScorerSpec& spec : item.scorers) {
            if (isLoglikelihoodScorer(spec.name)) continue;
            const std::string key = spec.name + "\x1f" + spec.params.dump();
            std::shared_ptr<const Scorer> scorer;
            {
                std::lock_guard lock(cache->mu);
                auto it = cache->scorers.find(key);
                if (it == cache->scorers.end()) {
                    auto made = makeScorer(spec, options);
                    if (!made) return Error{"scorer '" + spec.name + "': " + made.error().message};
                    it = cache->scorers.emplace(key, std::shared_ptr<const Scorer>(std::move(*made))).first;
                }
                scorer = it->second;
            }
            const ScoreResult r = scorer->score(item, output);
            nlohmann::json detail = nlohmann::json::object();
            if (!r.extracted.empty()) detail["extracted"] = r.extracted;
            if (!r.expected.empty()) detail["expected"] = r.expected;
            if (!r.detail.empty()) detail["why"] = r.detail;
            out.push_back({spec.name, r.score, r.pass, std::move(detail)});
        }
        return out;
    };
}

}  // namespace verdict::core
