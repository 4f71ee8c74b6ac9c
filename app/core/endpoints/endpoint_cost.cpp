#include "core/endpoints/endpoint_cost.h"

#include <algorithm>

namespace verdict::core {
namespace {

using nlohmann::json;

int64_t countAt(const json& details, const char* key) {
    if (!details.is_object()) return 0;
    const auto it = details.find(key);
    if (it == details.end() || !it->is_number_integer()) return 0;
    return std::max<int64_t>(0, it->get<int64_t>());
}

json optionalJson(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json priceJson(const PriceFigure& f) {
    json j = {{"value", optionalJson(f.value)}, {"source", f.source}, {"as_of", f.asOf}};
    if (!f.url.empty()) j["url"] = f.url;
    if (!f.note.empty()) j["note"] = f.note;
    return j;
}

}  // namespace

int64_t billedOutputTokens(int64_t completion, int64_t reasoning) {
    completion = std::max<int64_t>(0, completion);
    reasoning = std::max<int64_t>(0, reasoning);
    return reasoning > completion ? completion + reasoning : completion;
}

BilledTokens runBilledTokens(const std::vector<RunItemRecord>& items) {
    BilledTokens t;
    for (const RunItemRecord& r : items) {
        ++t.requests;
        const bool loglik = r.details.is_object() && r.details.contains("logprobs");
        if (loglik) {
            t.prompt += std::max<int64_t>(0, r.tokensIn) + std::max<int64_t>(0, r.tokensOut);
            continue;
        }
        t.prompt += std::max<int64_t>(0, r.tokensIn);
        t.cachedPrompt += countAt(r.details, "cached_tokens");
        const int64_t reasoning = countAt(r.details, "reasoning_tokens");
        t.output += billedOutputTokens(r.tokensOut, reasoning);
        t.reasoning += reasoning;
    }
    return t;
}

EndpointCost endpointCost(const ModelPrice& price, BilledTokens t) {
    EndpointCost c;
    if (t.cachedPrompt > t.prompt) {
        c.notes.push_back("the server reported more cached prompt tokens (" + std::to_string(t.cachedPrompt) +
                          ") than prompt tokens; counted as all cached");
        t.cachedPrompt = t.prompt;
    }
    const double uncached = static_cast<double>(t.prompt - t.cachedPrompt);
    const double cached = static_cast<double>(t.cachedPrompt);
    if (price.input.value) c.inputUsd = uncached * *price.input.value / 1e6;
    if (t.cachedPrompt == 0) {
        c.cachedInputUsd = 0.0;
    } else if (price.cachedInput.value) {
        c.cachedInputUsd = cached * *price.cachedInput.value / 1e6;
    } else if (price.input.value) {
        c.cachedInputUsd = cached * *price.input.value / 1e6;
        c.notes.push_back("no cached-input price: the " + std::to_string(t.cachedPrompt) +
                          " cached prompt tokens are billed at the input price (an upper bound)");
    }
    if (price.output.value) c.outputUsd = static_cast<double>(t.output) * *price.output.value / 1e6;
    if (!price.input.value) c.notes.push_back("no input price for " + price.model + ": " + price.input.source);
    if (!price.output.value) c.notes.push_back("no output price for " + price.model + ": " + price.output.source);
    if (c.inputUsd && c.cachedInputUsd && c.outputUsd) {
        c.usdTotal = *c.inputUsd + *c.cachedInputUsd + *c.outputUsd;
        if (t.output > 0) c.usdPerMtokOutput = *c.usdTotal / static_cast<double>(t.output) * 1e6;
        if (t.prompt + t.output > 0) c.usdPerMtokAll = *c.usdTotal / static_cast<double>(t.prompt + t.output) * 1e6;
    }
    return c;
}

json endpointCostJson(const std::string& provider, const ModelPrice& price, const BilledTokens& t, const EndpointCost& c) {
    return {{"provider", provider},
            {"model", price.model},
            {"prices", {{"input", priceJson(price.input)}, {"cached_input", priceJson(price.cachedInput)}, {"output", priceJson(price.output)}}},
            {"tokens", {{"prompt", t.prompt}, {"cached_prompt", t.cachedPrompt}, {"output", t.output}, {"reasoning", t.reasoning},
                        {"requests", t.requests}}},
            {"usd_total", optionalJson(c.usdTotal)},
            {"input_usd", optionalJson(c.inputUsd)},
            {"cached_input_usd", optionalJson(c.cachedInputUsd)},
            {"output_usd", optionalJson(c.outputUsd)},
            {"usd_per_mtok_output", optionalJson(c.usdPerMtokOutput)},
            {"usd_per_mtok_all", optionalJson(c.usdPerMtokAll)},
            {"notes", c.notes}};
}

json modelPriceJson(const ModelPrice& price) {
    return {{"model", price.model},
            {"input", priceJson(price.input)},
            {"cached_input", priceJson(price.cachedInput)},
            {"output", priceJson(price.output)}};
}

ModelPrice modelPriceFromJson(const json& j) {
    auto figure = [&](const char* key) {
        PriceFigure f;
        if (!j.is_object() || !j.contains(key) || !j.at(key).is_object()) {
            f.source = std::string("not recorded (") + key + ")";
            return f;
        }
        const json& o = j.at(key);
        if (o.contains("value") && o.at("value").is_number()) f.value = o.at("value").get<double>();
        auto text = [&](const char* k) { return o.contains(k) && o.at(k).is_string() ? o.at(k).get<std::string>() : std::string(); };
        f.source = text("source");
        f.asOf = text("as_of");
        f.url = text("url");
        f.note = text("note");
        return f;
    };
    ModelPrice p;
    if (j.is_object() && j.contains("model") && j.at("model").is_string()) p.model = j.at("model").get<std::string>();
    p.input = figure("input");
    p.cachedInput = figure("cached_input");
    p.output = figure("output");
    return p;
}

std::optional<json> runCostJson(const RunRecord& run, const std::vector<RunItemRecord>& items, const ProviderCatalog& catalog) {
    if (!run.generation.is_object() || !run.generation.contains("provider")) return std::nullopt;
    const json& p = run.generation.at("provider");
    if (!p.is_object() || !p.contains("id") || !p.at("id").is_string()) return std::nullopt;
    const std::string id = p.at("id").get<std::string>();
    const std::string model = p.contains("model") && p.at("model").is_string() ? p.at("model").get<std::string>() : "";
    const auto unpriced = [&](const std::string& reason) {
        return json{{"provider", id}, {"model", model}, {"usd_total", nullptr}, {"reason", reason}};
    };
    const BilledTokens tokens = runBilledTokens(items);
    if (p.contains("price") && p.at("price").is_object()) {
        const ModelPrice recorded = modelPriceFromJson(p.at("price"));
        json out = endpointCostJson(id, recorded, tokens, endpointCost(recorded, tokens));
        out["price_source"] = "run";
        return out;
    }
    const ProviderPreset* preset = catalog.find(id);
    if (!preset) return unpriced("provider '" + id + "' is not in the catalog (a user preset that is gone?)");
    if (preset->kind == ProviderKind::SelfHosted)
        return unpriced("self-hosted: the cost is the TCO of the hardware (verdict tco " + std::to_string(run.id) + " --hardware ID)");
    const ModelPrice* price = preset->priceOf(model);
    if (!price)
        return unpriced("no price for model '" + model + "' in provider " + id +
                        " (add it to the user providers file: docs/tco.md)");
    json out = endpointCostJson(id, *price, tokens, endpointCost(*price, tokens));
    out["price_source"] = "catalog";
    return out;
}

}  // namespace verdict::core
