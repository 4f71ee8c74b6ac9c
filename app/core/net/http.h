// HTTP for the OpenAI-compatible API. The client (http_client.cpp) is libcurl: http and https
// (TLS verified against the system CA store, or a given CA file), HTTP/2 where the server offers
// it over TLS, keep-alive with connections reused per thread, proxies from the environment
// (http_proxy, https_proxy, no_proxy), timeouts for connecting, for the first byte and for an idle
// stream. The server is a small HTTP/1.1 server over POSIX sockets, plain http: requests with
// Content-Length bodies, responses with a length or streamed until the connection closes
// (Server-Sent Events). The server keeps connections alive between requests with a length (pipelined requests are
// answered in order); a stream closes its connection. Limits guard against hostile peers: header
// size, body size, a deadline for the whole request head and for the whole body (a client that
// trickles bytes is cut off, not just an idle one), connections in all and per client address,
// and when the server is full the connection that has waited longest for its request head is
// dropped first (slowloris); a violation is answered (413, 431, 408, 400, 503), never a crash.
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
    bool keepAlive = false;                     // HTTP/1.1 without `Connection: close`
    std::string header(const std::string& lowerName) const;
};

// Parses a request head: the request line and header lines up to, not including, the blank line
// that ends them. Fills `req` (method, target, path, headers, keepAlive) and `contentLength`.
// Returns 200, or the status to answer with and `why`: 400 malformed line or Content-Length,
// 411 a chunked body, 413 a body over maxBodyBytes. Leading blank lines are ignored (RFC 9112 2.2).
int parseHttpRequestHead(std::string_view head, size_t maxBodyBytes, HttpRequest& req, size_t& contentLength,
                         std::string& why);

// What a handler answers with. Either send() once, or startStream() then write()* (each write is
// sent at once; false when the client has gone away) and the stream ends when the handler returns.
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
    size_t maxHeaderBytes = 64 * 1024;
    size_t maxBodyBytes = 8 * 1024 * 1024;
    int headTimeoutMs = 10000;        // the whole request head, from the connection (or its first byte after keep-alive)
    int bodyTimeoutMs = 30000;        // the whole body, once the head is in
    int keepAliveTimeoutMs = 5000;    // idle wait for the next request on a kept-alive connection
    int maxRequestsPerConnection = 1000;
    int maxConnections = 512;         // more at once: the longest head-waiter is dropped, else 503
    int maxConnectionsPerPeer = 256;  // per client address, likewise
};

class HttpServer {
public:
    // Binds and starts accepting on its own thread; each connection is served on a thread of its
    // own (at most maxConnections of them). Fails naming the address when it cannot bind.
    static Result<std::unique_ptr<HttpServer>> start(const HttpServerOptions& options, HttpHandler handler);
    ~HttpServer();  // stops accepting and waits for the connections in flight
    int port() const;
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

// The reason phrase of a status code ("OK", "Bad Request", ...).
const char* httpReason(int status);

}  // namespace verdict::core::net
