#include "cli/endpoint_options.h"

#include "cli/commands.h"
#include "core/endpoints/provider_catalog.h"
#include "core/run/backend_factory.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

namespace verdict::cli {

std::vector<OptionSpec> endpointOptionSpecs(const std::string& forWhat) {
    return {
        {"provider", true, "ID", forWhat + ": a provider preset (verdict endpoints list): base URL, key variable, key header"},
        {"providers-file", true, "PATH", forWhat + ": user provider catalog (default: $XDG_CONFIG_HOME/verdict/providers.json)"},
        {"resource", true, "NAME", forWhat + " with --provider azure-openai: the resource name of https://NAME.openai.azure.com"},
        {"api-version", true, "V", forWhat + " with --provider azure-openai: the api-version (default: the preset's)"},
        {"api-key-env", true, "VAR", forWhat + ": environment variable with the API key (default: the preset's, else VERDICT_API_KEY)"},
        {"ca-file", true, "FILE", forWhat + " over https: trust this PEM certificate file instead of the system CA store"},
        {"insecure", false, "", forWhat + " over https: do not verify the certificate (recorded with the results)"},
        {"max-concurrency", true, "N", forWhat + ": requests in flight at most (default: the preset's max_concurrency; 0: no cap)"},
    };
}

namespace {

// Fills the provider fields; returns kExitOk or the failure's exit code (already printed).
int readProvider(const std::string& command, const Args& args, EndpointAccess* out, std::string* keyEnv,
                 bool* keyExpected) {
    const auto id = args.value("provider");
    if (!id) {
        for (const char* o : {"resource", "api-version"})
            if (args.value(o)) return fail(command, std::string("--") + o + " needs --provider ID", kExitUsage);
        return kExitOk;
    }
    auto catalog = core::loadProviderCatalog(args.value("providers-file"));
    if (!catalog) return fail(command, catalog.error().message, kExitBadInput);
    auto preset = catalog->lookup(*id);
    if (!preset) return fail(command, "--provider: " + preset.error().message + " (verdict endpoints list)", kExitBadInput);
    core::ProviderEndpointOptions po;
    po.resource = args.value("resource").value_or("");
    po.apiVersion = args.value("api-version").value_or("");
    auto ep = core::providerEndpoint(**preset, po);
    if (!ep) {
        // A URL given as MODEL needs no base URL from the preset: only a bare model name fails.
        po.baseUrl = "http://unused";
        auto routesOnly = core::providerEndpoint(**preset, po);
        if (!routesOnly) return fail(command, routesOnly.error().message, kExitUsage);
        out->providerBaseUrlError = ep.error().message;
        ep = std::move(routesOnly);
        ep->baseUrl.clear();
    }
    out->provider = (*preset)->id;
    out->providerBaseUrl = ep->baseUrl;
    out->api = ep->api;
    *keyEnv = (*preset)->keyEnv;
    *keyExpected = (*preset)->kind == core::ProviderKind::Hosted && (*preset)->auth != core::EndpointAuth::None;
    return kExitOk;
}

}  // namespace

int readEndpointOptions(const std::string& command, const Args& args, EndpointAccess* out) {
    *out = {};
    std::string presetKeyEnv;
    bool keyExpected = false;
    if (int rc = readProvider(command, args, out, &presetKeyEnv, &keyExpected); rc != kExitOk) return rc;
    if (const auto var = args.value("api-key-env")) {
        const char* k = std::getenv(var->c_str());
        if (!k || !*k) return fail(command, "--api-key-env " + *var + ": the environment variable is not set", kExitUsage);
        out->apiKey = k;
    } else if (const char* k = presetKeyEnv.empty() ? nullptr : std::getenv(presetKeyEnv.c_str()); k && *k) {
        out->apiKey = k;
    } else if (const char* v = std::getenv("VERDICT_API_KEY")) {
        out->apiKey = v;
    }
    if (out->apiKey.empty() && keyExpected)
        return fail(command,
                    "--provider " + out->provider + ": no API key: set " +
                        (presetKeyEnv.empty() ? std::string("VERDICT_API_KEY") : presetKeyEnv + " (or VERDICT_API_KEY)") +
                        ", or name another variable with --api-key-env VAR",
                    kExitUsage);
    out->insecure = args.has("insecure");
    if (const auto ca = args.value("ca-file")) {
        if (out->insecure) return fail(command, "--ca-file and --insecure contradict each other; give one", kExitUsage);
        std::ifstream f(*ca);
        if (!f) return fail(command, "--ca-file " + *ca + ": cannot read the file", kExitBadInput);
        std::string line;
        bool pem = false;
        for (int n = 0; !pem && n < 100000 && std::getline(f, line); ++n) pem = line.rfind("-----BEGIN CERTIFICATE-----", 0) == 0;
        if (!pem) return fail(command, "--ca-file " + *ca + ": no PEM certificate in it (-----BEGIN CERTIFICATE-----)", kExitBadInput);
        out->caFile = *ca;
    }
    if (out->insecure)
        std::cerr << "verdict " << command
                  << ": WARNING: --insecure: https certificates are not verified; the results record this\n";
    if (args.value("max-concurrency")) {
        auto cap = args.integer("max-concurrency", 0);
        if (!cap || *cap < 0 || *cap > 100000)
            return fail(command, "--max-concurrency must be a whole number 0..100000 (0: no cap)", kExitUsage);
        out->api.maxConcurrency = *cap;
    }
    return kExitOk;
}

Result<std::string> providerModelRef(const EndpointAccess& access, const std::string& model) {
    if (access.provider.empty() || model.empty() || core::isEndpointRef(model)) return model;
    struct stat st {};
    const bool gguf = model.size() > 5 && model.compare(model.size() - 5, 5, ".gguf") == 0;
    if (gguf || stat(model.c_str(), &st) == 0) return model;
    if (access.providerBaseUrl.empty()) return Error{access.providerBaseUrlError};
    if (model.find(' ') != std::string::npos) return Error{"'" + model + "' is not a model name (it holds a space)"};
    return access.providerBaseUrl + " " + model;
}

}  // namespace verdict::cli
