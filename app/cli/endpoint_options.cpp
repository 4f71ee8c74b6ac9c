#include "cli/endpoint_options.h"

#include "cli/commands.h"

#include <cstdlib>
#include <fstream>
#include <iostream>

namespace verdict::cli {

std::vector<OptionSpec> endpointOptionSpecs(const std::string& forWhat) {
    return {
        {"api-key-env", true, "VAR", forWhat + ": environment variable with the API key (default VERDICT_API_KEY)"},
        {"ca-file", true, "FILE", forWhat + " over https: trust this PEM certificate file instead of the system CA store"},
        {"insecure", false, "", forWhat + " over https: do not verify the certificate (recorded with the results)"},
    };
}

int readEndpointOptions(const std::string& command, const Args& args, EndpointAccess* out) {
    *out = {};
    if (const auto var = args.value("api-key-env")) {
        const char* k = std::getenv(var->c_str());
        if (!k || !*k) return fail(command, "--api-key-env " + *var + ": the environment variable is not set", kExitUsage);
        out->apiKey = k;
    } else if (const char* k = std::getenv("VERDICT_API_KEY")) {
        out->apiKey = k;
    }
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
    return kExitOk;
}

}  // namespace verdict::cli
