// What tokens cost on a hosted endpoint: the "hosted API" side of the TCO comparison, from a
// provider preset's prices (provider_catalog.h) and the tokens a run measured.
//
//   cost = (prompt − cached) × input + cached × cached_input + output × output_price   (÷ 10⁶, USD)
//
// Reasoning is billed at the output price. The servers Verdict reads (OpenAI, DeepSeek, vLLM,
// OpenRouter) count reasoning inside usage.completion_tokens, with the reasoning part in
// completion_tokens_details.reasoning_tokens; the endpoint backend stores completion_tokens as the
// item's tokens_out and the reasoning count as details.reasoning_tokens (docs/cli.md, `verdict
// run`), so the billed output is tokens_out, never tokens_out + reasoning. The one exception is a
// count that cannot be a part of the whole: reasoning_tokens > completion_tokens means the server
// counted them apart, and both are billed (billedOutputTokens). A cached-input price that is
// unknown bills cached tokens at the input price (an upper bound; the result says so).
#pragma once

#include "core/endpoints/provider_catalog.h"
#include "core/store/run_record.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// Token counts as a provider bills them.
struct BilledTokens {
    int64_t prompt = 0;          // every prompt token, cached ones included
    int64_t cachedPrompt = 0;    // of those, served from the provider's cache (0 when unknown)
    int64_t output = 0;          // generated tokens, reasoning included
    int64_t reasoning = 0;       // of those, reasoning (informational: already in output)
    int64_t requests = 0;        // items the counts come from
};

// The output tokens to bill for one response: completion, or completion + reasoning when the
// reasoning count exceeds the completion count (counted apart). Negative counts are 0.
int64_t billedOutputTokens(int64_t completionTokens, int64_t reasoningTokens);

// Sums a run's stored items: tokens_in, details.cached_tokens, tokens_out (billedOutputTokens with
// details.reasoning_tokens). Log-likelihood items (details.logprobs) sent their scored tokens as
// prompt: they count as prompt tokens.
BilledTokens runBilledTokens(const std::vector<RunItemRecord>& items);

struct EndpointCost {
    std::optional<double> usdTotal;        // nullopt: an input or output price is unknown
    std::optional<double> inputUsd, cachedInputUsd, outputUsd;
    std::optional<double> usdPerMtokOutput;  // total ÷ output tokens × 10⁶ (as `verdict tco` $/1M output tokens)
    std::optional<double> usdPerMtokAll;     // total ÷ (prompt + output) tokens × 10⁶
    std::vector<std::string> notes;        // cached tokens at the input price, cached > prompt clamped, ...
};

// Prices `tokens` with `price`. Never fails: what is unknown is nullopt and said in notes.
EndpointCost endpointCost(const ModelPrice& price, BilledTokens tokens);

// {provider, model, prices: {input, cached_input, output: PRICE}, tokens: {prompt, cached_prompt,
//  output, reasoning, requests}, usd_total, input_usd, cached_input_usd, output_usd,
//  usd_per_mtok_output, usd_per_mtok_all, notes} — the `cost` of `verdict results`.
nlohmann::json endpointCostJson(const std::string& provider, const ModelPrice& price, const BilledTokens& tokens,
                                const EndpointCost& cost);

// {model, input, cached_input, output: {value, source, as_of[, url, note]}} and back (missing
// figures read as unknown, naming the field in the source).
nlohmann::json modelPriceJson(const ModelPrice& price);
ModelPrice modelPriceFromJson(const nlohmann::json& j);

// A stored run's cost when it was made through a provider preset (its generation.provider):
// nullopt for other runs. Priced with the prices the run recorded when it was made
// (generation.provider.price; "price_source": "run"), else — runs from before they were recorded
// — with `catalog`'s current ones ("price_source": "catalog"); {provider, model, usd_total: null,
// reason} when neither has the model's price.
std::optional<nlohmann::json> runCostJson(const RunRecord& run, const std::vector<RunItemRecord>& items,
                                          const ProviderCatalog& catalog);

}  // namespace verdict::core
