// The options shared by every command that talks to an OpenAI-compatible endpoint (run, compare,
// judge, load): where the API key comes from and how https is checked.
//   --api-key-env NAME   the key's environment variable (default VERDICT_API_KEY; a NAME given but
//                        unset is an error). Keys never come from the command line itself, where
//                        `ps` and shell histories would show them.
//   --ca-file FILE       https: trust this PEM file (a private CA, a self-signed server)
//   --insecure           https: skip the certificate check; a warning is printed and the results
//                        record it (their device reads "endpoint (TLS NOT VERIFIED: --insecure)")
#pragma once

#include "cli/args.h"

#include <string>
#include <vector>

namespace verdict::cli {

struct EndpointAccess {
    std::string apiKey;
    std::string caFile;
    bool insecure = false;
};

// The three table rows; `forWhat` starts each help text ("endpoint runs", "endpoints", ...).
std::vector<OptionSpec> endpointOptionSpecs(const std::string& forWhat);

// Reads them. Returns kExitOk and fills *out, or prints "verdict CMD: reason" and returns
// kExitUsage (--api-key-env names an unset variable; --ca-file and --insecure together) or
// kExitBadInput (a CA file that cannot be read).
int readEndpointOptions(const std::string& command, const Args& args, EndpointAccess* out);

}  // namespace verdict::cli
