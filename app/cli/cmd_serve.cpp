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
#include "cli/signal_stop.h"
#include "core/net/http.h"
#include "core/serve/openai_server.h"
#include "verdict/engine/model.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

namespace verdict::cli {

int runServe(const std::vector<std::string>& argv) {
    const std::vector<OptionSpec> specs = {
        {"host", true, "ADDR", "address to bind (default 127.0.0.1; others need an API key)"},
        {"port", true, "N", "port (default 8080; 0 = any free port)"},
        {"api-key", true, "KEY", "require 'Authorization: Bearer KEY' (default: $VERDICT_API_KEY)"},
        {"tls-cert", true, "PEM", "serve https with this certificate (chain); needs --tls-key"},
        {"tls-key", true, "PEM", "the certificate's private key (PEM, no passphrase)"},
        {"parallel", true, "N", "sequences decoded together, 1..64 (default 8)", false, 'P'},
        {"ctx", true, "N", "context per sequence (default: min(training context, 4096))", false, 'c'},
        {"threads", true, "N", "compute threads (default: physical cores)", false, 't'},
        deviceOptionSpec(),
        gpuLayersOptionSpec(),
        {"model-id", true, "NAME", "model name clients use (default: the file name)"},
        {"max-tokens-limit", true, "N", "largest max_tokens a request may ask for (default 4096)"},
        {"max-body", true, "BYTES", "largest request body (default 8388608)"},
        {"json", false, "", "print one JSON line once listening"},
        {"help", false, "", "show this help", false, 'h'},
    };
    auto args = Args::parse(argv, specs);
    if (!args) return fail("serve", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict serve MODEL [--host 127.0.0.1] [--port 8080] [--api-key KEY] [--tls-cert PEM --tls-key PEM] [--parallel 8] "
                  "[--device DEV] [--gpu-layers N] [--json]",
                  formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("serve", "expected one MODEL file", kExitUsage);
    auto port = args->integer("port", 8080);
    auto parallel = args->integer("parallel", 8);
    auto ctx = args->integer("ctx", 0);
    auto threads = args->integer("threads", 0);
    auto limit = args->integer("max-tokens-limit", 4096);
    auto maxBody = args->integer("max-body", 8 * 1024 * 1024);
    for (const auto* r : {&port, &parallel, &ctx, &threads, &limit, &maxBody})
        if (!*r) return fail("serve", r->error().message, kExitUsage);
    if (*port < 0 || *port > 65535) return fail("serve", "--port must be 0..65535", kExitUsage);
    if (*parallel < 1 || *parallel > 64) return fail("serve", "--parallel must be 1..64", kExitUsage);
    const std::string host = args->value("host").value_or("127.0.0.1");
    std::string apiKey = args->value("api-key").value_or("");
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
    const std::string tlsCert = args->value("tls-cert").value_or("");
    const std::string tlsKey = args->value("tls-key").value_or("");
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
    ModelOptions mo;
    mo.threads = static_cast<int>(*threads);
    mo.cancel = signals.cancelFlag();
    mo.device = device;
    mo.gpuLayers = gpuLayers;
    auto model = Model::open(args->positionals()[0], mo);
    if (!model) return fail("serve", model.error().message, openFailureExitCode(device));
    core::ServeOptions so;
    so.modelId = args->value("model-id").value_or("");
    so.apiKey = apiKey;
    so.maxSequences = static_cast<int>(*parallel);
    so.nCtx = *ctx;
    so.maxTokensLimit = static_cast<int>(*limit);
    auto server = core::OpenAiServer::create(*model, so);
    if (!server) return fail("serve", server.error().message, openFailureExitCode(device));
    core::net::HttpServerOptions ho;
    ho.host = host;
    ho.port = static_cast<int>(*port);
    ho.maxBodyBytes = static_cast<size_t>(*maxBody);
    ho.tlsCertFile = tlsCert;
    ho.tlsKeyFile = tlsKey;
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
                                    {"parallel", *parallel},
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
