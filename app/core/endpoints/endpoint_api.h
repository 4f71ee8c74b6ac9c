// How requests to an OpenAI-compatible endpoint are addressed and authenticated: the routes under
// the base URL, the query every request carries, and where the key goes. The defaults are the
// OpenAI layout (Bearer key, /v1/... routes) that every command used before provider presets; a
// preset (core/endpoints/provider_catalog.h, providerEndpointApi) fills them for providers that
// differ (Azure OpenAI: an `api-key:` header, /deployments/{model}/... and ?api-version=...).
// One place builds the URLs and headers from it: core/perf/load_runner.h (endpointUrl,
// endpointHeaders), used by the suite runner's endpoint backend, the load test and the judge.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace verdict::core {

enum class EndpointAuth {
    Bearer,        // Authorization: Bearer KEY
    ApiKeyHeader,  // api-key: KEY (Azure OpenAI)
    None,          // no key is ever sent
};

struct EndpointApi {
    EndpointAuth auth = EndpointAuth::Bearer;
    // Paths appended to the API root (the base URL without a trailing "/v1"). "{model}" is
    // replaced by the served model's name, percent-encoded. An empty completions route: the
    // provider has no text-completions API (requests that need it fail, naming the provider).
    std::string chatRoute = "/v1/chat/completions";
    std::string completionsRoute = "/v1/completions";
    std::string modelsRoute = "/v1/models";
    std::string query;     // appended to every route after '?': "api-version=2024-10-21" (Azure); "" none
    std::string provider;  // the preset id these came from ("" none); runs record it with their settings
    // Requests this client keeps in flight to the endpoint at most (0: no cap): the preset's
    // max_concurrency, or --max-concurrency. Suite runs send min(--parallel, cap) at once; a load
    // test refuses a closed-loop level above it and counts open-loop arrivals beyond it as
    // client_overload.
    int64_t maxConcurrency = 0;
    // The preset's prices when the command ran ([{model, input, cached_input, output}], figures as
    // endpoint_cost.h's modelPriceJson writes them; empty without a preset): a run keeps its
    // model's entry, so that its cost does not change when the catalog's prices do.
    nlohmann::json prices = nlohmann::json::array();
};

}  // namespace verdict::core
