#include "core/net/http.h"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace verdict::core::net {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

bool sendAll(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

std::string statusHead(int status, std::string_view contentType, const std::map<std::string, std::string>& headers,
                       const std::string* contentLength, bool keepAlive) {
    std::string h = "HTTP/1.1 " + std::to_string(status) + " " + httpReason(status) + "\r\n";
    h += "Content-Type: " + std::string(contentType) + "\r\n";
    if (contentLength) h += "Content-Length: " + *contentLength + "\r\n";
    h += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
    for (const auto& [k, v] : headers) h += k + ": " + v + "\r\n";
    return h + "\r\n";
}

// Answers one request. A response with a length keeps the connection alive when `keepAlive`
// (the request allowed it); a stream always ends with the connection.
class SocketResponder final : public HttpResponder {
public:
    SocketResponder(int fd, bool keepAlive) : m_fd(fd), m_keepAlive(keepAlive) {}
    void send(int status, std::string_view contentType, std::string_view body,
              const std::map<std::string, std::string>& headers) override {
        if (m_sent) return;
        m_sent = true;
        const std::string len = std::to_string(body.size());
        m_ok = sendAll(m_fd, statusHead(status, contentType, headers, &len, m_keepAlive)) && sendAll(m_fd, body);
    }
    bool startStream(int status, std::string_view contentType, const std::map<std::string, std::string>& headers) override {
        if (m_sent) return false;
        m_sent = true;
        m_keepAlive = false;
        m_ok = sendAll(m_fd, statusHead(status, contentType, headers, nullptr, false));
        return m_ok;
    }
    bool write(std::string_view data) override {
        if (!m_sent || !m_ok) return false;
        m_ok = sendAll(m_fd, data);
        return m_ok;
    }
    bool sent() const override { return m_sent; }
    bool clientGone() const override {
        pollfd p{m_fd, POLLRDHUP, 0};
        return !m_ok || (::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0);
    }
    // The connection can carry the next request.
    bool reusable() const { return m_sent && m_ok && m_keepAlive; }

private:
    int m_fd;
    bool m_keepAlive;
    bool m_sent = false;
    bool m_ok = true;
};

void plainError(int fd, int status, const std::string& message) {
    SocketResponder r(fd, false);
    const nlohmann::json j = {{"error", {{"message", message}, {"type", "invalid_request_error"}}}};
    const std::string body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    r.send(status, "application/json", body, {});
}

using Clock = std::chrono::steady_clock;

int msUntil(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

// Reads one request from `buf` (bytes already received, e.g. a pipelined request) and the socket;
// consumes it from `buf`. Returns 200, the status to answer with (`why` set), or 0 when the
// connection closed, or stayed idle (`idleMs` without a first byte) after an earlier request.
int readRequest(int fd, const HttpServerOptions& o, std::string& buf, int idleMs, bool first, HttpRequest& req,
                std::string& why) {
    char chunk[16384];
    auto readSome = [&](Clock::time_point deadline) -> int {  // 1 read, 0 closed, -1 deadline passed
        for (;;) {
            const int wait = msUntil(deadline);
            if (wait == 0) return -1;
            pollfd p{fd, POLLIN, 0};
            const int pr = ::poll(&p, 1, wait);
            if (pr == 0) continue;  // re-check the deadline
            if (pr < 0) {
                if (errno == EINTR) continue;
                return 0;
            }
            const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return 0;
            buf.append(chunk, static_cast<size_t>(n));
            return 1;
        }
    };
    // The head's clock starts with the connection, or on a kept-alive one with the first byte.
    Clock::time_point headDeadline = Clock::now() + std::chrono::milliseconds(o.headTimeoutMs);
    if (!first && buf.empty()) {
        const int r = readSome(Clock::now() + std::chrono::milliseconds(idleMs));
        if (r <= 0) return 0;
        headDeadline = Clock::now() + std::chrono::milliseconds(o.headTimeoutMs);
    }
    size_t headerEnd;
    while ((headerEnd = buf.find("\r\n\r\n")) == std::string::npos) {
        if (buf.size() > o.maxHeaderBytes)
            return why = "request headers larger than " + std::to_string(o.maxHeaderBytes) + " bytes", 431;
        const int r = readSome(headDeadline);
        if (r == 0) return 0;
        if (r < 0)
            return why = "request head not received within " + std::to_string(o.headTimeoutMs) + " ms", 408;
    }
    if (headerEnd > o.maxHeaderBytes) return why = "request headers too large", 431;
    size_t length = 0;
    if (const int status = parseHttpRequestHead(std::string_view(buf).substr(0, headerEnd), o.maxBodyBytes, req, length, why);
        status != 200)
        return status;
    const size_t total = headerEnd + 4 + length;
    const Clock::time_point bodyDeadline = Clock::now() + std::chrono::milliseconds(o.bodyTimeoutMs);
    while (buf.size() < total) {
        const int r = readSome(bodyDeadline);
        if (r == 0) return 0;
        if (r < 0) return why = "request body not received within " + std::to_string(o.bodyTimeoutMs) + " ms", 408;
    }
    req.body = buf.substr(headerEnd + 4, length);
    buf.erase(0, total);
    return 200;
}

}  // namespace

int parseHttpRequestHead(std::string_view head, size_t maxBodyBytes, HttpRequest& req, size_t& contentLength,
                         std::string& why) {
    contentLength = 0;
    while (head.substr(0, 2) == "\r\n") head.remove_prefix(2);
    const size_t lineEnd = head.find("\r\n");
    const std::string_view line = head.substr(0, lineEnd);
    const size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1 || sp1 == 0 || sp2 == sp1 + 1)
        return why = "malformed request line", 400;
    req.method = std::string(line.substr(0, sp1));
    req.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
    const std::string_view version = line.substr(sp2 + 1);
    if (version.rfind("HTTP/1.", 0) != 0) return why = "unsupported HTTP version", 400;
    req.path = req.target.substr(0, req.target.find('?'));
    req.headers.clear();
    std::string_view rest = lineEnd == std::string_view::npos ? std::string_view() : head.substr(lineEnd + 2);
    while (!rest.empty()) {
        const size_t e = rest.find("\r\n");
        const std::string_view h = rest.substr(0, e);
        rest = e == std::string_view::npos ? std::string_view() : rest.substr(e + 2);
        const size_t colon = h.find(':');
        if (colon == std::string_view::npos || colon == 0) return why = "malformed header line", 400;
        req.headers[lower(std::string(trim(h.substr(0, colon))))] = std::string(trim(h.substr(colon + 1)));
    }
    const std::string connection = lower(req.header("connection"));
    req.keepAlive = version == "HTTP/1.1" && connection.find("close") == std::string::npos;
    if (!req.header("transfer-encoding").empty()) return why = "chunked request bodies are not supported", 411;
    if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
        const std::string& cl = it->second;
        if (cl.empty() || cl.size() > 19 || cl.find_first_not_of("0123456789") != std::string::npos)
            return why = "invalid Content-Length", 400;
        const unsigned long long v = std::stoull(cl);
        if (v > maxBodyBytes)
            return why = "request body of " + cl + " bytes exceeds the limit of " + std::to_string(maxBodyBytes), 413;
        contentLength = static_cast<size_t>(v);
    }
    return 200;
}

std::string HttpRequest::header(const std::string& lowerName) const {
    auto it = headers.find(lowerName);
    return it == headers.end() ? std::string() : it->second;
}

struct HttpServer::Impl {
    HttpServerOptions options;
    HttpHandler handler;
    int listenFd = -1;
    int port = 0;
    std::atomic<bool> stopping{false};
    std::thread acceptThread;

    // Every open connection, under `mu`. A connection's fd is closed only after it left this
    // table (under `mu`), so shutting one down from another thread never hits a reused fd.
    struct Conn {
        int fd = -1;
        std::string host;          // the client's address without the port
        bool waitingHead = true;   // between requests: may be dropped when the server is full
        Clock::time_point since;   // when it started waiting
    };
    std::mutex mu;
    std::condition_variable idle;
    std::map<uint64_t, Conn> conns;
    uint64_t nextConn = 0;

    void setWaiting(uint64_t id, bool waiting) {
        std::lock_guard lock(mu);
        Conn& c = conns.at(id);
        c.waitingHead = waiting;
        c.since = Clock::now();
    }

    void serve(uint64_t id, int fd, const std::string& peer) {
        std::string buf;
        for (int served = 0; served < options.maxRequestsPerConnection && !stopping; ++served) {
            if (served > 0) setWaiting(id, true);
            HttpRequest req;
            req.peer = peer;
            std::string why;
            const int status = readRequest(fd, options, buf, options.keepAliveTimeoutMs, served == 0, req, why);
            if (status == 0) break;
            setWaiting(id, false);
            if (status != 200) {
                plainError(fd, status, why);
                break;
            }
            SocketResponder r(fd, req.keepAlive && served + 1 < options.maxRequestsPerConnection && !stopping);
            handler(req, r);
            if (!r.sent()) r.send(500, "application/json", "{\"error\":{\"message\":\"no response\"}}", {});
            if (!r.reusable()) break;
        }
        ::shutdown(fd, SHUT_WR);
        // Drain briefly so the client sees our answer instead of a reset.
        char sink[1024];
        pollfd p{fd, POLLIN, 0};
        while (::poll(&p, 1, 50) > 0 && ::recv(fd, sink, sizeof sink, 0) > 0) {}
        std::lock_guard lock(mu);
        conns.erase(id);
        ::close(fd);
        idle.notify_all();
    }

    // Under `mu`: makes room for one more connection (of `host`, when given) by dropping the one
    // that has waited longest for a request head; false when every connection is busy.
    bool dropLongestWaiting(const std::string* host) {
        Conn* oldest = nullptr;
        for (auto& [id, c] : conns)
            if (c.waitingHead && c.fd >= 0 && (!host || c.host == *host) && (!oldest || c.since < oldest->since)) oldest = &c;
        if (!oldest) return false;
        ::shutdown(oldest->fd, SHUT_RDWR);  // its thread sees the close and ends
        oldest->fd = -1;                    // counted until that thread has left
        oldest->waitingHead = false;
        return true;
    }

    // Under `mu`: whether one more connection from `host` may be served now.
    std::string admit(const std::string& host) {
        int fromHost = 0, live = 0;
        for (const auto& [id, c] : conns) {
            if (c.fd < 0) continue;  // being dropped
            ++live;
            if (c.host == host) ++fromHost;
        }
        if (fromHost >= options.maxConnectionsPerPeer) {
            if (!dropLongestWaiting(&host))
                return "too many connections from " + host + " (" + std::to_string(options.maxConnectionsPerPeer) + ")";
            --live;
        }
        if (live >= options.maxConnections && !dropLongestWaiting(nullptr))
            return "too many connections (" + std::to_string(options.maxConnections) + ")";
        // Dropped connections still hold a thread for a moment; never more than twice the limit.
        if (static_cast<int>(conns.size()) >= 2 * options.maxConnections) return "too many connections";
        return {};
    }

    void acceptLoop() {
        while (!stopping) {
            pollfd p{listenFd, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) continue;
            sockaddr_storage addr{};
            socklen_t len = sizeof addr;
            const int fd = ::accept4(listenFd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
            if (fd < 0) continue;
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // stream tokens at once
            char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
            ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, serv, sizeof serv,
                          NI_NUMERICHOST | NI_NUMERICSERV);
            uint64_t id = 0;
            {
                std::lock_guard lock(mu);
                if (const std::string refused = admit(host); !refused.empty()) {
                    plainError(fd, 503, refused);
                    ::close(fd);
                    continue;
                }
                id = nextConn++;
                conns[id] = Conn{fd, host, true, Clock::now()};
            }
            std::thread([this, id, fd, peer = std::string(host) + ":" + serv] { serve(id, fd, peer); }).detach();
        }
    }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::stop() {
    if (!m_impl || m_impl->stopping.exchange(true)) return;
    if (m_impl->acceptThread.joinable()) m_impl->acceptThread.join();
    if (m_impl->listenFd >= 0) ::close(m_impl->listenFd);
    std::unique_lock lock(m_impl->mu);
    for (auto& [id, c] : m_impl->conns)  // idle keep-alive connections end now; busy ones finish
        if (c.waitingHead && c.fd >= 0) ::shutdown(c.fd, SHUT_RD);
    m_impl->idle.wait(lock, [&] { return m_impl->conns.empty(); });
}

int HttpServer::port() const { return m_impl->port; }

Result<std::unique_ptr<HttpServer>> HttpServer::start(const HttpServerOptions& options, HttpHandler handler) {
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->handler = std::move(handler);
    const std::string where = options.host + ":" + std::to_string(options.port);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    if (const int rc = ::getaddrinfo(options.host.c_str(), std::to_string(options.port).c_str(), &hints, &res); rc != 0)
        return Error{"cannot listen on " + where + ": " + gai_strerror(rc)};
    int fd = -1;
    std::string lastError = "no address";
    for (addrinfo* a = res; a; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) break;
        lastError = std::strerror(errno);
        ::close(fd);
        fd = -1;
    }
    ::freeaddrinfo(res);
    if (fd < 0) return Error{"cannot listen on " + where + ": " + lastError};
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    impl->port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                             : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    impl->listenFd = fd;
    Impl* raw = impl.get();
    impl->acceptThread = std::thread([raw] { raw->acceptLoop(); });
    return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

const char* httpReason(int status) {
    switch (status) {
        case 200: return "OK";
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 408: return "Request Timeout";
        case 411: return "Length Required";
        case 413: return "Payload Too Large";
        case 429: return "Too Many Requests";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        case 503: return "Service Unavailable";
        default: return status < 400 ? "OK" : "Error";
    }
}

}  // namespace verdict::core::net
