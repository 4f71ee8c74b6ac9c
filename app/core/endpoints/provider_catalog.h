// Provider presets: how to reach each OpenAI-compatible provider (base URL, key header, routes,
// what it supports) and what its models cost per 1M tokens, every price with its source and date.
// The built-in catalog is resources/providers.json, compiled into the binary (app/CMakeLists.txt
// embeds it, as the hardware catalog); a user file adds or overrides presets by id. `verdict
// endpoints list|show`, `--provider ID` on the endpoint commands and the window's Add endpoint
// dialog read this one table.
//
// File shape (schema_version 1; docs/tco.md "Provider presets"):
//   {"schema_version": 1,
//    "providers": [{"id": "deepseek", "name": "DeepSeek", "kind": "hosted" | "self-hosted",
//                   "base_url": "https://api.deepseek.com",   // may hold {resource} (Azure)
//                   "auth": "bearer" | "api-key" | "none",    // Authorization: Bearer / api-key: / nothing
//                   "key_env": "DEEPSEEK_API_KEY" | null,     // suggested environment variable
//                   "routes": {"chat": "/v1/chat/completions", "completions": "/v1/completions" | null,
//                              "models": "/v1/models" | null},  // optional; these are the defaults
//                   "query": "api-version={api_version}", "api_version": "2024-10-21",  // optional (Azure)
//                   "supports": {"stream_usage": bool|null, "logprobs": bool|null, "echo": bool|null,
//                                "tool_calls": bool|null,
//                                "reasoning_field": "reasoning_content"|"reasoning"|"none"|null},
//                   "max_concurrency": N | null,              // requests at once, when the provider states one
//                   "docs_url": "...", "notes": "...",        // optional
//                   "prices": [{"model": "deepseek-chat", "input": PRICE, "cached_input": PRICE, "output": PRICE}],
//                   "prices_note": "..."}]}                   // why there are no prices (required when none, hosted)
//   PRICE = {"value": USD per 1M tokens >= 0 | null, "source": "...", "as_of": "YYYY[-MM[-DD]]",
//            "url": "https://..." (optional), "note": "..." (optional)}
// Self-hosted presets carry no prices: their cost is the TCO of the hardware (verdict tco).
// In the user file a preset with a known id needs only "id" plus the fields it changes (a price
// entry of a known model overrides the figures it gives, a new model adds one and must give input
// and output), and a PRICE may be a bare number: its source becomes "user file PATH" and as_of the
// file's modification date. A preset with a new id must give name, kind, base_url and auth.
#pragma once

#include "core/endpoints/endpoint_api.h"
#include "verdict/engine/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// One price with where it came from.
struct PriceFigure {
    std::optional<double> value;  // USD per 1M tokens; nullopt: no sourced price (source says why)
    std::string source;
    std::string asOf;             // "YYYY", "YYYY-MM" or "YYYY-MM-DD"
    std::string url;              // "" when none
    std::string note;
};

struct ModelPrice {
    std::string model;            // the served model name, as sent in requests
    PriceFigure input;            // prompt tokens not served from cache
    PriceFigure cachedInput;      // prompt tokens served from the provider's cache
    PriceFigure output;           // generated tokens, reasoning included
};

enum class ProviderKind { Hosted, SelfHosted };
const char* providerKindName(ProviderKind kind);  // "hosted" | "self-hosted"

enum class ProviderOrigin { Builtin, User };
const char* providerOriginName(ProviderOrigin origin);  // "builtin" | "user"

const char* endpointAuthName(EndpointAuth auth);  // "bearer" | "api-key" | "none"

// What a provider's API offers; nullopt = not checked.
struct ProviderSupports {
    std::optional<bool> streamUsage;   // usage in the last streamed chunk (stream_options.include_usage)
    std::optional<bool> logprobs;      // token logprobs of the output
    std::optional<bool> echo;          // prompt logprobs (/v1/completions echo): log-likelihood multiple choice
    std::optional<bool> toolCalls;
    std::optional<std::string> reasoningField;  // "reasoning_content", "reasoning" or "none"
};

struct ProviderPreset {
    std::string id;               // lower-case [a-z0-9._-], unique
    std::string name;
    ProviderKind kind = ProviderKind::Hosted;
    std::string baseUrl;          // may hold "{resource}"
    EndpointAuth auth = EndpointAuth::Bearer;
    std::string keyEnv;           // suggested key variable; "" none
    std::string chatRoute = "/v1/chat/completions";
    std::string completionsRoute = "/v1/completions";  // "" : none
    std::string modelsRoute = "/v1/models";            // "" : none
    std::string query;            // may hold "{api_version}"
    std::string apiVersion;       // default for {api_version}
    ProviderSupports supports;
    std::optional<int64_t> maxConcurrency;
    std::string docsUrl;
    std::string notes;
    std::vector<ModelPrice> prices;
    std::string pricesNote;
    ProviderOrigin origin = ProviderOrigin::Builtin;

    const ModelPrice* priceOf(const std::string& model) const;  // nullptr when the model has no entry
};

constexpr int kProvidersSchemaVersion = 1;

// $XDG_CONFIG_HOME/verdict/providers.json when XDG_CONFIG_HOME is set and absolute, else
// $HOME/.config/verdict/providers.json, else "" — next to the hardware user file.
std::string defaultUserProvidersPath();

class ProviderCatalog {
public:
    // Parses and validates a complete catalog. Errors: "ORIGIN: $.providers[3].prices[0].output.value:
    // must be a number >= 0 or null", duplicate ids or models, a wrong schema_version, JSON syntax.
    static Result<ProviderCatalog> parse(const std::string& text, const std::string& origin);
    // The built-in catalog (resources/providers.json compiled in). Fails only if that text is broken.
    static Result<ProviderCatalog> builtin();

    // Merges a user document (partial presets; see the header comment). Errors name `origin` and
    // the JSON path; on error the catalog is unchanged. `fileDate` is the as_of of bare numbers.
    Result<void> mergeUser(const std::string& text, const std::string& origin, const std::string& fileDate);
    // Reads `path` and merges it; a missing file is an error here.
    Result<void> mergeUserFile(const std::string& path);

    const std::vector<ProviderPreset>& entries() const { return m_entries; }
    const ProviderPreset* find(const std::string& id) const;
    // Like find, but an unknown id is an Error listing the known ids.
    Result<const ProviderPreset*> lookup(const std::string& id) const;
    std::vector<std::string> ids() const;

private:
    std::vector<ProviderPreset> m_entries;
};

// Built-in + the user file. `userFile` given (--providers-file): it must exist. Not given:
// defaultUserProvidersPath() is merged when it exists. `usedUserFile` receives it ("" when none).
Result<ProviderCatalog> loadProviderCatalog(const std::optional<std::string>& userFile,
                                            std::string* usedUserFile = nullptr);

// The preset as JSON, in the file's shape plus "origin".
nlohmann::json providerPresetJson(const ProviderPreset& preset);

// What a request through a preset needs: the base URL and the routes/auth/query.
struct ProviderEndpoint {
    std::string baseUrl;
    EndpointApi api;
};
struct ProviderEndpointOptions {
    std::string baseUrl;     // "" : the preset's (a URL given as MODEL replaces it)
    std::string resource;    // fills {resource} in the preset's base URL (Azure); needed when it has one
    std::string apiVersion;  // "" : the preset's api_version for {api_version}
};
// Errors: a {resource} left unfilled ("provider azure-openai: its base URL needs --resource NAME").
Result<ProviderEndpoint> providerEndpoint(const ProviderPreset& preset, const ProviderEndpointOptions& options);

}  // namespace verdict::core
