// An event-driven fake OpenAI streaming server for the load-generator benchmark (bench_load), on
// libevent's evhttp (Debian libevent-dev): one thread runs one event_base, and every stream is a
// libevent timer on it, so a thousand concurrent streams cost one thread and their sockets. The
// test server (tests/common/fake_openai_server.h, cpp-httplib) holds a thread per connection; at
// 1,000 streams on 2 cores those threads, not the generator, were the limit.
//
// It speaks only what the benchmark needs: GET /v1/models, and POST /v1/chat/completions and
// /v1/completions answering exactly max_tokens pieces " t". Streamed (`"stream": true`): a 200
// text/event-stream reply in chunked transfer, a role-only chunk (chat) and the first piece at
// once, then one piece every interTokenDelayMs, then a finish_reason chunk, the usage chunk (when
// the request asks with stream_options.include_usage, as the generator does) and `data: [DONE]`,
// each chunk shaped as fake_openai_server.h's plus OpenAI's id / object / created / model. So a
// perfect client sees TTFT ~ 0 and E2E ~ (max_tokens - 1) x interTokenDelayMs. Not streamed: the
// whole completion at once. Connections are kept alive; a client that goes away mid-stream ends
// its stream (counted in disconnects()).
#pragma once

#include <sys/time.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <unordered_set>

struct event_base;
struct evhttp;
struct evhttp_request;
struct evhttp_connection;
struct evbuffer;

namespace verdict::test {

struct EvhttpFakeOptions {
    std::string model = "fake-model";  // listed by /v1/models and named in every chunk
    int interTokenDelayMs = 20;        // ms between content chunks (the first leaves with the headers)
    int backlog = 4096;                // listen() backlog: a thousand clients connect at once (the kernel caps it
                                       // at net.core.somaxconn; libevent's default of 128 would drop SYNs)
};

class EvhttpFakeServer {
public:
    // Binds 127.0.0.1 on an ephemeral port and starts serving on its own thread. On failure ok() is
    // false and error() says why; nothing runs then.
    explicit EvhttpFakeServer(EvhttpFakeOptions o);
    // Stops the loop (event_base_loopexit), joins the thread, then frees every connection and the
    // streams still open on them.
    ~EvhttpFakeServer();
    EvhttpFakeServer(const EvhttpFakeServer&) = delete;
    EvhttpFakeServer& operator=(const EvhttpFakeServer&) = delete;

    bool ok() const { return m_error.empty() && m_port > 0; }
    const std::string& error() const { return m_error; }
    int port() const { return m_port; }
    std::string baseUrl() const { return "http://127.0.0.1:" + std::to_string(m_port) + "/v1"; }

    // Counters, safe to read from any thread while the server runs.
    int64_t requests() const { return m_requests.load(); }                // every request, any route
    int64_t completions() const { return m_completions.load(); }          // completion requests answered 200
    int64_t connections() const { return m_connections.load(); }          // distinct client connections (address:port)
    int64_t maxConcurrentStreams() const { return m_maxStreams.load(); }  // most streams open at one time
    int64_t disconnects() const { return m_disconnects.load(); }          // streams whose client left before the end
    // CPU time of the server's loop thread so far, in ms (CLOCK of that thread; -1 when it does not
    // run): what the server took from the cores the generator shares with it.
    double loopCpuMs() const;

private:
    struct Stream;
    friend struct EvhttpCallbacks;  // the C callbacks (evhttp_fake_server.cpp)

    void countRequest(evhttp_request* req);
    void answerModels(evhttp_request* req);
    void answerCompletion(evhttp_request* req, bool chat);
    void startStream(Stream* s);
    void tick(Stream* s);
    void sendChunk(Stream* s, const std::string& event);
    void endStream(Stream* s);     // every piece sent: the tail, then the reply's end
    void clientClosed(Stream* s);  // the connection went away (client, or this server's shutdown)
    void forget(Stream* s);        // frees the stream's timer and state

    EvhttpFakeOptions m_o;
    std::string m_error;
    int m_port = 0;
    int64_t m_created = 0;  // the chunks' "created" (Unix seconds at start)
    event_base* m_base = nullptr;
    evhttp* m_http = nullptr;
    evbuffer* m_chunk = nullptr;     // reused for every chunk: evhttp_send_reply_chunk drains it
    timeval m_itlValue{};            // the inter-token delay
    const timeval* m_itl = nullptr;  // the same as a libevent common timeout (O(1) re-arm), else &m_itlValue
    std::thread m_thread;
    // Loop-thread state: the streams open now, and every peer seen.
    std::unordered_set<Stream*> m_streams;
    std::unordered_set<std::string> m_peers;
    int64_t m_nextId = 0;
    std::atomic<int64_t> m_requests{0}, m_completions{0}, m_connections{0}, m_maxStreams{0}, m_disconnects{0};
};

}  // namespace verdict::test
