// The options shared by every command that talks to an OpenAI-compatible endpoint (run, compare,
// judge, load): which provider preset, where the API key comes from and how https is checked.
//   --provider ID        a preset of the provider catalog (verdict endpoints list): its base URL
//                        when MODEL is just a model name, its key variable as the default, its key
//                        header (Azure: api-key:) and routes (Azure: /deployments/MODEL/...?api-version=)
//   --providers-file P   the user provider catalog merged over the built-in one
//   --resource NAME      fills {resource} of the preset's base URL (Azure: https://NAME.openai.azure.com)
//   --api-version V      the preset's {api_version} (Azure; default the preset's)
//   --api-key-env NAME   the key's environment variable (default the preset's key variable, else
//                        VERDICT_API_KEY; a NAME given but unset is an error). Keys never come from
//                        the command line itself, where `ps` and shell histories would show them.
//   --ca-file FILE       https: trust this PEM file (a private CA, a self-signed server)
//   --insecure           https: skip the certificate check; a warning is printed and the results
//                        record it (their device reads "endpoint (TLS NOT VERIFIED: --insecure)")
//   --max-concurrency N  requests in flight to the endpoint at most (default the preset's
//                        max_concurrency; 0 no cap): EndpointApi::maxConcurrency
#pragma once

#include "cli/args.h"
#include "core/endpoints/endpoint_api.h"

#include <string>
#include <vector>

namespace verdict::cli {

struct EndpointAccess {
    std::string apiKey;
    std::string caFile;
    bool insecure = false;
    std::string provider;          // --provider ID ("" none)
    std::string providerBaseUrl;   // that preset's base URL, {resource} filled ("" when it could not be)
    std::string providerBaseUrlError;  // why not (--resource missing), said when a bare model name needs it
    core::EndpointApi api;         // its routes, query and key header (OpenAI's defaults without a preset)
};

// The table rows; `forWhat` starts each help text ("endpoint runs", "endpoints", ...).
std::vector<OptionSpec> endpointOptionSpecs(const std::string& forWhat);

// Reads them. Returns kExitOk and fills *out, or prints "verdict CMD: reason" and returns
// kExitUsage (--api-key-env names an unset variable; --ca-file and --insecure together; a hosted
// preset whose key variable is not set; --resource missing for a preset that needs it) or
// kExitBadInput (a CA file that cannot be read, an unknown provider, a malformed providers file).
int readEndpointOptions(const std::string& command, const Args& args, EndpointAccess* out);

// With a provider: MODEL as the commands take it. A URL ("https://host/v1 [MODEL]") or a GGUF file
// (ends in .gguf, or exists) stays as given; anything else is a model name of the provider and
// becomes "BASE_URL MODEL". Without a provider: unchanged. Fails when the base URL needs --resource.
Result<std::string> providerModelRef(const EndpointAccess& access, const std::string& model);

}  // namespace verdict::cli
