// HTTP for the OpenAI-compatible API. The client (http_client.cpp) is libcurl: http and https
// (TLS verified against the system CA store, or a given CA file), HTTP/2 where the server offers
// it over TLS, keep-alive with connections reused per thread, proxies from the environment
// (http_proxy, https_proxy, no_proxy), timeouts for connecting, for the first byte and for an idle
// stream. The server (http_server.cpp) is cpp-httplib (Debian libcpp-httplib-dev), http or https
// (OpenSSL, a PEM certificate and key): the library parses requests and writes responses; Verdict
// keeps the connection handling around it (http_transport.h): a bounded pool of connection
// workers fed by an admission step that answers 503 when every worker is busy with a request and
// the queue of accepted connections is full, the connection that has waited longest for its
// request head dropped first when the server is full (slowloris), limits per client address,
// keep-alive (a request count and an idle timeout), and deadlines for the whole request head and
// body (a client that trickles bytes is cut off, not just an idle one), header and body size
// limits. A violation is answered (400, 408, 411, 413, 414, 431, 503), never a crash. Responses
// have a length, or are streamed chunked (Server-Sent Events) from a handler that pushes its data
// while the library pulls it (the handler runs on a thread of its own beside the connection's).
#pragma once

#include "verdict/engine/result.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace verdict::core::net {

struct HttpRequest {
    std::string method;                         // "GET", "POST", ...
    std::string target;                         // "/v1/models?x=1"
    std::string path;                           // "/v1/models"
    std::map<std::string, std::string> headers; // names lower-cased
    std::string body;
    std::string peer;                           // "127.0.0.1:51234"
    bool keepAlive = false;                     // HTTP/1.1 without `Connection: close` (HTTP/1.0: never)
    std::string header(const std::string& lowerName) const;
};

// What a handler answers with. Either send() once, or startStream() then write()* and the stream
// ends when the handler returns. A write is handed to the connection at once (it waits only while
// 256 KiB are still unsent) and is false once the client has gone away; the server notices a
// client that left within 0.1 s, also while the handler is working and writes nothing.
class HttpResponder {
public:
    virtual ~HttpResponder() = default;
    virtual void send(int status, std::string_view contentType, std::string_view body,
                      const std::map<std::string, std::string>& headers = {}) = 0;
    virtual bool startStream(int status, std::string_view contentType,
                             const std::map<std::string, std::string>& headers = {}) = 0;
    virtual bool write(std::string_view data) = 0;
    virtual bool sent() const = 0;
    // True once the client has closed its side of the connection: work for it can stop.
    virtual bool clientGone() const { return false; }
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponder&)>;

struct HttpServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;                  // 0: any free port (see HttpServer::port())
    size_t maxHeaderBytes = 64 * 1024; // the whole head; one line of it at most 8 KiB (the library's bound)
    size_t maxBodyBytes = 8 * 1024 * 1024;
    int headTimeoutMs = 10000;        // the whole request head, from the connection (or its first byte after keep-alive)
    int bodyTimeoutMs = 30000;        // the whole body, once the head is in
    int writeTimeoutMs = 30000;       // a client that takes no bytes of the answer for this long is cut off
    int keepAliveTimeoutMs = 5000;    // idle wait for the next request on a kept-alive connection
    int maxRequestsPerConnection = 1000;
    int maxConnections = 512;         // served at once (the worker pool); more: the longest head-waiter is dropped, else queued
    int maxQueuedConnections = 64;    // accepted, waiting for a worker busy with a request; beyond: 503
    int maxConnectionsPerPeer = 256;  // per client address (served and queued), likewise
    std::string tlsCertFile;          // both set: https with this PEM certificate (chain) ...
    std::string tlsKeyFile;           // ... and its PEM private key
};

class HttpServer {
public:
    // Binds and starts accepting on its own thread; each connection is served by a worker of the
    // pool (at most maxConnections of them, each with a thread for the handler beside it). Fails
    // naming the address when it cannot bind, and naming the file when the TLS certificate or key
    // cannot be read, is not PEM, or the key does not belong to the certificate.
    static Result<std::unique_ptr<HttpServer>> start(const HttpServerOptions& options, HttpHandler handler);
    ~HttpServer();  // stop()
    int port() const;
    bool tls() const;  // https
    // Ends idle connections, lets the requests in flight finish (newcomers meanwhile: 503), then
    // stops accepting. Idempotent.
    void stop();

private:
    struct Impl;
    explicit HttpServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// "http://host:port/base" or "https://..." -> parts; anything else is refused with a clear error.
struct HttpUrl {
    bool tls = false;  // https
    std::string host;
    int port = 80;     // 443 for https without a port
    std::string path;  // "/base" or "/"
};
Result<HttpUrl> parseHttpUrl(const std::string& url);

struct HttpResponse {
    int status = 0;
    std::map<std::string, std::string> headers;  // names lower-cased
    std::string body;                            // empty when streamed to onData
};

// How https is checked. The default verifies the server's certificate and name against the system
// CA store (/etc/ssl/certs); caFile replaces that store with one PEM file (a private CA, a
// self-signed server); insecure skips verification altogether (results say so: see
// EndpointConfig::insecure).
struct TlsOptions {
    std::string caFile;
    bool insecure = false;
};

struct HttpClientOptions {
    int connectTimeoutMs = 10000;                // TCP connect and TLS handshake
    int readTimeoutMs = 60000;                   // no byte for this long (before the first one too): the request fails
    size_t maxBodyBytes = 64 * 1024 * 1024;
    const std::atomic<bool>* cancel = nullptr;   // checked at least every 100 ms
    TlsOptions tls;
};

// One request. onData, when set, receives the body as it arrives (after de-chunking) and may
// return false to stop reading (the connection is then closed, so a streaming server sees the
// client leave). Errors: cannot resolve / cannot connect / timed out / TLS / malformed response /
// cancelled, each with the URL; an HTTP error status is a response, not an Error. Safe to call
// from any number of threads at once; each thread keeps its own connections alive between calls.
Result<HttpResponse> httpRequest(const std::string& method, const std::string& url,
                                 const std::map<std::string, std::string>& headers, std::string_view body,
                                 const HttpClientOptions& options = {},
                                 const std::function<bool(std::string_view)>& onData = {});

// Incremental Server-Sent Events parser: feed() bytes, get each event's data (lines after
// "data:" joined with '\n') when its blank line arrives.
class SseParser {
public:
    void feed(std::string_view bytes, const std::function<void(const std::string& data)>& onEvent);

private:
    std::string m_line;
    std::string m_data;
    bool m_hasData = false;
};

// The reason phrase of a status code ("OK", "Bad Request", ...), for the answers the server
// writes itself (503 when full, 408/431 for a request line the library gave up on).
const char* httpReason(int status);

}  // namespace verdict::core::net
