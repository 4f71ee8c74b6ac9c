// verdict serve MODEL [--host H] [--port P] [--api-key KEY] [--tls-cert PEM --tls-key PEM] [--parallel N] [--ctx N]
//               [--device DEV] [--gpu-layers N] [--json]
// The OpenAI-compatible server (core/serve/openai_server.h) until SIGINT/SIGTERM. Binds to
// 127.0.0.1 by default; any other address needs an API key (--api-key or $VERDICT_API_KEY).
// --tls-cert/--tls-key: https (the URL printed says so). With --json one line {"url": ...,
// "model": ..., ...} is printed once it listens (so a script can use --port 0 and read the port).
// Routes and shapes: docs/serve.md.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/options.h"
#include "cli/signal_stop.h"
#include "core/net/http.h"
#include "core/run/device_check.h"
#include "core/serve/openai_server.h"
#include "verdict/engine/model.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <thread>

namespace verdict::cli {

namespace {

// What `verdict serve` is asked: the server's own options (core/serve/openai_server.h) and the
// HTTP listener's (core/net/http.h), whose defaults are the ones --help shows.
struct ServeSettings {
    core::ServeOptions serve;
    core::net::HttpServerOptions http;
    int threads = 0;
    std::string apiKey;  // --api-key; "" = $VERDICT_API_KEY
};

const OptionTable<ServeSettings>& serveOptions() {
    using S = ServeSettings;
    static const OptionTable<S> table = {
        textOption<S>("host", "ADDR", "address to bind; others than loopback need an API key",
                      [](auto& s) -> auto& { return s.http.host; }),
        intOption<S>("port", "N", "port; 0 = any free port", [](auto& s) -> auto& { return s.http.port; }, 0, 65535),
        textOption<S>("api-key", "KEY", "require 'Authorization: Bearer KEY' (default: $VERDICT_API_KEY)",
                      [](auto& s) -> auto& { return s.apiKey; }),
        textOption<S>("tls-cert", "PEM", "serve https with this certificate (chain); needs --tls-key",
                      [](auto& s) -> auto& { return s.http.tlsCertFile; }),
        textOption<S>("tls-key", "PEM", "the certificate's private key (PEM, no passphrase)",
                      [](auto& s) -> auto& { return s.http.tlsKeyFile; }),
        intOption<S>("parallel", "N", "sequences decoded together", [](auto& s) -> auto& { return s.serve.maxSequences; }, 1, 64,
                     'P'),
        intOption<S>("ctx", "N", "context per sequence; 0 = min(training context, 4096)", [](auto& s) -> auto& { return s.serve.nCtx; },
                     0, std::numeric_limits<int32_t>::max(), 'c'),
        intOption<S>("threads", "N", kThreadsHelp, [](auto& s) -> auto& { return s.threads; }, 0, kMaxThreads, 't'),
        textOption<S>("model-id", "NAME", "model name clients use (default: the file name)",
                      [](auto& s) -> auto& { return s.serve.modelId; }),
        intOption<S>("max-tokens-limit", "N", "largest max_tokens a request may ask for",
                     [](auto& s) -> auto& { return s.serve.maxTokensLimit; }, 1, std::numeric_limits<int32_t>::max()),
        intOption<S>("max-body", "BYTES", "largest request body", [](auto& s) -> auto& { return s.http.maxBodyBytes; }, 1,
                     std::numeric_limits<int64_t>::max()),
    };
    return table;
}

}  // namespace

int runServe(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(serveOptions(), ServeSettings{});
    for (OptionSpec spec : {deviceOptionSpec(), gpuLayersOptionSpec(), jsonOption("print one JSON line once listening"), helpOption()})
        specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("serve", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict serve MODEL [--host 127.0.0.1] [--port 8080] [--api-key KEY] [--tls-cert PEM --tls-key PEM] [--parallel 8] "
                  "[--device DEV] [--gpu-layers N] [--json]",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("serve", "expected one MODEL file", kExitUsage);
    ServeSettings settings;
    if (auto e = applyOptions(serveOptions(), *args, settings)) return fail("serve", *e, kExitUsage);
    const std::string& host = settings.http.host;
    std::string apiKey = settings.apiKey;
    if (args->has("api-key"))  // on the command line, every user of this machine reads it in `ps`
        std::fprintf(stderr, "verdict serve: warning: --api-key is visible to other users in the process list; "
                             "prefer the environment: VERDICT_API_KEY=... verdict serve ...\n");
    if (apiKey.empty())
        if (const char* k = std::getenv("VERDICT_API_KEY")) apiKey = k;
    // A key with blanks or control characters (a key of spaces protects nothing, and a client
    // cannot send one as a header) is refused.
    bool printable = true;
    for (unsigned char c : apiKey) printable = printable && c >= 0x21 && c != 0x7f;
    if (!printable)
        return fail("serve", "the API key must be visible characters without spaces (a blank or control character was given)",
                    kExitUsage);
    const bool loopback = host == "127.0.0.1" || host == "::1" || host == "localhost";
    if (!apiKey.empty() && apiKey.size() < 8 && !loopback)
        return fail("serve", "an API key for a non-loopback address must have at least 8 characters", kExitUsage);
    if (!loopback && apiKey.empty())
        return fail("serve", "binding to " + host + " needs an API key (--api-key or $VERDICT_API_KEY)", kExitUsage);
    const std::string& tlsCert = settings.http.tlsCertFile;
    const std::string& tlsKey = settings.http.tlsKeyFile;
    if (tlsCert.empty() != tlsKey.empty()) return fail("serve", "--tls-cert and --tls-key go together", kExitUsage);
    // Before the model loads: a missing file is said at once (its contents are checked when the server starts).
    for (const auto& [option, file] : {std::pair{"--tls-cert", tlsCert}, std::pair{"--tls-key", tlsKey}})
        if (!file.empty() && !std::filesystem::is_regular_file(file))
            return fail("serve", std::string(option) + " " + file + ": no such file", kExitUsage);
    std::string device;
    if (int rc = readDeviceOption("serve", *args, &device); rc != kExitOk) return rc;
    int gpuLayers = -1;
    if (int rc = readGpuLayersOption("serve", *args, device, &gpuLayers); rc != kExitOk) return rc;

    SignalStop signals("serve");  // before any thread starts
    auto model = core::openLocalModel(args->positionals()[0], settings.threads, device, gpuLayers, signals.cancelFlag());
    if (!model) return fail("serve", model.error().message, openFailureExitCode(device));
    core::ServeOptions so = settings.serve;
    so.apiKey = apiKey;
    auto server = core::OpenAiServer::create(*model, so);
    if (!server) return fail("serve", server.error().message, openFailureExitCode(device));
    const core::net::HttpServerOptions& ho = settings.http;
    core::OpenAiServer* raw = server->get();
    auto http = core::net::HttpServer::start(ho, [raw](const core::net::HttpRequest& req, core::net::HttpResponder& r) {
        raw->handle(req, r);
    });
    if (!http) return fail("serve", http.error().message, kExitRuntime);
    const std::string scheme = (*http)->tls() ? "https" : "http";
    const std::string url = scheme + "://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                            std::to_string((*http)->port());
    if (args->has("json")) {
        std::cout << nlohmann::json{{"url", url},
                                    {"model", so.modelId.empty() ? std::filesystem::path(args->positionals()[0]).filename().string()
                                                                 : so.modelId},
                                    {"parallel", so.maxSequences},
                                    {"device", (*model)->device()},
                                    {"api_key_required", !apiKey.empty()},
                                    {"tls", (*http)->tls()}}
                         .dump()
                  << std::endl;
    } else {
        std::cerr << "verdict serve: listening on " << url << " (OpenAI-compatible: /v1/models, /v1/completions, "
                  << "/v1/chat/completions, /health, /metrics); Ctrl-C stops\n";
    }
    while (!signals.cancelFlag()->load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    (*http)->stop();
    return kExitOk;
}

}  // namespace verdict::cli
