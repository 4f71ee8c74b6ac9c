// Benchmark of the load generator (issue 20): N concurrent streaming requests against a fake
// OpenAI server in this process, each streaming M tokens one every ITL ms. Prints JSON: what
// completed, the generator's scheduling delay, and its own CPU time per request and per token
// (CLOCK_THREAD_CPUTIME_ID of the event-loop thread), next to the latencies a perfect client would
// see (TTFT ~ 0, E2E ~ (M-1) x ITL). Not a ctest test.
//   bench_load [--streams 1000] [--tokens 64] [--itl-ms 20] [--rounds 3] [--server evhttp|httplib]
// --server evhttp (the default): evhttp_fake_server.h, one libevent thread serving every stream, so the
// server is not what limits a thousand streams on 2 cores. --server httplib: the tests' fake server
// (tests/common/fake_openai_server.h, cpp-httplib, a thread per connection), whose threads at
// 1,000 streams take both cores and leave requests unserved; kept to compare with.
#include "core/perf/load_runner.h"
#include "evhttp_fake_server.h"
#include "fake_openai_server.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

using namespace verdict;

int main(int argc, char** argv) {
    int streams = 1000, tokens = 64, itlMs = 20, rounds = 3;
    std::string serverKind = "evhttp";
    for (int i = 1; i < argc; i += 2) {
        const std::string k = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "option %s needs a value\n", argv[i]);
            return 1;
        }
        const int v = std::atoi(argv[i + 1]);
        if (k == "--server") serverKind = argv[i + 1];
        else if (k == "--streams") streams = v;
        else if (k == "--tokens") tokens = v;
        else if (k == "--itl-ms") itlMs = v;
        else if (k == "--rounds") rounds = v;
        else {
            std::fprintf(stderr, "unknown option %s\n", argv[i]);
            return 1;
        }
    }
    rlimit lim{};
    getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = lim.rlim_max;  // the server's sockets and the client's, in one process
    setrlimit(RLIMIT_NOFILE, &lim);

    std::unique_ptr<test::EvhttpFakeServer> evhttpServer;
    std::unique_ptr<test::FakeOpenAiServer> httplibServer;
    std::string baseUrl;
    if (serverKind == "evhttp") {
        evhttpServer = std::make_unique<test::EvhttpFakeServer>(test::EvhttpFakeOptions{.interTokenDelayMs = itlMs});
        if (!evhttpServer->ok()) {
            std::fprintf(stderr, "fake server (evhttp): %s\n", evhttpServer->error().c_str());
            return 1;
        }
        baseUrl = evhttpServer->baseUrl();
    } else if (serverKind == "httplib") {
        httplibServer = std::make_unique<test::FakeOpenAiServer>(test::FakeOpenAiOptions{
            .exactTokens = true, .interTokenDelayMs = itlMs, .threads = static_cast<size_t>(streams) + 32});
        if (!httplibServer->ok()) {
            std::fprintf(stderr, "fake server (httplib): %s\n", httplibServer->error().c_str());
            return 1;
        }
        baseUrl = httplibServer->baseUrl();
    } else {
        std::fprintf(stderr, "--server %s: expected evhttp or httplib\n", serverKind.c_str());
        return 1;
    }
    core::EndpointConfig e;
    e.baseUrl = baseUrl;
    e.model = "fake-model";
    core::LoadSpec spec;
    spec.concurrency = {streams};
    spec.requests = static_cast<int64_t>(streams) * rounds;
    spec.maxTokens = tokens;
    spec.promptWords = 32;
    spec.maxRetries = 0;
    const double serverCpu0 = evhttpServer ? evhttpServer->loopCpuMs() : 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = core::runLoad(e, spec);
    const double wallS = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double serverCpuMs = evhttpServer ? evhttpServer->loopCpuMs() - serverCpu0 : 0;
    if (!r) {
        std::fprintf(stderr, "%s\n", r.error().message.c_str());
        return 1;
    }
    const core::LoadLevelResult& l = r->front();
    const double requests = static_cast<double>(l.requests.size());
    const double outTokens = static_cast<double>(l.metrics.outputTokens);
    nlohmann::json out = {
        {"server", serverKind},
        {"streams", streams},
        {"tokens_per_request", tokens},
        {"server_itl_ms", itlMs},
        {"requests", l.requests.size()},
        {"completed", l.metrics.requests},
        {"failed", l.metrics.failed},
        {"errors", l.errors},
        {"wall_s", wallS},
        {"requests_per_s", l.metrics.requestsPerS},
        {"output_tok_per_s", l.metrics.outputTokPerS},
        {"ttft_ms", core::toJson(l.metrics.ttftMs)},
        {"e2e_ms", core::toJson(l.metrics.e2eMs)},
        {"ideal_e2e_ms", static_cast<double>(tokens - 1) * itlMs},
        {"schedule_delay_ms", core::toJson(l.scheduleDelay)},
        {"behind_schedule", l.behindSchedule},
        {"client_cpu_ms", l.clientCpuMs},
        {"client_cpu_us_per_request", requests > 0 ? l.clientCpuMs * 1000 / requests : 0},
        {"client_cpu_us_per_token", outTokens > 0 ? l.clientCpuMs * 1000 / outTokens : 0},
        {"client_cpu_share_of_wall", l.clientCpuMs / 1000 / wallS},
        {"connections_seen_by_server", evhttpServer ? evhttpServer->connections() : httplibServer->connections()},
        {"requests_seen_by_server", evhttpServer ? evhttpServer->requests() : httplibServer->requests()},
        // Only the evhttp server counts the streams open at once (null with httplib).
        {"server_max_concurrent",
         evhttpServer ? nlohmann::json(evhttpServer->maxConcurrentStreams()) : nlohmann::json()},
        {"server_client_disconnects", evhttpServer ? nlohmann::json(evhttpServer->disconnects()) : nlohmann::json()},
        // The evhttp server's loop thread: it shares the cores with the generator (null with httplib,
        // whose work is spread over its threads).
        {"server_cpu_ms", evhttpServer ? nlohmann::json(serverCpuMs) : nlohmann::json()},
        {"server_cpu_share_of_wall", evhttpServer ? nlohmann::json(serverCpuMs / 1000 / wallS) : nlohmann::json()},
    };
    std::cout << out.dump(2) << "\n";
    return l.metrics.failed == 0 ? 0 : 2;
}
