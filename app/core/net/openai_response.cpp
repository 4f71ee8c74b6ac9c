#include "core/net/openai_response.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace verdict::core::net {
namespace {

using json = nlohmann::json;

// obj[key] when obj is an object holding key, else nullptr.
const json* member(const json& obj, const char* key) {
    if (!obj.is_object()) return nullptr;
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

// A token count as the servers send it: an integer (true/false count as 1/0, a float is
// truncated when it fits); anything else is no count.
std::optional<int64_t> tokenCount(const json& usage, const char* key) {
    const json* v = member(usage, key);
    if (!v) return std::nullopt;
    if (v->is_number_unsigned()) return static_cast<int64_t>(v->get<uint64_t>());
    if (v->is_number_integer()) return v->get<int64_t>();
    if (v->is_boolean()) return v->get<bool>() ? 1 : 0;
    if (v->is_number_float()) {
        const double d = v->get<double>();
        if (std::isfinite(d) && d > -9.2e18 && d < 9.2e18) return static_cast<int64_t>(d);
    }
    return std::nullopt;
}

std::optional<OpenAiUsage> usageOf(const json& j) {
    const json* u = member(j, "usage");
    if (!u || !u->is_object()) return std::nullopt;
    OpenAiUsage out{tokenCount(*u, "prompt_tokens"), tokenCount(*u, "completion_tokens"), std::nullopt};
    if (const json* d = member(*u, "completion_tokens_details"); d && d->is_object()) out.reasoningTokens = tokenCount(*d, "reasoning_tokens");
    if (!out.reasoningTokens) out.reasoningTokens = tokenCount(*u, "reasoning_tokens");
    // Prompt tokens served from the provider's cache: OpenAI-style details, else DeepSeek's field,
    // else a top-level cached_tokens (Moonshot).
    if (const json* d = member(*u, "prompt_tokens_details"); d && d->is_object()) out.cachedPromptTokens = tokenCount(*d, "cached_tokens");
    if (!out.cachedPromptTokens) out.cachedPromptTokens = tokenCount(*u, "prompt_cache_hit_tokens");
    if (!out.cachedPromptTokens) out.cachedPromptTokens = tokenCount(*u, "cached_tokens");
    return out;
}

// choices[0] when "choices" is a non-empty array, else nullptr.
const json* firstChoice(const json& j) {
    const json* choices = member(j, "choices");
    if (!choices || !choices->is_array() || choices->empty()) return nullptr;
    return &(*choices)[0];
}

const std::string* stringMember(const json& obj, const char* key) {
    const json* v = member(obj, key);
    return v && v->is_string() ? &v->get_ref<const std::string&>() : nullptr;
}

// The reasoning text of a delta or message: "reasoning_content" (DeepSeek, vLLM's reasoning
// parsers), else "reasoning" (OpenRouter, newer vLLM); "" when neither is a string.
std::string reasoningOf(const json* obj) {
    if (!obj || !obj->is_object()) return {};
    if (const std::string* r = stringMember(*obj, "reasoning_content")) return *r;
    if (const std::string* r = stringMember(*obj, "reasoning")) return *r;
    return {};
}

// A text_offset entry: a byte offset, or nullopt when it is not a number that converts to one
// (integers convert like size_t casts do; a float must lie in size_t's range).
std::optional<size_t> textOffset(const json& v) {
    if (v.is_number_unsigned()) return static_cast<size_t>(v.get<uint64_t>());
    if (v.is_number_integer()) return static_cast<size_t>(v.get<int64_t>());
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (d > -1.0 && d < 18446744073709551616.0) return static_cast<size_t>(d);
    }
    return std::nullopt;
}

// tool_calls entries; entries that are not objects are skipped, fields of the wrong type are absent.
std::vector<OpenAiToolCallPiece> toolCallsOf(const json* holder) {
    std::vector<OpenAiToolCallPiece> out;
    const json* list = holder && holder->is_object() ? member(*holder, "tool_calls") : nullptr;
    if (!list || !list->is_array()) return out;
    for (size_t k = 0; k < list->size(); ++k) {
        const json& e = (*list)[k];
        if (!e.is_object()) continue;
        OpenAiToolCallPiece p;
        const json* index = member(e, "index");
        p.index = index && index->is_number_integer() ? index->get<int64_t>() : static_cast<int64_t>(k);
        if (const std::string* id = stringMember(e, "id")) p.id = *id;
        const json* f = member(e, "function");
        if (f && f->is_object()) {
            if (const std::string* name = stringMember(*f, "name")) p.name = *name;
            if (const json* args = member(*f, "arguments")) {
                if (args->is_string()) p.arguments = args->get<std::string>();
                else if (!args->is_null()) p.arguments = args->dump();
            }
        }
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace

OpenAiStreamChunk parseOpenAiStreamChunk(std::string_view data) {
    OpenAiStreamChunk out;
    if (data == "[DONE]") {
        out.done = true;
        return out;
    }
    const json j = json::parse(data, nullptr, false);
    if (j.is_discarded()) return out;
    out.json = true;
    if (!j.is_object()) return out;
    out.object = true;
    if (const json* e = member(j, "error")) out.error = e->dump();
    out.usage = usageOf(j);
    const json* c = firstChoice(j);
    if (!c) return out;
    out.hasChoice = true;
    const json* delta = member(*c, "delta");
    const std::string* content = delta && delta->is_object() ? stringMember(*delta, "content") : nullptr;
    if (content) out.piece = *content;
    else if (const std::string* text = stringMember(*c, "text")) out.piece = *text;
    out.reasoningPiece = reasoningOf(delta);
    out.toolCalls = toolCallsOf(delta);
    if (const std::string* f = stringMember(*c, "finish_reason")) out.finishReason = *f;
    return out;
}

Result<OpenAiCompletion> parseOpenAiCompletion(std::string_view body) {
    const json j = json::parse(body, nullptr, false);
    const json* c = j.is_discarded() ? nullptr : firstChoice(j);
    if (!c) return Error{"the response is not a completion"};
    OpenAiCompletion out;
    const json* message = member(*c, "message");
    const std::string* text = message && message->is_object() ? stringMember(*message, "content") : stringMember(*c, "text");
    if (text) out.text = *text;
    out.reasoning = reasoningOf(message);
    out.toolCalls = toolCallsOf(message);
    out.usage = usageOf(j);
    return out;
}

Result<EchoLogprobs> parseEchoLogprobs(std::string_view body, size_t boundary) {
    const json j = json::parse(body, nullptr, false);
    const json* c = j.is_discarded() ? nullptr : firstChoice(j);
    const json* lp = c ? member(*c, "logprobs") : nullptr;
    const json* tl = lp && lp->is_object() ? member(*lp, "token_logprobs") : nullptr;
    const json* off = lp && lp->is_object() ? member(*lp, "text_offset") : nullptr;
    if (!tl || !off || !tl->is_array() || !off->is_array())
        return Error{"the server returned no prompt logprobs (echo); use --mc-mode generate with this server"};
    const json* top = member(*lp, "top_logprobs");
    if (top && !top->is_array()) top = nullptr;
    const json* toks = member(*lp, "tokens");
    if (toks && !toks->is_array()) toks = nullptr;
    EchoLogprobs s;
    // The prompt's tokens are all but the one generated token (max_tokens 1) at the end.
    const size_t promptTokens = tl->size() > 0 ? tl->size() - 1 : 0;
    for (size_t i = 0; i < promptTokens && i < off->size(); ++i) {
        const std::optional<size_t> at = textOffset((*off)[i]);
        if (!at) continue;
        if (*at < boundary) {
            ++s.contextTokens;
            continue;
        }
        if (!(*tl)[i].is_number()) return Error{"prompt token " + std::to_string(i) + " has no logprob"};
        s.logprob += (*tl)[i].get<double>();
        ++s.continuationTokens;
        // greedy: the token is the most likely one (top_logprobs with 1 entry)
        const json* t = top && i < top->size() && (*top)[i].is_object() ? &(*top)[i] : nullptr;
        if (t && toks && i < toks->size() && (*toks)[i].is_string()) {
            const std::string& tok = (*toks)[i].get_ref<const std::string&>();
            double best = -1e300;
            std::string bestTok;
            for (auto it = t->begin(); it != t->end(); ++it)
                if (it.value().is_number() && it.value().get<double>() > best) {
                    best = it.value().get<double>();
                    bestTok = it.key();
                }
            if (bestTok != tok) s.greedy = false;
        } else {
            s.greedy = false;
        }
    }
    if (s.continuationTokens == 0)
        return Error{"no prompt token starts inside the continuation (the tokenization merged it into the context)"};
    return s;
}

}  // namespace verdict::core::net
